"""The polling daemon: every table read at its interval, its reading committed, then written to.

One task per table, so a table is never polled twice at once and a silent table delays only
itself (the link's lock keeps one request on a bus at a time). Readings are committed in
groups: whatever readings arrive while a commit is running go into the next one, so a floor of
a thousand tables makes a few commits a second, not a thousand. A table is written to only
after its reading is committed: the hit acknowledgement can never precede the record of the
hit (68 IAC 10-6-5(b)), so a hit is taken exactly once across any crash.

When the database cannot take a commit (an outage), polling goes on: every table is still
read and given its heartbeat, so it does not disable the progressive, and it is written only
what the database holds (its meter, its command bits, the acknowledgement of hits already
recorded). Nothing read meanwhile is kept: the tables' counters are cumulative and a hit stays
at the head of its table's FIFO until acknowledged, so the first commit once the database is
back credits everything wagered meanwhile and takes each hit once. The committer tries the
database again after a backoff, not at every poll, and says so once, then periodically.

Whatever ends a poll ends only that poll, never the table's task: an error of any type is
counted as a failed poll (``TablePolling.poll_failed``), so a table that keeps failing goes
offline with the reason, a fault the adapter does not know is logged once per cause, and the
table is polled again after the backoff.

A reading the database refuses while it takes the others (or the engine cannot apply) holds
only its own table (``LinkReadings.apply``): the table is polled on with progressive
wagering disabled and nothing of it recorded or acknowledged, and its reading is tried again
alone every ``unrecorded_retry_s`` until it records, which releases it.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Iterable, Mapping, Sequence

from controller.core.reducer import TableReading
from controller.periods import Clock
from controller.runtime.clock import SystemClock
from controller.runtime.config_entries import BusConfig, FloorConfig, TableEntry
from controller.runtime.group_commit import GroupCommitter, commit_linger_s
from controller.runtime.links import LinkRuntime
from controller.runtime.table_polling import (
    UNRECORDED_RETRY_S,
    PollObserver,
    TablePoll,
    TablePolling,
    failure_backoff_s,
)
from link_adapters.modbus import ModbusLink
from link_adapters.table import TableHandle

__all__ = ["Poller", "floor_tables", "make_link"]


def make_link(bus: BusConfig) -> ModbusLink:
    return ModbusLink(bus.params, name=bus.name)


class Poller:
    """The floor's polling: its links, one task per table, and starting, fencing and stopping
    them; each poll is ``per_table.poll_once`` (``TablePolling``)."""

    def __init__(
        self,
        runtime: LinkRuntime,
        floor: FloorConfig,
        clock: Clock | None = None,
        observer: PollObserver | None = None,
        unrecorded_retry_s: float = UNRECORDED_RETRY_S,
    ) -> None:
        self.runtime = runtime
        self.floor = floor
        self.clock: Clock = clock or SystemClock()
        self.per_table = TablePolling(
            runtime,
            floor,
            self.clock,
            observer=observer,
            unrecorded_retry_s=unrecorded_retry_s,
        )
        self.links: dict[str, ModbusLink] = {}
        self.tables: dict[str, TablePoll] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}  # by table id
        self._stopping = asyncio.Event()

    def build(self, link_factory: Callable[[BusConfig], ModbusLink] = make_link) -> None:
        self.links = {name: link_factory(bus) for name, bus in self.floor.buses.items()}
        for link in self.floor.links:
            state = self.runtime.memory.states[link.link_id]
            for entry in link.tables:
                handle = TableHandle(
                    self.links[entry.bus], entry.unit, entry.profile, name=entry.config.table_id
                )
                ts = state.table(entry.config.table_id)
                self.tables[entry.config.table_id] = TablePoll(
                    entry=entry, link_id=link.link_id, handle=handle, poll_seq=ts.poll_seq
                )

    async def start(self, *, link_ids: Iterable[str] | None = None) -> None:
        """Start the group commit and poll the tables of ``link_ids`` (every link by default;
        none for a controller that polls a link only once it holds the link's lock)."""
        linger = commit_linger_s([tp.entry.poll_interval_ms for tp in self.tables.values()])
        self.per_table.committer = GroupCommitter(self._apply, linger_s=linger)
        self.per_table.committer.start()
        wanted = None if link_ids is None else set(link_ids)
        self._spawn([tp for tp in self.tables.values() if wanted is None or tp.link_id in wanted])
        # What the process holds by now (the floor, its states, its configuration, the code) it
        # holds for as long as it polls: out of the collector's way, so that its full passes
        # go over what the polls make, not over all of it again every few seconds. Released
        # to the collector when polling stops.
        gc.freeze()

    def start_link(self, link_id: str) -> None:
        """Poll the link's tables, resuming from the state the runtime holds for it now (a
        controller taking a link over reloads it from the database first)."""
        assert self.per_table.committer is not None, "start() first"
        self.per_table.fenced.pop(link_id, None)
        state = self.runtime.memory.states[link_id]
        resumed = []
        for tid, tp in self.tables.items():
            if tp.link_id != link_id or tid in self._tasks:
                continue
            # What this process knew of the table may be old: another controller drove it.
            tp.poll_seq = state.table(tid).poll_seq
            tp.failures = 0
            tp.last = None
            tp.written_meter = None
            tp.recording = None
            tp.taken_at = tp.recorded_at = None
            tp.commit_failing = False
            resumed.append(tp)
        self._spawn(resumed)

    async def stop_link(self, link_id: str) -> None:
        """Stop polling the link's tables now. A reading already handed to the group commit may
        still be committed; nothing more is read from or written to the tables."""
        self.per_table.fenced.pop(link_id, None)
        tasks = [
            self._tasks.pop(tid)
            for tid, tp in self.tables.items()
            if tp.link_id == link_id and tid in self._tasks
        ]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def fence_link(self, link_id: str, *, until: Callable[[], bool]) -> None:
        """Keep the link's tables alive, no longer driving them, until ``until()`` is true.

        For a controller whose lock connection failed because the database cannot be reached:
        it may no longer drive the link (a standby could take the lock), yet while the
        database is out of reach for it, it most likely is for every controller, and a table
        that hears no heartbeat disables the progressive. So its tables are still read and
        given their heartbeat, and nothing else: no reading is committed, no hit acknowledged,
        no command or meter written. Once ``until()`` holds (the lock connection answers
        again) the tables are left alone, unless the link was taken back (``start_link``).
        """
        self.per_table.fenced[link_id] = until

    def fenced(self, link_id: str) -> bool:
        return link_id in self.per_table.fenced

    def polling(self, link_id: str) -> bool:
        """Whether the link's tables are polled, and driven, by this process now."""
        return link_id not in self.per_table.fenced and any(
            tp.link_id == link_id for tid, tp in self.tables.items() if tid in self._tasks
        )

    def recording_problem(self, link_id: str) -> str | None:
        """Why what the link's tables report is not being recorded now; None when it is."""
        if link_id in self.per_table.fenced:
            return "the database cannot be reached: tables kept alive, nothing recorded"
        committer = self.per_table.committer
        if committer is not None and committer.problem is not None:
            return f"readings not recorded: {committer.problem}"
        return None

    def _spawn(self, tps: Sequence[TablePoll]) -> None:
        # Every table starts at once and keeps its pace from there: the tables of a bus queue
        # on it and are read one after another, as a gateway is read, every bus at the same
        # time, and a floor's readings reach the group commit together, a few commits a
        # second. Spread over the interval instead, each poll cost the process a wakeup of
        # its own and the committer a commit every few readings: 1,000 tables took 26 % of a
        # core so, 17 % in step (bench/bench_poll_floor.py).
        for tp in tps:
            tid = tp.entry.config.table_id
            self._tasks[tid] = asyncio.create_task(self._poll_forever(tp), name=f"poll {tid}")

    async def stop(self) -> None:
        self._stopping.set()
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.per_table.committer is not None:
            await self.per_table.committer.stop()
        for link in self.links.values():
            await link.close()
        gc.unfreeze()

    async def _poll_forever(self, tp: TablePoll) -> None:
        interval = tp.entry.poll_interval_ms / 1000
        loop = asyncio.get_running_loop()
        while not self._stopping.is_set():
            lifted = self.per_table.fenced.get(tp.link_id)
            if lifted is not None and lifted():
                # The database answers again and the link was not taken back here: another
                # controller drives it.
                tid = tp.entry.config.table_id
                if self._tasks.get(tid) is asyncio.current_task():
                    del self._tasks[tid]
                return
            started = loop.time()
            try:
                await self.per_table.poll_once(tp)
            except Exception as exc:
                # Whatever ends a poll ends only that poll: the table is counted as failing
                # (offline with the reason once it keeps failing) and polled again after the
                # backoff. A task that ended here would leave its table shown as it last was,
                # never polled again, and nobody told.
                await self.per_table.poll_failed(tp, exc)
            else:
                self.per_table.polled(tp)
            delay = interval - (loop.time() - started)
            if tp.failures:
                # Each poll of a table that does not answer holds its bus for a whole timeout:
                # back off, so the tables that do answer keep their poll rate.
                delay = max(delay, failure_backoff_s(tp.failures, interval))
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                await asyncio.sleep(0)

    async def _apply(self, readings: Sequence[TableReading]) -> Mapping[str, str]:
        """The group commit's work, timed when an observer wants to know; returns the tables
        whose readings were left out, held, with why."""
        observer = self.per_table.observer
        if observer is None:
            await self.runtime.readings.apply(readings)
        else:
            loop = asyncio.get_running_loop()
            started = loop.time()
            try:
                await self.runtime.readings.apply(readings)
            finally:
                observer.committed(loop.time() - started)
        unrecorded = self.runtime.memory.unrecorded
        if not unrecorded:
            return {}
        return {r.table_id: unrecorded[r.table_id] for r in readings if r.table_id in unrecorded}


def floor_tables(floor: FloorConfig) -> Mapping[str, TableEntry]:
    return {t.config.table_id: t for t in floor.tables}
