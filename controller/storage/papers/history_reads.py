"""Reads of the records for people: a page of meter history, the meter over time
and the links' names. Reads only; periods are half-open ``[since_us, until_us)``. Entries
are read from rows and blocks alike (``Entries.read``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.ledger import SealedEntry
from controller.storage.entries import ENTRIES, SEALED_COLUMNS, Entries, Stretch
from controller.storage.models import (
    CorrectionRow,
    DocumentRow,
    LinkRow,
    MeterEntryRow,
)
from controller.storage.papers.correction_records import (
    NOTE_COLUMNS,
    CorrectionNote,
    correction_note,
)
from controller.storage.papers.documents import FILE_COLUMNS, DocumentFile, document_file
from controller.storage.typed_rows import columns


class HistoryLine(NamedTuple):
    """A history entry with its correction and the correction's document, if it has them."""

    entry: SealedEntry
    correction: CorrectionNote | None
    document: DocumentFile | None


class MeterReading(NamedTuple):
    at_us: int
    meter_before_units: int
    meter_after_units: int


_m, _c, _d = MeterEntryRow, CorrectionRow, DocumentRow
# A line's columns: the entry's, its correction's, the document's, in that order.
_HISTORY = (*SEALED_COLUMNS, *NOTE_COLUMNS, *FILE_COLUMNS)
_NOTE_AT = len(SEALED_COLUMNS)
_FILE_AT = _NOTE_AT + len(NOTE_COLUMNS)
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
    )
    stretch = Stretch(
        link_id=link_id,
        after_seq=after_seq,
        since_us=since_us,
        until_us=until_us,
        reductions=reductions_only,
    )
    return [
        HistoryLine(
            SealedEntry._make(r[:_NOTE_AT]),
            correction_note(r[_NOTE_AT:_FILE_AT]),
            document_file(r[_FILE_AT:]),
        )
        async for rows in Entries(conn).read(q, stretch, limit=limit)
        for r in rows
    ]


async def meter_readings(
    conn: AsyncConnection, link_id: str, *, since_us: int, until_us: int, batch: int
) -> AsyncIterator[list[MeterReading]]:
    """The meter before and after each entry of the period, in sequence order, ``batch``
    entries at a time as the database sends them."""
    c = ENTRIES.c
    q = select(c.link_id, c.seq, *_READING)
    stretch = Stretch(link_id=link_id, since_us=since_us, until_us=until_us)
    async for rows in Entries(conn).read(q, stretch, shape=_reading_row, batch=batch):
        yield [MeterReading._make(r[2:]) for r in rows]


def _reading_row(e: SealedEntry) -> tuple[str, int, int, int, int]:
    return (e.link_id, e.seq, e.at_us, e.meter_before_units, e.meter_after_units)


async def link_names(conn: AsyncConnection) -> dict[str, str]:
    return {
        link_id: name for link_id, name in await conn.execute(select(LinkRow.link_id, LinkRow.name))
    }
