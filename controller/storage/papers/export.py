"""The rows of the auditors' exports, streamed from the database a batch at a time so a
five-year export never sits in memory: history entries and reductions with their corrections
(the hits stream from ``storage.hits``). Periods are half-open ``[since_us, until_us)``; no
``link_id``: every link.

The history is read link by link, each link's rows merged with its blocks of closed days, a
block at a time (``Entries.read``): the memory of a batch and a block, whatever the period.
Reductions are rows alone: no block holds an entry that lowered a meter."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Row, Select, select
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.ledger import SealedEntry
from controller.storage.entries import SEALED_COLUMNS, Entries, Stretch, entry_of
from controller.storage.models import CorrectionRow, LinkRow, MeterEntryRow
from controller.storage.papers.correction_records import (
    NOTE_COLUMNS,
    CorrectionNote,
    correction_note,
)


class Scope(NamedTuple):
    link_id: str | None  # None: every link
    since_us: int
    until_us: int


class Reduction(NamedTuple):
    """An entry that lowered a meter, with the correction that explains it, if one does."""

    entry: SealedEntry
    correction: CorrectionNote | None


_m, _c = MeterEntryRow, CorrectionRow
_NOTE_AT = len(SEALED_COLUMNS)


async def opened_in_demonstration(conn: AsyncConnection, link_id: str | None) -> set[str]:
    """The links exported (``link_id``; None: every link) that their history says were opened
    in demonstration mode."""
    ids = [link_id] if link_id is not None else list(await conn.scalars(select(LinkRow.link_id)))
    return await Entries(conn).opened_in_demonstration(ids)


async def _batches(
    conn: AsyncConnection, q: Select[*tuple[Any, ...]], batch: int
) -> AsyncIterator[Sequence[Row[*tuple[Any, ...]]]]:
    result = await conn.stream(q.execution_options(yield_per=batch))
    async for rows in result.partitions():
        yield rows


def _entries(q: Select[*tuple[Any, ...]], scope: Scope) -> Select[*tuple[Any, ...]]:
    q = q.where(_m.at_us >= scope.since_us, _m.at_us < scope.until_us)
    if scope.link_id:
        q = q.where(_m.link_id == scope.link_id)
    return q.order_by(_m.link_id, _m.seq)


async def history_batches(
    conn: AsyncConnection, *, scope: Scope, batch: int
) -> AsyncIterator[list[SealedEntry]]:
    """History entries by link, then sequence."""
    if scope.link_id:
        links = [scope.link_id]
    else:
        links = list(await conn.scalars(select(LinkRow.link_id).order_by(LinkRow.link_id)))
    entries = Entries(conn)
    q = select(*SEALED_COLUMNS)
    for link_id in links:
        stretch = Stretch(link_id=link_id, since_us=scope.since_us, until_us=scope.until_us)
        async for rows in entries.read(q, stretch, batch=batch):
            yield [entry_of(r) for r in rows]


async def reduction_batches(
    conn: AsyncConnection, *, scope: Scope, batch: int
) -> AsyncIterator[list[Reduction]]:
    """Entries that lowered a meter, by link, then sequence (rows alone: no block holds
    one, ``Stretch.in_blocks``)."""
    q = _entries(
        select(*SEALED_COLUMNS, *NOTE_COLUMNS)
        .outerjoin(_c, _c.correction_id == _m.correction_id)
        .where(_m.delta_units < 0),
        scope,
    )
    async for rows in _batches(conn, q, batch):
        yield [
            Reduction(SealedEntry._make(r[:_NOTE_AT]), correction_note(r[_NOTE_AT:])) for r in rows
        ]
