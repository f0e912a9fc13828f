"""The fault soak: a floor polled for hours while its tables, its RS-485 line and its database
fail on a schedule. No table may stop silently, the process may not leak, nothing wagered may
be lost.

    python -m tests.reliability.soak_faults [--minutes 120] [--db postgres|sqlite] [--seed N]
                                            [--log FILE]

The floor: Caribbean Stud, Caribbean Draw and Let It Ride bonus tables behind one Modbus TCP
gateway per game, and Caribbean Stud tables on an RS-485 line (a pseudo-terminal pair whose
far end is an adapter the run can unplug), dealt in a process of their own
(``floor_process``) and polled every 100 ms by the real ``FloorService`` in this one
(``soak_floor``). A technician verifies and resets every table a jackpot holds.

After a warm-up (which has game protection look once and load what it judges with, so that
the start figures include it), for ``--minutes``, faults come on a seeded schedule, each kind
on a timeline of its own so that they also overlap, each held for a while and then lifted:

* the serial port refusing its settings: the line's adapter is unplugged and plugged back in,
  and opening it again pyserial gets ``termios.error`` (EINVAL), as from an adapter that cannot
  do the line's baud rate or parity (``tests.serial_line.SettingsRefusal``); later it takes them;
* a gateway switched off, its Modbus server stopped, so that its tables vanish (TCP gateways
  and the serial line in turn); then on again;
* the database restarting: on PostgreSQL every connection of the controller cut and new ones
  refused; on SQLite its write lock held by another process (``database_faults``).

Every half second a watch reads each table as ``GET /api/v1/tables`` shows it
(``FloorService.table_status``) and, when it must, what ``/readyz`` says
(``FloorService.readiness``). A table unanswered or unrecorded must be shown so: offline (or
held as unrecorded) with the reason, or, while it answers but its readings are not recorded,
named by ``/readyz`` (itself, its link, the database or the link locks). One that goes
unanswered or unrecorded for longer than ``SILENT_BOUND_S`` (three times the ceiling of the
poll backoff), and unshown for longer than that within it, is a silent table: there must be
none. (Shown until its cause went, a table catching up is not silent.)

Every ``--sample-s`` the run samples its own process: resident memory, open file descriptors,
asyncio tasks, threads (the tables are in another process). Each is reported at the start (the
end of the warm-up, before the first fault), at the end (every fault lifted and every table
back), at its peak, and as its growth per hour fitted through the samples; end against start
must stay within ``TOLERANCE``.

At the end the dealers stop, everything dealt is committed, and the database is held against
the simulator's record: the meter exact to the unit, every hit once, the ledger verified whole
(in the CLI, by ``progressive ledger verify``, a process of its own), every link's
reconciliation balanced. Exit status 0 only when all of it holds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from tests.reliability.database_faults import DatabaseFault, PostgresRestart, SqliteLock
from tests.reliability.fault_schedule import (
    KINDS,
    Fault,
    Injected,
    Injector,
    fault_plans,
    fault_schedule,
    refusing_settings,
)
from tests.reliability.process_figures import ProcessSample, Trend, sample
from tests.reliability.soak import RSS_GROWTH_MB, TASK_SLACK
from tests.reliability.soak_floor import EndChecks, SoakFloor
from tests.reliability.table_watch import SILENT_BOUND_S, WATCH_S, Silence, Watch

# Once every fault is lifted, every table should answer and record again within this: a link
# that could not connect waits up to 30 s (the reconnect backoff's ceiling) before it tries.
SETTLE_S: Final = 120.0
# What the figures may grow by from the start (warm-up over, no fault yet) to the end (every
# fault lifted, every table back). Open files: the database pool keeps up to its size of
# connections open once a burst needed them (5), and one may be being replaced. Threads: one
# waits on a process the run started (the SQLite lock's holder) until it has ended.
TOLERANCE: Final[Mapping[str, float]] = {
    "rss_mb": RSS_GROWTH_MB,
    "fds": 6,
    "tasks": TASK_SLACK,
    "threads": 1,
}


@dataclass
class FaultSoakReport:
    db: str
    run_s: float
    tables: int
    faults: list[Injected] = field(default_factory=list)
    silences: list[Silence] = field(default_factory=list)
    samples: list[ProcessSample] = field(default_factory=list)
    start: ProcessSample | None = None
    end: ProcessSample | None = None
    not_back: list[str] = field(default_factory=list)
    longest_unanswered_s: float = 0.0
    longest_unrecorded_s: float = 0.0
    longest_unshown_s: float = 0.0  # ... of those, not shown so
    checks: EndChecks = field(default_factory=EndChecks)
    ledger_command: tuple[int, str] | None = None  # ``progressive ledger verify``: exit, last line
    rounds: int = 0
    hits: int = 0
    released: int = 0
    technician_failures: int = 0
    technician_slowest_s: float = 0.0
    refusals: int = 0  # settings pyserial was refused
    connections_cut: int = 0
    duration_s: float = 0.0

    def trends(self) -> list[Trend]:
        if self.start is None or self.end is None:
            return []
        after = [s for s in self.samples if s.at_s >= self.start.at_s]
        return [Trend.of(name, after, self.start, self.end) for name in TOLERANCE]

    @property
    def leaks(self) -> list[str]:
        if self.start is None or self.end is None:
            return ["no start or end sample"]
        return [
            f"{t.name} grew {t.growth:+g} (tolerance {TOLERANCE[t.name]:g})"
            for t in self.trends()
            if t.growth > TOLERANCE[t.name]
        ]

    @property
    def kinds_missing(self) -> list[str]:
        happened = {i.fault.kind for i in self.faults if i.ended_us is not None}
        return [k for k in KINDS if k not in happened]

    @property
    def ok(self) -> bool:
        return (
            not self.silences
            and not self.not_back
            and not self.leaks
            and not self.kinds_missing
            and self.refusals > 0
            and self.checks.ok
            and (self.ledger_command is None or self.ledger_command[0] == 0)
        )

    def lines(self) -> list[str]:
        out = [
            f"{'t s':>7} {'RSS MB':>7} {'fds':>4} {'tasks':>5} {'threads':>7}",
            *(
                f"{s.at_s:7.0f} {s.rss_mb:7.1f} {s.fds:4d} {s.tasks:5d} {s.threads:7d}"
                for s in self.samples
            ),
            f"run: {self.duration_s:.0f} s, of which faults {self.run_s:.0f} s; "
            f"{self.tables} tables; {self.rounds} rounds, {self.hits} hits, "
            f"{self.released} technician resets ({self.technician_failures} requests failed "
            f"and were made again; the slowest reset took {self.technician_slowest_s:.1f} s)",
        ]
        for kind in KINDS:
            done = [i for i in self.faults if i.fault.kind == kind and i.ended_us is not None]
            if not done:
                out.append(f"{kind}: never")
                continue
            holds = [i.fault.for_s for i in done]
            shown = [i.shown_s for i in done if i.shown_s is not None]
            back = [i.back_s for i in done if i.back_s is not None]
            masked = sum(1 for i in done if i.masked)
            targets = sorted({i.fault.target for i in done})
            out.append(
                f"{kind}: {len(done)} times ({', '.join(targets)}), held {min(holds):.0f}-"
                f"{max(holds):.0f} s; shown within {_spread(shown)} (of {len(shown)}); "
                f"back within {_spread(back)} (of {len(back)}"
                + (f"; {masked} had all their tables taken by another first)" if masked else ")")
            )
        out.append(
            f"serial settings refused: {self.refusals} times; database connections cut: "
            f"{self.connections_cut}"
        )
        out.append(
            f"longest a table went unanswered: {self.longest_unanswered_s:.1f} s, unrecorded: "
            f"{self.longest_unrecorded_s:.1f} s; of such a time, unshown: "
            f"{self.longest_unshown_s:.1f} s (bound: {SILENT_BOUND_S:g} s)"
        )
        out.append(f"silent tables: {len(self.silences)}")
        for s in self.silences[:20]:
            out.append(
                f"  SILENT {s.table} at {s.began_s:.0f} s for {s.lasted_s:.1f} s: shown "
                f"{s.state!r}, {s.why}; faults: {s.faults or 'none'}"
            )
        for line in self.not_back:
            out.append(f"NOT BACK: {line}")
        for t in self.trends():
            out.append(
                f"{t.name}: start {t.start:g}, end {t.end:g} ({t.growth:+g}, tolerance "
                f"{TOLERANCE[t.name]:g}), peak {t.peak:g}, fitted growth {t.per_hour:+.2f}/hour"
            )
        for leak in self.leaks:
            out.append(f"LEAK: {leak}")
        for kind in self.kinds_missing:
            out.append(f"NOT INJECTED: {kind}")
        out += self.checks.lines()
        if self.ledger_command is not None:
            code, text = self.ledger_command
            out.append(f"progressive ledger verify: exit {code}: {text}")
        out.append("VERDICT: " + ("PASS" if self.ok else "FAIL"))
        return out


def _spread(values: Sequence[float]) -> str:
    if not values:
        return "-"
    return f"median {statistics.median(values):.1f} s, max {max(values):.1f} s"


async def run_fault_soak(
    db_url: str,
    database: DatabaseFault,
    *,
    run_s: float,
    schedule: Sequence[Fault],
    tables: int = 4,
    rate: float = 5.0,
    seed: int = 11,
    warm_up_s: float = 60.0,
    sample_s: float = 60.0,
    migrate: bool = False,
    ledger_command: bool = False,
    say: Callable[[str], None] = print,
) -> FaultSoakReport:
    """The fault soak's run (see the module docstring): ``schedule``'s faults over ``run_s``
    seconds after ``warm_up_s``; ``database`` is what makes the database go away."""
    started = time.monotonic()
    plans = fault_plans(tables)
    report = FaultSoakReport(db=db_url.split(":", 1)[0], run_s=run_s, tables=tables * len(plans))
    soak = SoakFloor(db_url, plans, rate=rate, seed=seed, say=say, migrate=migrate)
    background: list[asyncio.Task[None]] = []
    watch: Watch | None = None

    def figures() -> ProcessSample:
        s = sample(time.monotonic() - started)
        report.samples.append(s)
        return s

    stopping = asyncio.Event()

    async def every(seconds: float, step: Callable[[], object]) -> None:
        # Stopped between steps, never in one: a take from the floor's process cut short
        # would lose the rounds it carried.
        while not stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), seconds)
            if stopping.is_set():
                return
            result = step()
            if asyncio.iscoroutine(result):
                await result

    def said(s: ProcessSample) -> None:
        offline = sum(
            1 for tid in soak.table_ids if soak.running.table_status(tid).state == "offline"
        )
        active = (
            [] if watch is None else [f"{i.fault.kind} ({i.fault.target})" for i in watch.active()]
        )
        say(
            f"{s.at_s:7.0f} s: RSS {s.rss_mb:.1f} MB, {s.fds} fds, {s.tasks} tasks, "
            f"{s.threads} threads; {soak.sim.rounds} rounds, {soak.hits_dealt} hits; "
            f"{offline} tables offline; faults: {', '.join(active) or 'none'}"
        )

    with refusing_settings() as refusal:
        try:
            await soak.start()
            await soak.floor.ask("resume")
            injector = Injector(soak, database, refusal, schedule)
            report.faults = injector.records
            watch = Watch(soak, injector.records, started)
            report.silences = watch.silences

            async def tend() -> None:
                await soak.technician()
                await soak.take()

            background += [
                asyncio.create_task(every(0.25, tend), name="technician"),
                asyncio.create_task(every(WATCH_S, watch.tick), name="watch"),
                asyncio.create_task(every(sample_s, lambda: said(figures())), name="figures"),
            ]
            await asyncio.sleep(warm_up_s)
            protection = soak.running.protection
            if protection is not None:
                # Game protection looks every quarter hour of the floor's clock, in a thread of
                # its own, and loads what it judges with (scipy, numpy: some 60 MB) once a tail
                # probability is first needed, minutes into play. Both had now, they are part
                # of the start, not growth.
                await protection.step(look_now=True)
                await protection.run_in_watch(lambda _: importlib.import_module("scipy.stats"))
            back = watch.all_back(soak.running.now_us() - int(SILENT_BOUND_S * 1e6))
            if back:
                report.not_back += [f"after the warm-up: {b}" for b in back]
            report.start = figures()
            said(report.start)
            faults_from = time.monotonic()
            await injector.run()
            await asyncio.sleep(max(0.0, faults_from + run_s - time.monotonic()))
            lifted = soak.running.now_us()
            deadline = time.monotonic() + SETTLE_S
            # The tables are the poller's: look at them until they are back.
            while (back := watch.all_back(lifted)) and time.monotonic() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(WATCH_S)
            report.not_back += back
            await watch.tick()  # the last faults' tables are back: their figures, now
            report.end = figures()
            said(report.end)
            stopping.set()
            async with asyncio.timeout(120):
                await asyncio.gather(*background)  # a step that failed fails the run
            background.clear()
            undrained = await soak.drain()
            report.checks = await soak.check(undrained)
            if ledger_command:
                report.ledger_command = await verify_by_command(db_url)
        finally:
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)
            report.rounds, report.hits = soak.sim.rounds, soak.hits_dealt
            report.released, report.technician_failures = soak.released, soak.technician_failures
            report.technician_slowest_s = soak.technician_slowest_s
            report.refusals = refusal.refused
            if watch is not None:
                report.longest_unanswered_s = watch.longest_unanswered_s
                report.longest_unrecorded_s = watch.longest_unrecorded_s
                report.longest_unshown_s = watch.longest_unshown_s
            await database.close()
            await soak.stop()
            if isinstance(database, PostgresRestart):
                report.connections_cut = database.cut
            report.duration_s = time.monotonic() - started
    return report


async def verify_by_command(db_url: str) -> tuple[int, str]:
    """``progressive ledger verify`` against the run's database, as an auditor runs it."""
    from tests.app.helpers import progressive

    with tempfile.TemporaryDirectory() as folder:
        code, out, err = await progressive("ledger", "verify", db_url=db_url, cwd=Path(folder))
    last = (out + err).strip().splitlines()
    return code, last[-1] if last else ""


