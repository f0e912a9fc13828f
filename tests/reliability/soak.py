"""The soak: thirty days of a twenty-table floor, played fast, with memory and tasks watched.

    python -m tests.reliability.soak [--days 30 --tables 20 --rate 50]

A real pace is about one round a minute per table, so thirty days of twenty tables are
30 x 1440 x 20 = 864,000 rounds. The simulator deals them at ``--rate`` rounds a second per
table, in a process of its own (as real tables are), to the real poller and ``FloorService``
in this process, on PostgreSQL (a fresh schema of database ``test``). A technician verifies and resets every table a jackpot holds, as on the
floor. At each simulated day the run samples the controller's resident memory (VmRSS of
/proc/self/status; the simulator's beside it) and the number of asyncio tasks, and folds the
simulator's rounds into running totals (the simulator forgets them, so its record does not
grow for thirty days).

At the end the dealers stop, everything dealt is committed, the service stops, and the run
checks: the meter exact to the unit against the simulator's record (every hit once), the
ledger whole, each link's reconciliation over the whole run balanced, and memory and tasks
stable. Stable means, over the days after the warm-up (the first tenth of the run): the
peak RSS of the last third within ``RSS_GROWTH_MB`` of the first third's peak, and the peak
task count of the last third at most ``TASK_SLACK`` above the first third's. Exit status 0 only when all holds.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from controller.core.games import Game
from tests.integration.harness import LinkPlan
from tests.reliability.process_figures import rss_mb
from tests.reliability.soak_floor import EndChecks, SoakFloor

ROUNDS_PER_TABLE_DAY = 24 * 60  # about one round a minute at a real table
RSS_GROWTH_MB = 16.0  # the most the last third's peak may exceed the first third's
# Tasks come and go (a commit, a connection's handler): a leak of one per poll, per hit or per
# day would add hundreds to thousands, a sample catching a few short-lived ones adds this many.
TASK_SLACK = 5
WARM_UP_FRACTION = 0.1
GAMES = (
    ("stud", Game.CARIBBEAN_STUD, 8000),
    ("draw", Game.CARIBBEAN_DRAW, 7000),
    ("lir", Game.LET_IT_RIDE_BONUS, 6000),
)


def plans_for(tables: int) -> tuple[LinkPlan, ...]:
    """``tables`` tables shared out over one link per game, the first links one more."""
    plans = []
    for i, (link_id, game, rate_bp) in enumerate(GAMES):
        n = tables // len(GAMES) + (1 if i < tables % len(GAMES) else 0)
        if n:
            plans.append(LinkPlan(link_id, game.value, game.value, tables=n, rate_bp=rate_bp))
    return tuple(plans)


@dataclass
class Sample:
    day: float
    elapsed_s: float
    rounds: int
    rss_mb: float
    sim_rss_mb: float
    tasks: int
    hits: int
    released: int
    queued: int = 0  # hits waiting in the tables' FIFOs


@dataclass
class SoakReport:
    days: float
    tables: int
    rounds: int = 0
    samples: list[Sample] = field(default_factory=list)
    duration_s: float = 0.0
    checks: EndChecks = field(default_factory=EndChecks)
    released: int = 0

    def thirds(self) -> tuple[list[Sample], list[Sample]]:
        after = [s for s in self.samples if s.day > self.days * WARM_UP_FRACTION]
        third = max(1, len(after) // 3)
        return after[:third], after[-third:]

    @property
    def rss_growth_mb(self) -> float:
        first, last = self.thirds()
        if not first:
            return math.inf
        return max(s.rss_mb for s in last) - max(s.rss_mb for s in first)

    @property
    def task_growth(self) -> int:
        first, last = self.thirds()
        if not first:
            return 1 << 30
        return max(s.tasks for s in last) - max(s.tasks for s in first)

    @property
    def stable(self) -> bool:
        return self.rss_growth_mb <= RSS_GROWTH_MB and self.task_growth <= TASK_SLACK

    @property
    def ok(self) -> bool:
        return self.checks.ok and self.stable

    def lines(self) -> list[str]:
        out = [
            f"{'day':>6} {'elapsed s':>10} {'rounds':>9} {'rounds/s':>9} {'RSS MB':>8} "
            f"{'sim MB':>7} {'tasks':>6} {'hits':>7} {'queued':>6} {'resets':>7}"
        ]
        prev_t, prev_r = 0.0, 0
        for s in self.samples:
            rate = (s.rounds - prev_r) / max(1e-9, s.elapsed_s - prev_t)
            prev_t, prev_r = s.elapsed_s, s.rounds
            out.append(
                f"{s.day:6.2f} {s.elapsed_s:10.1f} {s.rounds:9d} {rate:9.0f} {s.rss_mb:8.1f} "
                f"{s.sim_rss_mb:7.1f} {s.tasks:6d} {s.hits:7d} {s.queued:6d} {s.released:7d}"
            )
        first, last = self.thirds()
        out.append(
            f"rounds: {self.rounds} ({self.rounds / (self.tables * ROUNDS_PER_TABLE_DAY):.2f} "
            f"table-days of {self.tables} tables) in {self.duration_s:.1f} s = "
            f"{self.rounds / max(1e-9, self.duration_s):.0f} rounds/s"
        )
        if first:
            out.append(
                f"memory: peak RSS first third {max(s.rss_mb for s in first):.1f} MB, last third "
                f"{max(s.rss_mb for s in last):.1f} MB, growth {self.rss_growth_mb:+.1f} MB "
                f"(criterion <= {RSS_GROWTH_MB:g} MB after a warm-up of "
                f"{self.days * WARM_UP_FRACTION:g} days)"
            )
            out.append(
                f"tasks: peak first third {max(s.tasks for s in first)}, last third "
                f"{max(s.tasks for s in last)} (criterion: at most {TASK_SLACK} more)"
            )
        out.append(f"technician resets of held tables: {self.released}")
        out += self.checks.lines()
        out.append("VERDICT: " + ("PASS" if self.ok else "FAIL"))
        return out


async def run_soak(
    db_url: str,
    *,
    days: float,
    tables: int,
    rate: float,
    seed: int = 7,
    say: Callable[[str], None] = print,
) -> SoakReport:
    started = time.monotonic()
    plans = plans_for(tables)
    report = SoakReport(days=days, tables=tables)
    total_rounds = round(days * ROUNDS_PER_TABLE_DAY * tables)
    per_sample = ROUNDS_PER_TABLE_DAY * tables if days >= 3 else total_rounds // 10 or 1
    soak = SoakFloor(db_url, plans, rate=rate, seed=seed, say=say)
    sim = soak.sim
    try:
        await soak.start()
        await soak.floor.ask("resume")
        t0 = time.monotonic()
        next_sample = per_sample
        while sim.rounds < total_rounds:
            await asyncio.sleep(0.25)
            await soak.technician()
            await soak.take()
            if sim.rounds >= next_sample or sim.rounds >= total_rounds:
                next_sample += per_sample
                s = Sample(
                    day=sim.rounds / (ROUNDS_PER_TABLE_DAY * tables),
                    elapsed_s=time.monotonic() - t0,
                    rounds=sim.rounds,
                    rss_mb=rss_mb(),
                    sim_rss_mb=await soak.floor.ask("rss"),
                    tasks=len(asyncio.all_tasks()),
                    hits=soak.hits_dealt,
                    queued=sum(q for _, q in soak.live.values()),
                    released=soak.released,
                )
                report.samples.append(s)
                say(
                    f"day {s.day:6.2f}: {s.rounds} rounds in {s.elapsed_s:.0f} s, RSS "
                    f"{s.rss_mb:.1f} MB (simulator {s.sim_rss_mb:.1f} MB), {s.tasks} tasks, "
                    f"{s.hits} hits ({s.queued} queued at the tables), {s.released} technician resets"
                )
        undrained = await soak.drain()  # the dealers stop; everything dealt is committed
        report.rounds = sim.rounds
        report.checks = await soak.check(undrained)
    finally:
        report.released = soak.released
        await soak.stop()
        report.duration_s = time.monotonic() - started
    return report


async def main_async(days: float, tables: int, rate: float) -> int:
    from tests.conftest import fresh_schema, named_manifest

    def say(line: str) -> None:
        print(line, flush=True)

    say(
        f"soak: {days:g} days of {tables} tables = "
        f"{round(days * ROUNDS_PER_TABLE_DAY * tables)} rounds, dealt at {rate:g} rounds/s "
        "per table"
    )
    with tempfile.TemporaryDirectory(prefix="soak-") as folder, named_manifest(Path(folder)):
        async with fresh_schema("soak") as url:
            report = await run_soak(url, days=days, tables=tables, rate=rate, say=say)
    for line in report.lines():
        say(line)
    return 0 if report.ok else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=float, default=30)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--rate", type=float, default=50, help="rounds a second per table")
    args = parser.parse_args()
    sys.exit(asyncio.run(main_async(args.days, args.tables, args.rate)))


if __name__ == "__main__":
    main()
