"""Shared pieces of the polling benchmarks: a floor configuration, its SQLite runtime, the
real poller driven by hand, and small statistics.

Only 127.0.0.1 is ever a target. The database is SQLite in a folder of the caller's (a temp
folder), migrated here, with a fixed benchmark ledger key.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from controller.core.games import Game
from controller.core.reducer import TableReading
from controller.manifest import MANIFEST_NAME, make_manifest
from controller.paperwork.checkpoints import load_private_key, make_key_pair
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.rules.jurisdictions import NEW_JERSEY
from controller.runtime.anchoring import Checkpointer
from controller.runtime.clock import SystemClock
from controller.runtime.config import parse_floor_config
from controller.runtime.config_entries import FloorConfig
from controller.runtime.group_commit import GroupCommitter, commit_linger_s
from controller.runtime.links import LinkRuntime
from controller.runtime.poller import Poller
from controller.runtime.service import open_floor
from controller.runtime.table_polling import TablePoll
from controller.storage.database import make_engine, upgrade
from controller.storage.store import LedgerStore

HOST = "127.0.0.1"
KEY = b"benchmark ledger key, 32 bytes!!"
# Games in turn, one per gateway; a link's tables are the tables of one gateway.
GAMES: tuple[Game, ...] = (Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW, Game.LET_IT_RIDE_BONUS)
RATES = ("82.5%", "75%", "61.37%")

# The reference register map v1: the read block, the write registers, the heartbeat.
READ_START = 0
READ_COUNT = 34
WRITE_START = 100
WRITE_COUNT = 6
HEARTBEAT_ADDRESS = 105


@dataclass(frozen=True, slots=True)
class Bus:
    """One bus of the floor: a TCP gateway (host, port) or a serial device."""

    name: str
    game: Game
    units: int
    port: int | None = None
    device: str | None = None
    baudrate: int = 19200


def floor_config(
    buses: Sequence[Bus],
    *,
    poll_interval_ms: int,
    min_round_ms: int,
    timeout_ms: int | None = None,
    min_gap_ms: int | None = None,
    levels: int = 1,
) -> FloorConfig:
    """One link per bus, one table per unit, written as an operator writes floor.toml.

    ``levels`` above 1 gives every link a pool of that many levels (``pool_rows``); its games
    are then the progressive ones only (``games_for``), since a fixed-pay link has no meter."""
    bus_rows: list[dict[str, Any]] = []
    for bus in buses:
        row: dict[str, Any] = {"name": bus.name}
        if bus.device is not None:
            row |= {"kind": "rtu", "device": bus.device, "baudrate": bus.baudrate}
        else:
            assert bus.port is not None
            row |= {"kind": "tcp", "host": HOST, "port": bus.port}
        if timeout_ms is not None:
            row["timeout_ms"] = timeout_ms
        if min_gap_ms is not None:
            row["min_gap_ms"] = min_gap_ms
        bus_rows.append(row)
    links = [
        {
            "id": bus.name,
            "game": bus.game.value,
            **(
                {"rate": RATES[GAMES.index(bus.game)], "reset": "$10,000"}
                if levels <= 1
                else pool_rows(levels)
            ),
            "table": [
                {
                    "id": f"{bus.name}-{unit}",
                    "bus": bus.name,
                    "unit": unit,
                    "location": f"pit {bus.name}",
                    "poll_interval_ms": poll_interval_ms,
                    "min_round_ms": min_round_ms,
                }
                for unit in range(1, bus.units + 1)
            ],
        }
        for bus in buses
    ]
    return parse_floor_config({"bus": bus_rows, "link": links}, source="bench")


# A link of levels as floors run them (Grand, Major, Minor, Mini...): the first level with a
# hidden share funding its reset, the middle ones with a limit and an overflow meter, the last
# a mystery level; each other level won by a hand at 100 %, 80 % of every wager in all.
_LEVEL_HANDS = ("ROYAL_FLUSH", "STRAIGHT_FLUSH", "FOUR_OF_A_KIND", "FULL_HOUSE", "FLUSH")
_LEVEL_NAMES = ("Grand", "Major", "Minor", "Mini", "Micro")
MAX_BENCH_LEVELS = len(_LEVEL_HANDS) - 1


def games_for(levels: int) -> tuple[Game, ...]:
    """The games of a benchmark floor: with levels, the progressive ones only (a fixed-pay
    link has no meter to share among levels)."""
    return GAMES if levels <= 1 else (Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW)


def pool_rows(levels: int) -> dict[str, Any]:
    """The ``[[link.level]]`` and ``[[link.paytable]]`` rows of a pool of ``levels`` levels."""
    if not 2 <= levels <= MAX_BENCH_LEVELS:
        raise ValueError(f"a benchmark pool has 2 to {MAX_BENCH_LEVELS} levels")
    rows: list[dict[str, Any]] = []
    for i in range(levels):
        reset = 10_000 // 10**i
        row: dict[str, Any] = {"name": _LEVEL_NAMES[i], "reset": f"${reset:,}", "share": "16%"}
        if i == 0:
            row |= {"share": f"{80 - 8 - 16 * (levels - 1)}%", "hidden": "8%"}
        elif i == levels - 1:
            row |= {"mystery_floor": f"${reset + 1:,}", "mystery_ceiling": f"${reset * 2:,}"}
        else:
            row |= {"limit": f"${reset * 3:,}", "above_limit": "overflow"}
        rows.append(row)
    lines: list[dict[str, Any]] = [
        {"hand": _LEVEL_HANDS[i], "pays": "100%", "level": i + 1} for i in range(levels - 1)
    ]
    lines.append({"hand": _LEVEL_HANDS[-1], "pays": "$50"})
    return {"level": rows, "paytable": lines}


CHECKPOINT_EVERY_S = 5.0
CHECKPOINTERS: list[Checkpointer] = []  # stopped by stop_checkpoints()


def bench_manifest(folder: Path) -> Path:
    """The manifest of the tree the benchmark runs, made in its folder: a controller checks its
    installed software against one before it starts, as in production."""
    return make_manifest(folder / MANIFEST_NAME).path


async def stop_checkpoints() -> int:
    """Stop the benchmark's checkpointers; the number of checkpoints they wrote."""
    written = 0
    while CHECKPOINTERS:
        cp = CHECKPOINTERS.pop()
        await cp.stop()
        written += cp.written
    return written


