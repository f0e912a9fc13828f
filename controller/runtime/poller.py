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

A reading the database refuses while it takes the others (or the engine cannot apply) holds
only its own table (``LinkRuntime.apply_readings``): the table is polled on with progressive
wagering disabled and nothing of it recorded or acknowledged, and its reading is tried again
alone every ``unrecorded_retry_s`` until it records, which releases it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from controller.core.hands import HandCategory
from controller.core.reducer import (
    HitClaim,
    LinkState,
    TableReading,
    TableState,
    awaiting_acknowledgement,
    display_frame,
)
from controller.runtime.clock import Clock, SystemClock
from controller.runtime.config import BusConfig, FloorConfig, TableEntry
from controller.runtime.links import LinkRuntime
from controller.storage.store import StaleState
from link_adapters.errors import AdapterError, ResponseTimeout
from link_adapters.modbus import ModbusLink
from link_adapters.reading import METER_MAX_CENTS, HitHand, TableCommand, TableRegisters
from link_adapters.register_map import command_word, next_heartbeat
from link_adapters.table import TableHandle

log = logging.getLogger(__name__)


def table_command(ts: TableState, *, link_hold: str | None) -> TableCommand:
    """What a table is told: take no progressive wagers whenever it must not, and whether a
    hit there waits for a technician.

    Not taking wagers: held after a hit paid from a meter or a refused claim (the technician
    verifies and resets it first), removed from play (68 IAC 10-1-6.2: a side bet taken there
    would be credited nowhere), or on a link that may not play (``link_hold``: awaiting the
    commission's approval, 68 IAC 10-1-3(c)(4), or inoperable).
    """
    return TableCommand(
        disable_progressive=ts.hit_pending or ts.out_of_play or link_hold is not None,
        hit_pending=ts.hit_pending,
    )


def command_bits(ts: TableState, *, link_hold: str | None) -> int:
    """``table_command`` as the table's command register holds it (encoded by the adapter)."""
    return command_word(table_command(ts, link_hold=link_hold))


def make_link(bus: BusConfig) -> ModbusLink:
    return ModbusLink(bus.params, name=bus.name)


# The group commit window: how long the committer gathers readings after the first one of a
# batch. Short next to a poll interval (it adds to the wager-to-display time), long next to
# one Modbus round trip. A floor's window is this share of its shortest poll interval,
# between LINGER_MIN_S and LINGER_MAX_S: 50 ms for a 1 s floor, 12.5 ms for 250 ms.
LINGER_SHARE = 0.05
LINGER_MIN_S = 0.005
LINGER_MAX_S = 0.050
DEFAULT_LINGER_S = 0.010


def commit_linger_s(poll_intervals_ms: Sequence[int]) -> float:
    """The group commit window for a floor polled at these intervals."""
    if not poll_intervals_ms:
        return DEFAULT_LINGER_S
    share = min(poll_intervals_ms) / 1000 * LINGER_SHARE
    return min(LINGER_MAX_S, max(LINGER_MIN_S, share))


FAILURE_BACKOFF_MIN_S = 0.5
FAILURE_BACKOFF_MAX_S = 5.0

# After a failed commit the database is tried again after this long, doubling up to the
# maximum; readings handed in before then fail at once without touching it.
RECORD_RETRY_MIN_S = 0.5
RECORD_RETRY_MAX_S = 5.0
# While commits fail, how often the committer says so again.
RECORD_REPORT_EVERY_S = 30.0
# How often a table held because its reading could not be recorded has it tried again.
UNRECORDED_RETRY_S = 30.0


def failure_backoff_s(failures: int, interval_s: float) -> float:
    """How long a table that failed ``failures`` polls in a row waits before the next try."""
    base = max(interval_s, FAILURE_BACKOFF_MIN_S)
    return float(min(FAILURE_BACKOFF_MAX_S, base * 2 ** min(failures - 1, 8)))


# The hand categories the tables' claims name (the adapter names them as the categories are).
CLAIMED_HANDS: Mapping[HitHand, HandCategory] = {hand: HandCategory[hand.name] for hand in HitHand}


