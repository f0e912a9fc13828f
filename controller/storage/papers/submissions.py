"""Submissions to the commission: filed, reviewed once, then the moment they took effect."""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.storage.models import LinkRow, SubmissionRow, TableRow, table_of
from controller.storage.typed_rows import columns


class Submission(NamedTuple):
    submission_id: str
    kind: str
    link_id: str
    proposal: str  # canonical JSON
    effective_at_us: int
    notice_days: int
    notice_override: str | None
    packet_json_sha256: str
    packet_pdf_sha256: str
    filed_by: str
    filed_at_us: int
    status: str  # filed, approved, rejected
    reviewed_by: str | None
    reviewed_at_us: int | None
    review_reason: str | None
    applied_at_us: int | None
    # The executive director's waiver of the notice period (68 IAC 10-1-4(1)), if any.
    waiver_given_by: str | None = None
    waiver_reference: str | None = None
    waiver_given_on: str | None = None  # YYYY-MM-DD
    waiver_document_sha256: str | None = None

    @property
    def waiver(self) -> dict[str, str] | None:
        """The waiver as filed (``filing.NoticeWaiver.to_dict``), or None."""
        if self.waiver_reference is None:
            return None
        return {
            "given_by": self.waiver_given_by or "",
            "reference": self.waiver_reference,
            "given_on": self.waiver_given_on or "",
            "document_sha256": self.waiver_document_sha256 or "",
        }


class FloorTable(NamedTuple):
    """A table on the floor as a packet lists it."""

    table_id: str
    name: str
    location: str
    link_id: str
    game: str
    denomination_cents: int
    seats: int


_s = SubmissionRow
_SUBMISSION = columns(
    Submission,
    _s.submission_id, _s.kind, _s.link_id, _s.proposal, _s.effective_at_us, _s.notice_days,
    _s.notice_override, _s.packet_json_sha256, _s.packet_pdf_sha256, _s.filed_by,
    _s.filed_at_us, _s.status, _s.reviewed_by, _s.reviewed_at_us, _s.review_reason,
    _s.applied_at_us, _s.waiver_given_by, _s.waiver_reference, _s.waiver_given_on,
    _s.waiver_document_sha256,
)  # fmt: skip
# Filing skips the ORM's per-row work.
_SUBMISSIONS = table_of(SubmissionRow)
_t = TableRow
_FLOOR_TABLE = columns(
    FloorTable,
    _t.table_id, _t.name, _t.location, _t.link_id, LinkRow.game, _t.denomination_cents,
    _t.seats,
)  # fmt: skip


async def any_with_status(conn: AsyncConnection, link_id: str, status: str) -> str | None:
    """The id of one of the link's submissions at ``status``, if any."""
    return await conn.scalar(
        select(_s.submission_id).where(_s.link_id == link_id, _s.status == status)
    )


async def link_name(conn: AsyncConnection, link_id: str) -> str | None:
    return await conn.scalar(select(LinkRow.name).where(LinkRow.link_id == link_id))


async def floor_tables(conn: AsyncConnection) -> list[FloorTable]:
    """Every table with its link's game, by link then table."""
    q = (
        select(*_FLOOR_TABLE)
        .join(LinkRow, LinkRow.link_id == _t.link_id)
        .order_by(_t.link_id, _t.table_id)
    )
    return [FloorTable._make(r) for r in await conn.execute(q)]


async def insert_submission(
    conn: AsyncConnection,
    *,
    submission_id: str,
    kind: str,
    link_id: str,
    proposal: str,
    effective_at_us: int,
    notice_days: int,
    notice_override: str | None,
    waiver: dict[str, str] | None = None,
    packet_json_sha256: str,
    packet_pdf_sha256: str,
    filed_by: str,
    filed_at_us: int,
    status: str,
) -> None:
    await conn.execute(
        _SUBMISSIONS.insert().values(
            submission_id=submission_id, kind=kind, link_id=link_id, proposal=proposal,
            effective_at_us=effective_at_us, notice_days=notice_days,
            notice_override=notice_override, packet_json_sha256=packet_json_sha256,
            packet_pdf_sha256=packet_pdf_sha256, filed_by=filed_by, filed_at_us=filed_at_us,
            status=status, waiver_given_by=(waiver or {}).get("given_by"),
            waiver_reference=(waiver or {}).get("reference"),
            waiver_given_on=(waiver or {}).get("given_on"),
            waiver_document_sha256=(waiver or {}).get("document_sha256"),
        )
    )  # fmt: skip


async def list_submissions(
    conn: AsyncConnection, *, link_id: str | None = None, status: str | None = None
) -> list[Submission]:
    """Newest first."""
    q = select(*_SUBMISSION).order_by(_s.filed_at_us.desc(), _s.submission_id)
    if link_id is not None:
        q = q.where(_s.link_id == link_id)
    if status is not None:
        q = q.where(_s.status == status)
    return [Submission._make(r) for r in await conn.execute(q)]


async def load_submission(conn: AsyncConnection, submission_id: str) -> Submission | None:
    q = select(*_SUBMISSION).where(_s.submission_id == submission_id)
    row = (await conn.execute(q)).one_or_none()
    return None if row is None else Submission._make(row)


async def mark_reviewed(
    conn: AsyncConnection,
    submission_id: str,
    *,
    while_status: str,
    status: str,
    reviewed_by: str,
    reviewed_at_us: int,
    review_reason: str | None,
) -> bool:
    """The review, on a submission still at ``while_status``; False: it was not."""
    result = await conn.execute(
        update(_s)
        .where(_s.submission_id == submission_id, _s.status == while_status)
        .values(
            status=status,
            reviewed_by=reviewed_by,
            reviewed_at_us=reviewed_at_us,
            review_reason=review_reason,
        )
    )
    return result.rowcount == 1


async def mark_applied(conn: AsyncConnection, submission_id: str, at_us: int) -> None:
    await conn.execute(
        update(_s).where(_s.submission_id == submission_id).values(applied_at_us=at_us)
    )
