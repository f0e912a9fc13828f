"""A simulated floor in a process of its own, as real tables are: it answers the controller
over loopback Modbus TCP and RS-485 lines (pseudo-terminal pairs), and the soak over a pipe.

Keeping the tables out of the controller's process keeps the controller's figures (memory,
file descriptors, tasks, threads) its own. The floor keeps every hit dealt until the end and
hands out the rest of its record as it goes (``take``), so neither process grows for the
length of a run.

Besides the record, the soak may ask the floor for faults of its own: a gateway switched off
and on (``SimFloor.close_gateway``), and a serial line's adapter unplugged and plugged back
in (``SerialLine.replug``).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

# What the floor's process imports is all it loads (it is started afresh, not forked): the
# simulator, not the controller's service nor the database's driver, which take seconds.
from controller.core.games import Game
from link_adapters.simulator.gateway import GatewaySpec
from link_adapters.simulator.server import SimFloor
from link_adapters.simulator.table_types import RoundRecord
from tests.pausable_clock import PausableClock
from tests.reliability.process_figures import rss_mb
from tests.serial_line import SerialLine

if TYPE_CHECKING:
    from tests.integration.harness import LinkPlan

__all__ = ["FloorAddresses", "FloorProcess", "RecordPart", "Taken", "summed"]

RecordPart = tuple[int, int, list[tuple[int, str]]]  # credits, rounds, hits (seq, hand name)

# What the simulator's process answers to "take": per (gateway, unit), the rounds dealt since
# the last take (summed, without the hits), how many hits they dealt, and the table's live
# state (its credit counter, hits queued in its FIFO).
Taken = dict[tuple[str, int], tuple[RecordPart, int, int, int]]

# One gateway as the floor's process is told of it: name, game, tables, and the baud rate of
# its serial line (None: on TCP).
Gateway = tuple[str, str, int, int | None]


def summed(records: Iterable[RoundRecord]) -> RecordPart:
    """One table's rounds, reduced to what the comparison needs (small enough to send)."""
    credits = rounds = 0
    hits: list[tuple[int, str]] = []
    for r in records:
        credits += r.credits
        rounds += 1
        hits += [(h.seq, h.hand.name) for h in r.hits]
    return credits, rounds, hits


@dataclass(frozen=True)
class FloorAddresses:
    """Where the controller finds the gateways: TCP ports, and serial devices (the adapter's
    path, a symbolic link that stays when the adapter is plugged in again), by name."""

    ports: dict[str, int]
    devices: dict[str, str]


def serve_floor(conn: Connection, gateways: list[Gateway], rate: float, seed: int) -> None:
    asyncio.run(_serve_floor(conn, gateways, rate, seed))


async def _serve_floor(conn: Connection, gateways: list[Gateway], rate: float, seed: int) -> None:
    clock = PausableClock()
    clock.pause()
    folder = Path(tempfile.mkdtemp(prefix="floor-lines-"))
    lines: dict[str, SerialLine] = {}
    specs = []
    for name, game, tables, baudrate in gateways:
        if baudrate is not None:
            line = lines[name] = SerialLine(folder / f"ttyRS485-{name}")
            line.open()
            where: dict[str, Any] = {"serial_port": line.near, "baudrate": baudrate}
        else:
            where = {"port": 0}
        specs.append(GatewaySpec(game=Game(game), tables=tables, name=name, **where))
    floor = SimFloor(specs, rounds_per_second=rate, seed=seed, now_us=clock.now_us)
    kept: dict[tuple[str, int], list[tuple[int, str]]] = {}
    await floor.start()
    try:
        conn.send(FloorAddresses(floor.ports, {name: line.far for name, line in lines.items()}))
        while True:
            if not conn.poll():
                await asyncio.sleep(0.02)
                continue
            command, *args = conn.recv()
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
            elif command == "switch off":
                await floor.close_gateway(args[0])
                conn.send(True)
            elif command == "switch on":
                await floor.open_gateway(args[0])
                conn.send(True)
            elif command == "replug":
                lines[args[0]].replug()
                conn.send(True)
            else:
                break
    finally:
        await floor.stop()
        for line in lines.values():
            line.close()
        shutil.rmtree(folder, ignore_errors=True)
    conn.send(True)


class FloorProcess:
    """The floor's process, and the soak's end of its pipe."""

    def __init__(
        self, plans: tuple[LinkPlan, ...], rate: float, seed: int, *, baudrate: int
    ) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        gateways = [(p.gateway, p.game, p.tables, baudrate if p.serial else None) for p in plans]
        self.proc = ctx.Process(
            target=serve_floor, args=(child, gateways, rate, seed), name="simulated floor"
        )
        # One question at a time on the pipe, each with its own answer: the soak asks from
        # more than one task (its technician, its faults).
        self._turn = asyncio.Lock()

    async def start(self) -> FloorAddresses:
        self.proc.start()
        addresses: FloorAddresses = await self._answer(60)
        return addresses

    async def ask(self, command: str, *args: Any) -> Any:
        async with self._turn:
            self._conn.send((command, *args))
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
        if self.proc.pid is None:  # never started
            self._conn.close()
            return
        if self.proc.is_alive():
            with contextlib.suppress(Exception):
                await self.ask("stop")
        async with asyncio.timeout(20):
            while self.proc.is_alive():  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        self.proc.join()
        self._conn.close()
