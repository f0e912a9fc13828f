"""Reconciliation of a link's meter for auditors, for any period.

    opening meter + contributions by table (credits x denomination x rate) + reset amounts
    seeded + approved anomalies - awards paid + corrections = closing meter

to the unit (1/10,000 cent). Each contribution is recomputed from the credits, denomination and
rate it records, so an amount that does not follow from its credits shows up as a difference;
so does a history whose entries do not follow on from each other. Anything that does not add
up is listed in ``problems``; ``balanced`` is true only when there are none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from controller.engine import EntryKind
from controller.money import UNITS_PER_CENT, contribution_units, displayed_cents
from controller.storage.models import HitRow, LinkRow, MeterEntryRow
from controller.storage.store import StoreError

WEEK_US = 7 * 86_400 * 1_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Entry:
    """What reconciliation reads of one history entry."""

    seq: int
    at_us: int
    kind: str
    meter_before_units: int
    delta_units: int
    meter_after_units: int
    table_id: str | None
    details: str


@dataclass(slots=True)
class TableLine:
    table_id: str
    credits: int = 0
    units: int = 0  # recomputed: credits x denomination x rate


@dataclass(slots=True)
class Reconciliation:
    link_id: str
    since_us: int
    until_us: int
    opening_units: int
    closing_units: int
    tables: dict[str, TableLine] = field(default_factory=dict)
    seeded_units: int = 0  # the link opened, jackpot resets
    anomalies_approved_units: int = 0
    awards_units: int = 0  # paid from the meter, as a positive amount
    corrections_units: int = 0
    other_units: int = 0
    entries: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def contributions_units(self) -> int:
        return sum(t.units for t in self.tables.values())

    @property
    def expected_closing_units(self) -> int:
        return (
            self.opening_units
            + self.contributions_units
            + self.seeded_units
            + self.anomalies_approved_units
            - self.awards_units
            + self.corrections_units
            + self.other_units
        )

    @property
    def difference_units(self) -> int:
        return self.closing_units - self.expected_closing_units

    @property
    def balanced(self) -> bool:
        return self.difference_units == 0 and not self.problems


_SEEDS = {str(EntryKind.LINK_OPENED), str(EntryKind.JACKPOT_RESET)}


def reconcile(
    link_id: str, since_us: int, until_us: int, opening_units: int, entries: Sequence[Entry]
) -> Reconciliation:
    """The reconciliation of ``entries`` (the period's, in sequence order) from ``opening``."""
    closing = entries[-1].meter_after_units if entries else opening_units
    r = Reconciliation(link_id, since_us, until_us, opening_units, closing, entries=len(entries))
    meter = opening_units
    for e in entries:
        if e.meter_before_units != meter:
            r.problems.append(
                f"entry {e.seq}: starts from {e.meter_before_units} units, the meter stood at "
                f"{meter}"
            )
        if e.meter_after_units != e.meter_before_units + e.delta_units:
            r.problems.append(f"entry {e.seq}: its amounts do not add up")
        meter = e.meter_after_units
        if e.kind == EntryKind.CONTRIBUTION:
            d = json.loads(e.details)
            units = contribution_units(
                credits=d["credits"],
                denomination_cents=d["denomination_cents"],
                rate_bp=d["rate_bp"],
            )
            line = r.tables.setdefault(e.table_id or "?", TableLine(e.table_id or "?"))
            line.credits += d["credits"]
            line.units += units
            if units != e.delta_units:
                r.problems.append(
                    f"entry {e.seq}: table {e.table_id} credited {e.delta_units} units; "
                    f"{d['credits']} credits x {d['denomination_cents']}c x {d['rate_bp']} bp "
                    f"is {units}"
                )
        elif e.kind in _SEEDS:
            r.seeded_units += e.delta_units
        elif e.kind == EntryKind.ANOMALY_APPROVED:
            r.anomalies_approved_units += e.delta_units
        elif e.kind == EntryKind.AWARD:
            r.awards_units -= e.delta_units
        elif e.kind == EntryKind.CORRECTION:
            r.corrections_units += e.delta_units
        else:
            r.other_units += e.delta_units
    if r.difference_units:
        r.problems.append(
            f"DIFFERENCE: the closing meter is {r.closing_units} units, the terms add up to "
            f"{r.expected_closing_units} ({r.difference_units:+d} units)"
        )
    return r


def week_start_us(at_us: int) -> int:
    """Monday 00:00 UTC of the week holding ``at_us``."""
    day = (_EPOCH + timedelta(microseconds=at_us)).date()
    monday = datetime(day.year, day.month, day.day, tzinfo=UTC) - timedelta(days=day.weekday())
    return (monday - _EPOCH) // timedelta(microseconds=1)


def weekly(
    link_id: str, since_us: int, until_us: int, opening_units: int, entries: Sequence[Entry]
) -> list[Reconciliation]:
    """The weekly meter report: one reconciliation per calendar week (Monday, UTC)."""
    weeks: list[Reconciliation] = []
    start = since_us
    i = 0
    opening = opening_units
    while start < until_us:
        end = min(until_us, week_start_us(start) + WEEK_US)
        j = i
        while j < len(entries) and entries[j].at_us < end:
            j += 1
        week = reconcile(link_id, start, end, opening, entries[i:j])
        weeks.append(week)
        opening, i, start = week.closing_units, j, end
    return weeks


# ----------------------------------------------------------------------------- reading


async def load(
    engine: AsyncEngine, link_id: str, since_us: int, until_us: int
) -> tuple[int, list[Entry], int]:
    """The opening meter, the period's entries and the awards the hits record (units)."""
    m = MeterEntryRow
    async with engine.connect() as conn:
        if await conn.scalar(select(LinkRow.link_id).where(LinkRow.link_id == link_id)) is None:
            raise StoreError(f"no link {link_id!r}")
        before = (
            await conn.execute(
                select(m.meter_after_units)
                .where(m.link_id == link_id, m.at_us < since_us)
                .order_by(m.seq.desc())
                .limit(1)
            )
        ).scalar_one_or_none()
        rows = await conn.execute(
            select(
                m.seq, m.at_us, m.kind, m.meter_before_units, m.delta_units,
                m.meter_after_units, m.table_id, m.details,
            )
            .where(m.link_id == link_id, m.at_us >= since_us, m.at_us < until_us)
            .order_by(m.seq)
        )  # fmt: skip
        entries = [Entry(*r) for r in rows]
        paid = await conn.scalar(
            select(func.coalesce(func.sum(HitRow.award_cents), 0)).where(
                HitRow.link_id == link_id,
                HitRow.status == "awarded",
                HitRow.paid_from == "meter",
                HitRow.at_us >= since_us,
                HitRow.at_us < until_us,
            )
        )
    opening = before if before is not None else 0
    return opening, entries, int(paid or 0) * UNITS_PER_CENT


async def reconciliation(
    engine: AsyncEngine, link_id: str, since_us: int, until_us: int
) -> tuple[Reconciliation, list[Reconciliation]]:
    """The period's reconciliation and its weekly report, cross-checked against the hits."""
    opening, entries, hits_units = await load(engine, link_id, since_us, until_us)
    total = reconcile(link_id, since_us, until_us, opening, entries)
    if hits_units != total.awards_units:
        total.problems.append(
            f"DIFFERENCE: the hits record {displayed_cents(hits_units)} cents paid from the "
            f"meter, the history {displayed_cents(total.awards_units)} cents"
        )
    return total, weekly(link_id, since_us, until_us, opening, entries)


async def chain_head(engine: AsyncEngine, link_id: str) -> tuple[int, str]:
    """The link's history head (sequence number, seal) as the database records it now."""
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                select(LinkRow.last_seq, LinkRow.last_hash).where(LinkRow.link_id == link_id)
            )
        ).one_or_none()
    if row is None:
        raise StoreError(f"no link {link_id!r}")
    return int(row.last_seq), str(row.last_hash)