async def sqlite_runtime(folder: Path, floor: FloorConfig) -> tuple[LinkRuntime, AsyncEngine]:
    """A migrated SQLite database in ``folder`` with the floor's links, opened as the daemon
    opens it (``open_floor``)."""
    engine = make_engine(f"sqlite+aiosqlite:///{folder / 'bench.db'}")
    await upgrade(engine)
    # Every shape a pool can have, so under a jurisdiction that allows them all.
    store = LedgerStore(engine, KEY, law=NEW_JERSEY)
    # Signed checkpoints as the daemon writes them, every CHECKPOINT_EVERY_S (the default is
    # a minute; shorter here so that a window sees their cost many times over).
    make_key_pair(folder)
    checkpoints = Checkpointer(
        load_private_key(folder / "checkpoint-signing.key"),
        folder / "checkpoints.jsonl",
        interval_s=CHECKPOINT_EVERY_S,
    )
    await checkpoints.open(store)
    # A benchmark is no live floor: its new links play at once, in demonstration mode.
    runtime = await open_floor(store, floor, SystemClock(), demonstration=True)
    checkpoints.start()
    CHECKPOINTERS.append(checkpoints)
    # The floor's own commission agent lets its new links play (68 IAC 10-1-3(c)(4)).
    await ReviewDesk(FilingDesk(runtime)).approve_new_links(
        reviewer="commission", role=Role.COMMISSION_AGENT
    )
    return runtime, engine


@dataclass(slots=True)
class CommitTimes:
    """What the group committer did: how many commits, how long they took."""

    commits: int = 0
    readings: int = 0
    seconds: float = 0.0

    def reset(self) -> None:
        self.commits = self.readings = 0
        self.seconds = 0.0


def timed_apply(
    apply: Callable[[Sequence[TableReading]], Awaitable[object]], times: CommitTimes
) -> Callable[[Sequence[TableReading]], Awaitable[object]]:
    """``apply`` counted and timed (perf_counter around each whole commit)."""

    async def run(readings: Sequence[TableReading]) -> object:
        started = time.perf_counter()
        try:
            return await apply(readings)
        finally:
            times.seconds += time.perf_counter() - started
            times.commits += 1
            times.readings += len(readings)

    return run


async def no_commit(readings: Sequence[TableReading]) -> None:
    """A committer's apply that commits nothing (for the read+decode+write part alone)."""
    return None


def hand_driven_poller(
    runtime: LinkRuntime,
    floor: FloorConfig,
    apply: Callable[[Sequence[TableReading]], Awaitable[object]],
) -> tuple[Poller, GroupCommitter]:
    """The real Poller, built, with its group committer running as ``Poller.start()`` sets it
    up, but without the per-table forever loops: the caller drives ``poll_once``."""
    poller = Poller(runtime, floor)
    poller.build()
    linger = commit_linger_s([tp.entry.poll_interval_ms for tp in poller.tables.values()])
    committer = GroupCommitter(apply, linger_s=linger)
    committer.start()
    poller.per_table.committer = committer
    return poller, committer


async def poll_cycle(poller: Poller, tables: Sequence[TablePoll]) -> None:
    """One cycle: every table polled once, concurrently (each link's lock orders its bus).

    A poll ends when its reading is handed to the group commit; the table's next poll waits
    for that commit first (``Poller.settle``), as in the daemon.
    """
    await asyncio.gather(*(poller.per_table.poll_once(tp) for tp in tables))


