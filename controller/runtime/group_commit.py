"""The group commit: readings from every table task gathered and committed together.

A commit costs about the same for one reading as for a hundred, so readings that arrive
within a short window of each other go into one transaction; after a failed commit the
database is tried again after a backoff, not at every poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence

from controller.core.reducer import TableReading
from controller.storage.errors import StaleState

__all__ = [
    "DEFAULT_LINGER_S",
    "LINGER_MAX_S",
    "LINGER_MIN_S",
    "LINGER_SHARE",
    "RECORD_REPORT_EVERY_S",
    "RECORD_RETRY_MAX_S",
    "RECORD_RETRY_MIN_S",
    "GroupCommitter",
    "NotRecording",
    "ReadingHeld",
    "commit_linger_s",
]

# Logged as part of the polling daemon, as before the committer had a module of its own.
log = logging.getLogger("controller.runtime.poller")


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


# After a failed commit the database is tried again after this long, doubling up to the
# maximum; readings handed in before then fail at once without touching it.
RECORD_RETRY_MIN_S = 0.5
RECORD_RETRY_MAX_S = 5.0
# While commits fail, how often the committer says so again.
RECORD_REPORT_EVERY_S = 30.0


class NotRecording(Exception):
    """A reading not tried: the last commit failed and its retry time has not come."""


class ReadingHeld(Exception):
    """A reading left out of its commit: its table is held (``LinkMemory.unrecorded``)."""


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
