"""``progressive ledger verify``: walk every link's chain straight from the database.

Reads the entries in (link, sequence) order in large batches and stops each link at its first
bad entry. Beyond the chain itself it checks that each link row ends where its chain ends, that
no entries exist for unknown links, and that every hit paid from a meter has exactly one award
entry (and every award entry a hit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from controller.engine import EntryKind
from controller.ledger import ENTRY_COLUMNS, Anchor, ChainHead, ChainProblem, ChainVerifier
from controller.storage.models import HitRow, LedgerAnchorRow, LinkRow, MeterEntryRow

BATCH = 20_000


@dataclass(slots=True)
class VerifyReport:
    entries: int = 0
    links: dict[str, int] = field(default_factory=dict)  # entries verified per link
    problems: list[ChainProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


async def verify_ledger(
    engine: AsyncEngine,
    key: bytes,
    *,
    link_ids: list[str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> VerifyReport:
    report = VerifyReport()
    cols = [getattr(MeterEntryRow, c) for c in ENTRY_COLUMNS]
    async with engine.connect() as conn:
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
        paid = {
            (r.link_id, r.hit_id)
            for r in await conn.execute(
                select(HitRow.link_id, HitRow.hit_id).where(
                    HitRow.status == "awarded", HitRow.paid_from == "meter"
                )
            )
        }
        wanted = set(link_ids) if link_ids is not None else None
        stmt = select(*cols).order_by(MeterEntryRow.link_id, MeterEntryRow.seq)
        if wanted is not None:
            stmt = stmt.where(MeterEntryRow.link_id.in_(sorted(wanted)))
        awards: set[tuple[str, str]] = set()
        award_kind = str(EntryKind.AWARD)
        current: ChainVerifier | None = None
        seen: set[str] = set()

        def close(v: ChainVerifier) -> None:
            problem = v.finish(heads.get(v.link_id))
            report.links[v.link_id] = v.count
            if v.link_id not in heads:
                report.problems.append(
                    ChainProblem(
                        v.link_id, None, "history exists for a link the database does not have"
                    )
                )
            elif problem is not None:
                report.problems.append(problem)

        result = await conn.stream(stmt.execution_options(yield_per=BATCH))
        async for batch in result.partitions(BATCH):
            for row in batch:
                link_id = row[0]
                if current is None or current.link_id != link_id:
                    if current is not None:
                        close(current)
                    current = ChainVerifier(key, link_id, anchors.get(link_id))
                    seen.add(link_id)
                if current.problem is None:
                    current.feed(row)
                    if row[3] == award_kind and row[5] < 0:
                        awards.add((link_id, row[8]))
            report.entries += len(batch)
            if progress is not None:
                progress(report.entries)
        if current is not None:
            close(current)

    for link_id in heads:
        if link_id not in seen and (wanted is None or link_id in wanted):
            close(ChainVerifier(key, link_id, anchors.get(link_id)))
    broken = {p.link_id for p in report.problems}
    for link_id, hit_id in sorted(paid - awards):
        if link_id not in broken and (wanted is None or link_id in wanted):
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