async def poll_cycle_committed(poller: Poller, tables: Sequence[TablePoll]) -> None:
    """One cycle until every reading of it is committed (durable)."""
    await poll_cycle(poller, tables)
    await asyncio.gather(*(poller.per_table.settle(tp) for tp in tables))


async def warm_up(variants: Mapping[str, Callable[[], Awaitable[None]]], rounds: int) -> None:
    for _ in range(rounds):
        for run in variants.values():
            await run()


async def measure_rotating(
    variants: Mapping[str, Callable[[], Awaitable[None]]], cycles: int
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Every variant once per cycle, in an order that rotates from cycle to cycle, so a noisy
    moment on the machine falls on all of them alike. Wall time per run; CPU per variant."""
    names = list(variants)
    samples: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, float] = dict.fromkeys(names, 0.0)
    for i in range(cycles):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            cpu_started = time.process_time()
            started = time.perf_counter()
            await variants[name]()
            samples[name].append(time.perf_counter() - started)
            cpu[name] += time.process_time() - cpu_started
    return samples, cpu


def judge_cycle(
    med: Mapping[str, float], *, base: float, errors: int, target: float, against: str
) -> int:
    """Print the verdict on the poll cycle against ``base``; the exit code.

    The poll cycle is ``ours_no_commit``: the real poll path, each reading handed to a group
    commit that records nothing, so that the database's time is not counted as polling;
    ``ours`` is the same cycle until its readings are committed to SQLite.
    """
    ratio = med["ours_no_commit"] / base
    if errors:
        print(f"poll errors during the timed cycles: {errors} (the measurement is not valid)")
    ok = ratio <= target and errors == 0
    print(
        f"{verdict(ok)}: poll cycle {ms(med['ours_no_commit']).strip()} median, {ratio:.2f}x "
        f"{against}; until committed {ms(med['ours']).strip()}, {med['ours'] / base:.2f}x"
    )
    return 0 if ok else 1


def failures(tables: Sequence[TablePoll]) -> int:
    return sum(tp.errors for tp in tables)


# --- statistics ----------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(0.95 * len(ordered)) - 1))
    return ordered[index]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f} ms"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


# --- the simulator in a process of its own -------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
_DESCRIBED = re.compile(r"^(\S+): .* on Modbus TCP [0-9.]+:(\d+), unit")


@dataclass(frozen=True, slots=True)
class SimProcess:
    """``progressive simulate`` running in a child process: its pid and TCP ports by name."""

    pid: int
    ports: dict[str, int]

    def cpu_seconds(self) -> float:
        """User + system CPU the simulator process has used so far (Linux /proc)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
        return ticks / os.sysconf("SC_CLK_TCK")


def _simulate_toml(buses: Sequence[Bus], rounds_per_second: float, seed: int) -> str:
    lines = [f"seed = {seed}", f"rounds_per_second = {rounds_per_second!r}", ""]
    for bus in buses:
        lines += [
            "[[gateway]]",
            f'game = "{bus.game.value}"',
            f'name = "{bus.name}"',
            f'host = "{HOST}"',
            "port = 0",
            f"tables = {bus.units}",
            "",
        ]
    return "\n".join(lines)


@asynccontextmanager
async def simulator_process(
    folder: Path, buses: Sequence[Bus], *, rounds_per_second: float, seed: int
) -> AsyncIterator[SimProcess]:
    """``python -m app.cli simulate --config FILE`` with every gateway on a port the OS picks;
    the ports are read from what it prints. Stopped with SIGTERM (then killed) on exit."""
    config = folder / "simulate.toml"
    config.write_text(_simulate_toml(buses, rounds_per_second, seed), encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        "simulate",
        "--config",
        str(config),
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert proc.stdout is not None
    try:
        ports: dict[str, int] = {}
        said: list[str] = []
        async with asyncio.timeout(60):
            while True:
                raw = await proc.stdout.readline()
                if not raw:
                    raise RuntimeError("the simulator stopped:\n" + "".join(said))
                line = raw.decode(errors="replace")
                said.append(line)
                if found := _DESCRIBED.match(line):
                    ports[found[1]] = int(found[2])
                if "Ctrl-C stops" in line:
                    break
        missing = {bus.name for bus in buses} - set(ports)
        if missing:
            raise RuntimeError(f"the simulator did not say the ports of {sorted(missing)}")
        # Keep its output drained so that it can never block on a full pipe.
        drain = asyncio.create_task(_drain(proc.stdout))
        try:
            yield SimProcess(pid=proc.pid, ports=ports)
        finally:
            drain.cancel()
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(10):
                    await proc.wait()
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.readline():
        pass
