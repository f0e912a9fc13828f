"""A fetched row's column read by its model attribute, typed as the model declares it.

``value(row, HitRow.hit_id)`` is a ``str`` to mypy, and a column renamed in the model fails
the type check wherever it is read, instead of failing at run time as ``row.hit_id`` would.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from sqlalchemy import Row
from sqlalchemy.orm import InstrumentedAttribute

T = TypeVar("T")


def value(row: Row[Any], column: InstrumentedAttribute[T]) -> T:
    return cast(T, row._mapping[column.key])
