"""Reading the records for people: meter history, its chart, hits, anomalies, documents.

Reads only. Every amount leaves here as whole cents next to the exact units it came from, so a
page never has to divide; periods are half-open ``[since_us, until_us)`` in microseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TextIO

from controller.core.money import displayed_cents
from controller.core.reducer import LinkState
from controller.paperwork import meter_lines
from controller.paperwork.export import ExportKind, export
from controller.paperwork.floor_reports import FloorReport, floor_report
from controller.paperwork.jobs import Job, step
from controller.paperwork.links import Memory
from controller.paperwork.meter_lines import LevelHits
from controller.paperwork.slips import SlipSource, load_slip_source
from controller.periods import Clock, FloorPeriod, PeriodError, check_period
from controller.rules.jurisdictions import Jurisdiction
from controller.storage.anomalies import Anomalies, AnomalyRecord
from controller.storage.errors import NotFound
from controller.storage.handles import Database
from controller.storage.hits import HitFilter, HitRecord, Hits, unreleased_hits
from controller.storage.link_names import link_names as names_of_link
from controller.storage.papers import history_reads as stored
from controller.storage.papers.documents import Document, DocumentFile, load_document
from controller.storage.papers.history_reads import HistoryLine, MeterReading
from controller.storage.papers.reconciliation import award_entries
from controller.storage.unit_of_work import connected
from controller.storage.verify import VerifyReport, verify_ledger

MAX_PAGE = 5_000
MAX_POINTS = 2_000
# A position in a record (an entry's seq, an offset into a list): the most a database integer
# holds (64 bits, signed), so that no position asked for fails as the query is bound.
MAX_POSITION = 2**63 - 1


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryEntry:
    seq: int
    at_us: int
    kind: str
    meter_before_cents: int
    meter_after_cents: int
    delta_cents: int  # the change in what the meter shows (whole cents)
    delta_units: int  # the exact change, in 1/10,000 cent
    table_id: str | None
    hit_id: str | None
    anomaly_id: str | None
    correction_id: str | None
    explanation: str
    reduction_reason: str | None  # set on every entry that lowers the meter
    correction_category: str | None
    approved_by: str | None
    documents: tuple[DocumentFile, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryPage:
    entries: tuple[HistoryEntry, ...]
    next_after_seq: int | None  # pass as ``after_seq`` for the next page; None: no more


@dataclass(frozen=True, slots=True, kw_only=True)
class MeterPoint:
    at_us: int  # the last entry of the bucket
    meter_cents: int  # the meter after it
    low_cents: int  # the lowest the meter showed within the bucket
    high_cents: int


async def history(
    engine: Database,
    link_id: str,
    *,
    since_us: int,
    until_us: int,
    after_seq: int = 0,
    limit: int = 1_000,
    reductions_only: bool = False,
) -> HistoryPage:
    check_period(since_us, until_us)
    if not 1 <= limit <= MAX_PAGE:
        raise PeriodError(f"a page holds 1 to {MAX_PAGE} entries, not {limit}")
    async with connected(engine) as conn:
        rows = await stored.history_lines(
            conn,
            link_id,
            since_us=since_us,
            until_us=until_us,
            after_seq=after_seq,
            limit=limit + 1,
            reductions_only=reductions_only,
        )
    more = len(rows) > limit
    rows = rows[:limit]
    entries = tuple(_entry(r) for r in rows)
    return HistoryPage(entries=entries, next_after_seq=entries[-1].seq if more else None)


def _entry(line: HistoryLine) -> HistoryEntry:
    e, c, doc = line
    before = displayed_cents(e.meter_before_units)
    after = displayed_cents(e.meter_after_units)
    return HistoryEntry(
        seq=e.seq,
        at_us=e.at_us,
        kind=e.kind,
        meter_before_cents=before,
        meter_after_cents=after,
        delta_cents=after - before,
        delta_units=e.delta_units,
        table_id=e.table_id,
        hit_id=e.hit_id,
        anomaly_id=e.anomaly_id,
        correction_id=e.correction_id,
        explanation=e.explanation,
        reduction_reason=e.explanation if e.delta_units < 0 else None,
        correction_category=c and c.category,
        approved_by=c and c.approved_by,
        documents=() if doc is None else (doc,),
    )


async def meter_series(
    engine: Database,
    link_id: str,
    *,
    since_us: int,
    until_us: int,
    points: int = 500,
    job: Job | None = None,
) -> list[MeterPoint]:
    """The meter over a period in at most ``points`` buckets of equal time.

    Each bucket keeps its lowest and highest amount, so no award or correction vanishes from
    a chart however long the period. The entries are bucketed a batch at a time in ``job``'s
    worker thread while the next batch is read.
    """
    check_period(since_us, until_us)
    if not 2 <= points <= MAX_POINTS:
        raise PeriodError(f"a chart has 2 to {MAX_POINTS} points, not {points}")
    span = until_us - since_us
    out: list[MeterPoint] = []
    bucket = -1

    def fold(rows: Sequence[MeterReading]) -> None:
        nonlocal bucket
        for at_us, before_units, after_units in rows:
            b = (at_us - since_us) * points // span
            after = displayed_cents(after_units)
            low = min(after, displayed_cents(before_units))
            if b != bucket or not out:
                out.append(
                    MeterPoint(at_us=at_us, meter_cents=after, low_cents=low, high_cents=after)
                )
                bucket = b
            else:
                p = out[-1]
                out[-1] = MeterPoint(
                    at_us=at_us,
                    meter_cents=after,
                    low_cents=min(p.low_cents, low),
                    high_cents=max(p.high_cents, after),
                )

    async with connected(engine) as conn:
        async for rows in stored.meter_readings(
            conn, link_id, since_us=since_us, until_us=until_us, batch=5_000
        ):
            await step(job, fold, rows)
    return out


async def hits(
    engine: Database,
    *,
    link_id: str | None = None,
    table_id: str | None = None,
    pending: bool = False,
    limit: int = 200,
) -> list[HitRecord]:
    """Hits newest first; ``pending``: only those with work left for a technician (a table
    held for the hit not yet reset, or a payout made at the table not yet recorded)."""
    if not 1 <= limit <= MAX_PAGE:
        raise PeriodError(f"a page holds 1 to {MAX_PAGE} hits, not {limit}")
    async with connected(engine) as conn:
        return await Hits(conn).page(
            link_id=link_id, table_id=table_id, pending=pending, limit=limit
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TechnicianWork:
    """What technicians owe: every hit that holds a table (oldest first, never cut to a page),
    and a page of the rest (newest first) with how many the rest are."""

    holding: list[HitRecord]
    other: list[HitRecord]
    other_total: int


async def technician_work(engine: Database, only: HitFilter, *, limit: int = 200) -> TechnicianWork:
    """The technician's work; ``limit`` bounds only the rest, never the hits holding tables."""
    if not 1 <= limit <= MAX_PAGE:
        raise PeriodError(f"a page holds 1 to {MAX_PAGE} hits, not {limit}")
    async with connected(engine) as conn:
        hits = Hits(conn)
        holding = await hits.holding(only)
        other, total = await hits.other_work(only, limit=limit)
    return TechnicianWork(holding=holding, other=other, other_total=total)


