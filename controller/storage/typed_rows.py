"""The columns a typed record is read from, checked against the record's fields.

A record (a NamedTuple, or a keyword-only dataclass) is built from a row whose columns are
its fields one for one: the model attributes selected are checked by mypy (a column renamed
in the model fails the type check where it is selected), their names and order against the
record's fields when the module that lists them is imported.

    _HIT = columns(HitRecord, HitRow.hit_id, HitRow.link_id, ...)
    [HitRecord(**row._mapping) for row in await conn.execute(select(*_HIT))]
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.sql.elements import ColumnElement

__all__ = ["Column", "columns", "fields_of"]

Column = QueryableAttribute[Any] | ColumnElement[Any]


def fields_of(record: type) -> tuple[str, ...]:
    """The field names of a NamedTuple or dataclass, in order."""
    if dataclasses.is_dataclass(record):
        return tuple(f.name for f in dataclasses.fields(record))
    names: tuple[str, ...] = cast(Any, record)._fields
    return names


def columns(record: type, *cols: Column) -> tuple[Column, ...]:
    """``cols`` as given, once their names are ``record``'s fields in order (a label names
    its own)."""
    names = tuple(c.key for c in cols)
    fields = fields_of(record)
    if names != fields:
        raise TypeError(f"columns {names} do not match the fields {fields} of {record.__name__}")
    return cols
