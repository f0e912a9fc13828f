"""The thread a heavy step of the paperwork runs in (a report's arithmetic, an export's
formatting): the service admits heavy work as jobs (``controller.runtime.workers``) and hands
one to what it asks of the paperwork; without one (a command, a test) a step runs here and
now."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, Protocol, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class Job(Protocol):
    """One admitted job (``controller.runtime.workers.Job``)."""

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn(*args, **kwargs)`` in a worker thread; the event loop goes on meanwhile."""
        ...


async def step(job: Job | None, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``fn`` in ``job``'s worker thread; here and now without a job (a command, a test)."""
    if job is None:
        return fn(*args, **kwargs)
    return await job.run(fn, *args, **kwargs)
