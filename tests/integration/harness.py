"""A simulated floor polled by the real controller, and the checks that its meters are exact.

The simulator deals on a clock the test can stop, so "everything dealt has been read and
committed" is a state the test can wait for, and the meter can then be compared, to the unit,
with the simulator's own record of every bet and hit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from controller.core.games import Game
from controller.core.money import contribution_units
from controller.core.reducer import EntryKind
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.periods import Clock
from controller.roles import Role
from controller.rules.pools import fixed_pay_only
from controller.runtime.clock import SystemClock
from controller.runtime.config import parse_floor_config
from controller.runtime.config_entries import FloorConfig
from controller.runtime.links import LinkRuntime
from controller.runtime.poller import Poller
from controller.runtime.service import open_floor
from controller.storage.models import HitRow, MeterEntryRow
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from link_adapters.simulator.gateway import GatewaySpec
from link_adapters.simulator.server import SimFloor
from link_adapters.simulator.table_types import SimTableConfig, total_credits
from tests.conftest import KEY
from tests.modbus_faults import FaultyGateway
from tests.pausable_clock import PausableClock
from tests.serial_line import pty_line

SERIAL_BAUD = 115_200


async def wait_until(condition: Callable[[], bool], within_s: float = 20.0) -> None:
    # The state belongs to the poller's and the simulator's own tasks: look at it until it holds.
    async with asyncio.timeout(within_s):
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.02)


@dataclass(frozen=True)
class LinkPlan:
    link_id: str
    gateway: str  # the simulator's gateway name (the game's value)
    game: str
    tables: int
    rate_bp: int
    table: SimTableConfig | None = None
    serial: bool = False  # an RS-485 line (a pseudo-terminal pair) instead of a TCP gateway
    # Units with a table config of their own (e.g. one speaking register map v2), and the
    # profile the controller reads each of them with (default reference-v1).
    unit_tables: Mapping[int, SimTableConfig] | None = None
    profiles: Mapping[int, str] | None = None
    # More of the bus's floor-file settings (a serial line's parity, stop bits).
    bus_settings: Mapping[str, Any] | None = None

    @property
    def fixed_pay(self) -> bool:
        """The Let It Ride bonus: a fixed-pay link, its bets registered, no meter (10-7-5)."""
        return fixed_pay_only(Game(self.game))


async def registered_credits(conn: Any, table_id: str) -> int:
    """The bets a fixed-pay link registered for ``table_id`` (``bets_registered`` entries)."""
    rows = await conn.execute(
        select(MeterEntryRow.details).where(
            MeterEntryRow.table_id == table_id,
            MeterEntryRow.kind == str(EntryKind.BETS_REGISTERED),
        )
    )
    return sum(int(json.loads(d)["credits"]) for (d,) in rows.all())


@dataclass
class FloorHarness:
    store: LedgerStore
    plans: tuple[LinkPlan, ...]
    rounds_per_second: float = 15
    seed: int = 5
    offline_after_failures: int = 3
    clock: PausableClock = field(default_factory=PausableClock)
    floor: SimFloor | None = None
    runtime: LinkRuntime | None = None
    poller: Poller | None = None
    config: FloorConfig | None = None
    # One per controller process: a new one at every start_controller.
    controller_clock: Callable[[], Clock] = SystemClock
    # A FaultyGateway in front of every TCP gateway, by link id (tests/modbus_faults.py).
    faulty_gateways: bool = False
    gateways: dict[str, FaultyGateway] = field(default_factory=dict)
    _lines: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    def table_id(self, plan: LinkPlan, unit: int) -> str:
        return f"{plan.link_id}-{unit}"

    async def start_floor(self) -> None:
        self.clock.pause()
        specs = []
        devices: dict[str, str] = {}
        for p in self.plans:
            kw: dict[str, Any] = {"game": Game(p.game), "tables": p.tables, "name": p.gateway}
            if p.serial:
                server_end, devices[p.link_id] = await self._lines.enter_async_context(pty_line())
                kw |= {"serial_port": server_end, "baudrate": SERIAL_BAUD}
            else:
                kw["port"] = 0
            if p.table is not None:
                kw["table"] = p.table
            if p.unit_tables is not None:
                kw["unit_tables"] = p.unit_tables
            specs.append(GatewaySpec(**kw))
        self.floor = SimFloor(
            specs,
            rounds_per_second=self.rounds_per_second,
            seed=self.seed,
            now_us=self.clock.now_us,
        )
        await self.floor.start()
        ports = dict(self.floor.ports)
        if self.faulty_gateways:
            for p in self.plans:
                if not p.serial:
                    gateway = self.gateways[p.link_id] = FaultyGateway(ports[p.gateway])
                    await gateway.start()
                    ports[p.gateway] = gateway.port
        self.config = parse_floor_config({
            "controller": {"offline_after_failures": self.offline_after_failures},
            "bus": [
                {"name": p.link_id, "kind": "rtu", "device": devices[p.link_id],
                 "baudrate": SERIAL_BAUD, "timeout_ms": 150, "retries": 0,
                 **(p.bus_settings or {})}
                if p.serial else
                {"name": p.link_id, "kind": "tcp", "host": "127.0.0.1",
                 "port": ports[p.gateway], "timeout_ms": 300, "retries": 0}
                for p in self.plans
            ],
            "link": [
                {"id": p.link_id, "game": p.game, "rate": f"{p.rate_bp / 100}%", "reset": "$1,000",
                 "table": [{"id": self.table_id(p, u), "bus": p.link_id, "unit": u,
                            "location": f"pit 1, table {u}",
                            "poll_interval_ms": 0 if p.serial else 40, "min_round_ms": 10,
                            "max_credits_per_seat": 1,
                            **({"profile": p.profiles[u]} if p.profiles and u in p.profiles
                               else {})}
                           for u in range(1, p.tables + 1)]}
                for p in self.plans
            ],
        })  # fmt: skip

    async def start_controller(self, *, baselines: bool = True) -> None:
        """Open the floor and poll it; with ``baselines``, wait until every table's first
        reading is recorded."""
        assert self.config is not None
        clock = self.controller_clock()
        self.runtime = await open_floor(
            LedgerStore(self.store.engine, KEY),
            self.config,
            clock,
            demonstration=True,
        )
        # The floor's own commission agent lets its new links play (68 IAC 10-1-3(c)(4)).
        await ReviewDesk(FilingDesk(self.runtime)).approve_new_links(
            reviewer="commission", role=Role.COMMISSION_AGENT
        )
        self.poller = Poller(self.runtime, self.config, clock)
        self.poller.build()
        await self.poller.start()
        runtime = self.runtime
        if not baselines:
            return
        await wait_until(
            lambda: all(
                ts.credits is not None
                for s in runtime.memory.states.values()
                for ts in s.tables.values()
            )
        )

    async def taking_bets(self, plan: LinkPlan, unit: int) -> None:
        """Wait until the table takes progressive bets: the controller has written it a fresh
        heartbeat and no disable bit. A round dealt before that has no side bets, so no hit."""
        table = self.sim(plan, unit)
        await wait_until(lambda: not table.progressive_disabled(self.clock.now_us()))

    async def stop_controller(self) -> None:
        if self.poller is not None:
            await self.poller.stop()
            self.poller = None

    async def stop(self) -> None:
        await self.stop_controller()
        for gateway in self.gateways.values():
            await gateway.stop()
        if self.floor is not None:
            await self.floor.stop()
        await self._lines.aclose()

    def sim(self, plan: LinkPlan, unit: int) -> Any:
        assert self.floor is not None
        return self.floor.tables[(plan.gateway, unit)]

    async def play(self, seconds: float) -> None:
        self.clock.resume()
        await asyncio.sleep(seconds)
        self.clock.pause()

    async def drained(self, within_s: float = 20.0) -> None:
        """Wait until every table's counters and hits have been read and committed."""
        assert self.runtime is not None
        runtime = self.runtime

        def done() -> bool:
            for p in self.plans:
                for u in range(1, p.tables + 1):
                    table = self.sim(p, u)
                    ts = runtime.memory.states[p.link_id].table(self.table_id(p, u))
                    if table.hit_fifo or ts.credits != table.credits or ts.open_claims:
                        return False
            return True

        await wait_until(done, within_s)

    async def check_exact(self) -> None:
        """Every credit the simulator recorded is on the meter; every hit taken exactly once."""
        assert self.floor is not None
        records = self.floor.records()
        async with self.store.engine.connect() as conn:
            for p in self.plans:
                for u in range(1, p.tables + 1):
                    credited = await conn.scalar(
                        select(func.coalesce(func.sum(MeterEntryRow.delta_units), 0)).where(
                            MeterEntryRow.table_id == self.table_id(p, u),
                            MeterEntryRow.kind == str(EntryKind.CONTRIBUTION),
                        )
                    )
                    wagered = total_credits(records[(p.gateway, u)])
                    if p.fixed_pay:
                        registered = await registered_credits(conn, self.table_id(p, u))
                        assert (credited, registered) == (0, wagered), (p.link_id, u, registered)
                        continue
                    if credited != contribution_units(
                        credits=wagered, denomination_cents=100, rate_bp=p.rate_bp
                    ):
                        # Said with what the table's history holds besides its contributions
                        # (a hold, a restart, going offline), so a miss can be explained.
                        kinds = (
                            await conn.execute(
                                select(MeterEntryRow.kind, MeterEntryRow.explanation).where(
                                    MeterEntryRow.table_id == self.table_id(p, u),
                                    MeterEntryRow.kind != str(EntryKind.CONTRIBUTION),
                                )
                            )
                        ).all()
                        raise AssertionError((p.link_id, u, credited, wagered, kinds))
            got = {
                (r.table_id, r.table_seq, r.hand)
                for r in (await conn.execute(select(HitRow))).all()
            }
            n_hits = await conn.scalar(select(func.count()).select_from(HitRow))
            anomalies = await conn.scalar(
                select(func.count()).where(MeterEntryRow.kind == str(EntryKind.ANOMALY_HELD))
            )
        expected = [
            (self.table_id(p, u), h.seq, h.hand.name)
            for p in self.plans
            for u in range(1, p.tables + 1)
            for rec in records[(p.gateway, u)]
            for h in rec.hits
        ]
        assert n_hits == len(expected), (n_hits, len(expected))  # none lost, none twice
        assert got == set(expected)
        assert anomalies == 0
        report = await verify_ledger(self.store.engine, KEY)
        assert report.ok, report.problems

    async def entries(self, kind: EntryKind, table_id: str | None = None) -> int:
        async with self.store.engine.connect() as conn:
            q = select(func.count()).where(MeterEntryRow.kind == str(kind))
            if table_id is not None:
                q = q.where(MeterEntryRow.table_id == table_id)
            return int(await conn.scalar(q) or 0)
