"""Reconciliation of a link's meter for auditors, for any period.

    opening meter + contributions by table (credits x denomination x rate) + reset amounts
    seeded + approved anomalies - awards paid + corrections = closing meter

and the same meter by meter (every level's meter, its reserve and its overflow: see
``meter_lines``), each reconciling exactly from the splits its entries record. A fixed-pay
link (no meter) reconciles its side bets instead: the bets registered (credits x
denomination), the fixed pays recorded and the hold, bets less pays (68 IAC 10-7-5(b)).

to the unit (1/10,000 cent). Each contribution is recomputed from the credits, denomination and
rate it records, so an amount that does not follow from its credits shows up as a difference;
so does a history whose entries do not follow on from each other. Anything that does not add
up is listed in ``problems``; ``balanced`` is true only when there are none.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from controller.core.ledger import SealedEntry
from controller.core.money import UNITS_PER_CENT, contribution_units, displayed_cents
from controller.core.reducer import EntryKind, MeterTerms
from controller.core.reducer.conservation import Term, term_of
from controller.paperwork.jobs import Job, step
from controller.paperwork.links import Memory
from controller.paperwork.meter_lines import (
    FIXED_PAY_CLAUSE,
    FixedPayLine,
    MeterLines,
    meter_line_summary,
)
from controller.periods import Clock
from controller.storage.database import snapshot
from controller.storage.errors import NotFound
from controller.storage.handles import Connection, Database
from controller.storage.papers import reconciliation as stored
from controller.storage.papers.reconciliation import opening_units
from controller.storage.unit_of_work import connected

__all__ = [
    "BATCH",
    "WEEK_US",
    "Fold",
    "Reconciliation",
    "Reconciliations",
    "TableLine",
    "anchor_lines",
    "chain_head",
    "entry_batches",
    "fixed_pay_summary",
    "reconcile",
    "reconciliation",
    "summary",
    "week_start_us",
]

WEEK_US = 7 * 86_400 * 1_000_000
BATCH = 5_000  # entries read, and reconciled, at a time
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(slots=True)
class TableLine:
    table_id: str
    credits: int = 0
    units: int = 0  # recomputed: credits x denomination x rate


@dataclass(slots=True)
class Reconciliation:
    link_id: str
    since_us: int
    until_us: int
    opening_units: int
    closing_units: int
    tables: dict[str, TableLine] = field(default_factory=dict)
    seeded_units: int = 0  # the link opened, jackpot resets
    anomalies_approved_units: int = 0
    awards_units: int = 0  # paid from the meter, as a positive amount
    corrections_units: int = 0
    other_units: int = 0
    entries: int = 0
    problems: list[str] = field(default_factory=list)
    # Meter by meter (per level, reserve and overflow), and a fixed-pay link's bets and pays.
    lines: MeterLines = field(default_factory=MeterLines)

    @property
    def contributions_units(self) -> int:
        return sum(t.units for t in self.tables.values())

    @property
    def terms(self) -> MeterTerms:
        """The period's entries as the terms of the conservation law (core.reducer)."""
        return MeterTerms(
            seeded=self.seeded_units,
            contributed=self.contributions_units + self.anomalies_approved_units,
            awarded=self.awards_units,
            corrected=self.corrections_units,
        )

    @property
    def expected_closing_units(self) -> int:
        # Conservation of the meter; entries of a kind outside its terms count as they are.
        return self.opening_units + self.terms.net_units + self.other_units

    @property
    def difference_units(self) -> int:
        return self.closing_units - self.expected_closing_units

    @property
    def balanced(self) -> bool:
        return self.difference_units == 0 and not self.problems


def _take(r: Reconciliation, e: SealedEntry, contribution: tuple[int, int, int] | None) -> None:
    """One entry (the next in sequence) into ``r``, whose closing is the meter so far;
    ``contribution`` is a contribution's (credits, denomination, rate) as it records them."""
    if e.meter_before_units != r.closing_units:
        r.problems.append(
            f"entry {e.seq}: starts from {e.meter_before_units} units, the meter stood at "
            f"{r.closing_units}"
        )
    if e.meter_after_units != e.meter_before_units + e.delta_units:
        r.problems.append(f"entry {e.seq}: its amounts do not add up")
    r.closing_units = e.meter_after_units
    r.entries += 1
    r.lines.take(e.seq, e.kind, e.meter_before_units, e.delta_units, e.details)
    if contribution is not None:
        credits, denomination_cents, rate_bp = contribution
        units = contribution_units(
            credits=credits, denomination_cents=denomination_cents, rate_bp=rate_bp
        )
        line = r.tables.setdefault(e.table_id or "?", TableLine(e.table_id or "?"))
        line.credits += credits
        line.units += units
        if units != e.delta_units:
            r.problems.append(
                f"entry {e.seq}: table {e.table_id} credited {e.delta_units} units; "
                f"{credits} credits x {denomination_cents}c x {rate_bp} bp is {units}"
            )
        return
    term = term_of(e.kind)
    if term is Term.SEEDED:
        r.seeded_units += e.delta_units
    elif term is Term.CONTRIBUTED:
        # Contributions are counted by table above: what else is contributed is an anomaly
        # approved.
        r.anomalies_approved_units += e.delta_units
    elif term is Term.AWARDED:
        r.awards_units -= e.delta_units
    elif term is Term.CORRECTED:
        r.corrections_units += e.delta_units
    else:
        r.other_units += e.delta_units