async def paid_without_technician(
    engine: Database, only: HitFilter, *, limit: int = 50, offset: int = 0
) -> tuple[list[HitRecord], int]:
    """A page of the fixed pays no technician deals with, newest first, and their number."""
    if not 1 <= limit <= MAX_PAGE:
        raise PeriodError(f"a page holds 1 to {MAX_PAGE} hits, not {limit}")
    async with connected(engine) as conn:
        return await Hits(conn).paid_without_technician(only, limit=limit, offset=offset)


async def tax_forms_due(
    engine: Database, only: HitFilter, *, from_cents: int, limit: int = 50
) -> tuple[list[HitRecord], int]:
    """The newest awards at or above the tax-reporting amount ``from_cents`` whose tax form's
    reference is not recorded yet, and their number."""
    if not 1 <= limit <= MAX_PAGE:
        raise PeriodError(f"a page holds 1 to {MAX_PAGE} hits, not {limit}")
    async with connected(engine) as conn:
        return await Hits(conn).tax_forms_due(only, from_cents=from_cents, limit=limit)


async def anomalies(
    engine: Database,
    *,
    status: str | None = None,
    link_id: str | None = None,
    limit: int = 500,
) -> list[AnomalyRecord]:
    """Anomalies newest first."""
    async with connected(engine) as conn:
        return await Anomalies(conn).records(status=status, link_id=link_id, limit=limit)


async def anomaly(engine: Database, anomaly_id: str) -> AnomalyRecord:
    async with connected(engine) as conn:
        row = await Anomalies(conn).record(anomaly_id)
    if row is None:
        raise NotFound(f"no anomaly {anomaly_id!r}")
    return row


async def document(engine: Database, sha256: str) -> Document:
    async with connected(engine) as conn:
        row = await load_document(conn, sha256)
    if row is None:
        raise NotFound(f"no document {sha256!r}")
    return row


async def link_names(engine: Database) -> dict[str, str]:
    async with connected(engine) as conn:
        return await stored.link_names(conn)


