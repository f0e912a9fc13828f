"""Simulator -> Modbus TCP -> poller -> engine -> ledger, checked against the simulator's own
record of every bet and hit, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from sqlalchemy import func, select

from controller.clock import SystemClock
from controller.config import parse_floor_config
from controller.engine import EntryKind
from controller.games import Game
from controller.hands import HandCategory
from controller.money import contribution_units
from controller.poller import Poller
from controller.service import open_floor
from controller.storage.models import HitRow, MeterEntryRow
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from link_adapters.simulator.server import GatewaySpec, SimFloor
from link_adapters.simulator.table import total_credits
from tests.conftest import KEY


class PausableClock:
    """Wall time that can be stopped, so the simulated dealers stop dealing."""

    def __init__(self) -> None:
        self._offset = 0
        self._paused_at: int | None = None

    def _wall(self) -> int:
        return time.time_ns() // 1000

    def now_us(self) -> int:
        return (self._paused_at if self._paused_at is not None else self._wall()) - self._offset

    def pause(self) -> None:
        if self._paused_at is None:
            self._paused_at = self._wall()

    def resume(self) -> None:
        if self._paused_at is not None:
            self._offset += self._wall() - self._paused_at
            self._paused_at = None


async def wait_until(condition: Callable[[], bool], within_s: float = 20.0) -> None:
    # The state belongs to the poller's and the simulator's own tasks: look at it until it holds.
    async with asyncio.timeout(within_s):
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.02)


GATEWAYS = {
    "stud": ("caribbean_stud", Game.CARIBBEAN_STUD, 3),
    "lir": ("let_it_ride_bonus", Game.LET_IT_RIDE_BONUS, 2),
}
RATES = {"stud": 8250, "lir": 6137}


async def test_the_meter_matches_the_simulators_own_record(store: LedgerStore) -> None:
    clock = PausableClock()
    clock.pause()
    floor = SimFloor(
        [GatewaySpec(game=game, tables=n, port=0) for _, game, n in GATEWAYS.values()],
        rounds_per_second=15,
        seed=5,
        now_us=clock.now_us,
    )
    await floor.start()
    poller = None
    try:
        ports = floor.ports
        config = {
            "bus": [
                {
                    "name": link,
                    "kind": "tcp",
                    "host": "127.0.0.1",
                    "port": ports[gw],
                    "timeout_ms": 500,
                }
                for link, (gw, _, _) in GATEWAYS.items()
            ],
            "link": [
                {
                    "id": link,
                    "game": gw,
                    "rate": f"{RATES[link] / 100}%",
                    "reset": "$1,000",
                    "table": [
                        {
                            "id": f"{link}-{u}",
                            "bus": link,
                            "unit": u,
                            "poll_interval_ms": 40,
                            "min_round_ms": 10,
                            "max_credits_per_seat": 1,
                        }
                        for u in range(1, n + 1)
                    ],
                }
                for link, (gw, _, n) in GATEWAYS.items()
            ],
        }
        cfg = parse_floor_config(config)
        runtime = await open_floor(store, cfg, SystemClock())
        poller = Poller(runtime, cfg)
        poller.build()
        await poller.start()

        def all_baselined() -> bool:
            return all(
                ts.credits is not None for s in runtime.states.values() for ts in s.tables.values()
            )

        await wait_until(all_baselined)
        floor.force_hand("caribbean_stud", 2, 3, HandCategory.ROYAL_FLUSH)
        clock.resume()
        await asyncio.sleep(3.0)
        clock.pause()

        def drained() -> bool:
            for link, (gw, _, n) in GATEWAYS.items():
                for u in range(1, n + 1):
                    table = floor.tables[(gw, u)]
                    ts = runtime.states[link].table(f"{link}-{u}")
                    if table.hit_fifo or ts.credits != table.credits or ts.open_claims:
                        return False
            return True

        await wait_until(drained)
    finally:
        if poller is not None:
            await poller.stop()
        await floor.stop()

    records = floor.records()
    async with store.engine.connect() as conn:
        for link, (gw, _, n) in GATEWAYS.items():
            for u in range(1, n + 1):
                credited = await conn.scalar(
                    select(func.coalesce(func.sum(MeterEntryRow.delta_units), 0)).where(
                        MeterEntryRow.table_id == f"{link}-{u}",
                        MeterEntryRow.kind == str(EntryKind.CONTRIBUTION),
                    )
                )
                wagered = total_credits(records[(gw, u)])
                assert wagered > 0
                assert credited == contribution_units(
                    credits=wagered, denomination_cents=100, rate_bp=RATES[link]
                ), (link, u)
        got = {
            (r.table_id, r.table_seq, r.hand) for r in (await conn.execute(select(HitRow))).all()
        }
        anomalies = await conn.scalar(
            select(func.count()).where(MeterEntryRow.kind == str(EntryKind.ANOMALY_HELD))
        )
    expected = {
        (f"{link}-{u}", h.seq, h.hand.name)
        for link, (gw, _, n) in GATEWAYS.items()
        for u in range(1, n + 1)
        for rec in records[(gw, u)]
        for h in rec.hits
    }
    assert got == expected  # every hit taken, exactly once
    assert (
        "stud-2",
        next(s for (t, s, h) in expected if t == "stud-2" and h == "ROYAL_FLUSH"),
        "ROYAL_FLUSH",
    ) in got
    assert anomalies == 0
    assert runtime.states["stud"].jackpot_won_since_rate_set
    report = await verify_ledger(store.engine, KEY)
    assert report.ok, report.problems