def _closed(r: Reconciliation) -> Reconciliation:
    r.lines.close()
    r.problems.extend(r.lines.problems)
    if r.difference_units:
        r.problems.append(
            f"DIFFERENCE: the closing meter is {r.closing_units} units, the terms add up to "
            f"{r.expected_closing_units} ({r.difference_units:+d} units)"
        )
    return r


class Fold:
    """The period's reconciliation and its weekly report (one reconciliation per calendar
    week, Monday UTC), built from the period's entries a batch at a time, in sequence order:
    what it keeps is one line per week and per table, however many entries the period has."""

    def __init__(self, link_id: str, since_us: int, until_us: int, opening_units: int) -> None:
        self.total = Reconciliation(link_id, since_us, until_us, opening_units, opening_units)
        self.weeks: list[Reconciliation] = []
        self._week = self._new_week(since_us, opening_units)

    def _new_week(self, start_us: int, opening_units: int) -> Reconciliation:
        t = self.total
        end = min(t.until_us, week_start_us(start_us) + WEEK_US)
        return Reconciliation(t.link_id, start_us, end, opening_units, opening_units)

    def _next_week(self) -> None:
        week = self._week
        self.weeks.append(_closed(week))
        self._week = self._new_week(week.until_us, week.closing_units)

    def add(self, entries: Sequence[SealedEntry]) -> None:
        for e in entries:
            while e.at_us >= self._week.until_us and self._week.until_us < self.total.until_us:
                self._next_week()
            contribution = None
            if e.kind == EntryKind.CONTRIBUTION:
                d = e.decoded_details()
                contribution = (d["credits"], d["denomination_cents"], d["rate_bp"])
            _take(self.total, e, contribution)
            _take(self._week, e, contribution)

    def finish(self) -> tuple[Reconciliation, list[Reconciliation]]:
        """The period's reconciliation and its weeks; the fold takes nothing more after."""
        while self._week.until_us < self.total.until_us:
            self._next_week()
        self.weeks.append(_closed(self._week))
        return _closed(self.total), self.weeks


def reconcile(
    link_id: str, since_us: int, until_us: int, opening_units: int, entries: Sequence[SealedEntry]
) -> Reconciliation:
    """The reconciliation of ``entries`` (the period's, in sequence order) from ``opening``."""
    fold = Fold(link_id, since_us, until_us, opening_units)
    fold.add(entries)
    return fold.finish()[0]


def week_start_us(at_us: int) -> int:
    """Monday 00:00 UTC of the week holding ``at_us``."""
    day = (_EPOCH + timedelta(microseconds=at_us)).date()
    monday = datetime(day.year, day.month, day.day, tzinfo=UTC) - timedelta(days=day.weekday())
    return (monday - _EPOCH) // timedelta(microseconds=1)


# ----------------------------------------------------------------------------- reading


def entry_batches(
    conn: Connection, link_id: str, since_us: int, until_us: int
) -> AsyncIterator[list[SealedEntry]]:
    """The period's entries in sequence order, ``BATCH`` at a time as the database sends them."""
    return stored.entry_batches(conn, link_id, since_us, until_us, batch=BATCH)


async def reconciliation(
    engine: Database, link_id: str, since_us: int, until_us: int, *, job: Job | None = None
) -> tuple[Reconciliation, list[Reconciliation]]:
    """The period's reconciliation and its weekly report, cross-checked against the hits.

    Read from one snapshot; the arithmetic is done in ``job``'s worker thread, a batch of
    entries at a time, while the next batch is read."""
    async with snapshot(engine) as conn:
        if not await stored.link_exists(conn, link_id):
            raise NotFound(f"no link {link_id!r}")
        fold = Fold(link_id, since_us, until_us, await opening_units(conn, link_id, since_us))
        async for batch in entry_batches(conn, link_id, since_us, until_us):
            await step(job, fold.add, batch)
        paid = await stored.awarded_from_meter_cents(conn, link_id, since_us, until_us)
        fixed_pay = await stored.fixed_pay_link(conn, link_id)
        at_table = await stored.paid_at_table(conn, link_id, since_us, until_us)
    total, weeks = await step(job, fold.finish)
    if fixed_pay or total.lines.fixed_pay is not None:
        # 68 IAC 10-7-5(b): the bets registered against the pays recorded.
        fp = total.lines.fixed_pay = total.lines.fixed_pay or FixedPayLine()
        fp.pays, fp.pays_cents = at_table
    hits_units = paid * UNITS_PER_CENT
    if hits_units != total.awards_units:
        total.problems.append(
            f"DIFFERENCE: the hits record {displayed_cents(hits_units)} cents paid from the "
            f"meter, the history {displayed_cents(total.awards_units)} cents"
        )
    return total, weeks


