"""A serial bus of 16 tables over a pseudo-terminal: the poll cycle against a bare pymodbus
serial loop on the same line, in the same run.

The line: pseudo-terminal pairs joined by an in-process bridge that plays the RS-485 bus. The
simulated tables (``SimFloor``, one ``GatewaySpec`` with ``serial_port``: Modbus RTU, unit
ids 1-16) sit on one end; each client below has a port of its own on the other end, and the
bridge sends every answer to whichever client spoke last (a serial port is opened
exclusively, so two clients cannot share one device; only one talks at a time here). Default
115200 baud, 8N1. A pseudo-terminal does not pace bytes at the baud rate: the times below
carry no wire time (it is printed apart, computed from the frames' sizes); the RTU frame gap
that ``ModbusLink`` keeps between requests (1.75 ms above 19200 baud) is real.

Measured in the same run, interleaved cycle by cycle (order rotating):

* ours: the real path as the Poller runs a serial line: ``TablePolling.poll_once`` of every table
  gathered (the link's lock keeps one request on the bus at a time): ``ModbusLink``
  (``SerialParams``) block read, decode, the reading committed to SQLite (temp folder)
  through the ``GroupCommitter``, then the write-back;
* ours without the commit: the same, committing nothing (breakdown);
* baseline: a bare ``AsyncModbusSerialClient`` reading registers 0-33 of each unit in turn;
* context only: the bare client reading then writing the heartbeat register of each unit.

There is no fixed target in the issue; this benchmark passes when ours is at most 1.5x the
bare read loop (median cycle).

    python -m bench.bench_poll_serial [--units 16] [--baudrate 115200] [--cycles 50]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import pty
import tempfile
import tty
from collections.abc import Awaitable, Callable
from pathlib import Path

from pymodbus import FramerType
from pymodbus.client import AsyncModbusSerialClient

from bench._floor import (
    GAMES,
    HEARTBEAT_ADDRESS,
    READ_COUNT,
    READ_START,
    Bus,
    CommitTimes,
    failures,
    floor_config,
    hand_driven_poller,
    judge_cycle,
    measure_rotating,
    median,
    ms,
    no_commit,
    p95,
    poll_cycle,
    poll_cycle_committed,
    sqlite_runtime,
    timed_apply,
    warm_up,
)
from link_adapters.modbus import rtu_frame_gap_s
from link_adapters.simulator.gateway import GatewaySpec
from link_adapters.simulator.server import SimFloor

TARGET_RATIO = 1.5
SEED = 20260101

# RTU frame sizes (bytes): address, function, data, CRC.
READ_REQUEST = 8
READ_ANSWER = 5 + 2 * READ_COUNT
WRITE6_REQUEST = 9 + 2 * 6  # function 16, registers 100-105
# Function 23: address, unit, fc, read start+count, write start+count, byte count, 6 words,
# CRC; answered like a read.
READ_WRITE_REQUEST = 1 + 1 + 4 + 4 + 1 + 2 * 6 + 2
WRITE_ANSWER = 8  # function 16 echo; function 6 is 8 both ways
WRITE1_REQUEST = 9 + 2 * 1


class PtyLine:
    """Pseudo-terminal pairs joined by a bridge: one server port, several client ports.

    Bytes from a client port go to the server; the server's answer goes to the client that
    spoke last. Every slave end stays open here too, so reading a master never fails (EIO)
    while nobody has its port open.
    """

    def __init__(self, clients: int) -> None:
        self._loop = asyncio.get_running_loop()
        self._server_master, self._server_slave = pty.openpty()
        pairs = [pty.openpty() for _ in range(clients)]
        self._client_masters = [m for m, _ in pairs]
        self._slaves = [self._server_slave, *(s for _, s in pairs)]
        for fd in self._slaves:
            tty.setraw(fd)
        for fd in (self._server_master, *self._client_masters):
            os.set_blocking(fd, False)
        self.server_port = os.ttyname(self._server_slave)
        self.client_ports = [os.ttyname(s) for _, s in pairs]
        self._talker = self._client_masters[0]
        self._loop.add_reader(self._server_master, self._from_server)
        for fd in self._client_masters:
            self._loop.add_reader(fd, self._from_client, fd)

    def _from_client(self, fd: int) -> None:
        data = os.read(fd, 4096)
        self._talker = fd
        os.write(self._server_master, data)

    def _from_server(self) -> None:
        os.write(self._talker, os.read(self._server_master, 4096))

    def close(self) -> None:
        for fd in (self._server_master, *self._client_masters):
            self._loop.remove_reader(fd)
        for fd in (self._server_master, *self._client_masters, *self._slaves):
            os.close(fd)


def wire_ms(frames_bytes: int, baudrate: int) -> float:
    """Time the bytes take on a real line (10 bits a character, 8N1)."""
    return 1000 * frames_bytes * 10 / baudrate


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--units", type=int, default=16, help="tables on the line")
    ap.add_argument("--baudrate", type=int, default=115200)
    ap.add_argument("--cycles", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5, help="cycles of each variant, untimed")
    ap.add_argument("--rounds-per-second", type=float, default=0.5, help="per table")
    ap.add_argument(
        "--min-gap-ms",
        type=int,
        default=None,
        help="the bus's min_gap_ms setting (default: none, the RTU gap of the baud rate)",
    )
    args = ap.parse_args()
    units = args.units

    with tempfile.TemporaryDirectory(prefix="bench-poll-serial-") as tmp:
        async with contextlib.AsyncExitStack() as stack:
            line = PtyLine(clients=3)
            stack.callback(line.close)
            ours_port, nc_port, bare_port = line.client_ports
            sim = SimFloor(
                [
                    GatewaySpec(
                        game=GAMES[0],
                        tables=units,
                        serial_port=line.server_port,
                        baudrate=args.baudrate,
                        name="line",
                    )
                ],
                rounds_per_second=args.rounds_per_second,
                seed=SEED,
            )
            await sim.start()
            stack.push_async_callback(sim.stop)
            # Each Poller opens a client port of its own; both are the same bus to the tables.
            floors = [
                floor_config(
                    [Bus("line", GAMES[0], units, device=port, baudrate=args.baudrate)],
                    poll_interval_ms=0,
                    min_round_ms=1000,
                    min_gap_ms=args.min_gap_ms,
                )
                for port in (ours_port, nc_port)
            ]
            runtime, engine = await sqlite_runtime(Path(tmp), floors[0])
            stack.push_async_callback(engine.dispose)
            times = CommitTimes()
            ours, ours_committer = hand_driven_poller(
                runtime, floors[0], timed_apply(runtime.readings.apply, times)
            )
            nc, nc_committer = hand_driven_poller(runtime, floors[1], no_commit)
            for poller, committer in ((ours, ours_committer), (nc, nc_committer)):
                for link in poller.links.values():
                    stack.push_async_callback(link.close)
                stack.push_async_callback(committer.stop)
            ours_tables = list(ours.tables.values())
            nc_tables = list(nc.tables.values())
            bare = AsyncModbusSerialClient(
                bare_port, framer=FramerType.RTU, baudrate=args.baudrate, timeout=1, retries=0
            )
            stack.callback(bare.close)
            if not await bare.connect():
                raise RuntimeError("the bare serial client cannot open its port")
            beat = 0

            async def bare_read() -> None:
                for unit in range(1, units + 1):
                    a = await bare.read_holding_registers(
                        READ_START, count=READ_COUNT, device_id=unit
                    )
                    if a.isError() or len(a.registers) != READ_COUNT:
                        raise RuntimeError(f"the bare loop got an error answer from unit {unit}")

            async def bare_read_write() -> None:
                nonlocal beat
                beat = (beat + 1) % 65536
                for unit in range(1, units + 1):
                    a = await bare.read_holding_registers(
                        READ_START, count=READ_COUNT, device_id=unit
                    )
                    w = await bare.write_registers(HEARTBEAT_ADDRESS, [beat], device_id=unit)
                    if a.isError() or w.isError():
                        raise RuntimeError(f"the bare loop got an error answer from unit {unit}")

            variants: dict[str, Callable[[], Awaitable[None]]] = {
                "ours": lambda: poll_cycle_committed(ours, ours_tables),
                "ours_no_commit": lambda: poll_cycle(nc, nc_tables),
                "bare_read": bare_read,
                "bare_read_write": bare_read_write,
            }
            await warm_up(variants, args.warmup)
            errors_before = failures(ours_tables) + failures(nc_tables)
            times.reset()
            samples, cpu = await measure_rotating(variants, args.cycles)
            errors = failures(ours_tables) + failures(nc_tables) - errors_before

    med = {name: median(s) for name, s in samples.items()}
    base = med["bare_read"]
    gap_ms = 1000 * rtu_frame_gap_s(args.baudrate)
    gap_text = f"bus gap {gap_ms:.2f} ms (the RTU gap at this baud rate)"
    if args.min_gap_ms is not None:
        gap_ms = float(args.min_gap_ms)
        gap_text = f"bus gap {gap_ms:.2f} ms (--min-gap-ms)"
    print(
        f"{units} simulated tables on one Modbus RTU line ({args.baudrate} baud 8N1) over "
        f"pseudo-terminals bridged in this process, SimFloor in this process; {gap_text}; "
        f"{args.cycles} "
        f"timed cycles per variant after {args.warmup} warm-up, interleaved; SQLite (WAL, "
        "synchronous=FULL) in a temp folder"
    )
    print(f"{'variant':<46}{'median':>11}{'p95':>12}{'ratio':>8}   CPU/cycle (client + simulator)")
    rows = (
        ("bare pymodbus: read 0-33 of each unit", "bare_read"),
        ("bare pymodbus: read + write heartbeat (context)", "bare_read_write"),
        ("ours: poll cycle (read, decode, hand-off)", "ours_no_commit"),
        ("ours: until committed to SQLite", "ours"),
    )
    for label, name in rows:
        print(
            f"{label:<46}{ms(med[name])}{ms(p95(samples[name])):>12}"
            f"{med[name] / base:>7.2f}x   {ms(cpu[name] / args.cycles)}"
        )
    print(
        f"group commits: {times.commits / args.cycles:.1f} per cycle, "
        f"{times.readings / max(1, times.commits):.1f} readings each, "
        f"{ms(times.seconds / args.cycles).strip()} of commit time per cycle "
        "(wall, overlapping the reads)"
    )
    # What a real line would add: the frames' bytes at the baud rate (not paced by a pty).
    bare_bytes = units * (READ_REQUEST + READ_ANSWER)
    ours_bytes = units * (READ_WRITE_REQUEST + READ_ANSWER)
    print(
        f"not in the figures, on a real line at {args.baudrate} baud: wire time per cycle "
        f"bare read {wire_ms(bare_bytes, args.baudrate):.1f} ms, ours "
        f"{wire_ms(ours_bytes, args.baudrate):.1f} ms (one read/write request per table, "
        f"function 23, carrying the heartbeat, meter, command bits and acknowledgement); "
        f"ours also keeps the RTU gap of {gap_ms:.2f} ms before each of its {units} requests "
        f"({units * gap_ms:.1f} ms per cycle, in the figures), which the bare loop does not"
    )
    return judge_cycle(
        med,
        base=base,
        errors=errors,
        target=TARGET_RATIO,
        against=(
            f"the bare serial read loop (threshold of this benchmark: <= {TARGET_RATIO}x; "
            "the issue sets no target)"
        ),
    )


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
