"""Whether a controller is ready (``/readyz``), what a ready one should still say, and whether
what it shows of a link may be behind the floor."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Protocol

from controller.periods import Clock, at_text
from controller.runtime.change_feed import ChangeFeed
from controller.runtime.lawful import not_lawful
from controller.runtime.link_locks import LinkLocks
from controller.runtime.links import LinkRuntime
from controller.runtime.poller import Poller
from controller.runtime.self_check import SelfCheck
from controller.runtime.table_polling import TablePoll
from controller.storage import sessions
from controller.storage.handles import Database
from controller.storage.unit_of_work import connected

__all__ = [
    "READY_FLOOR_US",
    "READY_INTERVALS",
    "Service",
    "degraded",
    "notes",
    "problems",
    "software",
]

# Mismatched files a readiness answer names (``progressive self-check`` prints them all).
SHOWN_MISMATCHES = 50

# A link counts as polled recently when one of its tables answered within this many of the
# slowest table's poll intervals (and never less than this floor).
READY_INTERVALS = 5
READY_FLOOR_US = 5_000_000


class Service(Protocol):
    """What readiness reads of the service (``controller.runtime.service.FloorService``)."""

    @property
    def started(self) -> bool: ...

    @property
    def engine(self) -> Database: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def runtime(self) -> LinkRuntime: ...

    @property
    def poller(self) -> Poller | None: ...

    @property
    def link_locks(self) -> LinkLocks | None: ...

    @property
    def change_feed(self) -> ChangeFeed | None: ...

    @property
    def self_check(self) -> SelfCheck | None: ...

    def standing_by(self, link_id: str) -> bool: ...


async def problems(service: Service) -> Mapping[str, str]:
    """Problems that make this controller not ready, by subject; empty when ready.

    Ready means the database answers and, when this process polls, every link had a table
    answer recently (DESIGN.md: ``/readyz``), no table's polls keep failing for a reason the
    adapter does not know, and every link keeps the law the installation runs under (a link
    that does not is named with the clause and how to bring it into line).
    """
    problems: dict[str, str] = {}
    if not service.started:
        return {"service": "not started"}
    check = service.self_check
    if check is not None and check.last is not None and check.last.result.fault is not None:
        # Every link is inoperable while the software fails its check (rules.software).
        problems["software"] = f"the self-check failed: {check.last.result.fault}"
    try:
        async with asyncio.timeout(2.0):
            async with connected(service.engine) as conn:
                await sessions.ping(conn)
    except Exception as exc:  # any failure to reach it is the answer
        problems["database"] = f"not reachable: {type(exc).__name__}: {exc}"
    feed = service.change_feed
    if feed is not None and feed.problem is not None:
        problems["other processes' commits"] = (
            f"not listening, what is shown may be old: {feed.problem}"
        )
    locks = service.link_locks
    if locks is not None and locks.problem is not None:
        problems["link locks"] = (
            f"the lock connection failed, no link is driven here: {locks.problem}"
        )
    for table_id, why in sorted(service.runtime.memory.unrecorded.items()):
        problems[f"table {table_id}"] = f"held, its readings cannot be recorded: {why}"
    for link_id, state in sorted(service.runtime.memory.states.items()):
        reason = service.runtime.memory.inoperable.get(link_id)
        if reason is not None:
            # Inoperable until recovered (house policy, ``RECOVERY_CLAUSE``): not ready meanwhile.
            problems[f"link {link_id}"] = f"inoperable: {reason}"
        elif (unlawful := not_lawful(state)) is not None:
            # Kept playing and never changed (``lawful``): said until a levels change applies.
            problems[f"link {link_id}"] = unlawful
        elif state.tables and not any(ts.online for ts in state.tables.values()):
            # Whoever polls it (this process or another), no table of the link answers.
            problems[f"link {link_id}"] = (
                f"every table is offline ({', '.join(sorted(state.tables))})"
            )
    poller = service.poller
    if poller is not None:
        failing = poller.floor.offline_after_failures
        for table_id, tp in sorted(poller.tables.items()):
            if tp.unexpected and tp.failures >= failing:
                # A fault, not a table that does not answer: its polls keep failing for a
                # reason the adapter does not know (the log has its traceback).
                problems.setdefault(
                    f"table {table_id}",
                    f"its polls keep failing ({tp.failures} in a row): {tp.problem}",
                )
        now = service.clock.now_us()
        by_link: dict[str, list[TablePoll]] = {}
        for tp in poller.tables.values():
            by_link.setdefault(tp.link_id, []).append(tp)
        for link_id, tps in sorted(by_link.items()):
            if service.standing_by(link_id):
                continue  # a standby is healthy; ``readiness_notes`` says so
            if not service.runtime.memory.is_live(link_id, now):
                continue  # not polled until the commission approves it
            slowest = max(tp.entry.poll_interval_ms for tp in tps) * 1000
            window = max(READY_FLOOR_US, READY_INTERVALS * slowest)
            latest = max((tp.last_ok_us or 0) for tp in tps)
            if f"link {link_id}" in problems:
                continue  # said already
            if now - latest > window:
                problems[f"link {link_id}"] = (
                    f"no table answered in the last {window // 1_000_000} s"
                )
            elif (recording := poller.recording_problem(link_id)) is not None:
                problems[f"link {link_id}"] = recording
    return problems


def software(service: Service) -> dict[str, Any]:
    """The last check of the installed software against its manifest, as ``/readyz`` and the
    admin's page show it: its state, when, and the files that do not match."""
    check = service.self_check
    record = None if check is None else check.last
    if check is None or record is None:
        return {"state": "unchecked", "checked_at_us": None, "mismatches": []}
    r = record.result
    return {
        "state": "passed" if r.passed else "failed",
        "checked_at_us": record.at_us,
        "checked_at": at_text(record.at_us),
        "asked_by": record.why,
        "by": record.by,
        "manifest": str(r.manifest),
        "manifest_sha256": r.manifest_sha256,
        "files": r.files,
        "seconds": round(r.seconds, 3),
        "fault": r.fault,
        "mismatched": len(r.mismatches),
        "mismatches": [
            {"path": path, "problem": what} for path, what in r.mismatches[:SHOWN_MISMATCHES]
        ],
        "interval_s": check.interval_s,
    }


def degraded(service: Service, link_id: str) -> bool:
    """Whether what is shown of the link may be behind the floor: its last recorded state.

    Where this process polls the link: its tables' readings are not being recorded (the
    database is out of reach). Where another process does (a web process, a standby):
    this one is not hearing of that process's commits.
    """
    poller = service.poller
    if (
        poller is not None
        and not service.standing_by(link_id)
        and any(tp.link_id == link_id for tp in poller.tables.values())
    ):
        return poller.recording_problem(link_id) is not None
    feed = service.change_feed
    return feed is not None and feed.problem is not None


def notes(service: Service) -> Mapping[str, str]:
    """What a ready controller should still say: the links it stands by for."""
    locks = service.link_locks
    if locks is None or service.poller is None:
        return {}
    return {
        f"link {link_id}": "standby: driven by another controller"
        for link_id in locks.link_ids
        if link_id not in locks.held
    }
