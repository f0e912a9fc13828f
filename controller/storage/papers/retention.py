"""What the retention purge reads and removes: the periods in force, a link's oldest history
with what hangs on it (hits, anomalies, corrections and their requests, documents), its ledger
anchor, and the integrity records past their period.

Each removal is one statement; the purge decides what goes and in which order, in its own
transaction. A link's history is read from its rows and its blocks of closed days alike
(``Entries``), and a block goes whole: its row is deleted, as the rows of the entries around
it are.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Collection, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Delete, and_, delete, func, insert, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from controller.core.ledger import SealedEntry
from controller.core.reducer import EntryKind
from controller.core.reducer.conservation import entry_details
from controller.storage.blocks import never_blocked
from controller.storage.entries import Entries
from controller.storage.models import (
    AnomalyRow,
    CorrectionRow,
    DocumentRow,
    HitRow,
    LedgerAnchorRow,
    LedgerMetaRow,
    MeterBlockRow,
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


_m, _b, _a = MeterEntryRow, MeterBlockRow, LedgerAnchorRow
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


async def database_now_us(conn: AsyncConnection) -> int:
    """Now by the database's own clock, the one its guard of the retention period reads
    (migration 0014), to the second."""
    if conn.dialect.name == "postgresql":
        q = text("SELECT (EXTRACT(EPOCH FROM now()) * 1000000)::bigint")
    else:
        q = text("SELECT CAST(strftime('%s', 'now') AS INTEGER) * 1000000")
    return int(await conn.scalar(q) or 0)


async def load_anchor(conn: AsyncConnection, link_id: str) -> LedgerAnchor | None:
    row = (await conn.execute(select(*_ANCHOR).where(_a.link_id == link_id))).one_or_none()
    return None if row is None else LedgerAnchor._make(row)


async def first_seq_from(conn: AsyncConnection, link_id: str, at_us: int) -> int | None:
    """The first entry at or after ``at_us``, if any."""
    return await Entries(conn).first_at(link_id, at_us)


async def last_seq(conn: AsyncConnection, link_id: str) -> int | None:
    return (await Entries(conn).ends([link_id])).get(link_id)


async def whole_blocks_through(conn: AsyncConnection, link_id: str, seq: int) -> int:
    """``seq``, or the entry before the block that holds entries on both sides of it: a cut
    there leaves every block whole, removed or kept."""
    while True:
        block = (
            await conn.execute(
                select(_b.first_seq, _b.last_seq)
                .where(_b.link_id == link_id, _b.first_seq <= seq)
                .order_by(_b.first_seq.desc())
                .limit(1)
            )
        ).one_or_none()
        if block is None or block.last_seq <= seq:
            return seq
        seq = block.first_seq - 1


def entries_through(
    conn: AsyncConnection, link_id: str, after_seq: int, through_seq: int
) -> AsyncGenerator[SealedEntry]:
    """The link's entries ``after_seq + 1 .. through_seq``, in order, read as they are used."""
    return Entries(conn).stream(link_id, after_seq, through_seq=through_seq)


async def purge_manifest(conn: AsyncConnection, link_id: str, seq: int) -> dict[str, Any] | None:
    """What the purge that left the chain's anchor at ``seq`` sealed, if its entry is kept."""
    q = select(_m.details).where(
        _m.link_id == link_id, _m.kind.in_(never_blocked([EntryKind.RETENTION_PURGE]))
    )
    for details in (await conn.scalars(q)).all():
        d = entry_details(details)
        if d.get("last_seq") == seq:
            return dict(d)
    return None


async def delete_entries_through(conn: AsyncConnection, link_id: str, seq: int) -> int:
    """The link's entries up to ``seq``, rows and blocks (a cut that leaves every block whole,
    ``whole_blocks_through``); how many entries went."""
    held = await conn.scalar(
        select(func.coalesce(func.sum(_b.entries), 0)).where(
            _b.link_id == link_id, _b.last_seq <= seq
        )
    )
    await conn.execute(delete(_b).where(_b.link_id == link_id, _b.last_seq <= seq))
    rows = await _removed(conn, delete(_m).where(_m.link_id == link_id, _m.seq <= seq))
    return rows + int(held or 0)


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