async def level_hits(engine: Database, link_id: str) -> dict[str, LevelHits]:
    """By level of the link's pool (L1, L2, ...): how many hits its meter paid, the total
    won and the newest ``RECENT_HITS``, as the history's award entries record them."""
    async with connected(engine) as conn:
        rows = await award_entries(conn, link_id)
    return meter_lines.level_hits(meter_lines.award_of(r) for r in rows)


class HitLookup(Protocol):
    """What the records ask of the runtime's hit work (``runtime.hit_work.HitWork``): one
    hit, and the amount from which an award is signed off by a second person before its
    table is reset."""

    second_signature_from_cents: int

    async def get(self, hit_id: str) -> HitRecord: ...


class Records:
    """The records as people ask for them, each question checked first against the links in
    memory: an unknown link or table is not found (404), as a record of one would not be.

    Built once per running service over its database, its links in memory, the runtime's
    hit work (one hit, the second-signature amount) and its clock; every read opens a
    connection of its own.
    """

    def __init__(self, engine: Database, memory: Memory, hits: HitLookup, clock: Clock) -> None:
        self._engine = engine
        self._memory = memory
        self._hits = hits
        self._clock = clock

    def now_us(self) -> int:
        """Now, as the periods asked for are read against it."""
        return self._clock.now_us()

    @property
    def second_signature_from_cents(self) -> int:
        """The amount the runtime enforces at a reset, as it stands now."""
        return self._hits.second_signature_from_cents

    # ------------------------------------------------------------------ the links in memory

    def link_ids(self) -> list[str]:
        """Every link's id, in order."""
        return sorted(self._memory.states)

    def known_link(self, link_id: str) -> None:
        """Nothing, or not found for a link that does not exist."""
        if link_id not in self._memory.states:
            raise NotFound(f"no link {link_id!r}")

    def known_table(self, table_id: str) -> None:
        """Nothing, or not found for a table that does not exist."""
        self._memory.link_of(table_id)

    def link_state(self, link_id: str) -> LinkState:
        """The link's state in memory, or not found."""
        state = self._memory.states.get(link_id)
        if state is None:
            raise NotFound(f"no link {link_id!r}")
        return state

    def inoperable(self, link_id: str) -> str | None:
        """What differs in the link's stored state, if it failed its check; else None."""
        return self._memory.is_inoperable(link_id)

    def inoperable_links(self) -> dict[str, str]:
        """Every link that does not play now because its stored state failed its check, with
        what differs, in order of id."""
        return dict(sorted(self._memory.inoperable.items()))

    def level_name(self, link_id: str, level: str | None) -> str | None:
        """The name of a level of the link's pool (L1, L2, ...), as configured; None for no
        level, an unknown link or level."""
        state = self._memory.states.get(link_id)
        if level is None or state is None:
            return None
        return state.level_names.get(level)

    def hit_filter(
        self, link_id: str | None = None, table_id: str | None = None, kind: str | None = None
    ) -> HitFilter:
        """Which hits to read, the link and the table known."""
        if link_id is not None:
            self.known_link(link_id)
        if table_id is not None:
            self.known_table(table_id)
        return HitFilter(link_id=link_id, table_id=table_id, kind=kind)

    # ------------------------------------------------------------------ the records

    async def hits(
        self,
        *,
        link_id: str | None = None,
        table_id: str | None = None,
        pending: bool = False,
        limit: int = 200,
    ) -> list[HitRecord]:
        """Hits newest first (``hits``), of a known link or table."""
        self.hit_filter(link_id, table_id)
        return await hits(
            self._engine, link_id=link_id, table_id=table_id, pending=pending, limit=limit
        )

    async def hit(self, hit_id: str) -> HitRecord:
        """One hit, or not found."""
        return await self._hits.get(hit_id)

    async def technician_work(self, only: HitFilter, *, limit: int = 200) -> TechnicianWork:
        return await technician_work(self._engine, only, limit=limit)

    async def paid_without_technician(
        self, only: HitFilter, *, limit: int = 50, offset: int = 0
    ) -> tuple[list[HitRecord], int]:
        return await paid_without_technician(self._engine, only, limit=limit, offset=offset)

    async def tax_forms_due(
        self, only: HitFilter, *, from_cents: int, limit: int = 50
    ) -> tuple[list[HitRecord], int]:
        return await tax_forms_due(self._engine, only, from_cents=from_cents, limit=limit)

    async def history(
        self,
        link_id: str,
        *,
        since_us: int,
        until_us: int,
        after_seq: int = 0,
        limit: int = 1_000,
        reductions_only: bool = False,
    ) -> HistoryPage:
        """A page of a known link's history (``history``)."""
        self.known_link(link_id)
        return await history(
            self._engine,
            link_id,
            since_us=since_us,
            until_us=until_us,
            after_seq=after_seq,
            limit=limit,
            reductions_only=reductions_only,
        )

    async def meter_series(
        self,
        link_id: str,
        *,
        since_us: int,
        until_us: int,
        points: int = 500,
        job: Job | None = None,
    ) -> list[MeterPoint]:
        """A known link's meter over a period (``meter_series``)."""
        self.known_link(link_id)
        return await meter_series(
            self._engine, link_id, since_us=since_us, until_us=until_us, points=points, job=job
        )

    async def anomalies(
        self, *, status: str | None = None, link_id: str | None = None, limit: int = 500
    ) -> list[AnomalyRecord]:
        """Anomalies newest first, of a known link when one is named."""
        if link_id is not None:
            self.known_link(link_id)
        return await anomalies(self._engine, status=status, link_id=link_id, limit=limit)

    async def anomaly(self, anomaly_id: str) -> AnomalyRecord:
        return await anomaly(self._engine, anomaly_id)

    async def document(self, sha256: str) -> Document:
        return await document(self._engine, sha256)

    async def link_names(self) -> dict[str, str]:
        """Every link's name, by id."""
        return await link_names(self._engine)

    async def level_hits(self, link_id: str) -> dict[str, LevelHits]:
        return await level_hits(self._engine, link_id)

    async def export(
        self,
        out: TextIO,
        *,
        kind: ExportKind,
        fmt: str,
        since_us: int,
        until_us: int,
        link_id: str | None,
        job: Job | None,
        law: Jurisdiction,
        demonstration: bool,
    ) -> int:
        """The export of a period (``export.export``) to ``out``, of every link or a known one;
        its number of rows."""
        if link_id is not None:
            self.known_link(link_id)
        return await export(
            self._engine,
            out,
            kind=kind,
            fmt=fmt,
            since_us=since_us,
            until_us=until_us,
            link_id=link_id,
            job=job,
            law=law,
            demonstration=demonstration,
        )

    async def verify_ledger(self, link_id: str | None = None) -> VerifyReport:
        """Every link's hash chain walked, or a known link's (``storage.verify``), in one
        thread of its own."""
        if link_id is not None:
            self.known_link(link_id)
        return await verify_ledger(
            self._engine,
            self._memory.store.key,
            link_ids=[link_id] if link_id is not None else None,
            workers=1,
        )

    async def held_since(self) -> dict[str, int]:
        """Since when each link has had a table held for a hit (the earliest unreleased hit
        of a table still held), for the links that have one."""
        held = {
            (link_id, table_id)
            for link_id, state in self._memory.states.items()
            for table_id, table in state.tables.items()
            if table.hit_pending
        }
        since: dict[str, int] = {}
        if held:
            for hit in await unreleased_hits(self._engine):
                if (hit.link_id, hit.table_id) in held:
                    since[hit.link_id] = min(
                        hit.first_at_us, since.get(hit.link_id, hit.first_at_us)
                    )
        return since

    def _level_names(self, link_id: str) -> dict[str, str] | None:
        """The names of the levels of the link's pool by key (L1, L2, ...); None when the
        link is not on this floor."""
        state = self._memory.states.get(link_id)
        return None if state is None else state.level_names

    async def slip_source(self, hit: HitRecord) -> SlipSource:
        """The records the jackpot slip of ``hit`` is built from, with the game dealt at its
        table and, for a link of several levels, the levels' names, as the link is loaded now
        (neither when it is not on this floor)."""
        state = self._memory.states.get(hit.link_id)
        game = None
        levels = None
        if state is not None:
            game = state.game_of(hit.table_id) if hit.table_id in state.tables else state.game
            if len(state.levels) >= 2:
                levels = self._level_names(hit.link_id)
        return await load_slip_source(self._engine, hit, game=game, level_names=levels)

    async def link_name(self, link_id: str) -> str:
        """The link's name as people call it, or not found for a link never opened."""
        names = await names_of_link(self._engine, link_id)
        if names is None:
            raise NotFound(f"no link {link_id!r}")
        return names.name

    async def floor_report(
        self, link_id: str, period: FloorPeriod, *, link_name: str, job: Job | None = None
    ) -> FloorReport:
        """The link's report for a gaming day or shift (``floor_reports``), its levels named
        as loaded now."""
        return await floor_report(
            self._engine,
            link_id,
            period,
            link_name=link_name,
            level_names=self._level_names(link_id) or {},
            job=job,
        )
