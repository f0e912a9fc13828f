"""Reads of the records for people: a page of meter history, the meter over time
and the links' names. Reads only; periods are half-open ``[since_us, until_us)``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.storage.models import (
    CorrectionRow,
    DocumentRow,
    LinkRow,
    MeterEntryRow,
)
from controller.storage.typed_rows import columns


class HistoryLine(NamedTuple):
    """A history entry with its correction's category and approver and its document, if any."""

    seq: int
    at_us: int
    kind: str
    meter_before_units: int
    delta_units: int
    meter_after_units: int
    table_id: str | None
    hit_id: str | None
    anomaly_id: str | None
    correction_id: str | None
    explanation: str
    category: str | None
    approved_by: str | None
    doc_sha256: str | None
    filename: str | None
    content_type: str | None
    size: int | None


class MeterReading(NamedTuple):
    at_us: int
    meter_before_units: int
    meter_after_units: int


_m, _c, _d = MeterEntryRow, CorrectionRow, DocumentRow
_HISTORY = columns(
    HistoryLine,
    _m.seq, _m.at_us, _m.kind, _m.meter_before_units, _m.delta_units, _m.meter_after_units,
    _m.table_id, _m.hit_id, _m.anomaly_id, _m.correction_id, _m.explanation, _c.category,
    _c.approved_by, _d.sha256.label("doc_sha256"), _d.filename, _d.content_type, _d.size,
)  # fmt: skip
_READING = columns(MeterReading, _m.at_us, _m.meter_before_units, _m.meter_after_units)


async def history_lines(
    conn: AsyncConnection,
    link_id: str,
    *,
    since_us: int,
    until_us: int,
    after_seq: int,
    limit: int,
    reductions_only: bool,
) -> list[HistoryLine]:
    """Up to ``limit`` entries after ``after_seq`` in sequence order."""
    q = (
        select(*_HISTORY)
        .outerjoin(_c, _c.correction_id == _m.correction_id)
        .outerjoin(_d, _d.sha256 == _c.document_sha256)
        .where(
            _m.link_id == link_id,
            _m.at_us >= since_us,
            _m.at_us < until_us,
            _m.seq > after_seq,
        )
        .order_by(_m.seq)
        .limit(limit)
    )
    if reductions_only:
        q = q.where(_m.delta_units < 0)
    return [HistoryLine._make(r) for r in await conn.execute(q)]


async def meter_readings(
    conn: AsyncConnection, link_id: str, *, since_us: int, until_us: int, batch: int
) -> AsyncIterator[list[MeterReading]]:
    """The meter before and after each entry of the period, in sequence order, ``batch``
    entries at a time as the database sends them."""
    q = (
        select(*_READING)
        .where(_m.link_id == link_id, _m.at_us >= since_us, _m.at_us < until_us)
        .order_by(_m.seq)
    )
    result = await conn.stream(q.execution_options(yield_per=batch))
    async for rows in result.partitions():
        yield [MeterReading._make(r) for r in rows]


async def link_names(conn: AsyncConnection) -> dict[str, str]:
    return {
        link_id: name for link_id, name in await conn.execute(select(LinkRow.link_id, LinkRow.name))
    }
