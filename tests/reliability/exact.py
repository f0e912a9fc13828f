"""The simulator's own record, folded into totals, against what the database holds.

The same recomputation as ``FloorHarness.check_exact``, kept as figures rather than asserts so
a long run can print them: per table, the contribution units the ledger credited against
``credits x denomination x rate`` from the simulator's rounds; per link, the meter against the
ledger's other entries plus those recomputed contributions; and every hit the simulator dealt
found exactly once among the recorded hits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from controller.core.money import UNITS_PER_CENT, contribution_units
from controller.core.reducer import EntryKind
from link_adapters.simulator.table_types import RoundRecord
from tests.integration.harness import LinkPlan, registered_credits
from tests.reliability.floor_process import RecordPart, summed

DENOMINATION_CENTS = 100  # the floor files' default table denomination, $1

HitKey = tuple[str, int, str]  # table id, the table's hit sequence number, hand name


def table_id(plan: LinkPlan, unit: int) -> str:
    return f"{plan.link_id}-{unit}"


@dataclass
class SimTotals:
    """What the simulated tables dealt: credits per table, every hit, rounds."""

    credits: dict[str, int] = field(default_factory=dict)
    hits: list[HitKey] = field(default_factory=list)
    rounds: int = 0

    def fold(
        self, plans: Iterable[LinkPlan], records: Mapping[tuple[str, int], list[RoundRecord]]
    ) -> None:
        for p in plans:
            for u in range(1, p.tables + 1):
                self.add(table_id(p, u), summed(records[(p.gateway, u)]))

    def add(self, tid: str, part: RecordPart) -> None:
        credits, rounds, hits = part
        self.credits[tid] = self.credits.get(tid, 0) + credits
        self.hits += [(tid, seq, hand) for seq, hand in hits]
        self.rounds += rounds


@dataclass
class Comparison:
    credits: int = 0  # wagers (credits) the simulator recorded and the meter should hold
    table_units_off: dict[str, int] = field(default_factory=dict)  # credited - recomputed
    meter_units_off: dict[str, int] = field(default_factory=dict)  # meter - recomputed
    hits_dealt: int = 0
    hits_recorded: int = 0
    missing: list[HitKey] = field(default_factory=list)
    twice: list[HitKey] = field(default_factory=list)
    unexpected: list[HitKey] = field(default_factory=list)
    anomalies: int = 0
    # For a table that is off: its ledger entries by kind, the evidence to start from.
    kinds_of_off_tables: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def units_off(self) -> int:
        return sum(abs(v) for v in self.table_units_off.values()) + sum(
            abs(v) for v in self.meter_units_off.values()
        )

    @property
    def cents_off(self) -> int:
        """The absolute difference in cents, rounded up: one unit off shows as a cent."""
        return -(-self.units_off // UNITS_PER_CENT)

    @property
    def ok(self) -> bool:
        return (
            self.units_off == 0
            and not self.missing
            and not self.twice
            and not self.unexpected
            and self.anomalies == 0
        )

    def lines(self) -> list[str]:
        out = [
            f"wagers credited: {self.credits} credits",
            f"difference: {self.units_off} units = {self.cents_off} cents",
            f"hits dealt by the simulator: {self.hits_dealt}, recorded: {self.hits_recorded}",
        ]
        for name, values in (("per table", self.table_units_off), ("meter", self.meter_units_off)):
            off = {k: v for k, v in values.items() if v}
            if off:
                out.append(f"OFF {name} (units): {off}")
        for name, keys in (
            ("missing", self.missing),
            ("recorded twice", self.twice),
            ("not dealt", self.unexpected),
        ):
            if keys:
                out.append(f"hits {name}: {keys[:10]}{' ...' if len(keys) > 10 else ''}")
        if self.anomalies:
            out.append(f"anomalies held: {self.anomalies}")
        for tid, kinds in sorted(self.kinds_of_off_tables.items()):
            out.append(f"entries of {tid} by kind: {kinds}")
        return out


async def compare(engine: AsyncEngine, plans: Iterable[LinkPlan], sim: SimTotals) -> Comparison:
    # Imported here so this module's import does not drag the table models into a CLI's start.
    from controller.storage.models import HitRow, MeterEntryRow

    m = MeterEntryRow
    c = Comparison(credits=sum(sim.credits.values()), hits_dealt=len(sim.hits))
    async with engine.connect() as conn:
        for p in plans:
            recomputed_link = 0
            for u in range(1, p.tables + 1):
                tid = table_id(p, u)
                credited = await conn.scalar(
                    select(func.coalesce(func.sum(m.delta_units), 0)).where(
                        m.table_id == tid, m.kind == str(EntryKind.CONTRIBUTION)
                    )
                )
                if p.fixed_pay:
                    # A fixed-pay link credits no meter: it registers the bets (10-7-5(b)).
                    registered = await registered_credits(conn, tid)
                    off = registered - sim.credits.get(tid, 0)
                    c.table_units_off[tid] = int(credited or 0) + off * DENOMINATION_CENTS
                    continue
                recomputed = contribution_units(
                    credits=sim.credits.get(tid, 0),
                    denomination_cents=DENOMINATION_CENTS,
                    rate_bp=p.rate_bp,
                )
                recomputed_link += recomputed
                c.table_units_off[tid] = int(credited or 0) - recomputed
            others = await conn.scalar(
                select(func.coalesce(func.sum(m.delta_units), 0)).where(
                    m.link_id == p.link_id, m.kind != str(EntryKind.CONTRIBUTION)
                )
            )
            meter = await conn.scalar(
                select(m.meter_after_units)
                .where(m.link_id == p.link_id)
                .order_by(m.seq.desc())
                .limit(1)
            )
            c.meter_units_off[p.link_id] = int(meter or 0) - (int(others or 0) + recomputed_link)
        rows = (await conn.execute(select(HitRow.table_id, HitRow.table_seq, HitRow.hand))).all()
        c.anomalies = int(
            await conn.scalar(select(func.count()).where(m.kind == str(EntryKind.ANOMALY_HELD)))
            or 0
        )
        for tid in [t for t, off in c.table_units_off.items() if off]:
            by_kind = await conn.execute(
                select(m.kind, func.count()).where(m.table_id == tid).group_by(m.kind)
            )
            c.kinds_of_off_tables[tid] = {str(k): int(n) for k, n in by_kind.all()}
    recorded = Counter((r.table_id, int(r.table_seq or 0), r.hand) for r in rows)
    dealt = Counter(sim.hits)
    c.hits_recorded = sum(recorded.values())
    c.missing = sorted((dealt - recorded).elements())
    c.unexpected = sorted((recorded - dealt).elements())
    c.twice = sorted(k for k, n in recorded.items() if n > 1)
    return c
