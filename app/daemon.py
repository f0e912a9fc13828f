"""``progressive run``: the controller process for a configured floor."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable

from controller.config import FloorConfig
from controller.service import FloorService
from controller.settings import Settings


async def run_daemon(settings: Settings, floor: FloorConfig, *, say: Callable[[str], None]) -> None:
    service = FloorService(settings, floor=floor)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await service.start()
        poller = service.poller
        assert poller is not None
        say(
            f"polling {len(poller.tables)} tables on {len(poller.links)} buses for "
            f"{len(floor.links)} links; Ctrl-C stops"
        )
        await stop.wait()
        say("stopping: finishing the polls under way")
    finally:
        await service.stop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)
    say("stopped; every committed entry is in the database")
