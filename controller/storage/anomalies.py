"""Anomalies: the readings held for a person's review, written as the reducer finds them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.reducer import Anomaly
from controller.storage.models import AnomalyRow, table_of

__all__ = ["ANOMALIES", "Anomalies"]

ANOMALIES = table_of(AnomalyRow)


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

    async def get(self, anomaly_id: str) -> tuple[Anomaly, str] | None:
        """The anomaly as found, with its review status (held, approved, rejected)."""
        row = (
            await self.conn.execute(
                select(
                    AnomalyRow.anomaly_id,
                    AnomalyRow.link_id,
                    AnomalyRow.table_id,
                    AnomalyRow.at_us,
                    AnomalyRow.credits,
                    AnomalyRow.units,
                    AnomalyRow.counter_before,
                    AnomalyRow.counter_after,
                    AnomalyRow.reason,
                    AnomalyRow.status,
                ).where(AnomalyRow.anomaly_id == anomaly_id)
            )
        ).one_or_none()
        if row is None:
            return None
        aid, link_id, table_id, at_us, credits, units, before, after, reason, status = row
        anomaly = Anomaly(
            anomaly_id=aid,
            link_id=link_id,
            table_id=table_id,
            at_us=at_us,
            credits=credits,
            units=units,
            counter_before=before,
            counter_after=after,
            reason=reason,
        )
        return anomaly, status
