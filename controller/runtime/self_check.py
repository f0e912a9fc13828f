"""The controller checks its own software: at start, every ``interval_s``, and on demand.

Each check hashes every installed file against the manifest (``controller.manifest``) in a
thread of its own, off the event loop that polls the tables. The rulebook
(``controller.rules.software``) decides:

* at start, before the database is opened or a table polled, a check that fails refuses the
  start (``SelfCheck.first``): nothing runs, nothing is signed;
* a check that fails while running makes every link inoperable (its tables told to take no
  side bets, bit0, at their next poll; nothing recorded, no command applied), stops the
  sealing of entries and the signing of checkpoints in this process, is written to the audit
  log with the links it held, logged, and shown by ``/readyz``, ``/metrics`` (the
  ``ProgressiveSoftwareMismatch`` alert) and the admin's page;
* a check that passes after a failure lets this process seal again; the links the failure
  held stay inoperable, the hold kept in the database, until two people recover each one
  (``progressive links recover``), as any inoperable link comes back.

The audit log holds every check someone asked for, every check that failed and the first one
that passed after a failure; a scheduled check that passes is logged and counted only.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from controller.manifest import ROOT, SoftwareCheck, verify_install
from controller.periods import Clock, at_text
from controller.rules.software import check_software, held_reason
from controller.schedule import set_within

if TYPE_CHECKING:
    from controller.runtime.anchoring import Checkpointer
    from controller.runtime.links import LinkRuntime

__all__ = ["CheckRecord", "SelfCheck", "Why"]

log = logging.getLogger(__name__)

# What asked for a check: the start, the schedule, or a person.
Why = Literal["start", "schedule", "demand"]
# Mismatches written in one audit-log row (all of them are printed by `progressive self-check`).
AUDITED_MISMATCHES = 20


@dataclass(frozen=True, slots=True)
class CheckRecord:
    """A check as it is shown: when, why, by whom, and what it found."""

    result: SoftwareCheck
    at_us: int
    why: Why
    by: str

    def summary(self) -> dict[str, Any]:
        """What the audit log records of it (integers and text only)."""
        r = self.result
        return {
            "result": "passed" if r.passed else "failed",
            "asked_by": self.why,
            "manifest": str(r.manifest),
            "manifest_sha256": r.manifest_sha256,
            "files": r.files,
            "mismatched": len(r.mismatches),
            "took_ms": round(r.seconds * 1000),
            **(
                {
                    "fault": r.fault,
                    "mismatches": [
                        f"{path} {what}" for path, what in r.mismatches[:AUDITED_MISMATCHES]
                    ],
                }
                if r.fault is not None
                else {}
            ),
        }


class SelfCheck:
    """The checks of one service's software against the manifest at ``manifest``."""

    def __init__(
        self,
        manifest: Path,
        *,
        interval_s: float,
        clock: Clock,
        root: Path = ROOT,
    ) -> None:
        self.manifest = manifest
        self.interval_s = interval_s
        self.clock = clock
        self.root = root
        self.last: CheckRecord | None = None
        self.checks = 0
        self.failures = 0
        self.runtime: LinkRuntime | None = None
        self.checkpoints: Checkpointer | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._one_at_a_time = asyncio.Lock()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ran = asyncio.Condition()

    # ------------------------------------------------------------------------- life

    async def first(self) -> CheckRecord:
        """The check at start, before anything runs: a failure is refused (``RuleViolation``
        naming the first file that does not match and how many do not)."""
        try:
            record = await self._check("start", "controller")
        finally:
            await self._close_pool()  # made again by the first check on the schedule
        check_software(record.result.fault)
        return record

    def start(self, runtime: LinkRuntime, checkpoints: Checkpointer | None = None) -> None:
        """Check again every ``interval_s`` from now, acting on ``runtime``'s links."""
        self.runtime = runtime
        self.checkpoints = checkpoints
        if self._task is None:
            self._stopping.clear()
            self._task = asyncio.create_task(self._loop(), name="self-check")

    async def stop(self) -> None:
        """Let a check under way finish, then end. Idempotent."""
        self._stopping.set()
        task, self._task = self._task, None
        if task is not None:
            await task
        await self._close_pool()

    async def _close_pool(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)  # idle: the check under way, if any, has been awaited

    async def wait_for_checks(self, checks: int) -> None:
        """Until ``checks`` checks have been made since the service started (its first one
        included)."""
        async with self._ran:
            await self._ran.wait_for(lambda: self.checks >= checks)

    async def _loop(self) -> None:
        while True:
            if await set_within(self._stopping, self.interval_s):
                return
            try:
                await self.run_once(why="schedule", by="controller")
            except Exception:  # the next one tries again; a failure to check is no pass
                log.exception("the software self-check could not run")

    # ------------------------------------------------------------------------- checks

    async def run_once(self, *, why: Why, by: str) -> CheckRecord:
        """Check now and act on what is found (module docstring); one check at a time."""
        if self._stopping.is_set():
            raise RuntimeError("the controller is stopping: its software is checked at its start")
        async with self._one_at_a_time:
            record = await self._check(why, by)
            await self._act(record)
        return record

    async def _check(self, why: Why, by: str) -> CheckRecord:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="self-check")
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(self._pool, verify_install, self.manifest, self.root)
        record = CheckRecord(result, self.clock.now_us(), why, by)
        self.last = record
        if result.passed:
            log.info(
                "software self-check passed: %d files match %s (%.3f s)",
                result.files,
                result.manifest,
                result.seconds,
            )
        else:
            self.failures += 1
            log.critical("software self-check FAILED: %s", result.fault)
        async with self._ran:
            self.checks += 1
            self._ran.notify_all()
        return record

    async def _act(self, record: CheckRecord) -> None:
        runtime = self.runtime
        if runtime is None:
            return
        result = record.result
        failing_before = runtime.memory.software_fault is not None
        if result.fault is not None:
            reason = held_reason(result.fault, at_text(record.at_us))
            runtime.memory.hold_for_software(result.fault, reason)
            if self.checkpoints is not None:
                self.checkpoints.software_fault = result.fault
        else:
            runtime.memory.software_passes()
            if self.checkpoints is not None:
                self.checkpoints.software_fault = None
        hold = dict(runtime.memory.software_held)
        if not (record.why == "demand" or not result.passed or failing_before or hold):
            return
        try:
            await runtime.memory.store.record_self_check(
                at_us=record.at_us, actor=record.by, after=record.summary(), hold=hold
            )
        except Exception as exc:  # the database: the holds stay in memory, written next time
            log.error("the software self-check could not be recorded: %s", exc)
            return
        runtime.memory.software_holds_written(hold)