def to_reading(
    regs: TableRegisters,
    *,
    table_id: str,
    poll_seq: int,
    at_us: int,
    elapsed_us: int | None = None,
) -> TableReading:
    """What the engine needs from one block read."""
    claim = None
    if regs.head is not None and regs.pending_hits > 0:
        h = regs.head
        # A code that names no hand is taken as a claim of no paying hand, which the engine
        # refuses and holds the table for a technician, rather than blocking the FIFO.
        hand = HandCategory.HIGH_CARD if h.hand is None else CLAIMED_HANDS[h.hand]
        claim = HitClaim(table_seq=h.seq, seat=h.seat, hand=hand, round=h.round, cards=h.cards)
    return TableReading(
        table_id=table_id,
        poll_seq=poll_seq,
        at_us=at_us,
        credits=regs.credits,
        rounds=regs.rounds,
        pending_hits=regs.pending_hits,
        head_hit=claim,
        elapsed_us=elapsed_us,
    )


class PollObserver(Protocol):
    """Told of every answered poll and every group commit (metrics): must be cheap."""

    def polled(self, link_id: str, seconds: float) -> None: ...

    def committed(self, seconds: float) -> None: ...


@dataclass(slots=True)
class TablePoll:
    """What the poller keeps per table between polls."""

    entry: TableEntry
    link_id: str
    handle: TableHandle
    poll_seq: int
    failures: int = 0
    heartbeat: int = 0
    written_meter: int | None = None
    last: TableRegisters | None = None
    last_ok_us: int | None = None  # when the table last answered a poll
    commit_failing: bool = False  # its last reading could not be recorded
    retry_at: float = 0.0  # held as unrecorded: when (loop time) its reading is tried again
    recording: asyncio.Future[None] | None = None  # its last reading, being committed
    # When (event loop's monotonic clock) the request of the reading being committed, and of
    # the last one recorded, went out: durations between readings do not follow the wall
    # clock's steps.
    taken_at: float | None = None
    recorded_at: float | None = None
    polls: int = 0
    acknowledged: int = 0  # hit acknowledgements written (a request each)
    errors: int = 0
    timeouts: int = 0  # polls not answered in time (also counted in errors)


class NotRecording(Exception):
    """A reading not tried: the last commit failed and its retry time has not come."""


class ReadingHeld(Exception):
    """A reading left out of its commit: its table is held (``LinkRuntime.unrecorded``)."""


