"""Amounts and rates as people write them ("$10,000.00", "82.5%"), as API field types.

A page sends what was typed and the server reads it with the one parser of
``controller.core.money``; the field's value is then whole cents or basis points within the
field's bounds, like a number sent as one. A text that is no amount, or one out of bounds, is
a 422 naming the field and saying what is wrong in words ("at most 100%", not "10000").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from pydantic import BeforeValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from controller.core.money import (
    BP_PER_WHOLE,
    MAX_AMOUNT_CENTS,
    MoneyError,
    format_bp,
    format_cents,
    parse_cents,
    parse_rate_bp,
)


def _reading(
    parse: Callable[[str], int], show: Callable[[int], str], example: str, low: int, high: int
) -> Callable[[object], int]:
    def read(value: object) -> int:
        # A bare number is refused: "82.5" in a rate field and 8250 in a basis-point field
        # would mean different things, and text is what this field is for.
        if not isinstance(value, str):
            raise PydanticCustomError("amount_text", "write it as text, like {example}", {
                "example": example
            })  # fmt: skip
        try:
            number = parse(value)
        except MoneyError as exc:
            raise PydanticCustomError("amount_text", "{problem}", {"problem": str(exc)}) from None
        if not low <= number <= high:
            raise PydanticCustomError(
                "amount_text",
                "{value} is outside {low} to {high}",
                {"value": show(number), "low": show(low), "high": show(high)},
            )
        return number

    return read


def _cents(low: int) -> Callable[[object], int]:
    def parse(text: str) -> int:
        return parse_cents(text, allow_negative=low < 0)

    return _reading(
        parse, format_cents, "-$120.00" if low < 0 else "$10,000.00", low, MAX_AMOUNT_CENTS
    )


def _schema(example: str) -> WithJsonSchema:
    return WithJsonSchema({"type": "string", "examples": [example], "maxLength": 40})


# An amount: zero or more ("$0.00" is a reset amount of nothing).
CentsText = Annotated[int, BeforeValidator(_cents(0)), _schema("$10,000.00")]
# An amount paid: at least a cent.
PaidCentsText = Annotated[int, BeforeValidator(_cents(1)), _schema("$500.00")]
# A change of an amount, up or down ("-$120.00" lowers it).
SignedCentsText = Annotated[int, BeforeValidator(_cents(-MAX_AMOUNT_CENTS)), _schema("-$120.00")]
# A share of a meter or of every wager: above 0% and at most 100%.
ShareText = Annotated[
    int, BeforeValidator(_reading(parse_rate_bp, format_bp, "10%", 1, BP_PER_WHOLE)), _schema("10%")
]
# A hidden share may be none.
ShareOrNoneText = Annotated[
    int, BeforeValidator(_reading(parse_rate_bp, format_bp, "0%", 0, BP_PER_WHOLE)), _schema("2%")
]
# A rate of progression: read, not judged; whether it is allowed is the rulebook's
# (68 IAC 10-1-1.1(c)), so a refusal names the clause. The bound only keeps it a number.
RateText = Annotated[
    int,
    BeforeValidator(_reading(parse_rate_bp, format_bp, "82.5%", 0, 100 * BP_PER_WHOLE)),
    _schema("82.5%"),
]
