"""Anomalies: the readings held for a person's review, written as the reducer finds them,
reviewed once, and read back as ``AnomalyRecord``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.reducer import Anomaly
from controller.storage.models import AnomalyRow, table_of
from controller.storage.typed_rows import columns

__all__ = ["ANOMALIES", "Anomalies", "AnomalyRecord"]

ANOMALIES = table_of(AnomalyRow)


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


_a = AnomalyRow
_ANOMALY = columns(
    AnomalyRecord,
    _a.anomaly_id, _a.link_id, _a.table_id, _a.at_us, _a.credits, _a.units, _a.counter_before,
    _a.counter_after, _a.reason, _a.status, _a.reviewer, _a.review_reason, _a.reviewed_at_us,
)  # fmt: skip


def _values(a: Anomaly) -> dict[str, Any]:
    return {
        "anomaly_id": a.anomaly_id, "link_id": a.link_id, "table_id": a.table_id,
        "at_us": a.at_us, "credits": a.credits, "units": a.units,
        "counter_before": a.counter_before, "counter_after": a.counter_after,
        "reason": a.reason, "status": "held",
    }  # fmt: skip


class Anomalies:
    """The anomalies, read and written through one connection."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    async def add(self, anomalies: Sequence[Anomaly]) -> None:
        if anomalies:
            await self.conn.execute(ANOMALIES.insert(), [_values(a) for a in anomalies])

    async def record(self, anomaly_id: str) -> AnomalyRecord | None:
        row = (
            await self.conn.execute(select(*_ANOMALY).where(_a.anomaly_id == anomaly_id))
        ).one_or_none()
        return None if row is None else AnomalyRecord._make(row)

    async def records(
        self, *, status: str | None, link_id: str | None, limit: int
    ) -> list[AnomalyRecord]:
        """Newest first."""
        q = select(*_ANOMALY)
        if status is not None:
            q = q.where(_a.status == status)
        if link_id is not None:
            q = q.where(_a.link_id == link_id)
        q = q.order_by(_a.at_us.desc()).limit(limit)
        return [AnomalyRecord._make(r) for r in await self.conn.execute(q)]

    async def get(self, anomaly_id: str) -> tuple[Anomaly, str] | None:
        """The anomaly as found, with its review status (held, approved, rejected)."""
        r = await self.record(anomaly_id)
        if r is None:
            return None
        anomaly = Anomaly(
            anomaly_id=r.anomaly_id,
            link_id=r.link_id,
            table_id=r.table_id,
            at_us=r.at_us,
            credits=r.credits,
            units=r.units,
            counter_before=r.counter_before,
            counter_after=r.counter_after,
            reason=r.reason,
        )
        return anomaly, r.status

    async def review(
        self, anomaly_id: str, *, approved: bool, reviewer: str, reason: str | None, at_us: int
    ) -> bool:
        """The review of a held anomaly: False if it was no longer held (reviewed
        meanwhile)."""
        result = await self.conn.execute(
            update(_a)
            .where(_a.anomaly_id == anomaly_id, _a.status == "held")
            .values(
                status="approved" if approved else "rejected",
                reviewer=reviewer,
                review_reason=reason,
                reviewed_at_us=at_us,
            )
        )
        return result.rowcount == 1
