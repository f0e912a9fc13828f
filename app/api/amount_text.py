"""Amounts and rates as people write them ("$10,000.00", "82.5%"), as API field types.

A page sends what was typed and the server reads it with the one parser of
``controller.core.money``, as the command line does: an amount is written with its ``$`` and
a rate or share with its ``%``, so that ``10`` is never taken for $10 when 10 % (or 10 cents)
was meant. The field's value is then whole cents or basis points within the field's bounds,
like a number sent as one. A text that is no amount, a bare number, or one out of bounds, is
a 422 naming the field and saying what is wrong in words ("at most 100%", not "10000") and
the form to write ("write an amount like $1,234.56").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, BeforeValidator, Field, TypeAdapter, ValidationError, WithJsonSchema
from pydantic_core import PydanticCustomError

from app.api.floor_models import bad_input, errors
from app.security.authentication import STAFF_VIEWERS, Principal, require
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
        return parse_cents(text, allow_negative=low < 0, unit_required=True)

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
SHARE_FORM = "a share like 10%"


def _share(text: str) -> int:
    return parse_rate_bp(text, unit_required=True, form=SHARE_FORM)


def _rate(text: str) -> int:
    return parse_rate_bp(text, unit_required=True)


# A share of a meter or of every wager: above 0% and at most 100%.
ShareText = Annotated[
    int, BeforeValidator(_reading(_share, format_bp, "10%", 1, BP_PER_WHOLE)), _schema("10%")
]
# A hidden share may be none.
ShareOrNoneText = Annotated[
    int, BeforeValidator(_reading(_share, format_bp, "0%", 0, BP_PER_WHOLE)), _schema("2%")
]
# A rate of progression: read, not judged; whether it is allowed is the rulebook's
# (68 IAC 10-1-1.1(c)), so a refusal names the clause. The bound only keeps it a number.
RateText = Annotated[
    int,
    BeforeValidator(_reading(_rate, format_bp, "82.5%", 0, 100 * BP_PER_WHOLE)),
    _schema("82.5%"),
]


# ----------------------------------------------------------------------------- as typed

# What each kind of field reads: the same types as the request bodies', so a page's echo and
# the request it sends cannot read one text two ways.
_KINDS: dict[str, TypeAdapter[int]] = {
    "amount": TypeAdapter(CentsText),
    "paid": TypeAdapter(PaidCentsText),
    "change": TypeAdapter(SignedCentsText),
    "share": TypeAdapter(ShareText),
    "hidden": TypeAdapter(ShareOrNoneText),
    "rate": TypeAdapter(RateText),
}
_SHOW: dict[str, Callable[[int], str]] = {
    "amount": format_cents,
    "paid": format_cents,
    "change": format_cents,
    "share": format_bp,
    "hidden": format_bp,
    "rate": format_bp,
}


class ReadingAsk(BaseModel):
    kind: Literal["amount", "paid", "change", "share", "hidden", "rate"] = Field(
        description="amount ($0 or more), paid (at least a cent), change (an amount up or "
        "down, -$120.00), share (above 0% to 100%), hidden (a hidden share, 0% to 100%), "
        "rate (a rate of progression)"
    )
    text: str = Field(max_length=40, examples=["$6,000"])


class ReadingRead(BaseModel):
    value: int = Field(description="whole cents, or basis points for a share or a rate")
    reads_as: str = Field(examples=["$6,000.00"])


router = APIRouter(prefix="/api/v1")


@router.post(
    "/readings",
    tags=["submissions"],
    summary="How an amount or a rate as typed is read",
    description="What a request body would take the text for, read by the same parser: 200 "
    'with the value and how it reads ("$6,000.00"), or 422 saying what is wrong and the form '
    'to write (a bare "6000" is refused: an amount is written with its $, a rate with its %).',
    responses=errors(401, 403, 422),
)
async def read_typed(
    body: ReadingAsk, _: Annotated[Principal, Depends(require(*STAFF_VIEWERS))]
) -> ReadingRead:
    try:
        value = _KINDS[body.kind].validate_python(body.text)
    except ValidationError as exc:
        raise bad_input("body.text", exc.errors()[0]["msg"]) from None
    return ReadingRead(value=value, reads_as=_SHOW[body.kind](value))
