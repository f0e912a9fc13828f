"""The meter history: appending sealed entries and the reads made of a link's chain.

Entries come back as ``SealedEntry`` (their columns in ``ENTRY_COLUMNS`` order), never as
database rows.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Sequence
from contextlib import AsyncExitStack, aclosing
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Select, and_, func, or_, select, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from controller.core.ledger import ENTRY_COLUMNS, Anchor, SealedEntry
from controller.core.reducer import EntryKind
from controller.core.reducer.conservation import entry_details
from controller.storage.blocks import (
    BLOCK_FORM,
    BLOCK_KINDS,
    BlockRange,
    Packed,
    decode,
    never_blocked,
)
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
    "Stretch",
    "entry_of",
]

# The Core table: a list of parameters becomes one executemany (one prepared statement,
# pipelined), where the ORM bulk path would build a statement per row.
ENTRIES = table_of(MeterEntryRow)
BLOCKS = table_of(MeterBlockRow)
SEALED_COLUMNS = [ENTRIES.c[c] for c in ENTRY_COLUMNS]  # what a SealedEntry is read from
_SEALS_PER_QUERY = 500
BATCH = 2_000  # rows a streamed read takes from the database at a time
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


@dataclass(frozen=True, slots=True, kw_only=True)
class Stretch:
    """Which of one link's entries a read wants: those after ``after_seq`` and through
    ``through_seq``, made in ``[since_us, until_us)``, of ``kinds``, and with ``reductions``
    only those that lowered the meter (a bound of None: none). The one test, put to a row in
    SQL (``rows``) and to an entry of a block in Python (``holds``)."""

    link_id: str
    after_seq: int = 0
    through_seq: int | None = None
    since_us: int | None = None
    until_us: int | None = None
    kinds: frozenset[str] | None = None
    reductions: bool = False

    def rows(self) -> list[ColumnElement[bool]]:
        c = ENTRIES.c
        out = [c.link_id == self.link_id, c.seq > self.after_seq]
        if self.through_seq is not None:
            out.append(c.seq <= self.through_seq)
        if self.since_us is not None:
            out.append(c.at_us >= self.since_us)
        if self.until_us is not None:
            out.append(c.at_us < self.until_us)
        if self.kinds is not None:
            out.append(c.kind.in_(sorted(self.kinds)))
        if self.reductions:
            out.append(c.delta_units < 0)
        return out

    @property
    def in_blocks(self) -> bool:
        """May a block hold an entry wanted? None holds a reduction, nor an entry of a kind
        outside ``BLOCK_KINDS`` (``blocks.blockable``)."""
        return not self.reductions and (
            self.kinds is None or not BLOCK_KINDS.isdisjoint(self.kinds)
        )

    def blocks(self) -> list[ColumnElement[bool]]:
        """The blocks that may hold an entry wanted, by what their rows say of them."""
        c = BLOCKS.c
        out = [c.link_id == self.link_id, c.last_seq > self.after_seq]
        if self.through_seq is not None:
            out.append(c.first_seq <= self.through_seq)
        if self.since_us is not None:
            out.append(c.last_at_us >= self.since_us)
        if self.until_us is not None:
            out.append(c.first_at_us < self.until_us)
        return out

    def holds(self, e: SealedEntry) -> bool:
        return (
            e.seq > self.after_seq
            and (self.through_seq is None or e.seq <= self.through_seq)
            and (self.since_us is None or e.at_us >= self.since_us)
            and (self.until_us is None or e.at_us < self.until_us)
            and (self.kinds is None or e.kind in self.kinds)
            and (not self.reductions or e.delta_units < 0)
        )


class Entries:
    """The meter history, read and appended through one connection.

    An entry is a row or in a block of a closed day (``controller.storage.blocks``): a read
    of entries of any kind takes both (``read``, ``stream``); a read by a kind no block holds
    (a hit's, a change's, a purge's) takes rows alone, and says so (``never_blocked``)."""

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
        self,
        link_id: str,
        after_seq: int,
        *,
        limit: int | None = None,
        through_seq: int | None = None,
    ) -> AsyncGenerator[SealedEntry]:
        """All the link's entries after ``after_seq`` (through ``through_seq``, or the first
        ``limit`` of them), in order, read as they are used: the rows and the blocks of closed
        days, merged."""
        stretch = Stretch(link_id=link_id, after_seq=after_seq, through_seq=through_seq)
        async with aclosing(self.read(select(*SEALED_COLUMNS), stretch, limit=limit)) as lines:
            async for batch in lines:
                for r in batch:
                    yield entry_of(r)

    async def read(
        self,
        q: Select[*tuple[Any, ...]],
        stretch: Stretch,
        *,
        shape: Callable[[SealedEntry], Sequence[Any]] | None = None,
        limit: int | None = None,
        batch: int = BATCH,
    ) -> AsyncGenerator[list[Sequence[Any]]]:
        """The entries ``stretch`` wants, in sequence order, in batches of about ``batch``:
        the rows ``q`` selects (its first two columns a row's link and sequence number, as in
        ``SEALED_COLUMNS``; filtered and ordered here), and between them the entries of the
        link's blocks made rows of the same columns by ``shape``. By default an entry of a
        block is its own columns and NULL for each further one: it names no hit, anomaly or
        correction, so what ``q`` joins on them finds nothing, as for such a row. Rows are
        streamed and blocks read one at a time: the memory of a batch and a block, however
        long the stretch."""
        if shape is None:
            pad = (None,) * (len(q.selected_columns) - len(SEALED_COLUMNS))
            shape = _as_row(pad)
        q = q.where(*stretch.rows()).order_by(ENTRIES.c.seq)
        if limit is not None:
            q = q.limit(limit)
            batch = min(batch, limit)
        async with AsyncExitStack() as stack:
            rows = await self.conn.stream(q.execution_options(yield_per=batch))
            stack.push_async_callback(rows.close)
            # Each generator is closed here, not left to the collector, when the read stops.
            blocks = await stack.enter_async_context(aclosing(self.blocks_after(stretch)))
            parts = await stack.enter_async_context(
                aclosing(cast(AsyncGenerator[Sequence[Any]], rows.partitions()))
            )
            lines = await stack.enter_async_context(aclosing(merged(parts, blocks, shape)))
            out = await stack.enter_async_context(aclosing(_rebatched(lines, batch)))
            n = 0
            async for chunk in out:
                if limit is not None and n + len(chunk) >= limit:
                    yield chunk[: limit - n]
                    return
                n += len(chunk)
                yield chunk

    async def blocks_after(self, stretch: Stretch) -> AsyncGenerator[list[SealedEntry]]:
        """The entries of the link's blocks that ``stretch`` wants, in order, a block read at
        a time (each block's wanted, when it has any; nothing read when no block can hold
        one)."""
        if not stretch.in_blocks:
            return
        c = BLOCKS.c
        link = c.link_id == stretch.link_id
        # A link's blocks do not reach into one another, and an entry's time never goes back
        # along a chain: no block before the last to start at or before ``after_seq``, nor
        # before the last to start before ``since_us``, holds an entry wanted.
        # The blocks read start after ``above``: never ``after_seq + 1``, which the largest
        # position a reader may ask for would take past the database's integers.
        start = await self.conn.scalar(
            select(func.max(c.first_seq)).where(link, c.first_seq <= stretch.after_seq)
        )
        above = stretch.after_seq if start is None else start - 1
        if stretch.since_us is not None:
            started = await self.conn.scalar(
                select(c.first_seq)
                .where(link, c.first_at_us < stretch.since_us)
                .order_by(c.first_at_us.desc(), c.first_seq.desc())
                .limit(1)
            )
            if started is not None:
                above = max(above, started - 1)
        while True:
            row = (
                await self.conn.execute(
                    select(c.first_seq, c.body)
                    .where(*stretch.blocks(), c.first_seq > above)
                    .order_by(c.first_seq)
                    .limit(1)
                )
            ).one_or_none()
            if row is None:
                return
            entries = decode(stretch.link_id, row.body)
            wanted = [e for e in entries if stretch.holds(e)]
            if wanted:
                yield wanted
            if stretch.until_us is not None and entries and entries[-1].at_us >= stretch.until_us:
                return  # the blocks after it are later still
            above = row.first_seq

    async def first_at(self, link_id: str, at_us: int) -> int | None:
        """The sequence number of the link's first entry made at or after ``at_us``, if any
        (an entry's time never goes back along a chain: in time order, it is the first)."""
        c = ENTRIES.c
        seq: int | None = await self.conn.scalar(
            select(c.seq)
            .where(c.link_id == link_id, c.at_us >= at_us)
            .order_by(c.at_us, c.seq)
            .limit(1)
        )
        before = Stretch(
            link_id=link_id, since_us=at_us, through_seq=None if seq is None else seq - 1
        )
        async with aclosing(self.blocks_after(before)) as blocks:
            async for entries in blocks:
                return entries[0].seq
        return seq

    async def last_before(self, link_id: str, at_us: int) -> SealedEntry | None:
        """The link's last entry made before ``at_us``, if any."""
        c, b = ENTRIES.c, BLOCKS.c
        row = (
            await self.conn.execute(
                select(*SEALED_COLUMNS)
                .where(c.link_id == link_id, c.at_us < at_us)
                .order_by(c.seq.desc())
                .limit(1)
            )
        ).one_or_none()
        last = None if row is None else SealedEntry._make(row)
        # The block that holds the last entry before ``at_us``, if one does, is the last to
        # start before it.
        body = await self.conn.scalar(
            select(b.body)
            .where(b.link_id == link_id, b.first_at_us < at_us)
            .order_by(b.first_at_us.desc(), b.first_seq.desc())
            .limit(1)
        )
        if body is not None:
            for e in reversed(decode(link_id, body)):
                if e.at_us < at_us:
                    return e if last is None or e.seq > last.seq else last
        return last

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

    async def add_block(self, block: Packed) -> BlockRange:
        """A block (``blocks.pack``) written; the caller deletes the rows of its entries
        (``remove_blocked``) in the same transaction."""
        r = block.range
        await self.conn.execute(
            BLOCKS.insert().values(
                link_id=block.link_id,
                first_seq=r.first_seq,
                last_seq=r.last_seq,
                first_at_us=r.first_at_us,
                last_at_us=r.last_at_us,
                entries=r.entries,
                form=BLOCK_FORM,
                body=block.body,
                runs=block.runs,
                seal=block.seal,
                signature=block.signature,
            )
        )
        return r

    async def block_spans(
        self, link_ids: Iterable[str] | None = None
    ) -> dict[str, tuple[list[int], list[int]]]:
        """Each link's blocks as the sequence numbers they span: (firsts, lasts), in order."""
        c = BLOCKS.c
        q = select(c.link_id, c.first_seq, c.last_seq).order_by(c.link_id, c.first_seq)
        if link_ids is not None:
            q = q.where(c.link_id.in_(list(link_ids)))
        out: dict[str, tuple[list[int], list[int]]] = {}
        for lid, f, last in await self.conn.execute(q):
            firsts, lasts = out.setdefault(lid, ([], []))
            firsts.append(f)
            lasts.append(last)
        return out

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
                    ENTRIES.c.kind.in_(never_blocked(kinds)),
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
            .where(ENTRIES.c.link_id == link_id, ENTRIES.c.kind.in_(never_blocked(kinds)))
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
                ENTRIES.c.kind.in_(never_blocked(kinds)),
            )
            .order_by(ENTRIES.c.seq.desc())
            .limit(1)
        )
        return kind

    async def last_seq_of(self, link_id: str, kinds: Iterable[EntryKind]) -> int | None:
        seq: int | None = await self.conn.scalar(
            select(func.max(ENTRIES.c.seq)).where(
                ENTRIES.c.link_id == link_id,
                ENTRIES.c.kind.in_(never_blocked(kinds)),
            )
        )
        return seq

    async def count_after(self, link_id: str, kind: EntryKind, after_seq: int) -> int:
        n = await self.conn.scalar(
            select(func.count())
            .select_from(ENTRIES)
            .where(
                ENTRIES.c.link_id == link_id,
                ENTRIES.c.kind.in_(never_blocked([kind])),
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


async def merged(
    rows: AsyncIterator[Sequence[Any]],
    blocks: AsyncIterator[list[SealedEntry]],
    shape: Callable[[SealedEntry], Sequence[Any]],
) -> AsyncGenerator[Sequence[Sequence[Any]]]:
    """Batches of a link's entry rows (their sequence number second, as in
    ``SEALED_COLUMNS``) and of its blocks' entries (made rows by ``shape``), each in sequence
    order, as batches of one sequence in order."""
    r: Sequence[Any] | None = await _next(rows)
    b: list[SealedEntry] | None = await _next(blocks)
    i = j = 0
    while r is not None or b is not None:
        if b is None:
            assert r is not None
            yield r[i:] if i else r
            r, i = await _next(rows), 0
        elif r is None:
            yield [shape(e) for e in b[j:]]
            b, j = await _next(blocks), 0
        else:
            out: list[Sequence[Any]] = []
            while i < len(r) and j < len(b):
                if r[i][1] < b[j].seq:
                    out.append(r[i])
                    i += 1
                else:
                    out.append(shape(b[j]))
                    j += 1
            if out:
                yield out
            if i == len(r):
                r, i = await _next(rows), 0
            if j == len(b):
                b, j = await _next(blocks), 0


async def _rebatched(batches: AsyncIterator[Sequence[Any]], size: int) -> AsyncGenerator[list[Any]]:
    """``batches`` as batches of at least ``size`` (the last: what is left), so that rows
    between blocks do not come one batch each."""
    out: list[Any] = []
    async for b in batches:
        out.extend(b)
        if len(out) >= size:
            yield out
            out = []
    if out:
        yield out


def entry_of(row: Sequence[Any]) -> SealedEntry:
    """An entry that ``Entries.read`` gave as a row of ``SEALED_COLUMNS`` (one of a block's
    comes as it is)."""
    return row if isinstance(row, SealedEntry) else SealedEntry._make(row)


def _as_row(pad: tuple[None, ...]) -> Callable[[SealedEntry], Sequence[Any]]:
    if not pad:
        return lambda e: e
    return lambda e: (*e, *pad)


async def _next(it: Any) -> Any:
    try:
        return await it.__anext__()
    except StopAsyncIteration:
        return None
