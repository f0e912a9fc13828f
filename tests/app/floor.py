"""A whole floor for web tests: simulated tables on loopback Modbus, the controller, the web.

The same assembly as production: ``SimFloor`` serves Modbus TCP gateways on ports the system
chooses, the ``FloorService`` polls them through the real poller, engine and SQLite ledger,
and ``create_app`` is served by uvicorn on a free port of 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from app.serve import Served, serve
from app.web import create_app
from controller.core.games import Game, Paytable
from controller.core.reducer import Anomaly, LinkState, open_link
from controller.core.reducer.levels import LevelConfig, LevelState, MysteryDraw
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.periods import Clock
from controller.roles import Role
from controller.runtime.config import parse_floor_config
from controller.runtime.service import FloorService
from controller.settings import Settings
from controller.storage.models import AnomalyRow, table_of
from link_adapters.simulator.clock import VirtualClock, wall_clock_us
from link_adapters.simulator.dealer import DealtRound
from link_adapters.simulator.gateway import GatewaySpec
from link_adapters.simulator.server import SimFloor
from link_adapters.simulator.table import SimTable
from link_adapters.simulator.table_types import RoundRecord
from tests.controller.permissive_law import PERMISSIVE
from tests.integration.harness import wait_until

# link id -> (game, tables)
DEFAULT_LINKS: dict[str, tuple[Game, int]] = {
    "stud": (Game.CARIBBEAN_STUD, 2),
    "lir": (Game.LET_IT_RIDE_BONUS, 2),
}


@dataclass
class WebFloor:
    served: Served
    service: FloorService
    sim: SimFloor
    links: dict[str, tuple[Game, int]]
    folder: Path

    @property
    def base_url(self) -> str:
        return self.served.base_url

    def table(self, link_id: str, unit: int) -> SimTable:
        game, _ = self.links[link_id]
        return self.sim.tables[(game.value, unit)]

    def play_round_now(self, link_id: str, unit: int) -> RoundRecord:
        """Deal one round now at a table of ``link_id`` (its simulated gateway is its game)."""
        game, _ = self.links[link_id]
        return self.sim.play_round_now(game.value, unit)


def _profile(game: Game) -> str:
    """The reference profile of the register map the game's simulated tables speak (v2 for
    Super Sevens and Pai Gow Poker: their hands, more cards, the joker as 52)."""
    return "reference-v1" if game.rules.register.map_version == 1 else "reference-v2"


def settings_in(folder: Path) -> Settings:
    return Settings(
        database_url=f"sqlite+aiosqlite:///{folder / 'progressive.db'}",
        ledger_key_file=folder / "progressive-ledger.key",
        # Simulated tables play at once: demonstration mode, and every surface says so.
        demonstration=True,
    )


@contextlib.asynccontextmanager
async def web_floor(
    folder: Path,
    *,
    links: dict[str, tuple[Game, int]] | None = None,
    rounds_per_second: float = 2.0,
    poll_interval_ms: int = 100,
    seed: int = 11,
    settings: Settings | None = None,
    approve: bool = True,
    sim_clock: Callable[[], int] | None = None,
    sim_autodeal: bool = True,
    clock: Clock | None = None,
    link_settings: Mapping[str, Mapping[str, object]] | None = None,
) -> AsyncIterator[WebFloor]:
    """``link_settings``: more of a link's floor-file settings (its ``level`` list, its
    ``paytable``); a link given levels takes its rate and reset amounts from them."""
    links = links or DEFAULT_LINKS
    more = link_settings or {}
    sim = SimFloor(
        [GatewaySpec(game=game, tables=n, port=0) for game, n in links.values()],
        rounds_per_second=rounds_per_second,
        seed=seed,
        autodeal=sim_autodeal,
        **({"now_us": sim_clock} if sim_clock is not None else {}),
    )
    await sim.start()
    try:
        ports = sim.ports
        floor = parse_floor_config({
            "controller": {"offline_after_failures": 3},
            "bus": [
                {"name": link_id, "kind": "tcp", "host": "127.0.0.1", "port": ports[game.value],
                 "timeout_ms": 300, "retries": 0}
                for link_id, (game, _) in links.items()
            ],
            "link": [
                {"id": link_id, "game": game.value,
                 **({} if "level" in more.get(link_id, {}) else {"rate": "80%", "reset": "$1,000"}),
                 **more.get(link_id, {}),
                 "table": [{"id": f"{link_id}-{u}", "bus": link_id, "unit": u,
                            "poll_interval_ms": poll_interval_ms, "min_round_ms": 10,
                            "max_credits_per_seat": 1, "location": f"pit 1, table {u}",
                            "profile": _profile(game)}
                           for u in range(1, n + 1)]}
                for link_id, (game, n) in links.items()
            ],
        })  # fmt: skip
        settings = settings or settings_in(folder)
        if approve and not settings.demonstration:
            # Links approved to play at once: only demonstration mode lets them.
            settings = settings.model_copy(update={"demonstration": True})
        service = FloorService(settings, floor=floor, migrate=True, create_key=True, clock=clock)
        await service.start()
        if approve:
            await ReviewDesk(FilingDesk(service.runtime)).approve_new_links(
                reviewer="commission", role=Role.COMMISSION_AGENT
            )
            # Live means every table takes progressive bets: until the controller's heartbeat
            # and clear command bits reach it a table refuses them, and a hand forced now would
            # be dealt unbet. An answered poll is not enough (a table's first poll only reads
            # its baseline), nor a first heartbeat (written before the approval, it says to
            # take no side bets).
            now_us = sim_clock or wall_clock_us
            async with asyncio.timeout(20):
                while any(t.progressive_disabled(now_us()) for t in sim.tables.values()):  # noqa: ASYNC110
                    await asyncio.sleep(0.02)
        try:
            async with serve(create_app(service), port=0) as served:
                yield WebFloor(served, service, sim, links, folder)
        finally:
            await service.stop()
    finally:
        await sim.stop()


async def hold_anomaly(wf: WebFloor, anomaly_id: str) -> None:
    """A held anomaly as the engine records one (a counter jump too big for the table)."""
    a = Anomaly(
        anomaly_id=anomaly_id,
        link_id="stud",
        table_id="stud-1",
        at_us=wf.service.clock.now_us(),
        credits=500,
        units=500 * 100 * 8000,
        counter_before=10,
        counter_after=510,
        reason="500 credits between two readings is more than the table can take",
    )
    async with wf.service.engine.begin() as conn:
        await conn.execute(
            table_of(AnomalyRow)
            .insert()
            .values(**{f: getattr(a, f) for f in a.__slots__}, status="held")
        )


@contextlib.asynccontextmanager
async def stepped_floor(
    tmp_path: Path,
    clock: VirtualClock,
    *,
    links: dict[str, tuple[Game, int]] | None = None,
    settings: Settings | None = None,
) -> AsyncIterator[WebFloor]:
    """The web floor, its tables dealing only when the test steps them, on ``clock``."""
    async with web_floor(
        tmp_path,
        links=links,
        seed=11,
        sim_clock=clock.now_us,
        sim_autodeal=False,
        settings=settings,
    ) as wf:
        # Until the controller's first heartbeat and clear command bits have reached a
        # table, it refuses side bets: wait for that, not for a number of polls.
        await wait_until(
            lambda: not any(t.progressive_disabled(clock.now_us()) for t in wf.sim.tables.values())
        )
        yield wf


def dealt_table_id(wf: WebFloor, dealt: DealtRound) -> str:
    (link_id,) = [link for link, (game, _) in wf.links.items() if game.value == dealt.gateway]
    return f"{link_id}-{dealt.unit}"


def _all_read(wf: WebFloor, clock: VirtualClock) -> bool:
    """The controller has committed every round the simulated tables have dealt, and each
    table takes side bets exactly when the controller lets it (a held table must refuse the
    next round's bets, whichever comes first, that round or the controller's next write)."""
    now = clock.now_us()
    for link_id, (_, tables) in wf.links.items():
        for unit in range(1, tables + 1):
            status = wf.service.table_status(f"{link_id}-{unit}")
            table = wf.table(link_id, unit)
            if (status.rounds, status.credits) != (table.rounds, table.credits):
                return False
            if table.progressive_disabled(now) != status.hit_pending:
                return False
    return True


async def step(wf: WebFloor, clock: VirtualClock, seconds: float) -> list[DealtRound]:
    """Let ``seconds`` pass at the tables, deal what they scheduled, wait until it is read."""
    clock.advance(seconds)
    dealt = wf.sim.deal_due()
    await wait_until(lambda: _all_read(wf, clock))
    return dealt


def _without_draws(levels: Sequence[LevelState]) -> list[LevelState]:
    return [replace(lv, draws=()) for lv in levels]


async def hold_in_memory(
    wf: WebFloor,
    link_id: str,
    *,
    game: Game,
    paytable: Paytable,
    levels: Sequence[LevelConfig],
    draws: Mapping[int, Sequence[MysteryDraw]] | None = None,
    paytables: Mapping[Game, Paytable] | None = None,
) -> LinkState:
    """Put in place of ``link_id``'s state one the real reducer opens with ``levels`` (a
    link of levels; none: a fixed-pay link) on the same tables, in the runtime's memory;
    ``paytables``, those of the other games of a mixed-game link. Opened under a jurisdiction
    allowing every shape (limits and mystery levels too, which Indiana refuses): the pages
    show whatever a link may be somewhere.

    For the pages and the API, which read the state the runtime holds: the link's history
    does not say so (no entry opens these levels), so keep such a floor to the pages. The
    link row's rate and reset amount stay in the state, so the commits of the tables'
    readings go on. Deal no round at its tables (``stepped_floor``): a contribution would be
    committed under the row's terms.
    """

    def opened_on(now: LinkState) -> LinkState:
        opened = open_link(
            law=PERMISSIVE,
            link_id=link_id,
            game=game,
            rate_bp=0,
            reset_cents=0,
            paytable=paytable,
            tables=[ts.config for ts in now.tables.values()],
            at_us=now.last_at_us,
            levels=levels,
            draws=draws,
            paytables=paytables,
        ).state
        return replace(
            opened,
            tables=now.tables,
            last_at_us=now.last_at_us,
            rate_bp=now.rate_bp,
            reset_cents=now.reset_cents,
        )

    return await put_in_memory(wf, link_id, opened_on)


async def put_in_memory(
    wf: WebFloor, link_id: str, change: Callable[[LinkState], LinkState]
) -> LinkState:
    """``change`` of ``link_id``'s state put in the runtime's memory in place of it, and the
    pages told (the reload listeners), once a later reading of every table has been
    committed on it: put again if a poll cycle computed before it committed after it (a
    loaded machine), so what the pages show is what was put (its levels but for their draws,
    its last win)."""
    runtime = wf.service.runtime
    store = wf.service.store
    while True:
        # Under the link's lock, as a poll cycle computes and commits its step: none is
        # committed from the state before onto the book's meter put in place here.
        async with runtime.memory.lock(link_id):
            now = runtime.memory.states[link_id]
            state = change(now)
            store.book.meters[link_id] = state.meter_units
            runtime.memory.states[link_id] = state
        seq = {tid: ts.poll_seq for tid, ts in now.tables.items()}
        # Once a later reading is in, the state committed on must be the one put in place.
        await wait_until(
            lambda seq=seq: all(  # type: ignore[misc]
                runtime.memory.states[link_id].tables[tid].poll_seq > seq[tid] for tid in seq
            )
        )
        # The runtime tops up a mystery level's draws before each step: those may differ.
        later = runtime.memory.states[link_id]
        if (
            _without_draws(later.levels) == _without_draws(state.levels)
            and later.last_win == state.last_win
        ):
            for listener in runtime.memory.reload_listeners:
                listener(link_id)
            return later
