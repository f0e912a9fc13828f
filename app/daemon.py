"""``progressive run``: the controller process for a configured floor."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable

from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.ext.asyncio import AsyncEngine

from controller.clock import SystemClock
from controller.config import FloorConfig
from controller.poller import Poller
from controller.service import open_floor
from controller.settings import Settings, load_ledger_key
from controller.storage.database import alembic_config, make_engine
from controller.storage.store import LedgerStore, StoreError


async def check_schema(engine: AsyncEngine) -> None:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    async with engine.connect() as conn:
        current = await conn.run_sync(
            lambda c: MigrationContext.configure(c).get_current_revision()
        )
    if current != head:
        raise StoreError(
            f"the database schema is at {current or 'nothing'}, this controller needs {head}: "
            "run `progressive db upgrade` first"
        )


async def run_daemon(settings: Settings, floor: FloorConfig, *, say: Callable[[str], None]) -> None:
    key = load_ledger_key(settings)
    engine = make_engine(settings.database_url)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    poller: Poller | None = None
    try:
        await check_schema(engine)
        clock = SystemClock()
        runtime = await open_floor(LedgerStore(engine, key), floor, clock)
        poller = Poller(runtime, floor, clock)
        poller.build()
        await poller.start()
        say(
            f"polling {len(poller.tables)} tables on {len(poller.links)} buses for "
            f"{len(floor.links)} links; Ctrl-C stops"
        )
        await stop.wait()
        say("stopping: finishing the polls under way")
    finally:
        if poller is not None:
            await poller.stop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)
        await engine.dispose()
    say("stopped; every committed entry is in the database")
