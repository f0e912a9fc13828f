"""Game protection's quality, measured on simulated floors dealt with real shuffled cards.

Run from the project root::

    python -m bench.bench_protection                      # both parts, full size
    python -m bench.bench_protection --part honest --tables 300 --days 30
    python -m bench.bench_protection --part faults --runs 5

Every table is a simulated table controller (``link_adapters.simulator``) dealing real hands,
read as the controller reads a poll (its registers encoded and decoded with its profile,
``SteppedFloor``), and judged by the controller's own code: the bets each reading records
(``table_values.to_reading``, ``reducer.readings.bets_record``, the fields a contribution
seals), the hits the table claims, and the watch (``controller.core.protection``) at the
default false-alarm rate. Nothing the simulator alone knows is read.

* honest: ``--tables`` tables (a third each of Caribbean Stud, Caribbean Draw and the Let It
  Ride bonus; seven seats, six in ten betting) dealing ``--rounds-per-day`` rounds a gaming day
  for ``--days`` days, dealers changing tables each shift, judged every hour: every alert
  raised is a false alarm. Run in ``--jobs`` processes, each dealing a share of the tables
  with the whole floor's threshold (a game's tallies are then per process).
* faults: one table with a fault, on a floor of ``--tables`` (the threshold is the whole
  floor's), dealing until its fault is flagged or ``--days`` gaming days pass, ``--runs``
  times each with other cards: the rounds it took.

Prints the threshold, the false alarms, and a table of what is caught and how fast.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC
from datetime import time as clock_time
from fractions import Fraction

from controller.core.games import Game, default_paytable
from controller.core.hands import HandCategory
from controller.core.protection import DAY_US, Finding, Seen, TableFacts, Tallies, Watch
from controller.core.reducer.readings import _text, bets_record
from controller.periods import FloorCalendar
from controller.runtime.table_values import BetWatch, to_reading
from link_adapters.reading import TableRegisters
from link_adapters.simulator.faults import RiggedHand, TableFaults
from link_adapters.simulator.stepped_floor import FloorReading, SteppedFloor
from link_adapters.simulator.table_types import SimTableConfig

HOUR_US = 3_600_000_000
CALENDAR = FloorCalendar(clock_time(6), (clock_time(6), clock_time(14), clock_time(22)), UTC)
GAMES = (Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW, Game.LET_IT_RIDE_BONUS)
DENOMINATION = 100
U32 = 1 << 32


def _round_us(per_day: int) -> int:
    """One round per table every so long (whole seconds, as a poll falls on each phase)."""
    return max(20, DAY_US // per_day // 1_000_000) * 1_000_000


def facts_of(tables: Iterable[tuple[str, Game]]) -> dict[str, TableFacts]:
    return {
        t: TableFacts(t, g, tuple(line.hand for line in default_paytable(g).lines))
        for t, g in tables
    }


def floor_tables(n: int) -> list[tuple[str, Game]]:
    return [(f"t{i:03d}", GAMES[i % len(GAMES)]) for i in range(n)]


@dataclass
class Reader:
    """Reads a floor's polls as the controller does and feeds the watch what the history
    would record: each reading's bets, each hit claimed."""

    watch: Watch
    bets: dict[str, BetWatch] = field(default_factory=dict)
    last: dict[str, TableRegisters] = field(default_factory=dict)
    heads: dict[str, int] = field(default_factory=dict)
    polls: int = 0
    seq: int = 0

    def read(self, r: FloorReading) -> None:
        t, regs = r.table_id, r.registers
        self.polls += 1
        before = self.last.get(t)
        reading = to_reading(
            regs,
            table_id=t,
            poll_seq=self.polls,
            at_us=r.at_us,
            previous_seat_credits=None if before is None else before.per_seat_credits,
            bets=self.bets.setdefault(t, BetWatch()),
        )
        self.last[t] = regs
        add = self.watch.tallies.add
        if before is not None and regs.credits != before.credits:
            delta = (regs.credits - before.credits) % U32
            rounds = (regs.rounds - before.rounds) % U32
            self.seq += 1
            details = _text(bets_record(delta, DENOMINATION, reading, rounds))
            add(Seen("bench", self.seq, r.at_us, t, details=details))
        claim = reading.head_hit
        if claim is not None and self.heads.get(t) != claim.table_seq:
            self.heads[t] = claim.table_seq
            self.seq += 1
            add(
                Seen(
                    "bench",
                    self.seq,
                    r.at_us,
                    t,
                    hit_id=f"{t}#{claim.table_seq}",
                    seat=claim.seat,
                    hand=claim.hand.name,
                    cards=claim.cards,
                    hit_source="table",
                    hit_kind="hand",
                )
            )


