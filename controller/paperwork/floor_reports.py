"""A link's report for a gaming day or a shift: the meter's opening and closing, the
contributions by table, the hits (hand, cards, amount, level), the reductions with their
reasons and a fixed-pay link's bets registered, exact to the unit (1/10,000 cent).

The meter's terms are the reconciliation's (``controller.paperwork.reconciliation``): one
computation, whatever prints it. ``floor_report`` reads what a report holds; the documents
(PDF, CSV, JSON) are written by ``controller.paperwork.report_documents``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.paperwork import reconciliation
from controller.paperwork.jobs import Job
from controller.paperwork.reconciliation import Reconciliation
from controller.periods import FloorPeriod
from controller.storage.handles import Database
from controller.storage.hits import HitRecord, Hits
from controller.storage.papers import export as stored
from controller.storage.papers.export import Reduction
from controller.storage.unit_of_work import connected

__all__ = ["BATCH", "FloorReport", "floor_report", "report_title"]

BATCH = 1_000  # hits and reductions read at a time (a day has a few)


@dataclass(frozen=True, slots=True)
class FloorReport:
    """What a gaming day's (or a shift's) report of one link holds."""

    link_id: str
    link_name: str
    period: FloorPeriod
    total: Reconciliation  # the meter's terms, to the unit
    hits: list[HitRecord] = field(default_factory=list)  # by time
    reductions: list[Reduction] = field(default_factory=list)  # by sequence
    level_names: dict[str, str] = field(default_factory=dict)  # "L1": "Grand", where loaded
    anchors: list[str] = field(default_factory=list)  # the history's head, on paper

    @property
    def title(self) -> str:
        return report_title(self.period, self.link_name)


def report_title(period: FloorPeriod, link_name: str) -> str:
    day = period.day.strftime("%d %b %Y")
    if period.shift is None:
        return f"Gaming day report, {day}: {link_name}"
    return f"Shift report, shift {period.shift} of gaming day {day}: {link_name}"


async def floor_report(
    engine: Database,
    link_id: str,
    period: FloorPeriod,
    *,
    link_name: str,
    level_names: dict[str, str] | None = None,
    job: Job | None = None,
) -> FloorReport:
    """The report of ``link_id`` for ``period``: the reconciliation of its meter (the same
    computation the auditors' reconciliation makes), its hits and its reductions."""
    total, _ = await reconciliation.reconciliation(
        engine, link_id, period.since_us, period.until_us, job=job
    )
    hits: list[HitRecord] = []
    reductions: list[Reduction] = []
    scope = stored.Scope(link_id=link_id, since_us=period.since_us, until_us=period.until_us)
    async with connected(engine) as conn:
        async for batch in Hits(conn).in_period(
            since_us=period.since_us, until_us=period.until_us, link_id=link_id, batch=BATCH
        ):
            hits.extend(batch)
        async for rows in stored.reduction_batches(conn, scope=scope, batch=BATCH):
            reductions.extend(rows)
    head = await reconciliation.chain_head(engine, link_id)
    return FloorReport(
        link_id=link_id,
        link_name=link_name,
        period=period,
        total=total,
        hits=hits,
        reductions=reductions,
        level_names=dict(level_names or {}),
        anchors=[f"Chain head when printed: entry {head[0]}, seal {head[1]}"],
    )
