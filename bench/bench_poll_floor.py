"""1,000 tables polled once a second by one process: its CPU and memory, against a bare loop.

The tables (default 10 gateways x 100 units, Modbus TCP on 127.0.0.1, ports the OS assigns)
are served by ``python -m app.cli simulate --config FILE`` in a child process, so that the
simulator's CPU is not counted; each table deals a round a minute on average (the
simulator's default, a live table's pace). In this process, measured in the same run:

* ours: the real ``Poller`` (``build()`` + ``start()``: one task per table, group commits
  into SQLite in a temp folder, write-back after every committed reading) at
  ``poll_interval_ms = 1000``; after a warm-up, this process's CPU time
  (``time.process_time``: every thread, the SQLite one included) over the window, as % of
  one core; its resident memory sampled from /proc/self/status during the window, and the
  peak (``ru_maxrss``) at the end of it;
* baseline: the same tables read by a bare pymodbus loop (one ``AsyncModbusTcpClient`` per
  gateway, registers 0-33 of every unit once a second, no decoding, no database, no write)
  over an equal window: its CPU %.

The measurement counts only if the floor was really polled: at least 95 % of the expected
polls succeeded (the simulator's CPU is shown too, to see it kept up). Target: ours at most
50 % of one core and at most 250 MB resident.

    python -m bench.bench_poll_floor [--gateways 10] [--units 100] [--warmup 10] [--window 60]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import resource
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pymodbus.client import AsyncModbusTcpClient

from bench._floor import (
    HOST,
    READ_COUNT,
    READ_START,
    Bus,
    CommitTimes,
    SimProcess,
    floor_config,
    games_for,
    median,
    simulator_process,
    sqlite_runtime,
    stop_checkpoints,
    timed_apply,
    verdict,
)
from controller.runtime.poller import Poller

CPU_TARGET_PCT = 50.0
RSS_TARGET_MB = 250.0
MIN_POLLED = 0.95  # of the expected polls, for the measurement to count


def rss_mb() -> float:
    """VmRSS of this process now, in MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


@dataclass(slots=True)
class Window:
    """CPU and wall time of this process (and the simulator's CPU) over a measured window."""

    wall_s: float = 0.0
    cpu_s: float = 0.0
    sim_cpu_s: float = 0.0
    polls: int = 0  # successful polls (reads) in the window
    errors: int = 0
    max_rss_mb: float = 0.0
    per_table: tuple[int, ...] = ()  # polls of each table in the window (ours)
    commits: CommitTimes | None = None  # the group commits in the window (ours)

    @property
    def cpu_pct(self) -> float:
        return 100 * self.cpu_s / self.wall_s

    @property
    def sim_cpu_pct(self) -> float:
        return 100 * self.sim_cpu_s / self.wall_s

    @property
    def polls_per_s(self) -> float:
        return self.polls / self.wall_s


class RssSampler:
    """Samples VmRSS every ``every_s`` while running."""

    def __init__(self, every_s: float = 0.5) -> None:
        self.every_s = every_s
        self.max_mb = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.max_mb = rss_mb()
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            self.max_mb = max(self.max_mb, rss_mb())
            await asyncio.sleep(self.every_s)

    async def stop(self) -> float:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.max_mb = max(self.max_mb, rss_mb())
        return self.max_mb


