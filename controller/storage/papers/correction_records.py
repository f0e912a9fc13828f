"""Corrections of a meter: the correction written beside its correcting entry, and a
supervisor's request for one with its one decision."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.storage.models import CorrectionRow
from controller.storage.paperwork import CorrectionRequestRow
from controller.storage.typed_rows import columns


class CorrectionRequest(NamedTuple):
    request_id: str
    link_id: str
    delta_units: int
    category: str
    reason: str
    document_sha256: str | None
    requested_by: str
    at_us: int
    status: str  # pending, approved, rejected
    decided_by: str | None
    decided_at_us: int | None
    decision_reason: str | None
    correction_id: str | None
    meter: str | None  # the meter of a link of levels; None: the link's one meter


class CorrectionNote(NamedTuple):
    """What a correcting entry's history and exports show of its correction: its category,
    who asked and who approved, and its supporting document."""

    category: str
    requested_by: str
    approved_by: str | None
    document_sha256: str | None


_c = CorrectionRow
# Read beside an entry through an outer join: NULL everywhere when the entry corrects nothing.
NOTE_COLUMNS = columns(
    CorrectionNote, _c.category, _c.requested_by, _c.approved_by, _c.document_sha256
)


def correction_note(values: Sequence[Any]) -> CorrectionNote | None:
    """``NOTE_COLUMNS``'s values as read through an outer join: None when no correction was
    joined (its category, never NULL in a correction, is)."""
    return None if values[0] is None else CorrectionNote._make(values)


_r = CorrectionRequestRow
_COLUMNS = columns(
    CorrectionRequest,
    _r.request_id, _r.link_id, _r.delta_units, _r.category, _r.reason, _r.document_sha256,
    _r.requested_by, _r.at_us, _r.status, _r.decided_by, _r.decided_at_us, _r.decision_reason,
    _r.correction_id, _r.meter,
)  # fmt: skip


async def insert_correction(
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
    meter: str | None = None,
) -> None:
    """The correction of a link's meter, in the transaction of its correcting entry."""
    await conn.execute(
        insert(CorrectionRow).values(
            correction_id=correction_id, link_id=link_id, delta_units=delta_units,
            category=category, reason=reason, document_sha256=document_sha256,
            requested_by=requested_by, approved_by=approved_by, at_us=at_us, meter=meter,
        )
    )  # fmt: skip


async def insert_request(
    conn: AsyncConnection,
    *,
    request_id: str,
    link_id: str,
    delta_units: int,
    category: str,
    reason: str,
    document_sha256: str | None,
    requested_by: str,
    at_us: int,
    status: str,
    meter: str | None = None,
) -> None:
    await conn.execute(
        insert(_r).values(
            request_id=request_id, link_id=link_id, delta_units=delta_units, category=category,
            reason=reason, document_sha256=document_sha256, requested_by=requested_by,
            at_us=at_us, status=status, meter=meter,
        )
    )  # fmt: skip


async def load_request(conn: AsyncConnection, request_id: str) -> CorrectionRequest | None:
    row = (await conn.execute(select(*_COLUMNS).where(_r.request_id == request_id))).one_or_none()
    return None if row is None else CorrectionRequest._make(row)


async def list_requests(
    conn: AsyncConnection, *, link_id: str | None = None, status: str | None = None
) -> list[CorrectionRequest]:
    """Newest first."""
    q = select(*_COLUMNS).order_by(_r.at_us.desc())
    if link_id is not None:
        q = q.where(_r.link_id == link_id)
    if status is not None:
        q = q.where(_r.status == status)
    return [CorrectionRequest._make(row) for row in await conn.execute(q)]


async def decide_request(
    conn: AsyncConnection,
    request_id: str,
    *,
    while_status: str,
    status: str,
    decided_by: str,
    decided_at_us: int,
    decision_reason: str | None = None,
    correction_id: str | None = None,
) -> bool:
    """Record the decision on a request still at ``while_status``; False: it was not."""
    values: dict[str, object] = {
        "status": status,
        "decided_by": decided_by,
        "decided_at_us": decided_at_us,
    }
    if decision_reason is not None:
        values["decision_reason"] = decision_reason
    if correction_id is not None:
        values["correction_id"] = correction_id
    result = await conn.execute(
        update(_r).where(_r.request_id == request_id, _r.status == while_status).values(**values)
    )
    return result.rowcount == 1
