"""Hits as stored: the one list of a hit row's columns, written from the reducer's hits and
read back as ``StoredHit``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from sqlalchemy import Select, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.reducer import Hit
from controller.storage.codec import cards_text
from controller.storage.models import HitRow, table_of

__all__ = ["HIT_COLUMNS", "Hits", "StoredHit", "stored_hit"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredHit:
    """A row of ``hits``: the hit as taken (never changed) and the technician's later marks."""

    hit_id: str
    link_id: str
    table_id: str
    table_seq: int | None
    seat: int
    hand: str  # a HandCategory's name
    round: int
    cards: str | None  # as the table reported them, comma-separated codes
    source: str
    status: str
    award_cents: int
    paid_from: str | None
    settlement_group: str
    settlement_order: int
    policy: str
    refusal: str | None
    entered_by: str | None
    at_us: int
    verified_by: str | None = None
    verified_at_us: int | None = None
    verified_cards: str | None = None
    released_by: str | None = None
    released_at_us: int | None = None
    hand_paid_by: str | None = None
    hand_paid_at_us: int | None = None
    hand_paid_cents: int | None = None


HIT_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(StoredHit))
HITS = table_of(HitRow)
_SELECT = [HITS.c[c] for c in HIT_COLUMNS]


def stored_hit(h: Hit) -> StoredHit:
    """The row a hit is written as."""
    return StoredHit(
        hit_id=h.hit_id,
        link_id=h.link_id,
        table_id=h.table_id,
        table_seq=h.claim.table_seq,
        seat=h.claim.seat,
        hand=h.claim.hand.name,
        round=h.claim.round,
        cards=cards_text(h.claim.cards),
        source=h.source,
        status=h.status,
        award_cents=h.award_cents,
        paid_from=h.paid_from,
        settlement_group=h.settlement_group,
        settlement_order=h.settlement_order,
        policy=str(h.policy),
        refusal=h.refusal,
        entered_by=h.entered_by,
        at_us=h.at_us,
    )


def _values(s: StoredHit) -> dict[str, Any]:
    return {c: getattr(s, c) for c in HIT_COLUMNS}


def _pending(q: Select[Any]) -> Select[Any]:
    # Work left for a technician: a table held for the hit not yet reset, or a payout made at
    # the table not yet recorded.
    return q.where(
        HitRow.released_by.is_(None),
        or_(
            HitRow.paid_from == "meter",
            HitRow.status == "refused",
            HitRow.hand_paid_by.is_(None),
        ),
    )


class Hits:
    """The hits, read and written through one connection."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    async def add(self, hits: Sequence[Hit]) -> None:
        if hits:
            await self.conn.execute(HITS.insert(), [_values(stored_hit(h)) for h in hits])

    async def _all(self, q: Select[Any]) -> list[StoredHit]:
        return [StoredHit(**row._mapping) for row in await self.conn.execute(q)]

    async def paid_from_meter(self) -> set[tuple[str, str]]:
        """Every hit awarded from a meter, as (link, hit)."""
        rows = await self.conn.execute(
            select(HitRow.link_id, HitRow.hit_id).where(
                HitRow.status == "awarded", HitRow.paid_from == "meter"
            )
        )
        return {(lid, hid) for lid, hid in rows}

    async def get(self, hit_id: str) -> StoredHit | None:
        found = await self._all(select(*_SELECT).where(HITS.c.hit_id == hit_id))
        return found[0] if found else None

    async def of_link(self, link_id: str) -> list[StoredHit]:
        """The link's hits, newest first."""
        return await self._all(
            select(*_SELECT).where(HITS.c.link_id == link_id).order_by(HITS.c.at_us.desc())
        )

    async def unverified(self, table_id: str) -> list[StoredHit]:
        """The awards a held table waits on before it may be reset, oldest first."""
        return await self._all(
            select(*_SELECT)
            .where(
                HitRow.table_id == table_id,
                HitRow.released_by.is_(None),
                HitRow.status == "awarded",
                HitRow.paid_from == "meter",
                HitRow.verified_by.is_(None),
            )
            .order_by(HitRow.at_us, HitRow.hit_id)
        )

    async def page(
        self,
        *,
        link_id: str | None = None,
        table_id: str | None = None,
        pending: bool = False,
        limit: int = 200,
    ) -> list[StoredHit]:
        """Hits newest first (of a link, of a table, only those a technician still owes)."""
        q: Select[Any] = select(*_SELECT)
        if link_id is not None:
            q = q.where(HitRow.link_id == link_id)
        if table_id is not None:
            q = q.where(HitRow.table_id == table_id)
        if pending:
            q = _pending(q)
        return await self._all(
            q.order_by(HitRow.at_us.desc(), HitRow.settlement_order.desc()).limit(limit)
        )