async def measure_ours(
    sim: SimProcess, folder: Path, buses: list[Bus], args: argparse.Namespace
) -> Window:
    floor = floor_config(
        buses, poll_interval_ms=args.interval_ms, min_round_ms=10_000, levels=args.levels
    )
    runtime, engine = await sqlite_runtime(folder, floor)
    # Counted and timed: what Poller.start() hands its GroupCommitter (two perf_counter calls
    # per commit added).
    commits = CommitTimes()
    setattr(runtime.readings, "apply", timed_apply(runtime.readings.apply, commits))  # noqa: B010
    poller = Poller(runtime, floor)
    poller.build()
    tables = list(poller.tables.values())
    sampler = RssSampler()
    try:
        await poller.start()
        await asyncio.sleep(args.warmup)

        polls0 = [tp.polls for tp in tables]
        errors0 = sum(tp.errors for tp in tables)
        sampler.start()
        commits.reset()
        sim0, cpu0, wall0 = sim.cpu_seconds(), time.process_time(), time.perf_counter()
        await asyncio.sleep(args.window)
        wall1, cpu1, sim1 = time.perf_counter(), time.process_time(), sim.cpu_seconds()
        window_commits = CommitTimes(commits.commits, commits.readings, commits.seconds)
        per_table = tuple(tp.polls - p0 for tp, p0 in zip(tables, polls0, strict=True))
        errors1 = sum(tp.errors for tp in tables)
        max_rss = await sampler.stop()
    finally:
        await sampler.stop()
        await poller.stop()
        print(f"signed checkpoints written: {await stop_checkpoints()}")
        await engine.dispose()
    errors = errors1 - errors0
    return Window(
        wall_s=wall1 - wall0,
        cpu_s=cpu1 - cpu0,
        sim_cpu_s=sim1 - sim0,
        polls=sum(per_table) - errors,
        errors=errors,
        max_rss_mb=max_rss,
        per_table=per_table,
        commits=window_commits,
    )


