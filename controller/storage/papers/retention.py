"""What the retention purge reads and removes: the periods in force, a link's oldest history
with what hangs on it (hits, anomalies, corrections and their requests, documents), its ledger
anchor, and the integrity records past their period.

Each removal is one statement; the purge decides what goes and in which order, in its own
transaction.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Delete, and_, delete, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from controller.core.ledger import SealedEntry
from controller.core.reducer import EntryKind
from controller.core.reducer.conservation import entry_details
from controller.storage.entries import SEALED_COLUMNS
from controller.storage.models import (
    AnomalyRow,
    CorrectionRow,
    DocumentRow,
    HitRow,
    LedgerAnchorRow,
    LedgerMetaRow,
    MeterEntryRow,
)
from controller.storage.paperwork import (
    CorrectionRequestRow,
    IntegrityRecordRow,
    RemedialActionRow,
)
from controller.storage.typed_rows import columns


class LedgerAnchor(NamedTuple):
    seq: int
    hash: str
    meter_units: int
    purged_at_us: int


class ExpiredRecord(NamedTuple):
    """What the manifest keeps of an integrity record removed."""

    record_id: str
    table_id: str
    removed_at_us: int
    returned_at_us: int | None
    notice_sha256: str


_m, _a = MeterEntryRow, LedgerAnchorRow
_ANCHOR = columns(LedgerAnchor, _a.seq, _a.hash, _a.meter_units, _a.purged_at_us)
_r = IntegrityRecordRow
_EXPIRED = columns(
    ExpiredRecord,
    _r.record_id, _r.table_id, _r.removed_at_us, _r.returned_at_us, _r.notice_sha256,
)  # fmt: skip
_cr = CorrectionRequestRow


async def _removed(conn: AsyncConnection, stmt: Delete) -> int:
    return int((await conn.execute(stmt)).rowcount or 0)


# ----------------------------------------------------------------------------- periods


async def recorded_periods(conn: AsyncConnection, names: Collection[str]) -> dict[str, int]:
    """The periods in force (years) under ``names``; a name never recorded is absent."""
    rows = await conn.execute(
        select(LedgerMetaRow.name, LedgerMetaRow.value).where(LedgerMetaRow.name.in_(list(names)))
    )
    return {name: int(value) for name, value in rows}


async def record_period(conn: AsyncConnection, name: str, years: int) -> None:
    await conn.execute(insert(LedgerMetaRow).values(name=name, value=str(years)))


async def change_period(conn: AsyncConnection, name: str, years: int) -> None:
    await conn.execute(
        update(LedgerMetaRow).where(LedgerMetaRow.name == name).values(value=str(years))
    )


# ----------------------------------------------------------------------------- meter history


async def load_anchor(conn: AsyncConnection, link_id: str) -> LedgerAnchor | None:
    row = (await conn.execute(select(*_ANCHOR).where(_a.link_id == link_id))).one_or_none()
    return None if row is None else LedgerAnchor._make(row)


async def first_seq_from(conn: AsyncConnection, link_id: str, at_us: int) -> int | None:
    """The first entry at or after ``at_us``, if any."""
    return await conn.scalar(
        select(_m.seq).where(_m.link_id == link_id, _m.at_us >= at_us).order_by(_m.seq).limit(1)
    )


async def last_seq(conn: AsyncConnection, link_id: str) -> int | None:
    return await conn.scalar(
        select(_m.seq).where(_m.link_id == link_id).order_by(_m.seq.desc()).limit(1)
    )


async def entries_through(conn: AsyncConnection, link_id: str, seq: int) -> list[SealedEntry]:
    """The link's entries up to ``seq``, in sequence order."""
    q = select(*SEALED_COLUMNS).where(_m.link_id == link_id, _m.seq <= seq).order_by(_m.seq)
    return [SealedEntry._make(r) for r in await conn.execute(q)]


async def purge_manifest(conn: AsyncConnection, link_id: str, seq: int) -> dict[str, Any] | None:
    """What the purge that left the chain's anchor at ``seq`` sealed, if its entry is kept."""
    q = select(_m.details).where(_m.link_id == link_id, _m.kind == str(EntryKind.RETENTION_PURGE))
    for details in (await conn.scalars(q)).all():
        d = entry_details(details)
        if d.get("last_seq") == seq:
            return dict(d)
    return None


MOVES_BATCH = 5_000


async def entry_moves(
    conn: AsyncConnection, link_id: str, after_seq: int, through_seq: int
) -> AsyncIterator[list[tuple[int, str, int, int, str]]]:
    """The link's entries ``after_seq + 1 .. through_seq`` as (seq, kind, meter before, delta,
    details), in keyset batches: what the meters of its levels follow from."""
    seq = after_seq
    while seq < through_seq:
        q = (
            select(_m.seq, _m.kind, _m.meter_before_units, _m.delta_units, _m.details)
            .where(_m.link_id == link_id, _m.seq > seq, _m.seq <= through_seq)
            .order_by(_m.seq)
            .limit(MOVES_BATCH)
        )
        rows = [(int(a), str(b), int(c), int(d), str(e)) for a, b, c, d, e in await conn.execute(q)]
        if not rows:
            return
        yield rows
        seq = rows[-1][0]


