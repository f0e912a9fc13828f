"""``progressive demo``: the whole product on one machine, on an embedded SQLite file.

Three links (Caribbean Stud, Caribbean Draw, Let It Ride bonus) of four simulated tables
each. The simulated table controllers deal real shuffled cards and serve the reference
register map over Modbus TCP on loopback; the controller polls them through the same poller,
engine and ledger as production, and the web server shows the floor displays and the
technician, dealer, auditor and commission pages. One user per role is created with a fresh
password, printed at start. A royal flush is forced every few minutes so a hit is seen soon;
a demo technician verifies and resets a held table if nobody does it on the technician page
first. Ctrl-C stops everything cleanly; running it again resumes where it stopped: the
simulated tables start from the committed counters, as real tables keep theirs.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.serve import serve
from app.web import create_app
from controller.access.users import Role, ensure_demo_users
from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.core.money import format_cents
from controller.core.reducer import LinkState, Outcome, display_frame
from controller.paperwork.checkpoints import make_key_pair
from controller.paperwork.submissions import SubmissionDesk
from controller.runtime.clock import SystemClock
from controller.runtime.config import FloorConfig, parse_floor_config
from controller.runtime.service import FloorService
from controller.settings import Settings, checkpoint_public_key_path, load_ledger_key
from controller.storage.database import make_engine, upgrade
from controller.storage.store import LedgerStore
from link_adapters.simulator.server import GatewaySpec, SimFloor
from link_adapters.simulator.table import SimTableConfig

US = 1_000_000


@dataclass(frozen=True, slots=True)
class DemoLink:
    link_id: str
    name: str
    game: Game
    rate: str
    reset: str


LINKS = (
    DemoLink("stud", "Caribbean Stud progressive", Game.CARIBBEAN_STUD, "80%", "$10,000"),
    DemoLink("draw", "Caribbean Draw progressive", Game.CARIBBEAN_DRAW, "75%", "$5,000"),
    DemoLink("lir", "Let It Ride bonus", Game.LET_IT_RIDE_BONUS, "65%", "$1,000"),
)
TABLES_PER_LINK = 4
POLL_INTERVAL_MS = 250


@dataclass(slots=True)
class DemoOptions:
    folder: Path
    round_seconds: float = 2.0
    jackpot_every_s: float = 180.0
    release_after_s: float = 90.0
    seed: int | None = None
    duration_s: float | None = None  # stop by itself after this long (tests)
    host: str = "127.0.0.1"
    port: int = 8000


def demo_settings(folder: Path) -> Settings:
    return Settings(
        database_url=f"sqlite+aiosqlite:///{folder / 'progressive-demo.db'}",
        ledger_key_file=folder / "progressive-demo.key",
        secret_key_file=folder / "progressive-demo-secret.key",
        checkpoint_key_file=folder / "checkpoint-signing.key",
        checkpoint_file=folder / "progressive-demo-checkpoints.jsonl",
        notice_override="demo: simulated tables, no notice period",
    )


def demo_floor(ports: dict[str, int]) -> FloorConfig:
    """The demo's floor: one Modbus TCP gateway per link, its tables as units 1-4."""
    return parse_floor_config({
        "controller": {"offline_after_failures": 3},
        "bus": [
            {"name": spec.link_id, "kind": "tcp", "host": "127.0.0.1",
             "port": ports[spec.link_id], "timeout_ms": 500, "retries": 1}
            for spec in LINKS
        ],
        "link": [
            {"id": spec.link_id, "name": spec.name, "game": spec.game.value,
             "rate": spec.rate, "reset": spec.reset,
             "table": [{"id": f"{spec.link_id}-{n}", "bus": spec.link_id, "unit": n,
                        "name": f"{spec.game.label} table {n}",
                        "location": f"pit 1, table {n}",
                        "poll_interval_ms": POLL_INTERVAL_MS,
                        # The demo deals far faster than a real dealer.
                        "min_round_ms": 50, "max_credits_per_seat": 1}
                       for n in range(1, TABLES_PER_LINK + 1)]}
            for spec in LINKS
        ],
    })  # fmt: skip


