"""``progressive demo``: the whole product on one machine, on an embedded SQLite file.

Every jackpot shape a floor runs, as far as the installation's jurisdiction allows
(``app.demo_floor``; ``--jurisdiction`` sets it for the demo, Indiana by default): a mixed
Caribbean Stud and Caribbean Draw link of four levels (Grand, Major, Minor and Mini: under New
Jersey with limits and overflow meters, a mystery Mini and envy pays; under Indiana with no
limit, each won by a hand), a Pai Gow Poker progressive of one meter, and two fixed-pay links,
the Let It Ride bonus and Super Sevens; fifteen simulated tables, three per game. The simulated
table controllers deal real shuffled cards and serve the reference register maps (v2 for Super
Sevens and Pai Gow Poker) over Modbus TCP on loopback; the controller polls them through the
same poller, engine and ledger as production, and the web server shows the floor displays and
the technician, dealer, auditor and commission pages. One user per role is created with a fresh
password, and a second admin, technician and supervisor for the two-person steps, printed at
start; the demo's commission agent approves the new links. A jackpot hand is forced every few
minutes at the tables of the links with a meter, in turn (``demo_board.DemoFloor``); a demo
technician verifies and resets a held table if nobody does it on the technician page first.
Ctrl-C stops everything cleanly; running it again resumes where it stopped: every meter of
every level and the armed mystery trigger from the database, the simulated tables from the
committed counters, as real tables keep theirs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.demo_board import DemoFloor
from app.demo_floor import DemoPlan, build_simulator, demo_floor, plan_for, stale_links
from app.serve import serve
from app.web import create_app
from controller.access.users import ensure_demo_users
from controller.core.reducer import LinkState
from controller.manifest import default_manifest, make_manifest
from controller.paperwork.checkpoints import make_key_pair
from controller.roles import Role
from controller.runtime.clock import SystemClock
from controller.runtime.service import FloorService
from controller.schedule import set_within
from controller.settings import Settings, checkpoint_public_key_path, load_ledger_key
from controller.storage.database import make_engine, upgrade
from controller.storage.store import LedgerStore
from link_adapters.simulator.server import SimFloor

__all__ = [
    "BOARD_EVERY_S",
    "DemoError",
    "DemoOptions",
    "demo_manifest",
    "demo_settings",
    "prepare",
    "run_demo",
]

US = 1_000_000
BOARD_EVERY_S = 15.0  # how often the board is printed
# The manifest the demo makes in its folder when the installation has none.
DEMO_MANIFEST = "progressive-demo-manifest.json"


class DemoError(RuntimeError):
    """The demo cannot start in this folder; the message says what to do."""


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
    # The jurisdiction the demo runs under (``indiana``, ``new-jersey``); None: the
    # installation's (PROGRESSIVE_JURISDICTION, Indiana by default).
    jurisdiction: str | None = None


DEMO_PROPERTY: dict[str, Any] = {
    "property_name": "Demo Riverboat Casino",
    "property_licence": "DEMO-0001 (not a licence)",
}


def demo_settings(folder: Path, jurisdiction: str | None = None) -> Settings:
    """The demo's settings, its files in ``folder``; under ``jurisdiction`` when given."""
    # The demo's property, unless the environment names one: its documents and displays show
    # a name and licence as a real installation's would.
    more: dict[str, Any] = {
        field: value
        for field, value in DEMO_PROPERTY.items()
        if f"PROGRESSIVE_{field.upper()}" not in os.environ
    }
    if jurisdiction is not None:
        more["jurisdiction"] = jurisdiction
    return Settings(
        database_url=f"sqlite+aiosqlite:///{folder / 'progressive-demo.db'}",
        ledger_key_file=folder / "progressive-demo.key",
        secret_key_file=folder / "progressive-demo-secret.key",
        checkpoint_key_file=folder / "checkpoint-signing.key",
        checkpoint_file=folder / "progressive-demo-checkpoints.jsonl",
        **more,
        # Simulated tables: the demo's links play at once, without their notice periods, and
        # every page, display, document and export says it is a demonstration.
        demonstration=True,
    )