async def chain_head(engine: Database, link_id: str) -> tuple[int, str]:
    """The link's history head (sequence number, seal) as the database records it now."""
    async with connected(engine) as conn:
        head = await stored.chain_head(conn, link_id)
    if head is None:
        raise NotFound(f"no link {link_id!r}")
    return head.last_seq, head.last_hash


class Reconciliations:
    """The reconciliation of any link's meter as auditors ask for it, over the database, the
    links in memory (the names of a link's levels) and the clock the periods are read
    against. Built once per running service; every read opens a connection of its own."""

    def __init__(self, engine: Database, memory: Memory, clock: Clock) -> None:
        self._engine = engine
        self._memory = memory
        self._clock = clock

    def now_us(self) -> int:
        """Now, as the periods asked for are read against it."""
        return self._clock.now_us()

    def level_names(self, link_id: str) -> dict[str, str]:
        """The names of the link's levels by key (L1, L2, ...), as the link is loaded now;
        none for a link not on this floor."""
        state = self._memory.states.get(link_id)
        return {} if state is None else state.level_names

    async def period(
        self, link_id: str, since_us: int, until_us: int, *, job: Job | None = None
    ) -> tuple[Reconciliation, list[Reconciliation]]:
        """The period's reconciliation and its weekly report (``reconciliation``); not found
        for a link never opened."""
        return await reconciliation(self._engine, link_id, since_us, until_us, job=job)

    async def chain_head(self, link_id: str) -> tuple[int, str]:
        """The link's history head (sequence number, seal) as the database records it now."""
        return await chain_head(self._engine, link_id)


def anchor_lines(head: tuple[int, str], signed: tuple[int, str, str] | None) -> list[str]:
    """The head and the last signed checkpoint ((seq, seal, when) or None), for paper: a
    printed report anchors the history too, where no database restore can reach it."""
    out = [f"Chain head: entry {head[0]}, seal {head[1]}"]
    if signed is None:
        out.append("Last signed checkpoint: none (this controller signs no checkpoints)")
    else:
        out.append(
            f"Last signed checkpoint: entry {signed[0]}, seal {signed[1]}, signed {signed[2]}"
        )
    return out


def table_order(table_id: str) -> tuple[tuple[int, int | str], ...]:
    """A key that lists tables as the floor numbers them: stud-2 before stud-10."""
    parts = re.split(r"(\d+)", table_id)
    return tuple((1, int(p)) if i % 2 else (0, p) for i, p in enumerate(parts))


def summary(r: Reconciliation, names: dict[str, str] | None = None) -> dict[str, Any]:
    """For people and exports: cents, with the exact units beside each amount. ``names``:
    the levels' names by key ("L1": "Grand", ...), where known."""

    def amount(name: str, units: int) -> dict[str, int]:
        return {f"{name}_cents": displayed_cents(units), f"{name}_units": units}

    return {
        "link_id": r.link_id,
        "since_us": r.since_us,
        "until_us": r.until_us,
        **amount("opening", r.opening_units),
        **amount("contributions", r.contributions_units),
        **amount("seeded", r.seeded_units),
        **amount("anomalies_approved", r.anomalies_approved_units),
        **amount("awards_paid", r.awards_units),
        **amount("corrections", r.corrections_units),
        **amount("other", r.other_units),
        **amount("expected_closing", r.expected_closing_units),
        **amount("closing", r.closing_units),
        "difference_units": r.difference_units,
        "balanced": r.balanced,
        "entries": r.entries,
        "problems": list(r.problems),
        "tables": [
            {
                "table_id": t.table_id,
                "credits": t.credits,
                **amount("contributions", t.units),
            }
            for t in sorted(r.tables.values(), key=lambda t: table_order(t.table_id))
        ],
        "meters": [meter_line_summary(line, names or {}) for line in r.lines.meters.values()],
        "fixed_pay": None if (fp := r.lines.fixed_pay) is None else fixed_pay_summary(fp),
    }


def fixed_pay_summary(fp: FixedPayLine) -> dict[str, Any]:
    """A fixed-pay link's side bets, pays and hold (68 IAC 10-7-5(b))."""
    return {
        "bets_credits": fp.bets_credits,
        "bets_cents": fp.bets_cents,
        "pays": fp.pays,
        "pays_cents": fp.pays_cents,
        "hold_cents": fp.hold_cents,
        "clause": FIXED_PAY_CLAUSE,
    }
