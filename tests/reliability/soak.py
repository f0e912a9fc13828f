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
import contextlib
import logging
import math
import multiprocessing
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from sqlalchemy import func, select

from controller.core.games import Game
from controller.core.reducer import EntryKind
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.reconciliation import reconciliation
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.runtime.clock import SystemClock
from controller.runtime.config import parse_floor_config
from controller.runtime.config_entries import FloorConfig
from controller.runtime.link_locks import CHECK_TIMEOUT_S
from controller.runtime.service import FloorService
from controller.settings import Settings
from controller.storage.models import MeterEntryRow
from controller.storage.verify import verify_ledger
from link_adapters.simulator.gateway import GatewaySpec
from link_adapters.simulator.server import SimFloor
from tests.conftest import KEY
from tests.integration.harness import LinkPlan, PausableClock
from tests.reliability.exact import Comparison, RecordPart, SimTotals, compare, summed, table_id

ROUNDS_PER_TABLE_DAY = 24 * 60  # about one round a minute at a real table
RSS_GROWTH_MB = 16.0  # the most the last third's peak may exceed the first third's
# Tasks come and go (a commit, a connection's handler): a leak of one per poll, per hit or per
# day would add hundreds to thousands, a sample catching a few short-lived ones adds this many.
TASK_SLACK = 5
WARM_UP_FRACTION = 0.1
# The register map shows one hit at a time, so a table's FIFO empties at one hit per poll. Let
# It Ride bonus tables dealt at 50 rounds a second queue some 7 hits a second: polled every
# 200 ms their FIFOs grew all run long. Every 100 ms keeps ahead of them.
POLL_INTERVAL_MS = 100
TIMEOUT_MS = 1000
DRAIN_STALL_S = 30.0  # once the dealers stop, a drain that does not move this long failed
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


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


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
    comparison: Comparison | None = None
    ledger_entries: int = 0
    ledger_problems: list[str] = field(default_factory=list)
    reconciliation: dict[str, tuple[int, list[str]]] = field(default_factory=dict)
    released: int = 0
    lock_fences: int = 0
    offline_events: int = 0  # a table that did not answer three polls in a row
    undrained: list[str] = field(default_factory=list)  # tables behind when the drain gave up

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
    def reconciled(self) -> bool:
        return bool(self.reconciliation) and all(
            diff == 0 and not problems for diff, problems in self.reconciliation.values()
        )

    @property
    def ok(self) -> bool:
        return (
            self.comparison is not None
            and self.comparison.ok
            and not self.ledger_problems
            and self.ledger_entries > 0
            and self.reconciled
            and self.stable
            and not self.undrained
        )

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
        if self.comparison is not None:
            out += self.comparison.lines()
        out.append(f"technician resets of held tables: {self.released}")
        for line in self.undrained:
            out.append(f"NOT DRAINED: {line}")
        out.append(
            f"tables gone offline (three polls unanswered within {TIMEOUT_MS} ms) and back: "
            f"{self.offline_events}"
        )
        out.append(
            f"lock connection fences (no answer within {CHECK_TIMEOUT_S:g} s, every link given "
            f"up and taken back): {self.lock_fences}"
        )
        out.append(
            f"ledger verify: {self.ledger_entries} entries, "
            + ("whole" if not self.ledger_problems else f"BROKEN: {self.ledger_problems[:3]}")
        )
        for link_id, (diff, problems) in sorted(self.reconciliation.items()):
            out.append(
                f"reconciliation {link_id}: difference {diff} units"
                + (f", problems: {problems}" if problems else ", balanced")
            )
        out.append("VERDICT: " + ("PASS" if self.ok else "FAIL"))
        return out


def floor_config(plans: tuple[LinkPlan, ...], ports: dict[str, int]) -> FloorConfig:
    return parse_floor_config({
        "controller": {"offline_after_failures": 3},
        "bus": [
            {"name": p.link_id, "kind": "tcp", "host": "127.0.0.1", "port": ports[p.gateway],
             "timeout_ms": TIMEOUT_MS, "retries": 0}
            for p in plans
        ],
        "link": [
            {"id": p.link_id, "game": p.game, "rate": f"{p.rate_bp / 100}%", "reset": "$1,000",
             "table": [{"id": table_id(p, u), "bus": p.link_id, "unit": u,
                        "location": f"pit 1, table {u}",
                        # Rounds come every 20 ms here, not every minute: a counter jump is
                        # judged against that pace, not a real table's.
                        "poll_interval_ms": POLL_INTERVAL_MS, "min_round_ms": 1,
                        "max_credits_per_seat": 1}
                       for u in range(1, p.tables + 1)]}
            for p in plans
        ],
    })  # fmt: skip


# ------------------------------------------------------------------ the simulator's process

# What the simulator's process answers to "take": per (gateway, unit), the rounds dealt since
# the last take (summed, without the hits), how many hits they dealt, and the table's live
# state (its credit counter, hits queued in its FIFO).
Taken = dict[tuple[str, int], tuple[RecordPart, int, int, int]]


