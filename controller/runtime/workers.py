"""Heavy work asked over the web, kept off the event loop that polls the tables.

A table disables its progressive when it hears no heartbeat for its timeout (5 s by default),
and every heartbeat is written from the event loop of the process that polls it. So what holds
the CPU for long (building a PDF, formatting an export, a reconciliation's arithmetic, walking
the ledger) runs in threads of its own, and only a few such jobs at once: ``threads`` run,
``waiting`` more wait their turn (holding nothing, not even a database connection), and one more
is refused at once (``Busy``: 503 with Retry-After) rather than queued without bound.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

THREADS = 2
WAITING = 4
RETRY_AFTER_S = 2


class Busy(Exception):
    """As many heavy jobs as are taken are running or waiting; ask again later."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(
            "the controller is busy with other reports, exports and verifications; "
            f"ask again in {retry_after_s} s"
        )
        self.retry_after_s = retry_after_s


class Job:
    """One admitted job: its heavy steps run one after another in the workers' threads."""

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self._pool = pool
        self.running: Future[Any] | None = None

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn(*args, **kwargs)`` in a worker thread; the event loop goes on meanwhile."""
        future = self._pool.submit(functools.partial(fn, *args, **kwargs))
        self.running = future
        return await asyncio.wrap_future(future)


class Workers:
    """The heavy work of one service: ``async with workers.job() as job: await job.run(f)``."""

    def __init__(
        self, *, threads: int = THREADS, waiting: int = WAITING, retry_after_s: int = RETRY_AFTER_S
    ) -> None:
        if threads < 1 or waiting < 0:
            raise ValueError("heavy work needs a thread at least, and no negative queue")
        self.threads = threads
        self.capacity = threads + waiting
        self.retry_after_s = retry_after_s
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="heavy-work")
        self._turns = asyncio.Semaphore(threads)
        self._admitted = 0
        self._closed = False

    @property
    def admitted(self) -> int:
        """Jobs running or waiting their turn."""
        return self._admitted

    @asynccontextmanager
    async def job(self) -> AsyncIterator[Job]:
        """Admit a job and wait for its turn; ``Busy`` when as many are admitted as taken."""
        if self._closed or self._admitted >= self.capacity:
            raise Busy(self.retry_after_s)
        self._admitted += 1
        job = Job(self._pool)
        try:
            async with self._turns:
                try:
                    yield job
                finally:
                    # A step left running by a cancelled request keeps its thread: the turn
                    # is given back only when that step is done.
                    if job.running is not None and not job.running.done():
                        await asyncio.wait([asyncio.wrap_future(job.running)])
        finally:
            self._admitted -= 1

    def close(self) -> None:
        """Refuse new jobs; wait for the steps under way (queued ones are dropped)."""
        self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)
