"""Work the service does on a schedule of its own (the retention purge, the move of closed
gaming days into blocks): first ``first_run_s`` after ``start()``, then every ``interval_s``.

A run that fails is the job's to log (``run_once``); the schedule goes on. ``stop()`` lets a
run under way finish and ends the schedule; a run can ask ``stopping`` to end early.
"""

from __future__ import annotations

import asyncio
from typing import Any


async def set_within(event: asyncio.Event, seconds: float) -> bool:
    """Whether ``event`` is set within ``seconds``. Waited for in the caller's task, not in a
    task of its own as ``asyncio.wait_for`` makes one, every wait: a service waiting on its
    schedules leaves no task behind it at any moment."""
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return False
    return True


class ScheduledJob:
    name = "job"

    def __init__(self, *, first_run_s: float, interval_s: float) -> None:
        self.first_run_s = first_run_s
        self.interval_s = interval_s
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name=self.name)

    async def stop(self) -> None:
        self._stopping.set()
        task, self._task = self._task, None
        if task is not None:
            await task

    async def run_once(self) -> Any:
        raise NotImplementedError

    async def _loop(self) -> None:
        delay = self.first_run_s
        while True:
            if await set_within(self._stopping, delay):
                return
            delay = self.interval_s
            await self.run_once()