async def main_async(args: argparse.Namespace) -> int:
    from tests.conftest import PG_DSN, fresh_database, named_manifest

    def say(line: str) -> None:
        print(line, flush=True)

    run_s = args.minutes * 60
    plans = fault_plans(args.tables)
    schedule = fault_schedule(
        plans, run_s, seed=args.seed, hold_s=tuple(args.hold_s), gap_s=tuple(args.gap_s)
    )
    say(
        f"fault soak on {args.db}: {run_s:.0f} s of faults after a {args.warm_up_s:g} s warm-up, "
        f"{args.tables * len(plans)} tables at {args.rate:g} rounds/s, {len(schedule)} faults "
        f"(seed {args.seed})"
    )
    run = functools.partial(
        run_fault_soak,
        run_s=run_s,
        schedule=schedule,
        tables=args.tables,
        rate=args.rate,
        seed=args.seed,
        warm_up_s=args.warm_up_s,
        sample_s=args.sample_s,
        ledger_command=True,
        say=say,
    )
    with tempfile.TemporaryDirectory(prefix="soak-faults-") as folder, named_manifest(Path(folder)):
        if args.db == "postgres":
            async with fresh_database("soak_faults") as (name, url):
                report = await run(url, PostgresRestart(PG_DSN, name))
        else:
            path = Path(folder) / "progressive.db"
            report = await run(f"sqlite+aiosqlite:///{path}", SqliteLock(path), migrate=True)
    for line in report.lines():
        say(line)
    return 0 if report.ok else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=120, help="of faults, after the warm-up")
    parser.add_argument("--db", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--tables", type=int, default=4, help="per link (four links)")
    parser.add_argument("--rate", type=float, default=5, help="rounds a second per table")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--warm-up-s", type=float, default=60)
    parser.add_argument("--sample-s", type=float, default=60)
    parser.add_argument("--hold-s", type=float, nargs=2, default=(5, 60), metavar=("MIN", "MAX"))
    parser.add_argument("--gap-s", type=float, nargs=2, default=(30, 180), metavar=("MIN", "MAX"))
    parser.add_argument(
        "--log", type=Path, help="the controller's log (INFO and up) goes here, not to stderr"
    )
    args = parser.parse_args()
    if args.log is not None:
        logging.basicConfig(
            filename=args.log,
            level=logging.INFO,
            format="%(asctime)s %(levelname)s %(name)s %(message)s",
        )
    sys.exit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
