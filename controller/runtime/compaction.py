"""The move of closed gaming days into blocks, on a schedule (``controller.storage.compaction``).

First ``first_run_s`` after start, then every ``interval_s``: every link's ordinary entries
of the gaming days that have ended are moved into blocks, a block a transaction. A run that
fails is logged and tried again at the next; it never stops the service. ``stop()`` lets the
block under way finish and ends the run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable

from sqlalchemy.ext.asyncio import AsyncEngine

from controller.periods import FloorCalendar
from controller.storage.compaction import Compacted, compact_link

log = logging.getLogger(__name__)


class CompactionJob:
    def __init__(
        self,
        engine: AsyncEngine,
        *,
        link_ids: Callable[[], Iterable[str]],
        calendar: FloorCalendar,
        now_us: Callable[[], int],
        first_run_s: float,
        interval_s: float,
    ) -> None:
        self.engine = engine
        self.link_ids = link_ids
        self.calendar = calendar
        self.now_us = now_us
        self.first_run_s = first_run_s
        self.interval_s = interval_s
        self.runs = 0
        self.failures = 0
        self.moved = Compacted()  # since start
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="compaction")

    async def stop(self) -> None:
        self._stopping.set()
        task, self._task = self._task, None
        if task is not None:
            await task

    async def run_once(self) -> Compacted:
        """Every link's closed days into blocks, now."""
        self.runs += 1
        cal = self.calendar
        until = cal.day_start(cal.day(self.now_us()))
        total = Compacted()
        for link_id in sorted(self.link_ids()):
            if self._stopping.is_set():
                break
            try:
                done = await compact_link(
                    self.engine,
                    link_id,
                    until_us=until,
                    day_end=self.calendar.day_end,
                    stop=self._stopping.is_set,
                )
            except Exception:
                self.failures += 1
                log.exception(
                    "compaction: link %s's closed days were not moved into blocks", link_id
                )
                continue
            total.blocks += done.blocks
            total.entries += done.entries
        self.moved.blocks += total.blocks
        self.moved.entries += total.entries
        if total.blocks:
            log.info(
                "compaction: %d entries of closed gaming days moved into %d blocks",
                total.entries,
                total.blocks,
            )
        return total

    async def _loop(self) -> None:
        delay = self.first_run_s
        while True:
            try:
                await asyncio.wait_for(self._stopping.wait(), delay)
                return
            except TimeoutError:
                pass
            delay = self.interval_s
            await self.run_once()
