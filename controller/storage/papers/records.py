"""Reads of the records for people: a page of meter history, the meter over time, hits,
anomalies and the links' names. Reads only; periods are half-open ``[since_us, until_us)``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import NamedTuple

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.storage.models import (
    AnomalyRow,
    CorrectionRow,
    DocumentRow,
    HitRow,
    LinkRow,
    MeterEntryRow,
)
from controller.storage.papers.columns import columns
from controller.storage.papers.rows import HIT, HitRecord


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


class AnomalyRecord(NamedTuple):
    anomaly_id: str
    link_id: str
    table_id: str
    at_us: int
    credits: int
    units: int
    counter_before: int
    counter_after: int
    reason: str
    status: str  # held, approved, rejected
    reviewer: str | None
    review_reason: str | None
    reviewed_at_us: int | None


_m, _c, _d = MeterEntryRow, CorrectionRow, DocumentRow
_HISTORY = columns(
    HistoryLine._fields,
    _m.seq, _m.at_us, _m.kind, _m.meter_before_units, _m.delta_units, _m.meter_after_units,
    _m.table_id, _m.hit_id, _m.anomaly_id, _m.correction_id, _m.explanation, _c.category,
    _c.approved_by, _d.sha256.label("doc_sha256"), _d.filename, _d.content_type, _d.size,
)  # fmt: skip
_READING = columns(MeterReading._fields, _m.at_us, _m.meter_before_units, _m.meter_after_units)
_a = AnomalyRow
_ANOMALY = columns(
    AnomalyRecord._fields,
    _a.anomaly_id, _a.link_id, _a.table_id, _a.at_us, _a.credits, _a.units, _a.counter_before,
    _a.counter_after, _a.reason, _a.status, _a.reviewer, _a.review_reason, _a.reviewed_at_us,
)  # fmt: skip


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


async def list_hits(
    conn: AsyncConnection,
    *,
    link_id: str | None,
    table_id: str | None,
    pending: bool,
    limit: int,
) -> list[HitRecord]:
    """Newest first; ``pending``: only those with a technician's work left."""
    q = select(*HIT)
    if link_id is not None:
        q = q.where(HitRow.link_id == link_id)
    if table_id is not None:
        q = q.where(HitRow.table_id == table_id)
    if pending:
        # A table held for the hit not yet reset, or a payout made at the table not yet
        # recorded.
        q = q.where(
            HitRow.released_by.is_(None),
            or_(
                HitRow.paid_from == "meter",
                HitRow.status == "refused",
                HitRow.hand_paid_by.is_(None),
            ),
        )
    q = q.order_by(HitRow.at_us.desc(), HitRow.settlement_order.desc()).limit(limit)
    return [HitRecord._make(r) for r in await conn.execute(q)]


async def list_anomalies(
    conn: AsyncConnection, *, status: str | None, link_id: str | None, limit: int
) -> list[AnomalyRecord]:
    """Newest first."""
    q = select(*_ANOMALY)
    if status is not None:
        q = q.where(_a.status == status)
    if link_id is not None:
        q = q.where(_a.link_id == link_id)
    q = q.order_by(_a.at_us.desc()).limit(limit)
    return [AnomalyRecord._make(r) for r in await conn.execute(q)]


async def load_anomaly(conn: AsyncConnection, anomaly_id: str) -> AnomalyRecord | None:
    row = (await conn.execute(select(*_ANOMALY).where(_a.anomaly_id == anomaly_id))).one_or_none()
    return None if row is None else AnomalyRecord._make(row)


async def link_names(conn: AsyncConnection) -> dict[str, str]:
    return {
        link_id: name for link_id, name in await conn.execute(select(LinkRow.link_id, LinkRow.name))
    }
