"""One poll of one table: read, hand the reading to the group commit, write back.

``TablePolling`` holds the poll path and what it needs; ``Poller`` (``controller.runtime.
poller``) adds the floor around it: the links, one task per table, starting, fencing and
stopping. What a table is told and what its reading means is ``controller.runtime.table_values``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from controller.core.reducer import (
    HitClaim,
    LinkState,
    TableReading,
    TableState,
    awaiting_acknowledgement,
    display_frame,
)
from controller.periods import Clock
from controller.runtime.clock import SystemClock
from controller.runtime.config_entries import FloorConfig, TableEntry
from controller.runtime.group_commit import GroupCommitter, ReadingHeld
from controller.runtime.links import LinkRuntime
from controller.runtime.table_values import BetWatch, table_command, to_reading
from link_adapters.errors import (
    AdapterError,
    DeviceError,
    LinkDown,
    ProfileMismatch,
    ResponseTimeout,
)
from link_adapters.reading import METER_MAX_CENTS, TableCommand, TableRegisters
from link_adapters.register_map import next_heartbeat
from link_adapters.table import TableHandle

__all__ = [
    "FAILURE_BACKOFF_MAX_S",
    "FAILURE_BACKOFF_MIN_S",
    "FAILURE_CAUSES",
    "UNKNOWN_CAUSE",
    "UNRECORDED_RETRY_S",
    "PollObserver",
    "TablePoll",
    "TablePolling",
    "failure_backoff_s",
    "failure_cause",
]

# Logged as part of the polling daemon, as before the poll path had a module of its own.
log = logging.getLogger("controller.runtime.poller")


FAILURE_BACKOFF_MIN_S = 0.5
FAILURE_BACKOFF_MAX_S = 5.0
# A fault whose message changes at every try is logged again at most this often.
FAULT_REPEAT_S = 60.0
# How often a table held because its reading could not be recorded has it tried again.
UNRECORDED_RETRY_S = 30.0


def failure_backoff_s(failures: int, interval_s: float) -> float:
    """How long a table that failed ``failures`` polls in a row waits before the next try."""
    base = max(interval_s, FAILURE_BACKOFF_MIN_S)
    return float(min(FAILURE_BACKOFF_MAX_S, base * 2 ** min(failures - 1, 8)))


# Why polls fail, as the metrics count them: the adapter's own errors, and "unknown" for
# anything else (a fault of the controller or of what is under the adapter).
TIMEOUT_CAUSE = "timeout"
UNKNOWN_CAUSE = "unknown"
FAILURE_CAUSES = (TIMEOUT_CAUSE, "link_down", "device", "profile", "adapter", UNKNOWN_CAUSE)


def failure_cause(exc: BaseException) -> str:
    """The cause class of a failed poll (one of ``FAILURE_CAUSES``)."""
    if isinstance(exc, ResponseTimeout):
        return TIMEOUT_CAUSE
    if isinstance(exc, LinkDown):
        return "link_down"
    if isinstance(exc, ProfileMismatch):
        return "profile"
    if isinstance(exc, DeviceError):
        return "device"
    if isinstance(exc, AdapterError):
        return "adapter"
    return UNKNOWN_CAUSE


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
    # Failed polls by their cause (``failure_cause``), for the metrics.
    failed_by: dict[str, int] = field(default_factory=dict)
    problem: str | None = None  # why its last poll failed; None once it answers
    unexpected: bool = False  # ... for a reason the adapter does not know (a fault)
    faults: int = 0  # polls in a row ended by such a reason (even after the table answered)
    said: str | None = None  # the last such reason logged (each new one is said once)
    said_at: float = 0.0  # when (loop time) it was logged
    # The per-seat counters of the last reading this process made of the table (None: none
    # yet, or the table has none): each seat's credits since then go with the next reading.
    seat_credits: tuple[int, ...] | None = None
    bets: BetWatch = field(default_factory=BetWatch)  # its lockout and sensors, read by read

    @property
    def timeouts(self) -> int:
        """Polls not answered in time (also counted in ``errors``)."""
        return self.failed_by.get(TIMEOUT_CAUSE, 0)

    def reading(self, regs: TableRegisters, *, at_us: int, elapsed_us: int | None) -> TableReading:
        """The next reading of the table from a block read (its poll number already moved)."""
        reading = to_reading(
            regs,
            table_id=self.entry.config.table_id,
            poll_seq=self.poll_seq,
            at_us=at_us,
            elapsed_us=elapsed_us,
            previous_seat_credits=self.seat_credits,
            bets=self.bets,
        )
        self.seat_credits = regs.per_seat_credits
        return reading


@dataclass(slots=True)
class TablePolling:
    """The poll path of the daemon, table by table: one poll of a table at a time, its reading
    handed to the group commit (``controller.runtime.poller`` runs a task a table)."""

    runtime: LinkRuntime
    floor: FloorConfig
    clock: Clock = field(default_factory=SystemClock)
    observer: PollObserver | None = None
    unrecorded_retry_s: float = UNRECORDED_RETRY_S
    # The group commit the readings go to (the poller starts and stops it).
    committer: GroupCommitter | None = None
    # Links whose tables are kept alive without being driven, each with what ends that.
    fenced: dict[str, Callable[[], bool]] = field(default_factory=dict)

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
        committer = self.committer
        assert committer is not None
        loop = asyncio.get_running_loop()
        started = loop.time()
        fenced = tp.link_id in self.fenced
        memory = self.runtime.memory
        state = memory.states[tp.link_id]
        ts = state.tables[tid]
        # What the table may do and is told is decided as of now, once.
        now_us = None if fenced else self.clock.now_us()
        held = None if now_us is None else memory.wagering_hold(tp.link_id, now_us, table_id=tid)
        # A heartbeat opens the table to progressive bets, and a table's first reading only sets
        # its baseline: until that baseline is recorded, the table is read without a heartbeat.
        # Otherwise bets taken between the heartbeat and a baseline that never lands (a crash,
        # a failed commit) would sit under the next baseline, never credited. A held table
        # gets bit0 with its heartbeat, which keeps it closed.
        if ts.credits is None and held is None:
            one_request = False
        try:
            if one_request:
                command, meter = (
                    (None, None) if now_us is None else self._wanted(state, ts, held, now_us)
                )
                tp.heartbeat = next_heartbeat(tp.heartbeat)
                regs = await tp.handle.exchange(
                    command=command, meter_cents=meter, heartbeat=tp.heartbeat
                )
            else:
                regs = await tp.handle.read()
        except AdapterError as exc:
            await self._failed(tp, exc, fenced=fenced, held=held)
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
            if tid in self.runtime.memory.unrecorded and loop.time() >= tp.retry_at:
                await self._retry_unrecorded(tp, regs, now, started)
                held = self.runtime.memory.wagering_hold(
                    tp.link_id, self.clock.now_us(), table_id=tid
                )
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
        reading = tp.reading(regs, at_us=now, elapsed_us=elapsed)
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
                ts = self.runtime.memory.states[tp.link_id].tables[tid]
                await self._acknowledge(tp, ts, reading.head_hit)
            await self._write_back(tp, heartbeat_only=tp.link_id in self.fenced)

    async def poll_failed(self, tp: TablePoll, exc: Exception) -> None:
        """A poll of the table ended with ``exc``, of any type (the poll loop's supervision):
        counted as a failed poll like a table that does not answer, so the table goes offline
        with the reason and is polled again after the backoff."""
        try:
            fenced = tp.link_id in self.fenced
            held = (
                None
                if fenced
                else self.runtime.memory.wagering_hold(
                    tp.link_id, self.clock.now_us(), table_id=tp.entry.config.table_id
                )
            )
        except Exception:  # what holds it cannot be told: it is not marked offline now
            fenced, held = False, "its hold could not be told"
        await self._failed(tp, exc, fenced=fenced, held=held)

    async def _failed(
        self, tp: TablePoll, exc: Exception, *, fenced: bool, held: str | None
    ) -> None:
        """Count a failed poll and say why; a table that keeps failing goes offline."""
        tid = tp.entry.config.table_id
        tp.errors += 1
        tp.failures += 1
        known = isinstance(exc, AdapterError)
        cause = failure_cause(exc)
        tp.failed_by[cause] = tp.failed_by.get(cause, 0) + 1
        problem = str(exc) if known else f"{type(exc).__name__}: {exc}"
        tp.problem, tp.unexpected = problem, not known
        if not known:
            # A fault may come after the table answered (which starts its count again): the
            # polls it ended in a row count, so a table that keeps failing goes offline.
            tp.faults += 1
            tp.failures = max(tp.failures, tp.faults)
            now = asyncio.get_running_loop().time()
            said = tp.said
            if said is None or (
                problem != said
                and (
                    not said.startswith(f"{type(exc).__name__}:")
                    or now - tp.said_at >= FAULT_REPEAT_S
                )
            ):
                # A fault, not a table that does not answer: said with where it came from,
                # once for each new cause (a message that changes at every try is said again
                # at most every FAULT_REPEAT_S).
                tp.said, tp.said_at = problem, now
                log.error(
                    "table %s: its poll failed for a reason the adapter does not know (%s); "
                    "polled again after a backoff",
                    tid,
                    problem,
                    exc_info=exc,
                )
        if tp.failures == self.floor.offline_after_failures:
            log.warning(
                "table %s offline after %d failed polls: %s",
                tid,
                tp.failures,
                exc if known else type(exc).__name__,
            )
        if (
            tp.failures >= self.floor.offline_after_failures
            and not fenced
            and held is None
            and self.runtime.memory.states[tp.link_id].table(tid).online
        ):
            try:
                await self.runtime.commands.table_offline(
                    tid, reason=f"{tp.failures} polls failed: {problem}"
                )
            except Exception as why:  # the database: tried again at the next failure
                log.debug("table %s: going offline not recorded: %s", tid, why)

    def polled(self, tp: TablePoll) -> None:
        """A poll of the table ended without an exception (the poll loop): if the table had
        failed and answered in it, what was kept of its failure is forgotten (a fault's end is
        said)."""
        if tp.problem is None or tp.failures:
            return
        if tp.unexpected or tp.faults or tp.said is not None:
            log.info(
                "table %s: polled again without a fault (it was: %s)",
                tp.entry.config.table_id,
                tp.problem,
            )
        tp.problem, tp.unexpected, tp.said, tp.faults = None, False, None, 0

    async def _retry_unrecorded(
        self, tp: TablePoll, regs: TableRegisters, now_us: int, started: float
    ) -> None:
        """Try a held table's reading again, alone; acknowledge its head once it records."""
        loop = asyncio.get_running_loop()
        tp.retry_at = loop.time() + self.unrecorded_retry_s
        tid = tp.entry.config.table_id
        tp.poll_seq += 1
        elapsed = None if tp.recorded_at is None else round((loop.time() - tp.recorded_at) * 1e6)
        reading = tp.reading(regs, at_us=now_us, elapsed_us=elapsed)
        try:
            recorded = await self.runtime.readings.retry_unrecorded(reading)
        except Exception as exc:  # the database: tried again at the next retry
            tp.errors += 1
            log.info("table %s: its held reading was not tried again (%s)", tid, exc)
            return
        if recorded:
            tp.recorded_at = started
            ts = self.runtime.memory.states[tp.link_id].tables[tid]
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
        return (
            self.runtime.memory.states[tp.link_id].table(tp.entry.config.table_id).credits is None
        )

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
        self, state: LinkState, ts: TableState, held: str | None, now_us: int | None = None
    ) -> tuple[TableCommand, int]:
        """What the table should hold at ``now_us`` (by default now): (command, meter cents),
        from the link's state and the table's (``state``, ``ts``; only ever what the database
        holds)."""
        if now_us is None:
            now_us = self.clock.now_us()
        meter = display_frame(state, now_us=now_us).amount_cents
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
        state = self.runtime.memory.states[tp.link_id]
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