async def prepare(settings: Settings, at_us: int) -> tuple[dict[str, LinkState], list[Any]]:
    """Migrate the database; the links it already has (to resume from); fresh demo users."""
    key = load_ledger_key(settings, create=True)
    assert settings.checkpoint_key_file is not None
    if not settings.checkpoint_key_file.exists():
        make_key_pair(settings.checkpoint_key_file.parent, settings.checkpoint_key_file.stem)
    engine = make_engine(settings.database_url)
    try:
        await upgrade(engine)
        store = LedgerStore(engine, key)
        await store.check_key()
        known = set(await store.link_ids())
        states = {s.link_id: await store.load_link(s.link_id) for s in LINKS if s.link_id in known}
        users = await ensure_demo_users(engine, at_us=at_us)
    finally:
        await engine.dispose()
    return states, list(users)


def build_simulator(options: DemoOptions, states: dict[str, LinkState]) -> SimFloor:
    sim = SimFloor(
        [
            GatewaySpec(
                game=spec.game,
                tables=TABLES_PER_LINK,
                port=0,
                name=spec.link_id,
                # A table whose controller falls silent refuses side bets after 10 s.
                table=SimTableConfig(game=spec.game, heartbeat_timeout_us=10 * US),
            )
            for spec in LINKS
        ],
        rounds_per_second=1 / options.round_seconds,
        seed=options.seed,
    )
    for link_id, state in states.items():
        for n in range(1, TABLES_PER_LINK + 1):
            ts = state.tables.get(f"{link_id}-{n}")
            if ts is not None and ts.credits is not None:
                last = ts.last_hit_seq
                sim.tables[(link_id, n)].resume(
                    credits=ts.credits,
                    rounds=ts.rounds or 0,
                    next_hit_seq=1 if last is None else last + 1,
                )
    return sim


class DemoFloor:
    """What the demo does besides serving: forced jackpots, the demo technician, a board."""

    def __init__(
        self,
        service: FloorService,
        sim: SimFloor,
        options: DemoOptions,
        say: Callable[[str], None],
    ) -> None:
        self.service = service
        self.sim = sim
        self.options = options
        self.say = say
        self.clock = SystemClock()
        self.rng = random.Random(options.seed)
        self.held_since: dict[str, int] = {}
        service.runtime.listeners.append(self._on_outcome)

    def _on_outcome(self, o: Outcome) -> None:
        state = o.state
        for h in o.hits:
            if h.status == "awarded":
                where = "from the meter" if h.paid_from == "meter" else "at the table"
                self.say(
                    f"  HIT  {state.link_id}/{h.table_id} seat {h.claim.seat}: "
                    f"{h.claim.hand.label}, {format_cents(h.award_cents)} paid {where}"
                )
            else:
                self.say(f"  REFUSED  {h.table_id} seat {h.claim.seat}: {h.refusal}")
        for ev in o.events:
            if ev.kind == "jackpot_reset":
                reset = format_cents(state.reset_cents)
                self.say(f"  {state.link_id}: jackpot won, meter reset to {reset}")
            elif ev.kind == "table_offline":
                self.say(f"  {ev.table_id} is offline: {ev.explanation}")

    def force_jackpot(self) -> None:
        candidates = [s.link_id for s in LINKS if s.game is not Game.LET_IT_RIDE_BONUS]
        link_id = self.rng.choice(candidates)
        unit = self.rng.randint(1, TABLES_PER_LINK)
        seat = self.rng.randint(1, 7)
        self.sim.force_hand(link_id, unit, seat, HandCategory.ROYAL_FLUSH)
        self.say(f"  (demo: the next round at {link_id}-{unit} deals a royal flush to seat {seat})")

    async def demo_technician(self) -> None:
        """Verify and reset a table held longer than ``release_after_s``."""
        runtime = self.service.runtime
        now = self.clock.now_us()
        for state in list(runtime.states.values()):
            for table_id, ts in state.tables.items():
                if not ts.hit_pending:
                    self.held_since.pop(table_id, None)
                    continue
                since = self.held_since.setdefault(table_id, now)
                if now - since < self.options.release_after_s * US:
                    continue
                for hit in await runtime.unverified_hits(table_id):
                    await runtime.verify_hit(hit.hit_id, actor="demo technician")
                await runtime.release_table(table_id, actor="demo technician")
                self.held_since.pop(table_id, None)
                self.say(f"  {state.link_id}/{table_id} verified and reset by the demo technician")

    def board(self) -> str:
        now = self.clock.now_us()
        parts = []
        for spec in LINKS:
            state = self.service.runtime.states[spec.link_id]
            frame = display_frame(state, now_us=now)
            label = {"live": "", "won": " WON", "reset": " reset"}[frame.mode]
            held = sum(1 for ts in state.tables.values() if ts.hit_pending)
            parts.append(
                f"{spec.link_id} {format_cents(frame.amount_cents):>13}{label}"
                + (f" ({held} held)" if held else "")
            )
        return " | ".join(parts)