async def delete_entries_through(conn: AsyncConnection, link_id: str, seq: int) -> int:
    return await _removed(conn, delete(_m).where(_m.link_id == link_id, _m.seq <= seq))


async def delete_hits_before(
    conn: AsyncConnection, link_id: str, cutoff_us: int, *, kept_after_seq: int
) -> int:
    """The link's hits before ``cutoff_us`` that no entry after ``kept_after_seq`` names."""
    kept = select(_m.hit_id).where(
        _m.link_id == link_id, _m.seq > kept_after_seq, _m.hit_id.is_not(None)
    )
    return await _removed(
        conn,
        delete(HitRow).where(
            HitRow.link_id == link_id, HitRow.at_us < cutoff_us, HitRow.hit_id.not_in(kept)
        ),
    )


async def delete_anomalies_before(
    conn: AsyncConnection, link_id: str, cutoff_us: int, *, kept_after_seq: int
) -> int:
    """The link's anomalies before ``cutoff_us`` that no entry after ``kept_after_seq`` names."""
    kept = select(_m.anomaly_id).where(
        _m.link_id == link_id, _m.seq > kept_after_seq, _m.anomaly_id.is_not(None)
    )
    return await _removed(
        conn,
        delete(AnomalyRow).where(
            AnomalyRow.link_id == link_id,
            AnomalyRow.at_us < cutoff_us,
            AnomalyRow.anomaly_id.not_in(kept),
        ),
    )


async def correction_documents(conn: AsyncConnection, correction_ids: Sequence[str]) -> set[str]:
    """The documents the corrections keep."""
    q = select(CorrectionRow.document_sha256).where(
        CorrectionRow.correction_id.in_(correction_ids),
        CorrectionRow.document_sha256.is_not(None),
    )
    return {d for d in (await conn.scalars(q)).all() if d is not None}


def _finished_requests(
    link_id: str, cutoff_us: int, correction_ids: Sequence[str]
) -> ColumnElement[bool]:
    # Finished: applied as one of the corrections removed, or rejected.
    finished = or_(_cr.correction_id.in_(correction_ids), _cr.status == "rejected")
    return and_(_cr.link_id == link_id, _cr.at_us < cutoff_us, finished)


async def finished_request_documents(
    conn: AsyncConnection, link_id: str, cutoff_us: int, correction_ids: Sequence[str]
) -> set[str]:
    """The documents of the link's requests before ``cutoff_us`` applied as one of
    ``correction_ids`` or rejected."""
    q = select(_cr.document_sha256).where(_finished_requests(link_id, cutoff_us, correction_ids))
    return {d for d in (await conn.scalars(q)).all() if d is not None}


async def delete_finished_requests(
    conn: AsyncConnection, link_id: str, cutoff_us: int, correction_ids: Sequence[str]
) -> int:
    """The requests ``finished_request_documents`` reads."""
    return await _removed(
        conn, delete(_cr).where(_finished_requests(link_id, cutoff_us, correction_ids))
    )


async def delete_corrections(conn: AsyncConnection, correction_ids: Sequence[str]) -> int:
    return await _removed(
        conn, delete(CorrectionRow).where(CorrectionRow.correction_id.in_(correction_ids))
    )


async def documents_in_use(conn: AsyncConnection) -> set[str]:
    """Every document a correction or a correction request still keeps."""
    q = (
        select(CorrectionRow.document_sha256)
        .where(CorrectionRow.document_sha256.is_not(None))
        .union(select(_cr.document_sha256).where(_cr.document_sha256.is_not(None)))
    )
    return {d for d in (await conn.scalars(q)).all() if d is not None}


async def delete_documents_before(
    conn: AsyncConnection, sha256s: Sequence[str], cutoff_us: int
) -> int:
    return await _removed(
        conn,
        delete(DocumentRow).where(DocumentRow.sha256.in_(sha256s), DocumentRow.at_us < cutoff_us),
    )


async def write_anchor(
    conn: AsyncConnection, link_id: str, anchor: LedgerAnchor, *, replacing: bool
) -> None:
    """The link's ledger anchor, first written or ``replacing`` the one it had."""
    if replacing:
        await conn.execute(update(_a).where(_a.link_id == link_id).values(**anchor._asdict()))
    else:
        await conn.execute(insert(_a).values(link_id=link_id, **anchor._asdict()))


# ----------------------------------------------------------------------------- integrity


async def returned_before(conn: AsyncConnection, cutoff_us: int) -> list[ExpiredRecord]:
    """Integrity records of devices back in play before ``cutoff_us``, oldest removal first."""
    q = (
        select(*_EXPIRED)
        .where(_r.returned_at_us.is_not(None), _r.returned_at_us < cutoff_us)
        .order_by(_r.removed_at_us)
    )
    return [ExpiredRecord._make(r) for r in await conn.execute(q)]


async def delete_remedial_actions(conn: AsyncConnection, record_ids: Sequence[str]) -> int:
    return await _removed(
        conn, delete(RemedialActionRow).where(RemedialActionRow.record_id.in_(record_ids))
    )


async def delete_integrity_records(conn: AsyncConnection, record_ids: Sequence[str]) -> None:
    await conn.execute(delete(_r).where(_r.record_id.in_(record_ids)))
