"""Game protection's reads of the history and its record of alerts.

What the watch reads (``seen_after``): the entries of a link's history that record side bets
(contributions, registered bets) and hits, each hit with its claim's seat, hand and cards,
in the order of the chain, a batch at a time. Where to start (``first_seq_at``): the first
entry at or after a moment (its times never go back along a chain). Side bets are read from
rows and from the blocks of closed days alike (``Entries.read``); hits are rows alone.

Its alerts are records (``protection_alerts``, ``protection_alert_closings``): written once,
never edited (the database refuses it, migration 0012). The same alert raised by two
controllers at one look (a standby and the active) is written once: its id is its content's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy import Executable, Table, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.ledger import SealedEntry
from controller.storage.audit import write_audit
from controller.storage.codec import cards_of
from controller.storage.entries import Entries, Stretch
from controller.storage.handles import Database
from controller.storage.models import (
    HitRow,
    MeterEntryRow,
    ProtectionAlertClosingRow,
    ProtectionAlertRow,
    table_of,
)
from controller.storage.typed_rows import columns
from controller.storage.unit_of_work import connected, transaction

__all__ = [
    "AlertClosing",
    "AlertRecord",
    "ProtectionRecords",
    "SeenRow",
]

ALERTS = table_of(ProtectionAlertRow)
CLOSINGS = table_of(ProtectionAlertClosingRow)
# The kinds of entry that record side bets, and those that record a hit.
BET_KINDS = ("contribution", "bets_registered")
HIT_KINDS = ("award", "paid_at_table", "hit_refused")
_SEEN_KINDS = frozenset((*BET_KINDS, *HIT_KINDS))


class SeenRow(NamedTuple):
    link_id: str
    seq: int
    at_us: int
    kind: str
    table_id: str | None
    hit_id: str | None
    details: str
    seat: int | None
    hand: str | None
    cards: tuple[int, ...] | None
    source: str | None
    hit_kind: str | None


class AlertRecord(NamedTuple):
    alert_id: str
    at_us: int
    scope: str
    subject: str
    link_id: str | None
    table_id: str | None
    seat: int | None
    dealer: str | None
    game: str
    line: str
    line_label: str
    window: str
    since_us: int
    observed: int
    trials: int
    expected: str
    direction: str
    p_value: float
    threshold: float
    closed_at_us: int | None = None


class AlertClosing(NamedTuple):
    alert_id: str
    at_us: int
    observed: int
    trials: int
    expected: str
    p_value: float


_a = ProtectionAlertRow
_ALERT = columns(
    AlertRecord,
    _a.alert_id, _a.at_us, _a.scope, _a.subject, _a.link_id, _a.table_id, _a.seat, _a.dealer,
    _a.game, _a.line, _a.line_label, _a.window, _a.since_us, _a.observed, _a.trials,
    _a.expected, _a.direction, _a.p_value, _a.threshold,
    ProtectionAlertClosingRow.at_us.label("closed_at_us"),
)  # fmt: skip


def _seen_row(e: SealedEntry) -> tuple[Any, ...]:
    """An entry of a block as ``seen_after`` selects a row: it names no hit."""
    return (e.link_id, e.seq, e.at_us, e.kind, e.table_id, None, e.details, *(None,) * 5)


def _bet_row(e: SealedEntry) -> tuple[Any, ...]:
    return (e.link_id, e.seq, e.table_id, e.details)


def _insert_once(conn: AsyncConnection, table: Table, rows: Sequence[dict[str, Any]]) -> Executable:
    if conn.dialect.name == "postgresql":
        return pg_insert(table).values(rows).on_conflict_do_nothing()
    return sqlite_insert(table).values(rows).on_conflict_do_nothing()


class ProtectionRecords:
    """Game protection's reads and records, each on a connection of its own."""

    def __init__(self, engine: Database) -> None:
        self.engine = engine

    async def seen_after(self, link_id: str, after_seq: int, limit: int) -> list[SeenRow]:
        """The link's entries of side bets and hits after ``after_seq``, in order, at most
        ``limit``; with each hit its claim."""
        e, h = MeterEntryRow, HitRow
        statement = (
            select(
                e.link_id,
                e.seq,
                e.at_us,
                e.kind,
                e.table_id,
                e.hit_id,
                e.details,
                h.seat,
                h.hand,
                h.cards,
                h.source,
                h.kind,
            )
            .select_from(e)
            .outerjoin(h, h.hit_id == e.hit_id)
        )
        stretch = Stretch(link_id=link_id, after_seq=after_seq, kinds=_SEEN_KINDS)
        async with connected(self.engine) as conn:
            lines = Entries(conn).read(statement, stretch, shape=_seen_row, limit=limit)
            rows = [r async for batch in lines for r in batch]
        return [SeenRow._make((*r[:9], cards_of(r[9] or ""), *r[10:])) for r in rows]

    async def bets_in(
        self, link_ids: Sequence[str], since_us: int, until_us: int
    ) -> list[tuple[str, str]]:
        """(table id, details) of every entry of side bets in ``[since_us, until_us)``."""
        e = MeterEntryRow
        statement = select(e.link_id, e.seq, e.table_id, e.details)
        out: list[tuple[str, str]] = []
        async with connected(self.engine) as conn:
            entries = Entries(conn)
            for link_id in link_ids:
                stretch = Stretch(
                    link_id=link_id,
                    since_us=since_us,
                    until_us=until_us,
                    kinds=frozenset(BET_KINDS),
                )
                async for rows in entries.read(statement, stretch, shape=_bet_row):
                    out += [(r[2], r[3]) for r in rows if r[2] is not None]
        return out

    async def paid_in(
        self, link_ids: Sequence[str], since_us: int, until_us: int
    ) -> list[tuple[str, int]]:
        """(table id, cents) of every award paid in ``[since_us, until_us)``."""
        h = HitRow
        async with connected(self.engine) as conn:
            rows = await conn.execute(
                select(h.table_id, h.award_cents).where(
                    h.link_id.in_(list(link_ids)),
                    h.at_us >= since_us,
                    h.at_us < until_us,
                    h.status == "awarded",
                )
            )
            return [(r[0], int(r[1])) for r in rows]

    async def head(self, link_id: str) -> int:
        """The link's last sequence number (0: no history)."""
        async with connected(self.engine) as conn:
            ends = await Entries(conn).ends([link_id])
        return ends.get(link_id, 0)

    async def first_seq_at(self, link_id: str, at_us: int) -> int:
        """The sequence number before the link's first entry at or after ``at_us`` (the last
        when none is; 0: no history)."""
        async with connected(self.engine) as conn:
            entries = Entries(conn)
            first = await entries.first_at(link_id, at_us)
            if first is None:
                return (await entries.ends([link_id])).get(link_id, 0)
            return first - 1

    async def raise_alerts(
        self, alerts: Sequence[AlertRecord], *, at_us: int, actor: str
    ) -> list[str]:
        """Write the alerts not already written, each with an audit-log row; the ids written."""
        if not alerts:
            return []
        ids = [a.alert_id for a in alerts]
        async with transaction(self.engine) as conn:
            known = set(
                (await conn.execute(select(_a.alert_id).where(_a.alert_id.in_(ids)))).scalars()
            )
            new = [a for a in alerts if a.alert_id not in known]
            if not new:
                return []
            rows = [{k: v for k, v in a._asdict().items() if k != "closed_at_us"} for a in new]
            await conn.execute(_insert_once(conn, ALERTS, rows))
            for a in new:
                await write_audit(
                    conn,
                    at_us=at_us,
                    actor=actor,
                    action="protection_alert_raised",
                    target=a.alert_id,
                    after={
                        "subject": a.subject,
                        "line": a.line,
                        "window": a.window,
                        "observed": a.observed,
                        "expected": a.expected,
                        "p_value": a.p_value,
                    },
                )
        return [a.alert_id for a in new]

    async def close_alerts(
        self, closings: Sequence[AlertClosing], *, at_us: int, actor: str
    ) -> list[str]:
        """Close the alerts not already closed, each with an audit-log row."""
        if not closings:
            return []
        ids = [c.alert_id for c in closings]
        async with transaction(self.engine) as conn:
            known = set(
                (
                    await conn.execute(
                        select(CLOSINGS.c.alert_id).where(CLOSINGS.c.alert_id.in_(ids))
                    )
                ).scalars()
            )
            new = [c for c in closings if c.alert_id not in known]
            if not new:
                return []
            await conn.execute(_insert_once(conn, CLOSINGS, [c._asdict() for c in new]))
            for c in new:
                await write_audit(
                    conn,
                    at_us=at_us,
                    actor=actor,
                    action="protection_alert_closed",
                    target=c.alert_id,
                    after={"observed": c.observed, "expected": c.expected, "p_value": c.p_value},
                )
        return [c.alert_id for c in new]

    async def alerts(self, *, since_us: int | None = None, limit: int = 1000) -> list[AlertRecord]:
        """The open alerts, most unlikely first; with ``since_us``, also those closed since
        then (newest raised first)."""
        c = ProtectionAlertClosingRow
        statement = select(*_ALERT).select_from(_a).outerjoin(c, c.alert_id == _a.alert_id)
        if since_us is None:
            statement = statement.where(c.alert_id.is_(None)).order_by(_a.p_value, _a.at_us)
        else:
            statement = statement.where(c.alert_id.is_(None) | (c.at_us >= since_us)).order_by(
                _a.at_us.desc()
            )
        async with connected(self.engine) as conn:
            rows = (await conn.execute(statement.limit(limit))).all()
        return [AlertRecord._make(r) for r in rows]
