"""The retention purge: meter history past its period, integrity records past theirs.

68 IAC 10-6-5(d), 10-8-5(d): meter records and documents are kept five years; 68 IAC
10-1-6.2(c): records of devices removed from play one year. The purge removes only what is
older than the period in force (the database refuses anything younger, but the job never asks),
and seals a manifest of what it removed (counts, ranges, the removed entries' seals) into the
link's own chain, which then resumes at a ledger anchor, so ``ledger verify`` stays whole.
The history is read from its rows and its blocks of closed days alike, and a block is removed
whole or kept whole: the manifest is the one the same entries kept as rows would give.
A period can be set longer than the regulations ask, never shorter, and once in force it can
only lengthen.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from controller.core import reducer
from controller.core.ledger import SealedEntry
from controller.core.meter_trail import MeterTrail, TrailState
from controller.paperwork.links import Links
from controller.rules.meter_records import check_retention_not_shortened, check_retention_years
from controller.schedule import ScheduledJob
from controller.storage.errors import StoreError
from controller.storage.handles import Connection, Database
from controller.storage.papers import retention as stored
from controller.storage.papers.retention import LedgerAnchor
from controller.storage.sessions import only_one
from controller.storage.unit_of_work import connected, transaction

log = logging.getLogger(__name__)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_META = {"meter": "retention_meter_years", "integrity": "retention_integrity_years"}


def years_before(at_us: int, years: int) -> int:
    """The same calendar moment ``years`` earlier (29 February falls back to the 28th)."""
    t = _EPOCH + timedelta(microseconds=at_us)
    try:
        earlier = t.replace(year=t.year - years)
    except ValueError:
        earlier = t.replace(year=t.year - years, day=28)
    return (earlier - _EPOCH) // timedelta(microseconds=1)


@dataclass(slots=True)
class RetentionReport:
    meter_years: int
    integrity_years: int
    meter_cutoff_us: int
    integrity_cutoff_us: int
    links: dict[str, dict[str, Any]] = field(default_factory=dict)  # manifest per link
    integrity: dict[str, Any] = field(default_factory=dict)


async def _recorded_periods(conn: Connection) -> dict[str, int]:
    return await stored.recorded_periods(conn, list(_META.values()))


def _check_periods(recorded: dict[str, int], meter_years: int, integrity_years: int) -> None:
    check_retention_years(meter_years=meter_years, integrity_years=integrity_years)
    for name, years in (("meter", meter_years), ("integrity", integrity_years)):
        check_retention_not_shortened(
            name=name, years=years, recorded_years=recorded.get(_META[name])
        )


async def check_periods_in_force(
    engine: Database, *, meter_years: int, integrity_years: int
) -> None:
    """Refuse periods shorter than the regulations' or than the periods already in force.

    The service checks its settings with this when it starts, so a shortened setting is
    refused at once rather than at the next purge.
    """
    async with connected(engine) as conn:
        _check_periods(await _recorded_periods(conn), meter_years, integrity_years)


async def _periods_in_force(runtime: Links, meter_years: int, integrity_years: int) -> None:
    async with transaction(runtime.memory.store.engine) as conn:
        recorded = await _recorded_periods(conn)
        _check_periods(recorded, meter_years, integrity_years)
        for name, years in (("meter", meter_years), ("integrity", integrity_years)):
            key = _META[name]
            if key not in recorded:
                await stored.record_period(conn, key, years)
            elif recorded[key] != years:
                await stored.change_period(conn, key, years)


async def run_retention(
    runtime: Links,
    *,
    meter_years: int,
    integrity_years: int,
    actor: str = "retention",
) -> RetentionReport:
    """Purge what is past its period; returns the manifests written.

    Every process of a floor (controllers, standbys, web processes) runs the schedule; one
    purges at a time, and a process finding another at it leaves it the work
    (``RetentionBusy``)."""
    async with only_one(runtime.memory.store.engine, "retention") as alone:
        if not alone:
            raise RetentionBusy("another process of this floor is purging now")
        await _periods_in_force(runtime, meter_years, integrity_years)
        now = runtime.memory.clock.now_us()
        async with connected(runtime.memory.store.engine) as conn:
            database_now = await stored.database_now_us(conn)
        report = RetentionReport(
            meter_years,
            integrity_years,
            # The database refuses to remove what its own clock says is younger than the
            # period: a controller's clock held ahead of it (at the newest recorded time)
            # never asks it to.
            min(years_before(now, meter_years), years_before(database_now, meter_years)),
            years_before(now, integrity_years),
        )
        for link_id in sorted(runtime.memory.states):
            if (problem := runtime.memory.is_inoperable(link_id)) is not None:
                log.warning("retention: link %s skipped, inoperable: %s", link_id, problem)
                continue
            try:
                manifest = await _purge_link(runtime, link_id, report.meter_cutoff_us, actor)
            except (MetersBroken, HistoryMoved) as exc:
                log.warning("retention: link %s skipped: %s", link_id, exc)
                continue
            if manifest is not None:
                report.links[link_id] = manifest
        report.integrity = await _purge_integrity(runtime, report.integrity_cutoff_us, actor)
        return report


class RetentionPurge:
    """The purge of one floor's links and integrity records (``run_retention``), over the
    links in memory it commits through; built once per running service, and run on its
    schedule (``RetentionJob``) or once, on demand."""

    def __init__(self, runtime: Links) -> None:
        self._runtime = runtime

    async def run(
        self, *, meter_years: int, integrity_years: int, actor: str = "retention"
    ) -> RetentionReport:
        """Purge what is past its period; returns the manifests written."""
        return await run_retention(
            self._runtime, meter_years=meter_years, integrity_years=integrity_years, actor=actor
        )


class RetentionBusy(StoreError):
    """Another process of the floor is running the purge."""


class MetersBroken(StoreError):
    """The history to purge does not say consistently where each meter of its levels stood:
    nothing is purged (the purge would seal a manifest it cannot vouch for)."""


class HistoryMoved(StoreError):
    """Entries to purge moved into a block after the purge read them (the compactor, at the
    same time): nothing is purged now, the next run purges them."""


@dataclass(slots=True)
class _Removed:
    """What the manifest says of the entries a purge removes, taken one at a time as they
    are read (a first purge of years of history is never in memory at once)."""

    first: SealedEntry | None = None
    tail: SealedEntry | None = None
    last_at_us: int = 0
    count: int = 0
    seals: Any = field(default_factory=hashlib.sha256)  # of the removed entries' seals
    corrections: list[str] = field(default_factory=list)

    def take(self, e: SealedEntry) -> None:
        if self.first is None:
            self.first = e
        self.tail = e
        self.count += 1
        self.last_at_us = max(self.last_at_us, e.at_us)
        self.seals.update(e.hash.encode())
        if e.correction_id:
            self.corrections.append(e.correction_id)


async def _purge_link(
    runtime: Links, link_id: str, cutoff_us: int, actor: str
) -> dict[str, Any] | None:
    removed = _Removed()
    async with connected(runtime.memory.store.engine) as conn:
        anchor = await stored.load_anchor(conn, link_id)
        after = anchor.seq if anchor else 0
        young = await stored.first_seq_from(conn, link_id, cutoff_us)
        last_seq = young - 1 if young is not None else await stored.last_seq(conn, link_id)
        if last_seq is None or last_seq <= after:
            return None
        # A block of a closed day goes whole or stays whole: the cut goes back to before one
        # that reaches past it, and a little more than the period is kept (68 IAC 10-6-5(d)
        # asks for at least five years).
        last_seq = await stored.whole_blocks_through(conn, link_id, last_seq)
        if last_seq <= after:
            return None
        trail = await _trail(conn, link_id, anchor)
        async with aclosing(stored.entries_through(conn, link_id, after, last_seq)) as entries:
            async for e in entries:
                removed.take(e)
                if trail is None:
                    continue
                broken = trail.feed(e.seq, e.kind, e.meter_before_units, e.delta_units, e.details)
                if broken is not None:
                    raise MetersBroken(
                        f"link {link_id}, entry {e.seq}: {broken}; nothing purged "
                        "(see ledger verify)"
                    )
    first, tail = removed.first, removed.tail
    if first is None or tail is None:
        return None
    levels = {} if trail is None else TrailState(trail.meters, trail.armed).manifest()
    seals = removed.seals.hexdigest()
    purged_corrections = removed.corrections
    counts: dict[str, int] = {}
    documents: list[str] = []

    async def purge(conn: Connection) -> None:
        counts["meter_entries"] = await stored.delete_entries_through(conn, link_id, last_seq)
        if counts["meter_entries"] != removed.count:
            # What the manifest seals is what was read: it must be what goes.
            raise HistoryMoved(
                f"link {link_id}: {removed.count} entries read up to entry {last_seq}, "
                f"{counts['meter_entries']} there now; purged at the next run"
            )
        counts["hits"] = await stored.delete_hits_before(
            conn, link_id, cutoff_us, kept_after_seq=last_seq
        )
        counts["anomalies"] = await stored.delete_anomalies_before(
            conn, link_id, cutoff_us, kept_after_seq=last_seq
        )
        docs = await stored.correction_documents(conn, purged_corrections)
        docs |= await stored.finished_request_documents(
            conn, link_id, cutoff_us, purged_corrections
        )
        counts["correction_requests"] = await stored.delete_finished_requests(
            conn, link_id, cutoff_us, purged_corrections
        )
        counts["corrections"] = await stored.delete_corrections(conn, purged_corrections)
        candidates = sorted(d for d in docs if d)
        if candidates:
            used = await stored.documents_in_use(conn)
            documents.extend(d for d in candidates if d not in used)
        counts["documents"] = await stored.delete_documents_before(conn, documents, cutoff_us)
        new_anchor = LedgerAnchor(
            seq=tail.seq,
            hash=tail.hash,
            meter_units=tail.meter_after_units,
            purged_at_us=runtime.memory.clock.now_us(),
        )
        await stored.write_anchor(conn, link_id, new_anchor, replacing=anchor is not None)

    manifest: dict[str, Any] = {
        "first_seq": first.seq,
        "last_seq": tail.seq,
        "first_at_us": first.at_us,
        "last_at_us": removed.last_at_us,
        "cutoff_us": cutoff_us,
        "first_prev_hash": first.prev_hash,
        "last_hash": tail.hash,
        "meter_units_at_anchor": tail.meter_after_units,
        "seals_sha256": seals,
        "counts": counts,
        "documents_sha256": documents,
        # A link of levels: where each meter stood at the anchor and each mystery level's
        # last commitment, so verification resumes meter by meter (68 IAC 10-6-5(b)-(c)).
        **levels,
    }
    state = runtime.memory.states.get(link_id)
    if state is not None and state.demonstration:
        # The link's first entry, which said it was opened in demonstration mode, may be among
        # those removed: the manifest says it on (storage.entries.opened_in_demonstration).
        manifest["demonstration"] = True

    def step(s: reducer.LinkState, at: int) -> reducer.Outcome:
        return reducer.record_purge(s, at_us=at, manifest=manifest)

    # One transaction: the deletes run first and fill in the manifest's counts; the manifest
    # entry is sealed after them, so what it says is what was removed.
    await runtime.commands.command(
        link_id,
        step,
        actor=actor,
        action="retention.purge",
        target=f"link:{link_id}",
        extra=purge,
        audit_after={"manifest": manifest},
    )
    return manifest


async def _trail(conn: Connection, link_id: str, anchor: LedgerAnchor | None) -> MeterTrail | None:
    """What follows the meters of a link's levels from where the previous purge left them
    (None: a purge from before meters were kept left them unknown)."""
    start: TrailState | None = TrailState()
    if anchor is not None:
        manifest = await stored.purge_manifest(conn, link_id, anchor.seq)
        start = None if manifest is None else TrailState.from_manifest(manifest)
        if start is None:
            return None
    return MeterTrail(link_id, start, total=anchor.meter_units if anchor else 0)


async def _purge_integrity(runtime: Links, cutoff_us: int, actor: str) -> dict[str, Any]:
    async with connected(runtime.memory.store.engine) as conn:
        rows = await stored.returned_before(conn, cutoff_us)
    if not rows:
        return {}
    ids = [row.record_id for row in rows]
    manifest: dict[str, Any] = {
        "cutoff_us": cutoff_us,
        "records": [
            {
                "record_id": row.record_id,
                "table_id": row.table_id,
                "removed_at_us": row.removed_at_us,
                "returned_at_us": row.returned_at_us,
                "notice_sha256": row.notice_sha256,
            }
            for row in rows
        ],
    }
    now = runtime.memory.clock.now_us()

    async def purge(conn: Connection) -> None:
        manifest["remedial_actions"] = await stored.delete_remedial_actions(conn, ids)
        await stored.delete_integrity_records(conn, ids)

    await runtime.memory.store.commit(
        [],
        extra=purge,
        audit={
            "at_us": now,
            "actor": actor,
            "action": "retention.purge_integrity_records",
            "target": "integrity_records",
            "after": manifest,
        },
    )
    return manifest


class RetentionJob(ScheduledJob):
    """The purge on a schedule: first ``first_run_s`` after ``start()``, then every
    ``interval_s``.

    A purge that fails is logged and tried again at the next run; it never stops the service.
    ``stop()`` lets a purge under way finish (it is one transaction per link) and then ends.
    """

    name = "retention"

    def __init__(
        self,
        purge: RetentionPurge,
        *,
        meter_years: int,
        integrity_years: int,
        first_run_s: float,
        interval_s: float,
    ) -> None:
        super().__init__(first_run_s=first_run_s, interval_s=interval_s)
        self.purge = purge
        self.meter_years = meter_years
        self.integrity_years = integrity_years
        self.runs = 0  # purges attempted, failed ones included
        self.failures = 0
        self.last_report: RetentionReport | None = None
        self._ran = asyncio.Condition()

    async def wait_for_runs(self, runs: int) -> None:
        """Until ``runs`` purges have been attempted since the job started."""
        async with self._ran:
            await self._ran.wait_for(lambda: self.runs >= runs)

    async def run_once(self) -> RetentionReport | None:
        report: RetentionReport | None = None
        try:
            report = await self.purge.run(
                meter_years=self.meter_years, integrity_years=self.integrity_years
            )
        except RetentionBusy:
            log.info("retention purge left to the process running it now")
        except Exception:
            self.failures += 1
            log.exception("the retention purge failed; it runs again in %.0f s", self.interval_s)
        else:
            self.last_report = report
            log.info("retention purge: %s", describe(report))
        async with self._ran:
            self.runs += 1
            self._ran.notify_all()
        return report


def describe(report: RetentionReport) -> str:
    """What a purge removed, in one line for the log."""
    parts = [
        f"link {link_id}: entries {m['first_seq']}-{m['last_seq']} removed {m['counts']}, "
        f"seals sha256 {m['seals_sha256']}"
        for link_id, m in sorted(report.links.items())
    ]
    records = len(report.integrity.get("records", []))
    parts.append(f"{records} integrity record(s) removed")
    if not report.links:
        parts.insert(0, f"nothing older than {report.meter_years} years")
    return "; ".join(parts)