def demo_manifest(
    settings: Settings,
    folder: Path,
    say: Callable[[str], None],
    *,
    installed: Path | None = None,
) -> Settings:
    """The manifest the demo's controller checks its software against, as every controller
    does before it starts: the one ``PROGRESSIVE_MANIFEST_FILE`` names, else the installation's
    (``installed``: next to the packages) when there is one. Without either, the demo makes
    its own in its folder the first time, and says so loudly: made of the code as it is, it
    shows only what changes after; it says nothing of whether this code is a release."""
    if settings.manifest_file is not None:
        return settings
    installed = installed or default_manifest()
    if installed.exists():
        return settings.model_copy(update={"manifest_file": installed})
    own = folder / DEMO_MANIFEST
    if not own.exists():
        made = make_manifest(own)
        for line in (
            f"!! NO MANIFEST of the installed software at {installed}: the demo made its own, "
            f"{own}",
            f"!! ({len(made.files)} files, sha256 {made.sha256}), of the code as it is now. Its "
            "self-check shows a file changed from now on; it says nothing of whether this code "
            "is a release.",
            "!! A real installation makes its manifest when a release is installed: "
            "`progressive self-check --make` (see the README, Deploying).",
        ):
            say(line)
    return settings.model_copy(update={"manifest_file": own})


async def prepare(
    settings: Settings, at_us: int, plan: DemoPlan
) -> tuple[dict[str, LinkState], list[Any]]:
    """Migrate the database; the links it already has (to resume from); fresh demo users."""
    key = load_ledger_key(settings, create=True)
    assert settings.checkpoint_key_file is not None
    if not settings.checkpoint_key_file.exists():
        make_key_pair(settings.checkpoint_key_file.parent, settings.checkpoint_key_file.stem)
    engine = make_engine(settings.database_url)
    try:
        await upgrade(engine)
        store = LedgerStore(engine, key, law=settings.law)
        await store.check_key()
        known = await store.link_ids()
        states = {
            s.link_id: await store.load_link(s.link_id) for s in plan.links if s.link_id in known
        }
        stale = stale_links(states, known, plan)
        if stale is not None:
            raise DemoError(stale)
        users = await ensure_demo_users(engine, at_us=at_us)
    finally:
        await engine.dispose()
    return states, list(users)


async def run_demo(options: DemoOptions, say: Callable[[str], None] = print) -> None:
    settings = demo_manifest(
        demo_settings(options.folder, options.jurisdiction), options.folder, say
    )
    law = settings.law
    plan = plan_for(law)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, stop.set)
        loop.add_signal_handler(signal.SIGTERM, stop.set)
    sim: SimFloor | None = None
    service: FloorService | None = None
    try:
        states, users = await prepare(settings, SystemClock().now_us(), plan)
        sim = build_simulator(options.round_seconds, options.seed, states, plan)
        await sim.start()
        service = FloorService(settings, floor=demo_floor(sim.ports, plan))
        await service.start()
        for note in service.floor_notes:  # the demo's floor gives the starting terms
            say(note)
        agent = next(name for name, role, _ in users if role == "commission_agent")
        await service.review_desk.approve_new_links(reviewer=agent, role=Role.COMMISSION_AGENT)
        floor = DemoFloor(
            service,
            sim,
            plan=plan,
            release_after_s=options.release_after_s,
            seed=options.seed,
            say=say,
        )
        async with serve(create_app(service), host=options.host, port=options.port) as served:
            url = served.base_url
            said = service.statement()
            say(
                f"progressive demo: {len(sim.tables)} simulated tables on {len(plan.links)} links "
                f"(Modbus TCP on 127.0.0.1), database {options.folder / 'progressive-demo.db'}"
            )
            say(f"  jurisdiction:    {law.name} ({law.code}): {plan.summary}")
            say(f"  {said.demonstration}")
            say(f"  start here:      {url}/  (every role's page after signing in)")
            displays = ", ".join(f"{url}/display/{s.link_id}" for s in plan.links)
            say(f"  floor displays:  {displays}")
            say(f"  technician:      {url}/tech")
            say(f"  supervisor:      {url}/supervisor")
            say(f"  dealer:          {url}/dealer")
            say(f"  auditor:         {url}/audit")
            say(f"  surveillance:    {url}/surveillance")
            say(f"  commission:      {url}/commission")
            say(f"  admin:           {url}/admin")
            say(f"  API:             {url}/docs  (ReDoc: {url}/redoc)")
            say("  demo users (new passwords at every start):")
            say(f"    {'ROLE':<17} {'USER':<17} PASSWORD")
            for username, role, password in users:
                say(f"    {role:<17} {username:<17} {password}")
            say(
                "  two people, two windows: technician verifies, technician-2 signs off; admin "
                "asks, admin-2 confirms; supervisor asks for a correction, supervisor-2 approves"
            )
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
                if now - last_board >= BOARD_EVERY_S:
                    say(floor.board())
                    last_board = now
                if options.duration_s is not None and now - started >= options.duration_s:
                    break
                await set_within(stop, 1.0)
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
