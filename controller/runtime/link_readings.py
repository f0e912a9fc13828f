"""The poll path: a cycle's readings recorded together, and a reading that cannot be alone.

One reading that cannot be recorded never stops the others. When a poll cycle's outcome cannot
be computed, or the database refuses its commit while it answers, the cycle is recorded again
in halves until only the readings that fail are left out; their tables are held
(``unrecorded``): read and kept alive with progressive wagering disabled, nothing of them
recorded or acknowledged, so a hit waits at the head of the table's FIFO. A held table's
reading is tried again alone (``retry_unrecorded``) and the table released once it records.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence

from controller.core import reducer
from controller.core.reducer import Outcome, TableReading
from controller.runtime.link_memory import LinkMemory
from controller.runtime.mystery_draws import topped_up
from controller.storage.errors import StaleState, database_failed

# The runtime's modules log under one name, as the one runtime they make.
log = logging.getLogger("controller.runtime.links")


class LinkReadings:
    """The poll path of the runtime: readings recorded into the links of ``memory``."""

    def __init__(self, memory: LinkMemory) -> None:
        self.memory = memory

    async def apply(self, readings: Sequence[TableReading]) -> list[Outcome]:
        """One poll cycle: every reading applied in order, all committed in one transaction.

        Readings of an inoperable link or a held table are not recorded. A reading that
        cannot be recorded is left out and its table held; the others are recorded.
        """
        link_ids = sorted({self.memory.link_of(r.table_id) for r in readings})
        locks = [self.memory.lock(lid) for lid in link_ids]
        for lock in locks:
            await lock.acquire()
        try:
            await self.memory.reload_stale(link_ids)
            wanted = [
                r
                for r in readings
                if self.memory.table_link[r.table_id] not in self.memory.inoperable
                and r.table_id not in self.memory.unrecorded
            ]
            held: dict[str, str] = {}
            outcomes = await self._record(sorted(wanted, key=reducer.seen_order), held)
            for table_id, reason in held.items():
                self._hold(table_id, reason)
            return outcomes
        finally:
            for lock in locks:
                lock.release()

    async def retry_unrecorded(self, reading: TableReading) -> bool:
        """Try a held table's reading again, alone: True once it is recorded and the table
        released; False while it still cannot be (the table stays held)."""
        table_id = reading.table_id
        link_id = self.memory.link_of(table_id)
        async with self.memory.lock(link_id):
            await self.memory.reload_stale([link_id])
            if (
                table_id not in self.memory.unrecorded
                or self.memory.wagering_hold(link_id, self.memory.clock.now_us()) is not None
            ):
                return False
            held: dict[str, str] = {}
            await self._record([reading], held)
            if table_id in held:
                self._hold(table_id, held[table_id])
                return False
            del self.memory.unrecorded[table_id]
        log.warning("table %s: its readings are recorded again; released", table_id)
        return True

    async def _record(
        self, readings: Sequence[TableReading], held: dict[str, str]
    ) -> list[Outcome]:
        """Compute and commit ``readings`` (held locks, in the order seen); on a failure that
        is not the database's, record them again in halves by table, and put in ``held`` the
        tables whose readings alone fail. Returns the outcomes committed."""
        if not readings:
            return []
        by_link: dict[str, list[TableReading]] = defaultdict(list)
        for r in readings:
            by_link[self.memory.table_link[r.table_id]].append(r)
        link_ids = sorted(by_link)
        try:
            # One outcome per link per cycle: one chain-head update, one batch of entries.
            # Each mystery level's draws made ready before the step (mystery_draws): one a
            # reset uses is replaced, and a level left unarmed is armed by this step.
            computed = [
                reducer.apply_readings(topped_up(self.memory.states[lid]), by_link[lid])
                for lid in link_ids
            ]
        except Exception as exc:  # no outcome of a reading the engine cannot apply
            failure: Exception = exc
        else:
            outcomes = [o for o in computed if o.changed]
            try:
                await self.memory.commit(outcomes, link_ids)
                return outcomes
            except StaleState:
                raise  # another writer: read again and decided anew by the caller
            except Exception as exc:
                if database_failed(exc) or not await self.memory.store.answers():
                    raise  # the database, not these readings: nothing is left out
                failure = exc
        tables = list(dict.fromkeys(r.table_id for r in readings))
        if len(tables) == 1:
            held[tables[0]] = f"{type(failure).__name__}: {failure}".splitlines()[0][:500]
            return []
        first = set(tables[: len(tables) // 2])
        return [
            *await self._record([r for r in readings if r.table_id in first], held),
            *await self._record([r for r in readings if r.table_id not in first], held),
        ]

    def _hold(self, table_id: str, reason: str) -> None:
        if self.memory.unrecorded.get(table_id) != reason:
            log.error(
                "table %s: its reading cannot be recorded (%s); the table is held with "
                "progressive wagering disabled, its hits wait at the table, the rest of the "
                "floor is recorded; tried again alone from time to time",
                table_id,
                reason,
            )
        self.memory.unrecorded[table_id] = reason
