"""Serving the application with uvicorn inside an event loop the caller owns.

The demo, ``progressive run`` and the tests all serve the same way: the server runs as a task
of the running loop (so the simulator, the poller and the web share one loop), its lifespan
starts and stops the controller service, and leaving the context stops it cleanly.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import uvicorn

if TYPE_CHECKING:
    # Only named: the command line imports this module for its error without loading FastAPI.
    from fastapi import FastAPI


@dataclass(frozen=True, slots=True)
class Served:
    host: str
    port: int

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


class ServeError(RuntimeError):
    pass


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The signals belong to the caller, which decides when to stop, not to uvicorn.
        yield


@contextlib.asynccontextmanager
async def serve(
    app: FastAPI, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning"
) -> AsyncIterator[Served]:
    """Serve ``app`` until the context ends; ``port=0`` lets the system choose one."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        ws_ping_interval=20.0,
        ws_ping_timeout=20.0,
        # Each message is encoded once for every display; compressing it per client would
        # undo that, and the floor network does not need it.
        ws_per_message_deflate=False,
        timeout_graceful_shutdown=5,
        # Who a request comes from is decided by the application, from the proxies it is told
        # to trust (PROGRESSIVE_TRUSTED_PROXIES); uvicorn would believe any local sender.
        proxy_headers=False,
    )
    server = _Server(config)
    task = asyncio.create_task(server.serve(), name="uvicorn")
    try:
        while not server.started:
            if task.done():
                problem = task.exception() if not task.cancelled() else None
                raise ServeError(
                    f"the web server did not start on {host}:{port}"
                    + (f": {problem}" if problem else " (is the port taken?)")
                )
            await asyncio.sleep(0.02)
        sockets = [s for srv in server.servers for s in srv.sockets]
        bound_port = sockets[0].getsockname()[1] if sockets else port
        yield Served(host, bound_port)
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await task