def serve_floor(conn: Connection, gateways: list[tuple[str, int]], rate: float, seed: int) -> None:
    """The simulated floor in a process of its own, as real tables are: it answers the
    controller over loopback Modbus and the soak over ``conn``."""
    asyncio.run(_serve_floor(conn, gateways, rate, seed))


async def _serve_floor(
    conn: Connection, gateways: list[tuple[str, int]], rate: float, seed: int
) -> None:
    clock = PausableClock()
    clock.pause()
    floor = SimFloor(
        [GatewaySpec(game=Game(game), tables=n, port=0) for game, n in gateways],
        rounds_per_second=rate,
        seed=seed,
        now_us=clock.now_us,
    )
    kept: dict[tuple[str, int], list[tuple[int, str]]] = {}
    await floor.start()
    try:
        conn.send(floor.ports)
        while True:
            if not conn.poll():
                await asyncio.sleep(0.02)
                continue
            command = conn.recv()
            if command == "resume":
                clock.resume()
                conn.send(True)
            elif command == "pause":
                clock.pause()
                conn.send(True)
            elif command == "take":
                reply: Taken = {}
                for key, records in floor.take_records().items():
                    credits, rounds, hits = summed(records)
                    # The hits stay here until the end: the controller's process keeps no
                    # growing record of its own, so its memory is the controller's.
                    kept.setdefault(key, []).extend(hits)
                    table = floor.tables[key]
                    reply[key] = ((credits, rounds, []), len(hits), table.credits,
                                  len(table.hit_fifo))  # fmt: skip
                conn.send(reply)
            elif command == "hits":
                conn.send(kept)
            elif command == "fifos":
                conn.send({
                    key: [(h.seq, h.round, h.hand.name) for h in list(table.hit_fifo)[:3]]
                    + [len(table.hit_fifo)]
                    for key, table in floor.tables.items()
                })  # fmt: skip
            elif command == "rss":
                conn.send(rss_mb())
            else:
                break
    finally:
        await floor.stop()
    conn.send(True)