async def run_demo(options: DemoOptions, say: Callable[[str], None] = print) -> None:
    settings = demo_settings(options.folder)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, stop.set)
        loop.add_signal_handler(signal.SIGTERM, stop.set)
    sim: SimFloor | None = None
    service: FloorService | None = None
    try:
        states, users = await prepare(settings, SystemClock().now_us())
        sim = build_simulator(options, states)
        await sim.start()
        service = FloorService(settings, floor=demo_floor(sim.ports))
        await service.start()
        agent = next(name for name, role, _ in users if role == "commission_agent")
        await SubmissionDesk(service.runtime).approve_new_links(
            reviewer=agent, role=Role.COMMISSION_AGENT
        )
        floor = DemoFloor(service, sim, options, say)
        async with serve(create_app(service), host=options.host, port=options.port) as served:
            url = served.base_url
            say(
                f"progressive demo: {len(sim.tables)} simulated tables on {len(LINKS)} links "
                f"(Modbus TCP on 127.0.0.1), database {options.folder / 'progressive-demo.db'}"
            )
            say(f"  floor displays:  {', '.join(f'{url}/display/{s.link_id}' for s in LINKS)}")
            say(f"  technician:      {url}/tech")
            say(f"  dealer:          {url}/dealer")
            say(f"  auditor:         {url}/audit")
            say(f"  commission:      {url}/commission")
            say(f"  API:             {url}/docs")
            say("  demo users (new passwords at every start):")
            for username, role, password in users:
                say(f"    {role:<17} {username:<17} {password}")
            say(
                "  check the history:  PROGRESSIVE_DATABASE_URL="
                + settings.database_url
                + f" PROGRESSIVE_LEDGER_KEY_FILE={settings.ledger_key_file}"
                " progressive ledger verify"
                f" --checkpoints {settings.checkpoint_file}"
                f" --public-key {checkpoint_public_key_path(settings)}"
            )
            say("  Ctrl-C stops; running it again resumes where it stopped.")
            started = loop.time()
            next_jackpot = started + min(options.jackpot_every_s, 30.0)
            last_board = started
            while not stop.is_set():
                now = loop.time()
                if now >= next_jackpot:
                    floor.force_jackpot()
                    next_jackpot = now + options.jackpot_every_s
                await floor.demo_technician()
                if now - last_board >= 5.0:
                    say(floor.board())
                    last_board = now
                if options.duration_s is not None and now - started >= options.duration_s:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=1.0)
            say("stopping: finishing the polls under way")
            say(floor.board())
    finally:
        # The controller first (its last polls need the tables), then the tables.
        if service is not None:
            await service.stop()
        if sim is not None:
            await sim.stop()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)
    say("stopped; every committed entry is in the database")
