"""The meter history: appending sealed entries and the reads made of a link's chain.

Entries come back as ``SealedEntry`` (their columns in ``ENTRY_COLUMNS`` order), never as
database rows.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

from sqlalchemy import and_, func, or_, select, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.ledger import ENTRY_COLUMNS, Anchor, SealedEntry
from controller.core.reducer import EntryKind
from controller.core.reducer.conservation import entry_details
from controller.storage.blocks import BLOCK_FORM, BLOCK_KINDS, BlockRange, decode, encode
from controller.storage.models import LedgerAnchorRow, MeterBlockRow, MeterEntryRow, table_of

__all__ = [
    "ENTRIES",
    "FROM_READINGS",
    "PAYTABLE_KINDS",
    "RATE_KINDS",
    "RESET_KINDS",
    "SEALED_COLUMNS",
    "TAKING_EFFECT",
    "Entries",
]

# The Core table: a list of parameters becomes one executemany (one prepared statement,
# pipelined), where the ORM bulk path would build a statement per row.
ENTRIES = table_of(MeterEntryRow)
BLOCKS = table_of(MeterBlockRow)
SEALED_COLUMNS = [ENTRIES.c[c] for c in ENTRY_COLUMNS]  # what a SealedEntry is read from
_SEALS_PER_QUERY = 500
# A hit's entries carry the hit's own time; a minute's margin costs nothing on the index.
_HIT_ENTRY_WITHIN_US = 60_000_000

# Entries made from a table's reading: their time is the reading's, which its counter row keeps.
FROM_READINGS = frozenset(
    {
        EntryKind.CONTRIBUTION,
        EntryKind.TABLE_BASELINE,
        EntryKind.TABLE_COUNTER_RESET,
        EntryKind.ANOMALY_HELD,
        EntryKind.CREDITS_REFUSED,
        EntryKind.TABLE_ONLINE,
        EntryKind.TABLE_AHEAD,
    }
)
# Entries that set a parameter, with what they set it to.
RATE_KINDS = frozenset({EntryKind.LINK_OPENED, EntryKind.RATE_CHANGED})
RESET_KINDS = frozenset({EntryKind.LINK_OPENED, EntryKind.RESET_AMOUNT_CHANGED})
PAYTABLE_KINDS = frozenset({EntryKind.LINK_OPENED, EntryKind.PAYTABLE_CHANGED})
# Entries that record an approved change taking effect (they name their submission).
TAKING_EFFECT = frozenset(
    {
        EntryKind.RATE_CHANGED,
        EntryKind.RESET_AMOUNT_CHANGED,
        EntryKind.PAYTABLE_CHANGED,
        EntryKind.LEVELS_CHANGED,
    }
)


class Entries:
    """The meter history, read and appended through one connection."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    async def append(self, entries: Sequence[SealedEntry]) -> None:
        if not entries:
            return
        conn = self.conn
        if conn.dialect.name == "postgresql":
            # COPY, in this same transaction: the history is the floor's busiest table.
            # Check constraints hold for COPY as for INSERT.
            raw = await conn.get_raw_connection()
            driver: Any = raw.driver_connection
            await driver.copy_records_to_table(
                "meter_entries", records=entries, columns=ENTRY_COLUMNS
            )
        else:
            await conn.execute(ENTRIES.insert(), [e.as_row() for e in entries])

    async def anchor(self, link_id: str) -> Anchor | None:
        """Where the link's chain starts after a retention purge (None: at its beginning)."""
        return (await self.anchors([link_id])).get(link_id)

    async def anchors(self, link_ids: Sequence[str] | None = None) -> dict[str, Anchor]:
        """The anchors of the given links (of all, without ``link_ids``), by link."""
        a = LedgerAnchorRow
        q = select(a.link_id, a.seq, a.hash, a.meter_units)
        if link_ids is not None:
            q = q.where(a.link_id.in_(list(link_ids)))
        return {lid: Anchor(seq, h, meter) for lid, seq, h, meter in await self.conn.execute(q)}

    async def extents(self) -> dict[str, tuple[int, int]]:
        """Every chain's first and last sequence number in the table, by link."""
        m, b = MeterEntryRow, MeterBlockRow
        out: dict[str, tuple[int, int]] = {}
        for q in (
            select(m.link_id, func.min(m.seq), func.max(m.seq)).group_by(m.link_id),
            select(b.link_id, func.min(b.first_seq), func.max(b.last_seq)).group_by(b.link_id),
        ):
            for lid, lo, hi in await self.conn.execute(q):
                was = out.get(lid)
                out[lid] = (lo, hi) if was is None else (min(was[0], lo), max(was[1], hi))
        return out

    async def purges(self) -> dict[str, list[dict[str, Any]]]:
        """What each chain's retention purge entries say (where the chain resumes), by link."""
        m = MeterEntryRow
        out: dict[str, list[dict[str, Any]]] = {}
        for link_id, details in await self.conn.execute(
            select(m.link_id, m.details).where(m.kind == str(EntryKind.RETENTION_PURGE))
        ):
            out.setdefault(link_id, []).append(dict(entry_details(details)))
        return out

    async def seals(self, pairs: Sequence[tuple[str, int]]) -> dict[tuple[str, int], str]:
        """The seals of the given (link, sequence number) entries that exist."""
        out: dict[tuple[str, int], str] = {}
        for i in range(0, len(pairs), _SEALS_PER_QUERY):
            chunk = pairs[i : i + _SEALS_PER_QUERY]
            for lid, seq, h in await self.conn.execute(
                select(ENTRIES.c.link_id, ENTRIES.c.seq, ENTRIES.c.hash).where(
                    tuple_(ENTRIES.c.link_id, ENTRIES.c.seq).in_(chunk)
                )
            ):
                out[(lid, seq)] = h
        missing = [p for p in pairs if p not in out]
        for e in (await self._from_blocks(missing)).values():
            out[(e.link_id, e.seq)] = e.hash
        return out

    async def after(self, link_id: str, after_seq: int, limit: int) -> list[SealedEntry]:
        """Up to ``limit`` of the link's entries after ``after_seq``, in order."""
        out: list[SealedEntry] = []
        async for e in self.stream(link_id, after_seq, limit=limit):
            out.append(e)
        return out

    async def stream(
        self, link_id: str, after_seq: int, *, limit: int | None = None
    ) -> AsyncIterator[SealedEntry]:
        """All the link's entries after ``after_seq`` (or the first ``limit`` of them), in
        order, read as they are used: the rows and the blocks of closed days, merged."""
        q = (
            select(*SEALED_COLUMNS)
            .where(ENTRIES.c.link_id == link_id, ENTRIES.c.seq > after_seq)
            .order_by(ENTRIES.c.seq)
        )
        rows = await self.conn.stream(q if limit is None else q.limit(limit))
        blocks = self.blocks_after(link_id, after_seq)
        n = 0
        async for e in merged(rows, blocks):
            if e.seq <= after_seq:
                continue
            yield e
            n += 1
            if limit is not None and n >= limit:
                break
        await rows.close()

    async def blocks_after(self, link_id: str, after_seq: int) -> AsyncIterator[SealedEntry]:
        """The entries of the link's blocks that end after ``after_seq``, in order, a block
        read at a time."""
        cursor = after_seq
        while True:
            row = (
                await self.conn.execute(
                    select(BLOCKS.c.first_seq, BLOCKS.c.body)
                    .where(BLOCKS.c.link_id == link_id, BLOCKS.c.last_seq > cursor)
                    .order_by(BLOCKS.c.first_seq)
                    .limit(1)
                )
            ).one_or_none()
            if row is None:
                return
            block = decode(link_id, row.body)
            for e in block:
                yield e
            cursor = max(cursor, block[-1].seq if block else row.first_seq)

    async def _from_blocks(
        self, pairs: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], SealedEntry]:
        """The entries at (link, sequence number) ``pairs`` that blocks hold."""
        out: dict[tuple[str, int], SealedEntry] = {}
        for lid, seq in pairs:
            body = await self.conn.scalar(
                select(BLOCKS.c.body).where(
                    BLOCKS.c.link_id == lid, BLOCKS.c.first_seq <= seq, BLOCKS.c.last_seq >= seq
                )
            )
            if body is None:
                continue
            for e in decode(lid, body):
                if e.seq == seq:
                    out[(lid, seq)] = e
        return out

    async def add_block(self, entries: Sequence[SealedEntry]) -> BlockRange:
        """``entries`` (one link's, blockable, in order) as a block; the caller deletes their
        rows (``remove_blocked``) in the same transaction."""
        body, r = encode(entries)
        await self.conn.execute(
            BLOCKS.insert().values(
                link_id=entries[0].link_id,
                first_seq=r.first_seq,
                last_seq=r.last_seq,
                first_at_us=r.first_at_us,
                last_at_us=r.last_at_us,
                entries=r.entries,
                form=BLOCK_FORM,
                body=body,
            )
        )
        return r

    async def remove_blocked(self, link_id: str, seqs: Sequence[int]) -> int:
        """Delete the rows of entries a block now holds (the database lets only such rows go
        before the retention period ends)."""
        n = 0
        for i in range(0, len(seqs), _SEALS_PER_QUERY):
            chunk = list(seqs[i : i + _SEALS_PER_QUERY])
            result = await self.conn.execute(
                ENTRIES.delete().where(
                    ENTRIES.c.link_id == link_id,
                    ENTRIES.c.seq.in_(chunk),
                    ENTRIES.c.kind.in_(sorted(BLOCK_KINDS)),
                )
            )
            n += int(result.rowcount or 0)
        return n

    async def at(self, pairs: Iterable[tuple[str, int]]) -> dict[str, SealedEntry]:
        """Each named link's entry at the given sequence number, by link (those that exist)."""
        wanted = list(pairs)
        out = {
            row[0]: SealedEntry._make(row)
            for row in await self.conn.execute(
                select(*SEALED_COLUMNS).where(tuple_(ENTRIES.c.link_id, ENTRIES.c.seq).in_(wanted))
            )
        }
        missing = [(lid, seq) for lid, seq in wanted if lid not in out]
        for (lid, _), e in (await self._from_blocks(missing)).items():
            out[lid] = e
        return out

    async def of_hit(
        self, link_id: str, hit_id: str, at_us: int, kinds: Iterable[EntryKind]
    ) -> SealedEntry | None:
        """The link's first entry of ``kinds`` naming ``hit_id``, taken at ``at_us`` (a hit's
        award, or its pay at the table, is written at the hit's time): what a jackpot slip is
        checked against. The time keeps the read on the (link, time) index."""
        row = (
            await self.conn.execute(
                select(*SEALED_COLUMNS)
                .where(
                    ENTRIES.c.link_id == link_id,
                    ENTRIES.c.at_us >= at_us,
                    ENTRIES.c.at_us <= at_us + _HIT_ENTRY_WITHIN_US,
                    ENTRIES.c.hit_id == hit_id,
                    ENTRIES.c.kind.in_([str(k) for k in kinds]),
                )
                .order_by(ENTRIES.c.seq)
                .limit(1)
            )
        ).one_or_none()
        return None if row is None else SealedEntry._make(row)

    async def ends(self, link_ids: Sequence[str]) -> dict[str, int]:
        """How far each link's chain really goes: its greatest sequence number."""
        ids = list(link_ids)
        out: dict[str, int] = {}
        for q in (
            select(ENTRIES.c.link_id, func.max(ENTRIES.c.seq))
            .where(ENTRIES.c.link_id.in_(ids))
            .group_by(ENTRIES.c.link_id),
            select(BLOCKS.c.link_id, func.max(BLOCKS.c.last_seq))
            .where(BLOCKS.c.link_id.in_(ids))
            .group_by(BLOCKS.c.link_id),
        ):
            for lid, seq in await self.conn.execute(q):
                out[lid] = max(out.get(lid, seq), seq)
        return out

    async def opened_in_demonstration(self, link_ids: Sequence[str]) -> set[str]:
        """Links whose history says they were opened in demonstration mode: their first entry
        (``link_opened`` with ``"demonstration": true``) or, once the retention purge removed
        it, their newest purge's manifest, which carries the mark on. Each read is one index
        lookup (a link's first entry, the newest purge among its last entries)."""
        if not link_ids:
            return set()
        ids = list(link_ids)
        found: set[str] = set()
        first = await self.conn.execute(
            select(ENTRIES.c.link_id, ENTRIES.c.kind, ENTRIES.c.details).where(
                ENTRIES.c.link_id.in_(ids), ENTRIES.c.seq == 1
            )
        )
        opened: set[str] = set()
        for link_id, kind, details in first:
            opened.add(link_id)
            if kind == str(EntryKind.LINK_OPENED) and _demonstration(details):
                found.add(link_id)
        for link_id in sorted(set(ids) - opened):
            details = await self.conn.scalar(
                select(ENTRIES.c.details)
                .where(
                    ENTRIES.c.link_id == link_id,
                    ENTRIES.c.kind == str(EntryKind.RETENTION_PURGE),
                )
                .order_by(ENTRIES.c.seq.desc())
                .limit(1)
            )
            if details is not None and _demonstration(details):
                found.add(link_id)
        return found

    async def sealed_by_history(self, link_ids: Sequence[str]) -> set[str]:
        """Links whose history says their state is sealed: opened sealed, or sealed since."""
        if not link_ids:
            return set()
        marked = await self.conn.scalars(
            select(ENTRIES.c.link_id)
            .where(
                ENTRIES.c.link_id.in_(list(link_ids)),
                or_(
                    ENTRIES.c.kind == str(EntryKind.STATE_SEALED),
                    and_(
                        ENTRIES.c.kind == str(EntryKind.LINK_OPENED),
                        ENTRIES.c.details.like('%"state_sealed":true%'),
                    ),
                ),
            )
            .distinct()
        )
        return set(marked.all())

    async def said(self, link_id: str, kinds: Iterable[EntryKind], names: tuple[str, ...]) -> Any:
        """What the newest entry of ``kinds`` says of a parameter: the first of ``names`` its
        details hold, as JSON reads it (None: no such entry)."""
        details = await self.conn.scalar(
            select(ENTRIES.c.details)
            .where(ENTRIES.c.link_id == link_id, ENTRIES.c.kind.in_([str(k) for k in kinds]))
            .order_by(ENTRIES.c.seq.desc())
            .limit(1)
        )
        if details is None:
            return None
        d = entry_details(details)
        return next((d[n] for n in names if n in d), None)

    async def mystery_commitments(self, link_id: str) -> dict[str, tuple[int, str]]:
        """Each mystery level's newest commitment in the history: level key -> (entry
        sequence number, commitment)."""
        rows = await self.conn.execute(
            select(ENTRIES.c.seq, ENTRIES.c.details)
            .where(
                ENTRIES.c.link_id == link_id,
                ENTRIES.c.kind == str(EntryKind.MYSTERY_ARMED),
            )
            .order_by(ENTRIES.c.seq)
        )
        out: dict[str, tuple[int, str]] = {}
        for seq, details in rows:
            d = entry_details(details)
            out[str(d["level"])] = (seq, str(d["commitment"]))
        return out

    async def newest_at(
        self, link_id: str, table_id: str, kinds: Iterable[EntryKind]
    ) -> int | None:
        """The time of the table's newest entry of ``kinds`` (rows first, then the blocks
        newer than the newest row found, newest first)."""
        names = [str(k) for k in kinds]
        row = (
            await self.conn.execute(
                select(ENTRIES.c.seq, ENTRIES.c.at_us)
                .where(
                    ENTRIES.c.link_id == link_id,
                    ENTRIES.c.table_id == table_id,
                    ENTRIES.c.kind.in_(names),
                )
                .order_by(ENTRIES.c.seq.desc())
                .limit(1)
            )
        ).one_or_none()
        if BLOCK_KINDS.isdisjoint(names):
            return None if row is None else int(row.at_us)
        bodies = await self.conn.execute(
            select(BLOCKS.c.body)
            .where(BLOCKS.c.link_id == link_id, BLOCKS.c.last_seq > (0 if row is None else row.seq))
            .order_by(BLOCKS.c.first_seq.desc())
        )
        for (body,) in bodies:
            for e in reversed(decode(link_id, body)):
                if row is not None and e.seq <= row.seq:
                    break
                if e.table_id == table_id and e.kind in names:
                    return e.at_us
        return None if row is None else int(row.at_us)

    async def newest_kind(
        self, link_id: str, table_id: str, kinds: Iterable[EntryKind]
    ) -> str | None:
        """Which of ``kinds`` the table's newest entry among them is."""
        kind: str | None = await self.conn.scalar(
            select(ENTRIES.c.kind)
            .where(
                ENTRIES.c.link_id == link_id,
                ENTRIES.c.table_id == table_id,
                ENTRIES.c.kind.in_([str(k) for k in kinds]),
            )
            .order_by(ENTRIES.c.seq.desc())
            .limit(1)
        )
        return kind

    async def last_seq_of(self, link_id: str, kinds: Iterable[EntryKind]) -> int | None:
        seq: int | None = await self.conn.scalar(
            select(func.max(ENTRIES.c.seq)).where(
                ENTRIES.c.link_id == link_id,
                ENTRIES.c.kind.in_([str(k) for k in kinds]),
            )
        )
        return seq

    async def count_after(self, link_id: str, kind: EntryKind, after_seq: int) -> int:
        n = await self.conn.scalar(
            select(func.count())
            .select_from(ENTRIES)
            .where(
                ENTRIES.c.link_id == link_id,
                ENTRIES.c.kind == str(kind),
                ENTRIES.c.seq > after_seq,
            )
        )
        return int(n or 0)

    async def last_table_hit(self, link_id: str, table_id: str) -> str | None:
        """The id of the newest hit the table reported: not one entered by hand, nor one the
        controller decided at the table (a mystery level's, ``T1#L4.2``, or an envy bonus,
        ``T1#7/envy3``), which has no number of the table's hit FIFO."""
        hit_id: str | None = await self.conn.scalar(
            select(ENTRIES.c.hit_id)
            .where(
                ENTRIES.c.link_id == link_id,
                ENTRIES.c.table_id == table_id,
                ENTRIES.c.hit_id.is_not(None),
                ENTRIES.c.hit_id.not_like("%#manual-%"),
                ENTRIES.c.hit_id.not_like("%#L%"),
                ENTRIES.c.hit_id.not_like("%/envy%"),
            )
            .order_by(ENTRIES.c.seq.desc())
            .limit(1)
        )
        return hit_id


def _demonstration(details: str) -> bool:
    """Does an entry's details mark its link as opened in demonstration mode?"""
    if '"demonstration"' not in details:
        return False
    return entry_details(details).get("demonstration") is True


async def merged(rows: Any, blocks: AsyncIterator[SealedEntry]) -> AsyncIterator[SealedEntry]:
    """Entry rows (a streamed result of ``SEALED_COLUMNS``) and blocks' entries, each in
    sequence order, as one sequence in order."""
    row_it = rows.__aiter__()
    block_it = blocks.__aiter__()
    r = await _next(row_it)
    b = await _next(block_it)
    while r is not None or b is not None:
        if b is None or (r is not None and r[1] < b.seq):
            assert r is not None
            yield SealedEntry._make(r)
            r = await _next(row_it)
        else:
            yield b
            b = await _next(block_it)


async def _next(it: Any) -> Any:
    try:
        return await it.__anext__()
    except StopAsyncIteration:
        return None