async def measure_bare(sim: SimProcess, buses: list[Bus], args: argparse.Namespace) -> Window:
    interval = args.interval_ms / 1000
    counted = [0, 0]  # reads answered, reads failed
    clients = [
        (AsyncModbusTcpClient(HOST, port=sim.ports[b.name], timeout=2, retries=0), b.units)
        for b in buses
    ]

    stopping = asyncio.Event()

    async def gateway(client: AsyncModbusTcpClient, units: int) -> None:
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        while not stopping.is_set():
            answers = await asyncio.gather(
                *(
                    client.read_holding_registers(READ_START, count=READ_COUNT, device_id=unit)
                    for unit in range(1, units + 1)
                ),
                return_exceptions=True,
            )
            for answer in answers:
                counted[isinstance(answer, BaseException) or answer.isError()] += 1
            next_at += interval
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), max(0.0, next_at - loop.time()))

    tasks: list[asyncio.Task[None]] = []
    try:
        for client, _ in clients:
            if not await client.connect():
                raise RuntimeError("the bare client cannot connect")
        tasks = [asyncio.create_task(gateway(c, n)) for c, n in clients]
        await asyncio.sleep(args.baseline_warmup)
        ok0, failed0 = counted
        sim0, cpu0, wall0 = sim.cpu_seconds(), time.process_time(), time.perf_counter()
        await asyncio.sleep(args.window)
        wall1, cpu1, sim1 = time.perf_counter(), time.process_time(), sim.cpu_seconds()
        ok1, failed1 = counted
    finally:
        # Each loop ends after its round of reads: no request is left without its answer.
        stopping.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        for client, _ in clients:
            client.close()
    return Window(
        wall_s=wall1 - wall0,
        cpu_s=cpu1 - cpu0,
        sim_cpu_s=sim1 - sim0,
        polls=ok1 - ok0,
        errors=failed1 - failed0,
    )


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gateways", type=int, default=10)
    ap.add_argument("--units", type=int, default=100, help="tables per gateway")
    ap.add_argument("--interval-ms", type=int, default=1000, help="poll interval per table")
    ap.add_argument("--warmup", type=float, default=10.0, help="seconds before ours is measured")
    ap.add_argument("--window", type=float, default=60.0, help="seconds measured, each")
    ap.add_argument("--baseline-warmup", type=float, default=5.0)
    ap.add_argument(
        "--rounds-per-second", type=float, default=1 / 60, help="per table (default 1/60)"
    )
    ap.add_argument(
        "--levels",
        type=int,
        default=4,
        help="levels in every link's pool (1: classic links of one meter, as before levels)",
    )
    args = ap.parse_args()
    started = time.perf_counter()
    games = games_for(args.levels)
    buses = [
        Bus(name=f"gw{i + 1}", game=games[i % len(games)], units=args.units)
        for i in range(args.gateways)
    ]
    tables = args.gateways * args.units
    expected = tables * 1000 / args.interval_ms  # polls per second

    with tempfile.TemporaryDirectory(prefix="bench-poll-floor-") as tmp:
        folder = Path(tmp)
        async with simulator_process(
            folder, buses, rounds_per_second=args.rounds_per_second, seed=20260101
        ) as sim:
            buses = [Bus(b.name, b.game, b.units, port=sim.ports[b.name]) for b in buses]
            ours = await measure_ours(sim, folder, buses, args)
            print("ours measured; now the bare loop", flush=True)
            peak = peak_rss_mb()  # this process's high-water mark so far: setup and ours
            bare = await measure_bare(sim, buses, args)

    print(
        f"{tables} simulated tables ({args.gateways} gateways x {args.units} units, Modbus TCP "
        f"on 127.0.0.1) served by `python -m app.cli simulate` in a child process, each "
        f"dealing {args.rounds_per_second:.4g} rounds/s; poll interval {args.interval_ms} ms; "
        f"windows of {args.window:g} s (ours after {args.warmup:g} s warm-up); SQLite in a "
        "temp folder; "
        + (
            f"every link a pool of {args.levels} levels"
            if args.levels > 1
            else "classic links of one meter"
        )
    )
    for label, w in (("bare pymodbus read loop", bare), ("ours (Poller + SQLite)", ours)):
        print(
            f"{label:<24} CPU {w.cpu_pct:5.1f} % of one core   polls {w.polls_per_s:7.1f}/s "
            f"({100 * w.polls_per_s / expected:5.1f} % of {expected:g}/s)   errors "
            f"{w.errors}   simulator CPU {w.sim_cpu_pct:5.1f} %"
        )
    assert ours.commits is not None
    c = ours.commits
    print(
        f"ours: polls per table in the window min {min(ours.per_table)}, median "
        f"{median(ours.per_table):g}, max {max(ours.per_table)} (expected "
        f"{args.window * 1000 / args.interval_ms:g}); {c.commits / ours.wall_s:.1f} group "
        f"commits/s of {c.readings / max(1, c.commits):.0f} readings, committing "
        f"{100 * c.seconds / ours.wall_s:.0f} % of the time"
    )
    ratio = ours.cpu_pct / bare.cpu_pct
    per_poll = (10_000 * ours.cpu_pct / ours.polls_per_s, 10_000 * bare.cpu_pct / bare.polls_per_s)
    print(
        f"CPU ratio ours/bare: {ratio:.2f}x; per poll: ours {per_poll[0]:.0f} us, bare read "
        f"{per_poll[1]:.0f} us ({per_poll[0] / per_poll[1]:.2f}x)"
    )
    print(
        f"ours resident memory: {ours.max_rss_mb:.1f} MB max sampled during the window, "
        f"{peak:.1f} MB peak (ru_maxrss, setup included)"
    )
    polled = ours.polls_per_s / expected
    valid = polled >= MIN_POLLED
    if not valid:
        print(
            f"the floor was not polled at its interval ({100 * polled:.1f} % of the expected "
            f"polls, need {100 * MIN_POLLED:.0f} %): the CPU figure does not count"
        )
    rss = max(peak, ours.max_rss_mb)
    ok = valid and ours.cpu_pct <= CPU_TARGET_PCT and rss <= RSS_TARGET_MB
    print(
        f"{verdict(ok)}: {ours.cpu_pct:.1f} % of one core (target <= {CPU_TARGET_PCT:g} %), "
        f"{rss:.1f} MB resident (target <= {RSS_TARGET_MB:g} MB), "
        f"{ratio:.2f}x the bare loop's CPU; run took {time.perf_counter() - started:.0f} s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
