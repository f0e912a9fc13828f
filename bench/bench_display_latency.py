"""From a wager at a table to the frame at a floor display, through the whole product.

Simulated tables (one Modbus TCP gateway, ``SimFloor`` in this process, no scheduled bets)
are polled every 250 ms by the real poller; the readings go through the engine into the
SQLite ledger, and the hub pushes the display state over the real web server to a display
client (a ``websockets`` client on ``/ws/links/{link_id}``). Two kinds of event are timed,
from the moment the table deals to the moment the client holds the frame that shows it:

* a wager: one seat bets in a round dealt now; timed to the first message whose meter
  includes it;
* a hit: a royal flush dealt now (a fresh table each time, since a table that hit waits for
  a technician); timed to the message showing the won amount and that table.

Events start at random moments of the poll cycle, so the poll wait (0 to one interval) is in
every figure. Target: p99 of each at most the poll interval + 50 ms. Baseline, measured in the
same run: the bare Modbus read round trip (``AsyncModbusTcpClient``, registers 0-33 of one
unit); the floor a polling system cannot beat is the interval plus one read.

    python -m bench.bench_display_latency [--wagers 120] [--hits 8] [--poll-ms 250]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import websockets
from pymodbus.client import AsyncModbusTcpClient

from app.serve import serve
from app.web import create_app
from bench._floor import HOST, READ_COUNT, READ_START, bench_manifest, median, ms, verdict
from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.core.reducer.display import ANNOUNCE_US
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.runtime.config import parse_floor_config
from controller.runtime.service import FloorService
from controller.settings import Settings
from link_adapters.simulator.gateway import GatewaySpec
from link_adapters.simulator.server import SimFloor
from link_adapters.simulator.table_types import SimTableConfig

LINK = "bench"
GAME = Game.CARIBBEAN_STUD
MARGIN_S = 0.050
SEED = 20260104


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(0.99 * len(ordered)) - 1))]


class Display:
    """A display client that keeps every message with the moment it arrived."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.latest: dict[str, Any] = {}
        self.arrived = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ws: websockets.ClientConnection | None = None

    async def start(self) -> None:
        self._ws = await websockets.connect(self.url, compression=None)
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self._ws is not None
        async for raw in self._ws:
            self.latest = json.loads(raw)
            self.latest["_arrived"] = time.perf_counter()
            self.arrived.set()

    async def until(
        self, condition: Callable[[dict[str, Any]], bool], within_s: float = 10
    ) -> float:
        """When the first message satisfying ``condition`` arrived (perf_counter)."""
        async with asyncio.timeout(within_s):
            while not (self.latest and condition(self.latest)):
                self.arrived.clear()
                await self.arrived.wait()
        return float(self.latest["_arrived"])

    async def stop(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


async def bare_reads(port: int, count: int) -> list[float]:
    client = AsyncModbusTcpClient(HOST, port=port, timeout=2, retries=0)
    if not await client.connect():
        raise RuntimeError("the bare client cannot connect")
    samples = []
    try:
        for _ in range(count):
            started = time.perf_counter()
            answer = await client.read_holding_registers(READ_START, count=READ_COUNT, device_id=1)
            samples.append(time.perf_counter() - started)
            if answer.isError():
                raise RuntimeError("the bare read got an error answer")
    finally:
        client.close()
    return samples


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--wagers", type=int, default=120)
    # Each hit waits for the last one's announcement (30 s) to have had its time.
    ap.add_argument("--hits", type=int, default=8)
    ap.add_argument("--poll-ms", type=int, default=250)
    args = ap.parse_args()
    interval_s = args.poll_ms / 1000
    units = args.hits + 1  # table 1 takes the wagers, one more table per hit
    rng = random.Random(SEED)

    sim = SimFloor(
        [
            GatewaySpec(
                game=GAME,
                tables=units,
                port=0,
                name=LINK,
                # No player bets on its own: every bet is one the benchmark places.
                table=SimTableConfig(game=GAME, bet_probability_pct=0, seat_change_pct=0),
            )
        ],
        rounds_per_second=0.001,
        seed=SEED,
    )
    await sim.start()
    wagers: list[float] = []
    to_commit: list[float] = []  # deal -> committed (poll wait, read, engine, SQLite)
    to_display: list[float] = []  # committed -> frame at the display (hub, WebSocket)
    hits: list[float] = []
    try:
        floor = parse_floor_config({
            "bus": [{"name": LINK, "kind": "tcp", "host": HOST, "port": sim.ports[LINK],
                     "timeout_ms": 500}],
            "link": [{"id": LINK, "game": GAME.value, "rate": "80%", "reset": "$10,000",
                      "table": [{"id": f"{LINK}-{u}", "bus": LINK, "unit": u,
                                 "location": "pit 1",
                                 "poll_interval_ms": args.poll_ms, "min_round_ms": 10}
                                for u in range(1, units + 1)]}],
        }, source="bench")  # fmt: skip
        bare = await bare_reads(sim.ports[LINK], 200)
        with tempfile.TemporaryDirectory(prefix="bench-display-") as tmp:
            settings = Settings(
                database_url=f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}",
                ledger_key_file=Path(tmp) / "bench-ledger.key",
                demonstration=True,  # no live floor: its new link plays at once
                manifest_file=bench_manifest(Path(tmp)),
            )
            service = FloorService(settings, floor=floor, migrate=True, create_key=True)
            async with serve(create_app(service), port=0) as served:
                # The floor's own commission agent lets its new link play.
                await ReviewDesk(FilingDesk(service.runtime)).approve_new_links(
                    reviewer="commission", role=Role.COMMISSION_AGENT
                )
                poller = service.poller
                assert poller is not None
                async with asyncio.timeout(30):
                    while not all(tp.last_ok_us for tp in poller.tables.values()):  # noqa: ASYNC110
                        await asyncio.sleep(0.05)
                # Tables take side bets only once the controller's heartbeat reached them.
                await asyncio.sleep(2 * interval_s)
                # When each outcome was committed (the runtime calls its listeners right
                # after the commit), to split the figure into poll+commit and push.
                committed: list[tuple[float, int]] = []
                service.runtime.memory.listeners.append(
                    lambda o: committed.append((time.perf_counter(), o.state.meter_cents))
                )
                display = Display(
                    served.base_url.replace("http://", "ws://", 1) + f"/ws/links/{LINK}"
                )
                await display.start()
                try:
                    await display.until(lambda m: m["fresh"])
                    for _ in range(args.wagers):
                        await asyncio.sleep(rng.uniform(0, interval_s))
                        before = display.latest["meter_cents"]
                        sim.force_hand(LINK, 1, 1, HandCategory.HIGH_CARD)
                        started = time.perf_counter()
                        record = sim.play_round_now(LINK, 1)
                        if record.credits != 1:
                            raise RuntimeError("the table refused the bet")
                        mark = len(committed)
                        seen = await display.until(lambda m, b=before: m["meter_cents"] > b)
                        wagers.append(seen - started)
                        commit = next((c for c, meter in committed[mark:] if meter > before), seen)
                        to_commit.append(commit - started)
                        to_display.append(seen - commit)
                    announced_until = 0.0
                    for unit in range(2, units + 1):
                        await asyncio.sleep(rng.uniform(0, interval_s))
                        table_id = f"{LINK}-{unit}"
                        # A win is announced whole before another of its size takes the
                        # display (reducer.display.ANNOUNCE_US): each hit is dealt once the
                        # last one's announcement has had its time, so that its own amount is
                        # what the display shows at once.
                        await asyncio.sleep(max(0.0, announced_until - time.perf_counter()))
                        sim.force_hand(LINK, unit, 1, HandCategory.ROYAL_FLUSH)
                        started = time.perf_counter()
                        sim.play_round_now(LINK, unit)
                        seen = await display.until(
                            lambda m, t=table_id: (
                                m["display"]["mode"] == "won" and m["display"]["winning_table"] == t
                            )
                        )
                        hits.append(seen - started)
                        announced_until = seen + ANNOUNCE_US / 1_000_000
                        # The technician verifies, a supervisor signs (the award is above the
                        # second-signature amount) and the table is reset.
                        runtime = service.runtime
                        for hit in await runtime.hits.unverified(table_id):
                            await runtime.hits.verify(hit.hit_id, actor="bench-tech")
                            await runtime.hits.sign_off(hit.hit_id, actor="bench-supervisor")
                        await runtime.hits.release_table(table_id, actor="bench-tech")
                finally:
                    await display.stop()
    finally:
        await sim.stop()

    target = interval_s + MARGIN_S
    floor_s = interval_s + p99(bare)
    print(
        f"{units} simulated tables on one Modbus TCP gateway (127.0.0.1), polled every "
        f"{args.poll_ms} ms; SQLite ledger; one display client over WebSocket, same process"
    )
    print(f"{'measured':<44}{'median':>11}{'p99':>11}{'n':>6}")
    rows = (
        ("bare Modbus read round trip (baseline)", bare),
        ("wager -> frame at the display", wagers),
        ("hit -> won-amount frame at the display", hits),
        ("  of a wager: deal -> committed", to_commit),
        ("  of a wager: committed -> frame at display", to_display),
    )
    for label, samples in rows:
        print(f"{label:<44}{ms(median(samples))}{ms(p99(samples))}{len(samples):>6}")
    print(
        f"floor of a polled system (interval + bare read p99): {ms(floor_s).strip()}; "
        f"target p99 <= interval + {MARGIN_S * 1000:.0f} ms = {ms(target).strip()}"
    )
    ok = True
    for name, samples in (("wager", wagers), ("hit", hits)):
        worst = p99(samples)
        good = worst <= target
        ok = ok and good
        print(
            f"{verdict(good)}: {name} p99 {ms(worst).strip()}, {worst / target:.2f}x the target, "
            f"{worst / floor_s:.2f}x interval + bare read; "
            f"median {median(samples) / interval_s:.2f}x the poll interval"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
