"""``progressive run``: the controller process for a configured floor, with its web server.

One process polls the tables and serves the displays, pages and API: the displays show the
state this process has just committed, with no other moving part between them. On PostgreSQL
several may run for one floor: each link is polled by the one holding its lock, the others
stand by to take it over (``controller.runtime.link_locks``); and ``progressive web``
processes serve more displays, following every controller's commits
(``controller.runtime.change_feed``).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Callable

from app.serve import serve
from app.web import create_app
from controller.runtime.config_entries import FloorConfig
from controller.runtime.service import FloorService
from controller.settings import Settings


async def run_daemon(
    settings: Settings,
    floor: FloorConfig,
    *,
    say: Callable[[str], None],
    host: str = "127.0.0.1",
    port: int = 8000,
) -> None:
    service = FloorService(settings, floor=floor)
    async with _signalled() as stop:
        try:
            await service.start()
            stated(settings, say)
            for note in service.floor_notes:
                say(note)
            poller = service.poller
            assert poller is not None
            async with serve(create_app(service), host=host, port=port) as served:
                locks = service.link_locks
                if locks is None:
                    say(
                        f"polling {len(poller.tables)} tables on {len(poller.links)} buses for "
                        f"{len(floor.links)} links; web on {served.base_url}; Ctrl-C stops"
                    )
                else:
                    say(
                        f"driving the links whose lock this controller holds "
                        f"({', '.join(sorted(locks.held)) or 'none yet'}), standing by for the "
                        f"others of {len(floor.links)}; web on {served.base_url}; Ctrl-C stops"
                    )
                await stop.wait()
                say("stopping: finishing the polls under way")
        finally:
            await service.stop()
    say("stopped; every committed entry is in the database")


class WebOnlyError(RuntimeError):
    pass


async def run_web(
    settings: Settings,
    *,
    say: Callable[[str], None],
    host: str = "127.0.0.1",
    port: int = 8000,
) -> None:
    """A web process in front of controllers running elsewhere: displays, pages and API, no
    polling. It follows the controllers' commits by PostgreSQL notifications, so it needs
    PostgreSQL (on SQLite the controller process serves the web itself)."""
    if not settings.database_url.startswith("postgresql"):
        raise WebOnlyError(
            "a separate web process needs PostgreSQL, where it hears of the controllers' "
            "commits; on SQLite `progressive run` serves the web itself"
        )
    service = FloorService(settings)
    async with _signalled() as stop:
        try:
            await service.start()
            stated(settings, say)
            async with serve(create_app(service), host=host, port=port) as served:
                say(
                    f"serving {len(service.memory.states)} links on {served.base_url}, "
                    "following the controllers' commits; Ctrl-C stops"
                )
                await stop.wait()
        finally:
            await service.stop()
    say("stopped")


def stated(settings: Settings, say: Callable[[str], None]) -> None:
    """Say at start the law the installation runs under and, loudly, demonstration mode: a
    controller in it opens and files links that play without their notice periods."""
    said = settings.statement()
    say(f"jurisdiction: {said.jurisdiction}")
    if said.demonstration is not None:
        rule = "!" * 78
        for line in (rule, said.demonstration, rule):
            say(line)


@contextlib.asynccontextmanager
async def _signalled() -> AsyncIterator[asyncio.Event]:
    """An event set by SIGINT or SIGTERM while the context lasts."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        yield stop
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)