class FloorProcess:
    def __init__(self, plans: tuple[LinkPlan, ...], rate: float, seed: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        gateways = [(p.game, p.tables) for p in plans]
        self.proc = ctx.Process(
            target=serve_floor, args=(child, gateways, rate, seed), name="simulated floor"
        )

    async def start(self) -> dict[str, int]:
        self.proc.start()
        ports: dict[str, int] = await self._answer(60)
        return ports

    async def ask(self, command: str) -> Any:
        self._conn.send(command)
        return await self._answer(60)

    async def _answer(self, within_s: float) -> Any:
        async with asyncio.timeout(within_s):
            # Another process answers: look at the pipe until it has.
            while not self._conn.poll():
                if not self.proc.is_alive():
                    raise RuntimeError(f"the simulator's process ended ({self.proc.exitcode})")
                await asyncio.sleep(0.01)
        return self._conn.recv()

    async def stop(self) -> None:
        if self.proc.is_alive():
            with contextlib.suppress(Exception):
                await self.ask("stop")
        async with asyncio.timeout(20):
            while self.proc.is_alive():  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        self.proc.join()
        self._conn.close()


class FenceCount(logging.Handler):
    """Counts the times the lock connection did not answer and every link was given up."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "every link is given up" in record.getMessage():
            self.count += 1


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
    sim = SimTotals()
    live: dict[str, tuple[int, int]] = {}  # table id -> (credit counter, hits queued)
    hits_dealt = 0
    tid_of = {(p.gateway, u): table_id(p, u) for p in plans for u in range(1, p.tables + 1)}
    link_of = {table_id(p, u): p.link_id for p in plans for u in range(1, p.tables + 1)}
    floor = FloorProcess(plans, rate, seed)
    settings = Settings(database_url=db_url, ledger_key=KEY.hex(), demonstration=True)
    service: FloorService | None = None
    fences = FenceCount()
    logging.getLogger("controller.runtime.link_locks").addHandler(fences)

    async def take() -> int:
        """Fold the rounds dealt since the last take; returns how many."""
        nonlocal hits_dealt
        before = sim.rounds
        taken: Taken = await floor.ask("take")
        for key, (part, hits, credits, queued) in taken.items():
            sim.add(tid_of[key], part)
            hits_dealt += hits
            live[tid_of[key]] = (credits, queued)
        return sim.rounds - before

    try:
        ports = await floor.start()
        service = FloorService(
            settings,
            floor=floor_config(plans, ports),
            clock=SystemClock(),
            retention_schedule=False,
        )
        await service.start()
        runtime = service.runtime
        # The floor's own commission agent lets its new links play (68 IAC 10-1-3(c)(4)).
        await ReviewDesk(FilingDesk(runtime)).approve_new_links(
            reviewer="commission", role=Role.COMMISSION_AGENT
        )

        async def technician() -> int:
            released = 0
            for p in plans:
                for u in range(1, p.tables + 1):
                    tid = table_id(p, u)
                    if not runtime.memory.states[p.link_id].table(tid).hit_pending:
                        continue
                    for hit in await runtime.hits.unverified(tid):
                        await runtime.hits.verify(hit.hit_id, actor="tech")
                    await runtime.hits.release_table(tid, actor="tech")
                    released += 1
            return released

        await floor.ask("resume")
        t0 = time.monotonic()
        next_sample = per_sample
        while sim.rounds < total_rounds:
            await asyncio.sleep(0.25)
            report.released += await technician()
            await take()
            if sim.rounds >= next_sample or sim.rounds >= total_rounds:
                next_sample += per_sample
                s = Sample(
                    day=sim.rounds / (ROUNDS_PER_TABLE_DAY * tables),
                    elapsed_s=time.monotonic() - t0,
                    rounds=sim.rounds,
                    rss_mb=rss_mb(),
                    sim_rss_mb=await floor.ask("rss"),
                    tasks=len(asyncio.all_tasks()),
                    hits=hits_dealt,
                    queued=sum(q for _, q in live.values()),
                    released=report.released,
                )
                report.samples.append(s)
                say(
                    f"day {s.day:6.2f}: {s.rounds} rounds in {s.elapsed_s:.0f} s, RSS "
                    f"{s.rss_mb:.1f} MB (simulator {s.sim_rss_mb:.1f} MB), {s.tasks} tasks, "
                    f"{s.hits} hits ({s.queued} queued at the tables), {s.released} technician resets"
                )
        await floor.ask("pause")  # the dealers stop; wait until everything dealt is committed
        progress_at = time.monotonic()
        last_state: tuple[int, ...] = ()
        while True:
            # A dealer that fell behind still deals the rounds due before the pause.
            fresh = await take()
            report.released += await technician()
            behind = [
                f"{tid}: controller at {ts.credits} credits, table at {live[tid][0]}, "
                f"hits queued {live[tid][1]}, open claims {len(ts.open_claims)}, "
                f"held {ts.hit_pending}, online {ts.online}"
                for p in plans
                for tid, ts in (
                    (table_id(p, u), runtime.memory.states[p.link_id].table(table_id(p, u)))
                    for u in range(1, p.tables + 1)
                )
                if live[tid][1] or ts.credits != live[tid][0] or ts.open_claims
            ]
            # The table shows one hit at a time: a FIFO filled faster than the polls empty
            # it drains at one hit per poll. Waiting is right while it moves.
            state = (*(live[tid][1] for tid in sorted(live)), sim.rounds)
            if state != last_state:
                last_state, progress_at = state, time.monotonic()
            if not fresh and not behind:
                break
            if time.monotonic() - progress_at > DRAIN_STALL_S:
                fifos = await floor.ask("fifos")
                behind += [
                    f"{tid_of[key]}: table FIFO head {fifo[:-1]} of {fifo[-1]}; controller last "
                    f"hit {ts.last_hit_seq} round {ts.last_hit_round}, open {ts.open_claims}"
                    for key, fifo in fifos.items()
                    if fifo[-1]
                    for ts in [runtime.memory.states[link_of[tid_of[key]]].table(tid_of[key])]
                ]
                report.undrained = behind
                say(f"not drained, nothing moved for {DRAIN_STALL_S:g} s: {behind}")
                break
            await asyncio.sleep(0.2)
        report.rounds = sim.rounds
        kept: dict[tuple[str, int], list[tuple[int, str]]] = await floor.ask("hits")
        for key, hits in kept.items():
            sim.hits += [(tid_of[key], seq, hand) for seq, hand in hits]
        until_us = time.time_ns() // 1000 + 1
        engine = service.engine
        report.comparison = await compare(engine, plans, sim)
        async with engine.connect() as conn:
            report.offline_events = int(
                await conn.scalar(
                    select(func.count()).where(MeterEntryRow.kind == str(EntryKind.TABLE_OFFLINE))
                )
                or 0
            )
        verified = await verify_ledger(engine, KEY)
        report.ledger_entries = verified.entries
        report.ledger_problems = [str(p) for p in verified.problems]
        for p in plans:
            total, _weeks = await reconciliation(engine, p.link_id, 0, until_us)
            report.reconciliation[p.link_id] = (total.difference_units, list(total.problems))
    finally:
        logging.getLogger("controller.runtime.link_locks").removeHandler(fences)
        report.lock_fences = fences.count
        if service is not None:
            await service.stop()
        await floor.stop()
        report.duration_s = time.monotonic() - started
    return report


async def main_async(days: float, tables: int, rate: float) -> int:
    from tests.conftest import fresh_schema

    def say(line: str) -> None:
        print(line, flush=True)

    say(
        f"soak: {days:g} days of {tables} tables = "
        f"{round(days * ROUNDS_PER_TABLE_DAY * tables)} rounds, dealt at {rate:g} rounds/s "
        "per table"
    )
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
