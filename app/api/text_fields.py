"""The text rules of ``controller.text`` as API field types: a refusal is a 422 whose problem
names the field (``body.reason``, ``path.link_id``) and the rule, and the OpenAPI schema
carries the rule as ``pattern`` and ``maxLength`` so clients see it before they send."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema
from starlette.convertors import Convertor, register_url_convertor

from controller.text import (
    HIT_REFERENCE,
    ID,
    MULTILINE,
    ONE_LINE,
    REFERENCE,
    USERNAME,
    TextRefused,
    TextRule,
)


@dataclass(frozen=True, slots=True)
class Checked:
    """``Annotated[str, Checked(rule)]``: the value is checked by ``rule`` (and, when
    ``required``, may not be blank)."""

    rule: TextRule
    required: bool = False

    def _check(self, value: str) -> str:
        try:
            return self.rule.check(value, required=self.required)
        except TextRefused as exc:
            raise PydanticCustomError("text_refused", "{rule}", {"rule": str(exc)}) from None

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out = handler(schema)
        limit = self.rule.max_length
        out.update(pattern=self.rule.pattern, maxLength=min(out.get("maxLength", limit), limit))
        if self.required:
            out.setdefault("minLength", 1)
        return out


def one_line(max_length: int = ONE_LINE.max_length) -> Checked:
    return Checked(ONE_LINE.sized(max_length), required=True)


def optional_line(max_length: int = ONE_LINE.max_length) -> Checked:
    return Checked(ONE_LINE.sized(max_length))


# Links and tables, in paths, queries and bodies.
IdText = Annotated[str, Checked(ID)]
# Records the controller named: hits, anomalies, integrity records, requests, submissions.
Reference = Annotated[str, Checked(REFERENCE)]
# A hit in a path, ``/{hit_id:hit}``: an envy pay's id holds a "/" (``HIT_REFERENCE``).
HitReference = Annotated[str, Checked(HIT_REFERENCE)]
Username = Annotated[str, Checked(USERNAME)]
# Reasons, notes, descriptions: the free text of a record, line breaks allowed.
Note = Annotated[str, Checked(MULTILINE, required=True)]
OptionalNote = Annotated[str, Checked(MULTILINE)]
# Names, telephone numbers, serial numbers: one line.
Line = Annotated[str, one_line()]


class _HitConvertor(Convertor[str]):
    """``{hit_id:hit}``: one segment of a path, or an envy pay's two ("stud-1#3/envy5"), so
    "/api/v1/hits/stud-1%233%2Fenvy5/slip.pdf" finds the slip of that envy pay (the server
    decodes "%2F" before routing). Anything else in the segment is left to ``HitReference``
    to refuse with a 422 that says why."""

    regex = "[^/]+(?:/envy[^/]*)?"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("hit", _HitConvertor())