@dataclass
class Alarms:
    """Alerts as the watch raises them: a key raised when it first alarms, closed when it no
    longer does (raised again later: another alert)."""

    open: dict[tuple[str, str, str, str], Finding] = field(default_factory=dict)
    raised: list[tuple[int, Finding]] = field(default_factory=list)

    def look(self, watch: Watch, now_us: int) -> list[Finding]:
        found = {f.key: f for f in watch.alarms(now_us)}
        new = [f for k, f in found.items() if k not in self.open]
        self.raised += [(now_us, f) for f in new]
        self.open = found
        return new


def _dealer(tables: list[str]) -> object:
    """Dealers who change tables each shift: dealer n deals table (n + shift) of the list."""
    index = {t: i for i, t in enumerate(tables)}
    n = len(tables)

    def dealer_of(table_id: str, at_us: int) -> str | None:
        shift = (at_us // (8 * HOUR_US)) % n
        return f"dealer-{(index[table_id] - shift) % n:03d}"

    return dealer_of


def honest_share(args: tuple[int, int, int, int, int, int]) -> dict[str, object]:
    """One process's share of the honest floor: its tables dealt, every hour judged."""
    tables_total, share, jobs, days, per_day, seed = args
    floor = floor_tables(tables_total)
    mine = floor[share::jobs]
    ids = [t for t, _ in mine]
    watch = Watch(
        Tallies(CALENDAR, facts_of(floor), _dealer(ids)),  # type: ignore[arg-type]
        look_us=HOUR_US,
    )
    stepped = SteppedFloor(
        [(t, SimTableConfig(game=g)) for t, g in mine],
        seed=seed + share,
        round_us=_round_us(per_day),
        poll_us=1_000_000,
        phase_us=5_000_000,
        phases_only=True,
    )
    reader, alarms = Reader(watch), Alarms()
    next_look = (stepped.now_us // HOUR_US + 1) * HOUR_US
    started = time.process_time()
    for r in stepped.polls(days * per_day):
        while r.at_us >= next_look:
            alarms.look(watch, next_look)
            next_look += HOUR_US
        reader.read(r)
    alarms.look(watch, next_look)
    rounds = sum(stepped.tally(t).rounds for t in ids)
    hits = sum(stepped.tally(t).hits for t in ids)
    return {
        "tables": len(ids),
        "rounds": rounds,
        "hits": hits,
        "cpu_s": time.process_time() - started,
        "raised": [
            (
                at,
                f.scope.value,
                f.subject,
                f.line,
                f.window,
                f.observed,
                float(f.expected),
                f.p_value,
            )
            for at, f in alarms.raised
        ],
        "threshold": watch.threshold(),
        "tests_per_month": watch.tests_per_month(),
    }


@dataclass(frozen=True)
class Fault:
    name: str
    faults: TableFaults
    lines: frozenset[str]  # the alarms that say it


FAULTS = (
    Fault(
        "royal flush at 20x its odds",
        TableFaults(rigged=RiggedHand(hand=HandCategory.ROYAL_FLUSH, factor=20.0)),
        frozenset({"ROYAL_FLUSH"}),
    ),
    Fault(
        "royal flush at 5x its odds",
        TableFaults(rigged=RiggedHand(hand=HandCategory.ROYAL_FLUSH, factor=5.0)),
        frozenset({"ROYAL_FLUSH"}),
    ),
    Fault(
        "four of a kind at 5x its odds",
        TableFaults(rigged=RiggedHand(hand=HandCategory.FOUR_OF_A_KIND, factor=5.0)),
        frozenset({"FOUR_OF_A_KIND"}),
    ),
    Fault(
        "a dead bet sensor (seat 3)",
        TableFaults(dead_sensor_seat=3),
        frozenset({"credits_without_bets"}),
    ),
    Fault(
        "a bet sensor stuck lit (seat 5)",
        TableFaults(stuck_sensor_seat=5),
        frozenset({"bets_without_credits"}),
    ),
    Fault(
        "hits with no matching cards (1 round in 50)",
        TableFaults(false_claims_per_round=0.02),
        frozenset({"cards_not_matching"}),
    ),
    Fault(
        "late bets after lockout (1 round in 20)",
        TableFaults(late_bets_per_round=0.05),
        frozenset({"late_bets"}),
    ),
    Fault(
        "flushes never reported",
        TableFaults(unreported_hand=HandCategory.FLUSH),
        frozenset({"FLUSH"}),
    ),
)


def fault_run(args: tuple[int, int, int, int, int]) -> tuple[int, int | None, int | None]:
    """One faulty Caribbean Stud table on a floor of ``tables``: the rounds it dealt until
    its fault was flagged (None: not within ``days``), and the rounds until any alarm."""
    index, tables_total, days, per_day, seed = args
    fault = FAULTS[index]
    floor = floor_tables(tables_total)
    facts = facts_of(floor)
    faulty = "faulty"
    facts[faulty] = TableFacts(
        faulty, Game.CARIBBEAN_STUD, facts_of([("x", Game.CARIBBEAN_STUD)])["x"].hands
    )
    watch = Watch(Tallies(CALENDAR, facts), look_us=HOUR_US)
    stepped = SteppedFloor(
        [(faulty, SimTableConfig(game=Game.CARIBBEAN_STUD, faults=fault.faults))],
        seed=seed,
        round_us=_round_us(per_day),
        phases_only=True,
    )
    reader, alarms = Reader(watch), Alarms()
    next_look = (stepped.now_us // HOUR_US + 1) * HOUR_US
    first_any: int | None = None
    for r in stepped.polls(days * per_day):
        while r.at_us >= next_look:
            new = alarms.look(watch, next_look)
            next_look += HOUR_US
            if new and first_any is None:
                first_any = stepped.tally(faulty).rounds
            if any(f.line in fault.lines for f in new):
                return index, stepped.tally(faulty).rounds, first_any
        reader.read(r)
    return index, None, first_any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("honest", "faults", "all"), default="all")
    parser.add_argument("--tables", type=int, default=300)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--rounds-per-day", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5, help="runs of each fault")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20261128)
    args = parser.parse_args(argv)
    per_day = args.rounds_per_day
    default = float(Watch(Tallies(CALENDAR, {})).false_alarms_per_month)
    print(
        f"game protection on {args.tables} tables, {per_day:,} rounds a gaming day each, "
        f"looks every hour, default false alarms {default} a floor a month"
    )
    sys.stdout.flush()
    pool = multiprocessing.get_context("fork").Pool(args.jobs)
    if args.part in ("honest", "all"):
        started = time.monotonic()
        shares = pool.map(
            honest_share,
            [
                (args.tables, share, args.jobs, args.days, per_day, args.seed)
                for share in range(args.jobs)
            ],
        )
        wall = time.monotonic() - started
        rounds = sum(int(s["rounds"]) for s in shares)  # type: ignore[call-overload]
        raised = [a for s in shares for a in s["raised"]]  # type: ignore[attr-defined]
        first = shares[0]
        print(
            f"honest floor: {args.tables} tables x {args.days} gaming days, {rounds:,} rounds "
            f"({sum(int(s['hits']) for s in shares):,} hits) in {wall:.0f} s "  # type: ignore[call-overload]
            f"({sum(float(s['cpu_s']) for s in shares):.0f} s of processor)"  # type: ignore[arg-type]
        )
        print(
            f"  threshold {first['threshold']:.3g} per test over {first['tests_per_month']:,} "
            f"tests a month"
        )
        months = Fraction(args.days, 30)
        print(
            f"  false alarms: {len(raised)} in {args.days} gaming days "
            f"({float(len(raised) / months):.2f} a month; the default allows 0.1)"
        )
        for _, scope, subject, line, window, observed, expected, p in raised:
            print(
                f"    {subject} ({scope}) {line} in {window}: {observed} seen, "
                f"{expected:.3g} expected, p {p:.2g}"
            )
        sys.stdout.flush()
    if args.part in ("faults", "all"):
        runs = pool.map(
            fault_run,
            [
                (i, args.tables, args.days, per_day, args.seed + 1000 * run)
                for i in range(len(FAULTS))
                for run in range(args.runs)
            ],
        )
        print(
            f"faults: one Caribbean Stud table with the fault on a floor of {args.tables} "
            f"(its threshold), {args.runs} runs each, up to {args.days} gaming days "
            f"({args.days * per_day:,} rounds)"
        )
        print(f"  {'fault':<44} {'caught':>7} {'rounds to flag (median, range)':>34}")
        for i, fault in enumerate(FAULTS):
            found = [r for j, r, _ in runs if j == i]
            caught = [r for r in found if r is not None]
            figure = (
                f"{statistics.median(caught):,.0f} ({min(caught):,}-{max(caught):,})"
                if caught
                else f"not within {args.days * per_day:,}"
            )
            print(f"  {fault.name:<44} {len(caught):>3}/{len(found):<3} {figure:>34}")
    pool.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
