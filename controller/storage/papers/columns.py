"""The columns a record is read from, checked against the record's fields.

A record is a NamedTuple built positionally from a row, so its fields and the selected columns
must match one for one: the model attributes are checked by mypy, their names and order against
the record's fields when the module is imported.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.sql.elements import ColumnElement

Column = QueryableAttribute[Any] | ColumnElement[Any]


def columns(fields: tuple[str, ...], *cols: Column) -> tuple[Column, ...]:
    """``cols`` as given, once their names are ``fields`` in order (a label names its own)."""
    names = tuple(c.key for c in cols)
    if names != fields:
        raise TypeError(f"columns {names} do not match the record's fields {fields}")
    return cols