def anchor_lines(head: tuple[int, str], signed: tuple[int, str, str] | None) -> list[str]:
    """The head and the last signed checkpoint ((seq, seal, when) or None), for paper: a
    printed report anchors the history too, where no database restore can reach it."""
    out = [f"Chain head: entry {head[0]}, seal {head[1]}"]
    if signed is None:
        out.append("Last signed checkpoint: none (this controller signs no checkpoints)")
    else:
        out.append(
            f"Last signed checkpoint: entry {signed[0]}, seal {signed[1]}, signed {signed[2]}"
        )
    return out


def summary(r: Reconciliation) -> dict[str, Any]:
    """For people and exports: cents, with the exact units beside each amount."""

    def amount(name: str, units: int) -> dict[str, int]:
        return {f"{name}_cents": displayed_cents(units), f"{name}_units": units}

    return {
        "link_id": r.link_id,
        "since_us": r.since_us,
        "until_us": r.until_us,
        **amount("opening", r.opening_units),
        **amount("contributions", r.contributions_units),
        **amount("seeded", r.seeded_units),
        **amount("anomalies_approved", r.anomalies_approved_units),
        **amount("awards_paid", r.awards_units),
        **amount("corrections", r.corrections_units),
        **amount("other", r.other_units),
        **amount("expected_closing", r.expected_closing_units),
        **amount("closing", r.closing_units),
        "difference_units": r.difference_units,
        "balanced": r.balanced,
        "entries": r.entries,
        "problems": list(r.problems),
        "tables": [
            {
                "table_id": t.table_id,
                "credits": t.credits,
                **amount("contributions", t.units),
            }
            for t in sorted(r.tables.values(), key=lambda t: t.table_id)
        ],
    }