class GroupCommitter:
    """Gathers readings from every table task and commits them together, one batch at a time.

    A commit costs about the same for one reading as for a hundred, and commits run one after
    another: the committer gathers what arrives within ``linger_s`` of the first reading of a
    batch (the classic group commit window), then commits it as one transaction.

    After a failed commit the database is left alone for a backoff: batches handed in
    meanwhile fail at once with ``NotRecording``, so the tables' polls go on at their pace and
    an outage costs one attempt per backoff, not one per poll.
    """

    def __init__(
        self,
        apply: Callable[[Sequence[TableReading]], Awaitable[Mapping[str, str] | None]],
        *,
        linger_s: float = DEFAULT_LINGER_S,
        retry_min_s: float = RECORD_RETRY_MIN_S,
        retry_max_s: float = RECORD_RETRY_MAX_S,
        report_every_s: float = RECORD_REPORT_EVERY_S,
    ) -> None:
        self._apply = apply
        self._linger_s = linger_s
        self._retry_min_s = retry_min_s
        self._retry_max_s = retry_max_s
        self._report_every_s = report_every_s
        # While commits fail: since when (loop time), why, how many tries, the next one.
        self.failing_since: float | None = None
        self.problem: str | None = None
        self._tries = 0
        self._retry_at = 0.0
        self._reported_at = 0.0
        self._waiting: list[tuple[TableReading, asyncio.Future[None]]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._closed = asyncio.Event()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="group-commit")

    async def stop(self, *, flush_within_s: float = 10.0) -> None:
        """Commit what was handed in, then stop; what cannot be committed in time is dropped
        (its tables' cumulative counters bring it back at the next start)."""
        task, self._task = self._task, None
        if task is not None:
            self._closing = True
            self._closed.set()
            self._wake.set()
            try:
                async with asyncio.timeout(flush_within_s):
                    await asyncio.shield(task)
            except TimeoutError:
                log.warning("the last readings could not be recorded in %.0f s", flush_within_s)
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        for _, fut in self._waiting:
            if not fut.done():
                fut.cancel()
        self._waiting.clear()

    def submit_nowait(self, reading: TableReading) -> asyncio.Future[None]:
        """Hand a reading in; the future completes once it is committed (or fails with what
        the commit raised)."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((reading, fut))
        self._wake.set()
        return fut

    async def submit(self, reading: TableReading) -> None:
        """Returns once the reading is committed; raises what the commit raised."""
        await self.submit_nowait(reading)

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            if self._linger_s > 0 and not self._closing:
                # The window, cut short when the committer is told to stop.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._linger_s):
                        await self._closed.wait()
            self._wake.clear()
            batch, self._waiting = self._waiting, []
            if batch:
                await self._commit(batch)
            if self._closing and not self._waiting:
                return

    async def _commit(self, batch: list[tuple[TableReading, asyncio.Future[None]]]) -> None:
        loop = asyncio.get_running_loop()
        problem: Exception | None = None
        held: Mapping[str, str] | None = None
        if self.failing_since is not None and loop.time() < self._retry_at and not self._closing:
            problem = NotRecording(f"not recording since the last commit failed: {self.problem}")
        else:
            try:
                # The tables whose readings were left out, with why.
                held = await self._apply([r for r, _ in batch])
            except StaleState as exc:
                # Another process (a technician's command at a web process) moved a link on:
                # the database answers, the link has been read again, the next batch records.
                problem = exc
            except Exception as exc:  # every waiter learns of it; a later batch tries again
                problem = exc
                self._failed(exc, loop.time())
            else:
                self._recovered(loop.time())
        for reading, fut in batch:
            if not fut.done():
                if problem is not None:
                    fut.set_exception(problem)
                elif held and reading.table_id in held:
                    fut.set_exception(ReadingHeld(held[reading.table_id]))
                else:
                    fut.set_result(None)

    def _failed(self, exc: Exception, now: float) -> None:
        self._tries += 1
        self.problem = f"{type(exc).__name__}: {exc}".splitlines()[0]
        backoff = min(self._retry_max_s, self._retry_min_s * 2 ** min(self._tries - 1, 8))
        self._retry_at = now + backoff
        if self.failing_since is None:
            self.failing_since = self._reported_at = now
            log.warning(
                "readings cannot be recorded (%s); polls and heartbeats go on, nothing more is "
                "acknowledged to the tables; retrying every %.1f-%.0f s",
                self.problem,
                self._retry_min_s,
                self._retry_max_s,
            )
        elif now - self._reported_at >= self._report_every_s:
            self._reported_at = now
            log.warning(
                "readings still not recorded after %.0f s (%d tries): %s",
                now - self.failing_since,
                self._tries,
                self.problem,
            )

    def _recovered(self, now: float) -> None:
        if self.failing_since is None:
            return
        log.warning(
            "readings recorded again after %.1f s and %d failed tries; what was wagered "
            "meanwhile is credited from the tables' cumulative counters",
            now - self.failing_since,
            self._tries,
        )
        self.failing_since = self.problem = None
        self._tries = 0


@dataclass(slots=True)
class Poller:
    runtime: LinkRuntime
    floor: FloorConfig
    clock: Clock = field(default_factory=SystemClock)
    links: dict[str, ModbusLink] = field(default_factory=dict)
    tables: dict[str, TablePoll] = field(default_factory=dict)
    _tasks: dict[str, asyncio.Task[None]] = field(default_factory=dict)  # by table id
    _committer: GroupCommitter | None = None
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)
    observer: PollObserver | None = None
    # Links whose tables are kept alive without being driven, each with what ends that.
    _fenced: dict[str, Callable[[], bool]] = field(default_factory=dict)
    unrecorded_retry_s: float = UNRECORDED_RETRY_S

    def build(self, link_factory: Callable[[BusConfig], ModbusLink] = make_link) -> None:
        self.links = {name: link_factory(bus) for name, bus in self.floor.buses.items()}
        for link in self.floor.links:
            state = self.runtime.states[link.link_id]
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
        self._committer = GroupCommitter(self._apply, linger_s=linger)
        self._committer.start()
        wanted = None if link_ids is None else set(link_ids)
        self._spawn([tp for tp in self.tables.values() if wanted is None or tp.link_id in wanted])

    def start_link(self, link_id: str) -> None:
        """Poll the link's tables, resuming from the state the runtime holds for it now (a
        controller taking a link over reloads it from the database first)."""
        assert self._committer is not None, "start() first"
        self._fenced.pop(link_id, None)
        state = self.runtime.states[link_id]
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
        self._fenced.pop(link_id, None)
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
        self._fenced[link_id] = until

    def fenced(self, link_id: str) -> bool:
        return link_id in self._fenced

    def polling(self, link_id: str) -> bool:
        """Whether the link's tables are polled, and driven, by this process now."""
        return link_id not in self._fenced and any(
            tp.link_id == link_id for tid, tp in self.tables.items() if tid in self._tasks
        )

    def recording_problem(self, link_id: str) -> str | None:
        """Why what the link's tables report is not being recorded now; None when it is."""
        if link_id in self._fenced:
            return "the database cannot be reached: tables kept alive, nothing recorded"
        committer = self._committer
        if committer is not None and committer.problem is not None:
            return f"readings not recorded: {committer.problem}"
        return None

    def _spawn(self, tps: Sequence[TablePoll]) -> None:
        # Spread the first polls over each table's interval: tables started together would
        # stay in step and hit their buses and the committer in one burst every interval.
        count = len(tps)
        for i, tp in enumerate(tps):
            tid = tp.entry.config.table_id
            offset = tp.entry.poll_interval_ms / 1000 * i / count
            self._tasks[tid] = asyncio.create_task(
                self._poll_forever(tp, offset), name=f"poll {tid}"
            )

    async def stop(self) -> None:
        self._stopping.set()
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._committer is not None:
            await self._committer.stop()
        for link in self.links.values():
            await link.close()

    async def _poll_forever(self, tp: TablePoll, offset_s: float = 0.0) -> None:
        interval = tp.entry.poll_interval_ms / 1000
        loop = asyncio.get_running_loop()
        if offset_s > 0:
            await asyncio.sleep(offset_s)
        while not self._stopping.is_set():
            lifted = self._fenced.get(tp.link_id)
            if lifted is not None and lifted():
                # The database answers again and the link was not taken back here: another
                # controller drives it.
                tid = tp.entry.config.table_id
                if self._tasks.get(tid) is asyncio.current_task():
                    del self._tasks[tid]
                return
            started = loop.time()
            await self.poll_once(tp)
            delay = interval - (loop.time() - started)
            if tp.failures:
                # Each poll of a table that does not answer holds its bus for a whole timeout:
                # back off, so the tables that do answer keep their poll rate.
                delay = max(delay, failure_backoff_s(tp.failures, interval))
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                await asyncio.sleep(0)

    async def poll_once(self, tp: TablePoll) -> None:
        """Read, hand the reading to the group commit, write. Errors are counted; a table that
        keeps failing goes offline.

        With a profile that reads and writes in one request (function 23) the command bits,
        meter and heartbeat decided once the previous reading was committed travel with this
        poll's read, and the poll does not wait for its own commit: the next poll of the
        table waits for it first (``settle``). Otherwise the poll waits for the commit and
        then writes. The hit acknowledgement is a write of its own, made only right after a
        read showed at the head the very hit the database holds as taken (``_acknowledge``):
        nothing is acknowledged before it is recorded, and no acknowledgement can pop a hit
        that was not read and recorded.

        A link that may not play (awaiting approval, inoperable), or a table held because its
        reading could not be recorded, has its tables read and written with bit0 set and the
        heartbeat, so they refuse side bets at once rather than when their heartbeat times
        out; nothing read from them is recorded or acknowledged, except a held table's
        reading tried again alone when its time comes.
        """
        fut = tp.recording
        if fut is not None:
            if fut.done():  # most often: no coroutine to settle it
                tp.recording = None
                self._settled(tp, fut)
            else:
                await self.settle(tp)
        tid = tp.entry.config.table_id
        tp.polls += 1
        one_request = tp.handle.profile.read_write
        committer = self._committer
        assert committer is not None
        loop = asyncio.get_running_loop()
        started = loop.time()
        fenced = tp.link_id in self._fenced
        state = self.runtime.states[tp.link_id]
        ts = state.tables[tid]
        held = (
            None
            if fenced
            else self.runtime.wagering_hold(tp.link_id, self.clock.now_us(), table_id=tid)
        )
        # A heartbeat opens the table to progressive bets, and a table's first reading only sets
        # its baseline: until that baseline is recorded, the table is read without a heartbeat.
        # Otherwise bets taken between the heartbeat and a baseline that never lands (a crash,
        # a failed commit) would sit under the next baseline, never credited. A held table
        # gets bit0 with its heartbeat, which keeps it closed.
        if ts.credits is None and held is None:
            one_request = False
        try:
            if one_request:
                command, meter = (None, None) if fenced else self._wanted(state, ts, held)
                tp.heartbeat = next_heartbeat(tp.heartbeat)
                regs = await tp.handle.exchange(
                    command=command, meter_cents=meter, heartbeat=tp.heartbeat
                )
            else:
                regs = await tp.handle.read()
        except AdapterError as exc:
            tp.errors += 1
            if isinstance(exc, ResponseTimeout):
                tp.timeouts += 1
            tp.failures += 1
            if tp.failures == self.floor.offline_after_failures:
                log.warning("table %s offline after %d failed polls: %s", tid, tp.failures, exc)
            if (
                tp.failures >= self.floor.offline_after_failures
                and not fenced
                and held is None
                and self.runtime.states[tp.link_id].table(tid).online
            ):
                try:
                    await self.runtime.table_offline(
                        tid, reason=f"{tp.failures} polls failed: {exc}"
                    )
                except Exception as problem:  # the database: tried again at the next failure
                    log.debug("table %s: going offline not recorded: %s", tid, problem)
            return
        observer = self.observer
        if observer is not None:
            observer.polled(tp.link_id, loop.time() - started)
        tp.failures = 0
        tp.last = regs
        tp.last_ok_us = now = self.clock.now_us()
        if fenced:
            if not one_request and not self._unrecorded(tp):
                await self._write_back(tp, heartbeat_only=True)
            return
        if held is not None:
            if tid in self.runtime.unrecorded and loop.time() >= tp.retry_at:
                await self._retry_unrecorded(tp, regs, now, started)
                held = self.runtime.wagering_hold(tp.link_id, self.clock.now_us(), table_id=tid)
            if not one_request:
                await self._write_back(tp, held=held)
            return
        tp.poll_seq += 1
        # The most time the table can have dealt between this reading and the last recorded:
        # from when that one's request went out (the table read its counters after) to when
        # this one's answer came in. Measured from answer to answer it would come out short
        # whenever the earlier answer was slow, and hold honest play as implausible.
        tp.taken_at = started
        answered = loop.time()
        elapsed = None if tp.recorded_at is None else round((answered - tp.recorded_at) * 1e6)
        reading = to_reading(
            regs, table_id=tid, poll_seq=tp.poll_seq, at_us=now, elapsed_us=elapsed
        )
        if one_request:
            # The head this read shows may be a hit recorded from an earlier reading.
            await self._acknowledge(tp, ts, reading.head_hit)
        tp.recording = committer.submit_nowait(reading)
        if not one_request:
            # Written whether or not the reading was recorded: what is written comes from
            # the runtime's state, which is only what the database holds, and the heartbeat
            # keeps the table taking bets through an outage of the database.
            recorded = await self.settle(tp)
            if self._unrecorded(tp):
                return  # its baseline did not land: still no heartbeat (see above)
            if recorded:
                # This reading is in the database: its head, if taken, may be dropped now.
                ts = self.runtime.states[tp.link_id].tables[tid]
                await self._acknowledge(tp, ts, reading.head_hit)
            await self._write_back(tp, heartbeat_only=tp.link_id in self._fenced)

    async def _retry_unrecorded(
        self, tp: TablePoll, regs: TableRegisters, now_us: int, started: float
    ) -> None:
        """Try a held table's reading again, alone; acknowledge its head once it records."""
        loop = asyncio.get_running_loop()
        tp.retry_at = loop.time() + self.unrecorded_retry_s
        tid = tp.entry.config.table_id
        tp.poll_seq += 1
        elapsed = None if tp.recorded_at is None else round((loop.time() - tp.recorded_at) * 1e6)
        reading = to_reading(
            regs, table_id=tid, poll_seq=tp.poll_seq, at_us=now_us, elapsed_us=elapsed
        )
        try:
            recorded = await self.runtime.retry_unrecorded(reading)
        except Exception as exc:  # the database: tried again at the next retry
            tp.errors += 1
            log.info("table %s: its held reading was not tried again (%s)", tid, exc)
            return
        if recorded:
            tp.recorded_at = started
            ts = self.runtime.states[tp.link_id].tables[tid]
            await self._acknowledge(tp, ts, reading.head_hit)

    async def _acknowledge(self, tp: TablePoll, ts: TableState, head: HitClaim | None) -> None:
        """Acknowledge ``head``, the hit a read has just shown at the table's FIFO head, if
        ``ts`` (what the database holds) has it taken and not yet dropped."""
        if head is None or head.table_seq is None or not awaiting_acknowledgement(ts, head):
            return
        try:
            await tp.handle.acknowledge(head.table_seq)
            tp.acknowledged += 1
        except AdapterError as exc:
            # Perhaps it landed, perhaps not: the next read tells, and it is written again only
            # if that read still shows this very hit at the head.
            tp.errors += 1
            log.info("table %s: acknowledgement not written (%s)", tp.entry.config.table_id, exc)

    def _unrecorded(self, tp: TablePoll) -> bool:
        """The table has no baseline reading in the database yet."""
        return self.runtime.states[tp.link_id].table(tp.entry.config.table_id).credits is None

    async def settle(self, tp: TablePoll) -> bool:
        """Wait for the table's last reading to be committed; False when it could not be.

        When a commit fails nothing of it is recorded and memory keeps what the database
        holds; the counters are cumulative, so the next recorded poll credits what it carried.
        The committer reports an outage; each table only notes it.
        """
        fut, tp.recording = tp.recording, None
        if fut is None:
            return True
        if not fut.done():
            await asyncio.wait((fut,))
        return self._settled(tp, fut)

    def _settled(self, tp: TablePoll, fut: asyncio.Future[None]) -> bool:
        """``settle`` once the commit of the table's last reading is done (``fut``)."""
        tid = tp.entry.config.table_id
        problem = None if fut.cancelled() else fut.exception()
        if fut.cancelled() or problem is not None:
            tp.errors += 1
            if isinstance(problem, ReadingHeld):
                tp.retry_at = asyncio.get_running_loop().time() + self.unrecorded_retry_s
            if not tp.commit_failing:
                log.debug("table %s: its reading could not be recorded: %s", tid, problem)
            tp.commit_failing = True
            return False
        if tp.commit_failing:
            log.debug("table %s: readings are recorded again", tid)
            tp.commit_failing = False
        tp.recorded_at = tp.taken_at
        return True

    def _wanted(
        self, state: LinkState, ts: TableState, held: str | None
    ) -> tuple[TableCommand, int]:
        """What the table should hold now: (command, meter cents), from the link's state and
        the table's (``state``, ``ts``; only ever what the database holds)."""
        meter = display_frame(state, now_us=self.clock.now_us()).amount_cents
        # A table's own meter shows at most METER_MAX_CENTS. A meter beyond that (68 IAC
        # 10-1-5(d) gives it no ceiling) shows at the most the table can show there; the
        # floor displays show it whole.
        return table_command(ts, link_hold=held), min(meter, METER_MAX_CENTS)

    async def _write_back(
        self, tp: TablePoll, *, heartbeat_only: bool = False, held: str | None = None
    ) -> None:
        tid = tp.entry.config.table_id
        tp.heartbeat = next_heartbeat(tp.heartbeat)
        if heartbeat_only:
            try:
                await tp.handle.write(heartbeat=tp.heartbeat)
            except AdapterError as exc:
                tp.errors += 1
                log.info("table %s: heartbeat not written (%s)", tid, exc)
            return
        state = self.runtime.states[tp.link_id]
        command, meter = self._wanted(state, state.table(tid), held)
        try:
            # The command bits go with every heartbeat: a table that restarted has forgotten
            # them, and must not take side bets it should refuse. The meter only when changed.
            await tp.handle.write(
                command=command,
                meter_cents=meter if meter != tp.written_meter else None,
                heartbeat=tp.heartbeat,
            )
        except AdapterError as exc:
            tp.errors += 1
            log.info("table %s: write failed (%s); it is repeated at the next poll", tid, exc)
            tp.written_meter = None
            return
        tp.written_meter = meter

    async def _apply(self, readings: Sequence[TableReading]) -> Mapping[str, str]:
        """The group commit's work, timed when an observer wants to know; returns the tables
        whose readings were left out, held, with why."""
        observer = self.observer
        if observer is None:
            await self.runtime.apply_readings(readings)
        else:
            loop = asyncio.get_running_loop()
            started = loop.time()
            try:
                await self.runtime.apply_readings(readings)
            finally:
                observer.committed(loop.time() - started)
        unrecorded = self.runtime.unrecorded
        if not unrecorded:
            return {}
        return {r.table_id: unrecorded[r.table_id] for r in readings if r.table_id in unrecorded}


def floor_tables(floor: FloorConfig) -> Mapping[str, TableEntry]:
    return {t.config.table_id: t for t in floor.tables}
