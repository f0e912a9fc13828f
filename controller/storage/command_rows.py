"""What an operator's command writes beside its link's entries, in the same transaction: an
anomaly's review and a correction of the meter."""

from __future__ import annotations

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.storage.models import AnomalyRow, CorrectionRow, table_of


async def mark_anomaly_reviewed(
    conn: AsyncConnection,
    anomaly_id: str,
    *,
    approved: bool,
    reviewer: str,
    reason: str | None,
    at_us: int,
) -> bool:
    """The review of a held anomaly: False if it was no longer held (reviewed meanwhile)."""
    result = await conn.execute(
        update(AnomalyRow)
        .where(AnomalyRow.anomaly_id == anomaly_id, AnomalyRow.status == "held")
        .values(
            status="approved" if approved else "rejected",
            reviewer=reviewer,
            review_reason=reason,
            reviewed_at_us=at_us,
        )
    )
    return result.rowcount == 1


async def add_correction(
    conn: AsyncConnection,
    *,
    correction_id: str,
    link_id: str,
    delta_units: int,
    category: str,
    reason: str,
    document_sha256: str | None,
    requested_by: str,
    approved_by: str | None,
    at_us: int,
) -> None:
    await conn.execute(
        table_of(CorrectionRow)
        .insert()
        .values(
            correction_id=correction_id,
            link_id=link_id,
            delta_units=delta_units,
            category=category,
            reason=reason,
            document_sha256=document_sha256,
            requested_by=requested_by,
            approved_by=approved_by,
            at_us=at_us,
        )
    )
