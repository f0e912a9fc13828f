"""One poll cycle of 64 simulated tables over Modbus TCP, against a bare pymodbus loop.

64 simulated tables (default 4 gateways x 16 units on ports the OS assigns) are polled cycle
after cycle. They are served by ``progressive simulate`` in a process of its own, as table
controllers are devices of their own: served in this process (``--same-process``), the
simulator's work is counted in every variant's time, and it answers a read/write request at a
higher cost than a read, which would be counted as ours. Measured in the same run, the
variants interleaved cycle by cycle (their order rotating) so that the noise of a shared
machine falls on all of them alike:

* ours, poll cycle: every table's ``TablePolling.poll_once`` concurrently (``asyncio.gather``):
  one read/write request over ``ModbusLink`` (heartbeat, meter, command bits and hit
  acknowledgement decided after the previous commit, then the block read), decode, and the
  reading handed to a group commit, here one that records nothing, so that the database's
  time is not counted as polling (a table's next poll waits for its commit, see settle);
* ours, until committed: the same cycle through a second Poller whose readings are
  committed to SQLite, timed until every one of them is durable;
* baseline: a bare loop, one ``AsyncModbusTcpClient`` per gateway, reading registers 0-33
  of every unit concurrently (``asyncio.gather`` of ``read_holding_registers``);
* context only: the bare loop reading and then writing the heartbeat register of every unit
  (two round trips), and the bare loop doing what one of our polls puts on the wire: one
  read/write request (function 23) writing the six write registers and reading 0-33.

Target: the median poll cycle at most 1.3x the bare read loop's median; the time until
committed is printed beside it.

    python -m bench.bench_poll_cycle [--gateways 4] [--units 16] [--cycles 50]
        [--rounds-per-second 0.5] [--same-process]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from pymodbus.client import AsyncModbusTcpClient

from bench._floor import (
    HEARTBEAT_ADDRESS,
    HOST,
    READ_COUNT,
    READ_START,
    WRITE_START,
    Bus,
    CommitTimes,
    failures,
    floor_config,
    games_for,
    hand_driven_poller,
    judge_cycle,
    measure_rotating,
    median,
    ms,
    no_commit,
    p95,
    poll_cycle,
    poll_cycle_committed,
    simulator_process,
    sqlite_runtime,
    stop_checkpoints,
    timed_apply,
    warm_up,
)
from link_adapters.simulator.gateway import GatewaySpec
from link_adapters.simulator.server import SimFloor

TARGET_RATIO = 1.3
SEED = 20260101


@contextlib.asynccontextmanager
async def served(
    folder: Path, buses: list[Bus], rounds_per_second: float, separate: bool
) -> AsyncIterator[dict[str, int]]:
    """The gateways' ports, served in this process (SimFloor) or by ``progressive simulate``."""
    if separate:
        async with simulator_process(
            folder, buses, rounds_per_second=rounds_per_second, seed=SEED
        ) as sim:
            yield sim.ports
        return
    floor = SimFloor(
        [GatewaySpec(game=b.game, tables=b.units, port=0, name=b.name) for b in buses],
        rounds_per_second=rounds_per_second,
        seed=SEED,
    )
    await floor.start()
    try:
        yield floor.ports
    finally:
        await floor.stop()


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gateways", type=int, default=4)
    ap.add_argument("--units", type=int, default=16, help="tables per gateway")
    ap.add_argument("--cycles", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5, help="cycles of each variant, untimed")
    ap.add_argument("--rounds-per-second", type=float, default=0.5, help="per table")
    ap.add_argument(
        "--same-process",
        action="store_true",
        help="serve the tables from this process (same event loop) rather than from "
        "`python -m app.cli simulate` in a child process",
    )
    ap.add_argument(
        "--levels",
        type=int,
        default=4,
        help="levels in every link's pool (1: classic links of one meter, as before levels)",
    )
    args = ap.parse_args()
    separate = not args.same_process
    games = games_for(args.levels)
    buses = [
        Bus(name=f"gw{i + 1}", game=games[i % len(games)], units=args.units)
        for i in range(args.gateways)
    ]
    tables = args.gateways * args.units

    with tempfile.TemporaryDirectory(prefix="bench-poll-cycle-") as tmp:
        folder = Path(tmp)
        async with served(folder, buses, args.rounds_per_second, separate) as ports:
            buses = [Bus(b.name, b.game, b.units, port=ports[b.name]) for b in buses]
            # A round every 1-3 s at the default pace: 1 s is a plausible fastest round.
            floor = floor_config(buses, poll_interval_ms=250, min_round_ms=1000, levels=args.levels)
            runtime, engine = await sqlite_runtime(folder, floor)
            times = CommitTimes()
            ours, ours_committer = hand_driven_poller(
                runtime, floor, timed_apply(runtime.readings.apply, times)
            )
            bare_ours, bare_committer = hand_driven_poller(runtime, floor, no_commit)
            ours_tables = list(ours.tables.values())
            nc_tables = list(bare_ours.tables.values())
            clients = {
                b.name: AsyncModbusTcpClient(HOST, port=b.port or 0, timeout=2, retries=0)
                for b in buses
            }
            try:
                for client in clients.values():
                    if not await client.connect():
                        raise RuntimeError("the bare client cannot connect")
                units = [(clients[b.name], u) for b in buses for u in range(1, b.units + 1)]
                beat = 0

                async def bare_read() -> None:
                    answers = await asyncio.gather(
                        *(
                            c.read_holding_registers(READ_START, count=READ_COUNT, device_id=u)
                            for c, u in units
                        )
                    )
                    if any(a.isError() or len(a.registers) != READ_COUNT for a in answers):
                        raise RuntimeError("the bare loop got an error answer")

                async def bare_read_write() -> None:
                    nonlocal beat
                    beat = (beat + 1) % 65536

                    async def one(client: AsyncModbusTcpClient, unit: int) -> None:
                        a = await client.read_holding_registers(
                            READ_START, count=READ_COUNT, device_id=unit
                        )
                        w = await client.write_registers(HEARTBEAT_ADDRESS, [beat], device_id=unit)
                        if a.isError() or w.isError():
                            raise RuntimeError("the bare loop got an error answer")

                    await asyncio.gather(*(one(c, u) for c, u in units))

                async def bare_fc23() -> None:
                    nonlocal beat
                    beat = (beat + 1) % 65536
                    answers = await asyncio.gather(
                        *(
                            c.readwrite_registers(
                                read_address=READ_START,
                                read_count=READ_COUNT,
                                write_address=WRITE_START,
                                values=[0, 0, 0, 0, 0, beat],
                                device_id=u,
                            )
                            for c, u in units
                        )
                    )
                    if any(a.isError() or len(a.registers) != READ_COUNT for a in answers):
                        raise RuntimeError("the bare loop got an error answer")

                variants: dict[str, Callable[[], Awaitable[None]]] = {
                    "ours": lambda: poll_cycle_committed(ours, ours_tables),
                    "ours_no_commit": lambda: poll_cycle(bare_ours, nc_tables),
                    "bare_read": bare_read,
                    "bare_read_write": bare_read_write,
                    "bare_fc23": bare_fc23,
                }
                await warm_up(variants, args.warmup)
                errors_before = failures(ours_tables) + failures(nc_tables)
                times.reset()
                samples, cpu = await measure_rotating(variants, args.cycles)
                errors = failures(ours_tables) + failures(nc_tables) - errors_before
            finally:
                for client in clients.values():
                    client.close()
                await ours_committer.stop()
                await bare_committer.stop()
                for poller in (ours, bare_ours):
                    for link in poller.links.values():
                        await link.close()
                print(f"signed checkpoints written: {await stop_checkpoints()}")
                await engine.dispose()

    med = {name: median(s) for name, s in samples.items()}
    base = med["bare_read"]
    where = "a child process" if separate else "this process (same event loop)"
    print(
        f"{tables} simulated tables ({args.gateways} gateways x {args.units} units, Modbus TCP on "
        f"127.0.0.1, served from {where}); {args.cycles} timed cycles per variant after "
        f"{args.warmup} warm-up, interleaved; SQLite (WAL, synchronous=FULL) in a temp folder; "
        + (
            f"every link a pool of {args.levels} levels"
            if args.levels > 1
            else "classic links of one meter"
        )
    )
    cpu_what = "client only" if separate else "client + simulator"
    print(f"{'variant':<46}{'median':>11}{'p95':>12}{'ratio':>8}   CPU/cycle ({cpu_what})")
    rows = (
        ("bare pymodbus: read 0-33 of every unit", "bare_read"),
        ("bare pymodbus: read + write heartbeat (context)", "bare_read_write"),
        ("bare pymodbus: one read/write, fn 23 (context)", "bare_fc23"),
        ("ours: poll cycle (read, decode, hand-off)", "ours_no_commit"),
        ("ours: until committed to SQLite", "ours"),
    )
    for label, name in rows:
        print(
            f"{label:<46}{ms(med[name])}{ms(p95(samples[name])):>12}"
            f"{med[name] / base:>7.2f}x   {ms(cpu[name] / args.cycles)}"
        )
    per_cycle = times.commits / args.cycles
    print(
        f"group commits: {per_cycle:.1f} per cycle, {times.readings / max(1, times.commits):.1f} "
        f"readings each, {ms(times.seconds / args.cycles).strip()} of commit time per cycle "
        "(wall, overlapping the reads)"
    )
    print(
        f"full cycle vs bare read+write: {med['ours'] / med['bare_read_write']:.2f}x; "
        f"without commit vs the bare loop's same requests (function 23): "
        f"{med['ours_no_commit'] / med['bare_fc23']:.2f}x"
    )
    return judge_cycle(
        med,
        base=base,
        errors=errors,
        target=TARGET_RATIO,
        against=f"the bare read loop (target <= {TARGET_RATIO}x)",
    )


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
