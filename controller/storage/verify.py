"""``progressive ledger verify``: walk every link's chain straight from the database.

Each chain is cut into segments by sequence number; a segment is checked on its own, starting
from the entry just before it, so segments can be checked in parallel processes (a chain is
whole when every segment is). Rows are read with the database's own driver in large batches.
Beyond the chains it checks that each link row ends where its chain ends, that no history
exists for unknown links, and that every hit paid from a meter has exactly one award entry
(and every award entry a paid hit).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from controller.ledger import Anchor, ChainHead, ChainProblem, ChainVerifier
from controller.storage.models import HitRow, LedgerAnchorRow, LinkRow, MeterEntryRow
from controller.storage.scan import Segment, SegmentResult, check_segment

SEGMENT = 100_000  # entries per unit of parallel work
PARALLEL_FROM = 150_000  # below this, starting worker processes costs more than it saves


@dataclass(slots=True)
class VerifyReport:
    entries: int = 0
    links: dict[str, int] = field(default_factory=dict)  # entries verified per link
    problems: list[ChainProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _driver_target(url: URL, search_path: str | None) -> tuple[str, dict[str, Any]]:
    if url.get_backend_name() == "sqlite":
        return "sqlite", {"path": url.database}
    query = {k: v for k, v in url.query.items() if k != "search_path"}
    dsn = url.set(drivername="postgresql", query=query).render_as_string(hide_password=False)
    return "postgresql", {"dsn": dsn, "server_settings": {"search_path": search_path or "public"}}


# ----------------------------------------------------------------------------- the walk


async def verify_ledger(
    engine: AsyncEngine,
    key: bytes,
    *,
    link_ids: list[str] | None = None,
    progress: Callable[[int], None] | None = None,
    workers: int | None = None,
) -> VerifyReport:
    report = VerifyReport()
    async with engine.connect() as conn:
        # Heads, extents and paid hits from one snapshot, so a controller committing while
        # this runs is seen either wholly or not at all; the walk stops at those heads.
        if conn.dialect.name == "postgresql":
            await conn.execution_options(isolation_level="REPEATABLE READ")
        else:
            await conn.exec_driver_sql("BEGIN")
        search_path = (
            await conn.scalar(text("SELECT current_setting('search_path')"))
            if conn.dialect.name == "postgresql"
            else None
        )
        heads = {
            r.link_id: ChainHead(r.last_seq, r.last_hash, r.meter_units)
            for r in await conn.execute(
                select(LinkRow.link_id, LinkRow.last_seq, LinkRow.last_hash, LinkRow.meter_units)
            )
        }
        anchors = {
            r.link_id: Anchor(r.seq, r.hash, r.meter_units)
            for r in await conn.execute(select(LedgerAnchorRow))
        }
        m = MeterEntryRow
        extents = {
            r.link_id: (r.lo, r.hi)
            for r in await conn.execute(
                select(
                    m.link_id, func.min(m.seq).label("lo"), func.max(m.seq).label("hi")
                ).group_by(m.link_id)
            )
        }
        paid = {
            (r.link_id, r.hit_id)
            for r in await conn.execute(
                select(HitRow.link_id, HitRow.hit_id).where(
                    HitRow.status == "awarded", HitRow.paid_from == "meter"
                )
            )
        }
    wanted = set(link_ids) if link_ids is not None else set(heads) | set(extents)

    segments: list[Segment] = []
    for link_id in sorted(wanted):
        anchor = anchors.get(link_id)
        first = anchor.seq + 1 if anchor else 1
        last = max(
            extents.get(link_id, (first, first - 1))[1],
            heads[link_id].last_seq if link_id in heads else 0,
        )
        if link_id in extents and extents[link_id][0] < first:
            first = extents[link_id][0]  # entries older than the anchor: check them too
            anchor = None
        lo = first
        while lo <= last:
            hi = min(last, lo + SEGMENT - 1)
            segments.append(Segment(link_id, lo, hi, anchor if lo == first else None, lo == first))
            lo = hi + 1

    kind, target = _driver_target(engine.url, search_path)
    total = sum(s.hi - s.lo + 1 for s in segments)
    n_workers = workers if workers is not None else min(os.cpu_count() or 1, 4)
    results: list[SegmentResult] = []
    if n_workers > 1 and total >= PARALLEL_FROM and len(segments) > 1:
        # A fork server started clean (no threads, no open connections) forks the workers,
        # with the light scanning module already imported.
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["controller.storage.scan"])
        loop = asyncio.get_running_loop()
        with ProcessPoolExecutor(max_workers=n_workers, mp_context=ctx) as pool:
            futures = [
                loop.run_in_executor(pool, check_segment, kind, target, key, seg)
                for seg in segments
            ]
            try:
                for fut in asyncio.as_completed(futures):
                    results.append(await fut)
                    report.entries += results[-1].count
                    if progress is not None:
                        progress(report.entries)
            except BaseException:
                for f in futures:
                    f.cancel()
                await asyncio.gather(*futures, return_exceptions=True)
                raise
    else:
        # A thread of our own, gone when we return (the PostgreSQL reader runs its own loop).
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-verify") as thread:
            for seg in segments:
                results.append(
                    await loop.run_in_executor(thread, check_segment, kind, target, key, seg)
                )
                report.entries += results[-1].count
                if progress is not None:
                    progress(report.entries)

    by_link: dict[str, list[SegmentResult]] = {}
    for r in results:
        by_link.setdefault(r.segment.link_id, []).append(r)
    awards: set[tuple[str, str]] = set()
    for link_id in sorted(wanted):
        parts = sorted(by_link.get(link_id, []), key=lambda r: r.segment.lo)
        report.links[link_id] = sum(r.count for r in parts)
        for r in parts:
            awards.update((link_id, h) for h in r.awards)
        problem = next((r.problem for r in parts if r.problem is not None), None)
        if problem is None and link_id not in heads:
            problem = ChainProblem(
                link_id, None, "history exists for a link the database does not have"
            )
        if problem is None:
            end = parts[-1].end if parts else anchors.get(link_id)
            v = ChainVerifier(key, link_id, end)
            problem = v.finish(heads[link_id])
        if problem is not None:
            report.problems.append(problem)

    broken = {p.link_id for p in report.problems}
    for link_id, hit_id in sorted(paid - awards):
        if link_id in wanted and link_id not in broken:
            report.problems.append(
                ChainProblem(
                    link_id, None, f"hit {hit_id} was paid from the meter but has no award entry"
                )
            )
    for link_id, hit_id in sorted(awards - paid):
        if link_id not in broken:
            report.problems.append(
                ChainProblem(
                    link_id, None, f"award entry for hit {hit_id} has no matching paid hit"
                )
            )
    return report
