"""The move of closed gaming days into blocks, on a schedule (``controller.storage.compaction``).

First ``first_run_s`` after start, then every ``interval_s``: every link's ordinary entries
of the gaming days that have ended are moved into blocks, a block a transaction. A run that
fails is logged and tried again at the next; it never stops the service. ``stop()`` lets the
block under way finish and ends the run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.periods import FloorCalendar
from controller.schedule import ScheduledJob
from controller.storage.compaction import Compacted, compact_link
from controller.storage.handles import Database

log = logging.getLogger(__name__)


class CompactionJob(ScheduledJob):
    name = "compaction"

    def __init__(
        self,
        engine: Database,
        *,
        key: bytes,
        signer: Ed25519PrivateKey | None = None,
        link_ids: Callable[[], Iterable[str]],
        calendar: FloorCalendar,
        now_us: Callable[[], int],
        first_run_s: float,
        interval_s: float,
    ) -> None:
        super().__init__(first_run_s=first_run_s, interval_s=interval_s)
        self.engine = engine
        self.key = key  # each block sealed after its entries are checked
        self.signer = signer  # and signed with the checkpoint key, when there is one
        self.link_ids = link_ids
        self.calendar = calendar
        self.now_us = now_us
        self.runs = 0
        self.failures = 0
        self.moved = Compacted()  # since start

    async def run_once(self) -> Compacted:
        """Every link's closed days into blocks, now."""
        self.runs += 1
        cal = self.calendar
        until = cal.day_start(cal.day(self.now_us()))
        total = Compacted()
        for link_id in sorted(self.link_ids()):
            if self.stopping:
                break
            try:
                done = await compact_link(
                    self.engine,
                    link_id,
                    key=self.key,
                    signer=self.signer,
                    until_us=until,
                    day_end=self.calendar.day_end,
                    stop=lambda: self.stopping,
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
