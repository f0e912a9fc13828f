"""Hits as stored: the one record of a hit row (``HitRecord``) and its one list of columns,
and ``Hits``, the one home of the hits' SQL.

A hit is written once from the reducer's hit; the technician's marks are filled in later,
each once: the verification, the second signature, the hand pay, the tax form's reference,
the reset of the table (``released``). What a held table waits on before it may be reset is
defined once, by ``_unverified`` and ``_unsigned``; which hits hold a table, by ``_holding``;
what a technician still owes, by ``_pending`` (``_holding`` and ``_other_work``); none ever
counts a hit no technician deals with (``_for_technician``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy import ColumnElement, Select, and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from controller.core.reducer import Hit
from controller.storage.codec import cards_text
from controller.storage.models import HitRow, table_of
from controller.storage.typed_rows import columns, fields_of

__all__ = [
    "HIT_COLUMNS",
    "HIT_KINDS",
    "HitFilter",
    "HitRecord",
    "Hits",
    "UnreleasedHit",
    "holds_table",
    "stored_hit",
    "unreleased_hits",
]

# What made a hit (``HitRecord.kind``): a hand, a mystery level's draw, an envy pay.
HIT_KINDS = ("hand", "mystery", "envy")


@dataclass(frozen=True, slots=True, kw_only=True)
class HitRecord:
    """A row of ``hits``: the hit as taken (never changed), then the technician's marks."""

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
    # Facts (never changed): the level an award from a meter was paid from ("L1", ...), what
    # made the hit ("hand", "mystery", "envy"), and whether it waits for a technician (a
    # fixed pay under the operator's amount does not: it neither holds the table nor
    # appears in any technician's list).
    level: str | None = None
    kind: str = "hand"
    needs_technician: bool = True
    # Marks: the second signature an award at or above the house's amount needs before its
    # table is reset, and the reference of the tax form it was reported on.
    signed_off_by: str | None = None
    signed_off_at_us: int | None = None
    tax_form_reference: str | None = None
    tax_form_by: str | None = None
    tax_form_at_us: int | None = None


_h = HitRow
_HIT = columns(
    HitRecord,
    _h.hit_id, _h.link_id, _h.table_id, _h.table_seq, _h.seat, _h.hand, _h.round, _h.cards,
    _h.source, _h.status, _h.award_cents, _h.paid_from, _h.settlement_group,
    _h.settlement_order, _h.policy, _h.refusal, _h.entered_by, _h.at_us, _h.verified_by,
    _h.verified_at_us, _h.verified_cards, _h.released_by, _h.released_at_us, _h.hand_paid_by,
    _h.hand_paid_at_us, _h.hand_paid_cents, _h.level, _h.kind, _h.needs_technician,
    _h.signed_off_by, _h.signed_off_at_us, _h.tax_form_reference, _h.tax_form_by,
    _h.tax_form_at_us,
)  # fmt: skip
HIT_COLUMNS: tuple[str, ...] = fields_of(HitRecord)
HITS = table_of(HitRow)


class UnreleasedHit(NamedTuple):
    """A table with hits not yet released, and when the earliest of them was taken."""

    link_id: str
    table_id: str
    first_at_us: int


def stored_hit(h: Hit) -> HitRecord:
    """The row a hit is written as."""
    return HitRecord(
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
        level=h.level,
        kind=h.kind,
        needs_technician=h.needs_technician,
    )


def _values(s: HitRecord) -> dict[str, Any]:
    return {c: getattr(s, c) for c in HIT_COLUMNS}


def _for_technician() -> ColumnElement[bool]:
    """A hit a technician deals with: every one but a fixed pay under the operator's amount
    (``needs_technician`` false: paid with no technician, nothing waits for it)."""
    return _h.needs_technician.is_(True)


def _unverified(table_id: str) -> ColumnElement[bool]:
    """The awards paid from the meter at ``table_id`` since its last reset that no technician
    has verified yet: the table is not reset until there are none."""
    return and_(
        _h.table_id == table_id,
        _h.released_by.is_(None),
        _h.status == "awarded",
        _h.paid_from == "meter",
        _h.verified_by.is_(None),
        _for_technician(),
    )


def _holding() -> ColumnElement[bool]:
    """A hit that holds its table until a technician resets it: an award paid from a meter
    (what ``_unverified`` makes the reset wait on, verified or not yet) or a refused claim,
    at a table not reset since. ``holds_table`` says the same of one record."""
    return and_(
        _h.released_by.is_(None),
        or_(and_(_h.status == "awarded", _h.paid_from == "meter"), _h.status == "refused"),
        _for_technician(),
    )


def holds_table(row: HitRecord) -> bool:
    """``_holding`` of one hit as read."""
    return (
        row.released_by is None
        and row.needs_technician
        and ((row.status == "awarded" and row.paid_from == "meter") or row.status == "refused")
    )


def _unsigned(table_id: str) -> ColumnElement[bool]:
    """The awards paid from the meter at ``table_id`` since its last reset that no second
    person has signed: which of them need a signature is the rule's to say
    (``controller.rules.house.needs_second_signature``)."""
    return and_(
        _h.table_id == table_id,
        _h.released_by.is_(None),
        _h.status == "awarded",
        _h.paid_from == "meter",
        _h.signed_off_by.is_(None),
        _for_technician(),
    )


def _other_work() -> ColumnElement[bool]:
    """Technician work that holds no table's reset back: a fixed pay made at the table at or
    above the operator's amount, its hand pay not yet recorded. With ``_holding`` it is the
    whole of ``_pending``."""
    return and_(
        _h.released_by.is_(None),
        _h.status == "awarded",
        _h.paid_from == "table",
        _h.hand_paid_by.is_(None),
        _for_technician(),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class HitFilter:
    """Which hits a list shows: of a link, of a table, of a kind (``HIT_KINDS``); None: all."""

    link_id: str | None = None
    table_id: str | None = None
    kind: str | None = None

    def where(self, q: Select[Any]) -> Select[Any]:
        if self.link_id is not None:
            q = q.where(_h.link_id == self.link_id)
        if self.table_id is not None:
            q = q.where(_h.table_id == self.table_id)
        if self.kind is not None:
            q = q.where(_h.kind == self.kind)
        return q


def _pending() -> ColumnElement[bool]:
    """Work left for a technician: a hit holding its table, or a payout made at the table not
    yet recorded."""
    return or_(_holding(), _other_work())


class Hits:
    """The hits, read and written through one connection."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    async def add(self, hits: Sequence[Hit]) -> None:
        if hits:
            await self.conn.execute(HITS.insert(), [_values(stored_hit(h)) for h in hits])

    async def _all(self, q: Select[Any]) -> list[HitRecord]:
        return [HitRecord(**row._mapping) for row in await self.conn.execute(q)]

    async def paid_from_meter(self) -> set[tuple[str, str]]:
        """Every hit awarded from a meter, as (link, hit)."""
        rows = await self.conn.execute(
            select(_h.link_id, _h.hit_id).where(_h.status == "awarded", _h.paid_from == "meter")
        )
        return {(lid, hid) for lid, hid in rows}

    async def get(self, hit_id: str) -> HitRecord | None:
        found = await self._all(select(*_HIT).where(_h.hit_id == hit_id))
        return found[0] if found else None

    async def of_link(self, link_id: str) -> list[HitRecord]:
        """The link's hits, newest first."""
        return await self._all(select(*_HIT).where(_h.link_id == link_id).order_by(_h.at_us.desc()))

    async def unverified(self, table_id: str) -> list[HitRecord]:
        """The awards a held table waits on before it may be reset (``_unverified``), oldest
        first."""
        return await self._all(
            select(*_HIT).where(_unverified(table_id)).order_by(_h.at_us, _h.hit_id)
        )

    async def unsigned(self, table_id: str) -> list[HitRecord]:
        """The awards a held table holds with no second signature (``_unsigned``), oldest
        first."""
        return await self._all(
            select(*_HIT).where(_unsigned(table_id)).order_by(_h.at_us, _h.hit_id)
        )

    async def holding(self, only: HitFilter) -> list[HitRecord]:
        """Every hit that holds a table (``_holding``), oldest first, never cut to a page: a
        held table takes no side bets, so it gathers no more than the round that held it
        brought (at most a hit per seat, and a share or two of the meter); the list is
        bounded by the number of tables times a few."""
        q = only.where(select(*_HIT).where(_holding()))
        return await self._all(q.order_by(_h.at_us, _h.settlement_order, _h.hit_id))

    async def other_work(self, only: HitFilter, *, limit: int) -> tuple[list[HitRecord], int]:
        """The newest ``limit`` hits of the rest of a technician's work (``_other_work``), and
        how many there are in all."""
        q = only.where(select(*_HIT).where(_other_work()))
        rows = await self._all(q.order_by(_h.at_us.desc(), _h.hit_id.desc()).limit(limit))
        total = await self.conn.scalar(
            only.where(select(func.count()).select_from(_h).where(_other_work()))
        )
        return rows, int(total or 0)

    async def tax_forms_due(
        self, only: HitFilter, *, from_cents: int, limit: int
    ) -> tuple[list[HitRecord], int]:
        """The newest ``limit`` awards of ``from_cents`` or more with no tax form's reference
        recorded yet, and how many there are in all: what is still to record, whether or not
        their tables were reset (``controller.rules.house.needs_tax_form``)."""
        due = and_(
            _h.status == "awarded", _h.award_cents >= from_cents, _h.tax_form_reference.is_(None)
        )
        q = only.where(select(*_HIT).where(due))
        rows = await self._all(q.order_by(_h.at_us.desc(), _h.hit_id.desc()).limit(limit))
        total = await self.conn.scalar(only.where(select(func.count()).select_from(_h).where(due)))
        return rows, int(total or 0)

    async def paid_without_technician(
        self, only: HitFilter, *, limit: int, offset: int
    ) -> tuple[list[HitRecord], int]:
        """The fixed pays no technician deals with (``needs_technician`` false), newest first,
        a page at ``offset``, and how many there are in all."""
        quiet = _h.needs_technician.is_(False)
        q = only.where(select(*_HIT).where(quiet))
        rows = await self._all(
            q.order_by(_h.at_us.desc(), _h.hit_id.desc()).limit(limit).offset(offset)
        )
        total = await self.conn.scalar(
            only.where(select(func.count()).select_from(_h).where(quiet))
        )
        return rows, int(total or 0)

    async def page(
        self,
        *,
        link_id: str | None = None,
        table_id: str | None = None,
        pending: bool = False,
        limit: int = 200,
    ) -> list[HitRecord]:
        """Hits newest first (of a link, of a table, only those a technician still owes)."""
        q: Select[Any] = select(*_HIT)
        if link_id is not None:
            q = q.where(_h.link_id == link_id)
        if table_id is not None:
            q = q.where(_h.table_id == table_id)
        if pending:
            q = q.where(_pending())
        return await self._all(q.order_by(_h.at_us.desc(), _h.settlement_order.desc()).limit(limit))

    async def in_period(
        self, *, since_us: int, until_us: int, link_id: str | None, batch: int
    ) -> AsyncIterator[list[HitRecord]]:
        """The hits of ``[since_us, until_us)`` (of every link when ``link_id`` is None) by
        time, then id, ``batch`` at a time as the database sends them."""
        q = select(*_HIT).where(_h.at_us >= since_us, _h.at_us < until_us)
        if link_id:
            q = q.where(_h.link_id == link_id)
        q = q.order_by(_h.at_us, _h.hit_id).execution_options(yield_per=batch)
        result = await self.conn.stream(q)
        async for rows in result.partitions():
            yield [HitRecord(**row._mapping) for row in rows]

    async def unreleased(self) -> list[UnreleasedHit]:
        """Every table with a hit no technician has released yet, its earliest such hit's
        time."""
        rows = await self.conn.execute(
            select(_h.link_id, _h.table_id, func.min(_h.at_us))
            .where(_h.released_by.is_(None), _for_technician())
            .group_by(_h.link_id, _h.table_id)
        )
        return [
            UnreleasedHit(link_id=link_id, table_id=table_id, first_at_us=at_us)
            for link_id, table_id, at_us in rows
            if at_us is not None
        ]

    async def mark_released(self, table_id: str, *, by: str, at_us: int) -> None:
        """The table's hits not yet reset are reset now, by ``by``."""
        await self.conn.execute(
            update(_h)
            .where(_h.table_id == table_id, _h.released_by.is_(None))
            .values(released_by=by, released_at_us=at_us)
        )

    async def mark_verified(self, hit_id: str, *, by: str, at_us: int, cards: str) -> bool:
        """The technician's verification, once: False if the hit was verified already."""
        result = await self.conn.execute(
            update(_h)
            .where(_h.hit_id == hit_id, _h.verified_by.is_(None))
            .values(verified_by=by, verified_at_us=at_us, verified_cards=cards)
        )
        return result.rowcount == 1

    async def mark_signed_off(self, hit_id: str, *, by: str, at_us: int) -> bool:
        """The second person's signature, once: False if one was given already."""
        result = await self.conn.execute(
            update(_h)
            .where(_h.hit_id == hit_id, _h.signed_off_by.is_(None))
            .values(signed_off_by=by, signed_off_at_us=at_us)
        )
        return result.rowcount == 1

    async def mark_hand_paid(self, hit_id: str, *, by: str, at_us: int, cents: int) -> bool:
        """A hand pay recorded, once: False if one was recorded already."""
        result = await self.conn.execute(
            update(_h)
            .where(_h.hit_id == hit_id, _h.hand_paid_by.is_(None))
            .values(hand_paid_by=by, hand_paid_at_us=at_us, hand_paid_cents=cents)
        )
        return result.rowcount == 1

    async def mark_tax_form(self, hit_id: str, *, by: str, at_us: int, reference: str) -> bool:
        """The tax form's reference recorded, once: False if one was recorded already."""
        result = await self.conn.execute(
            update(_h)
            .where(_h.hit_id == hit_id, _h.tax_form_reference.is_(None))
            .values(tax_form_reference=reference, tax_form_by=by, tax_form_at_us=at_us)
        )
        return result.rowcount == 1


async def unreleased_hits(engine: AsyncEngine) -> list[UnreleasedHit]:
    """``Hits.unreleased``, read on a connection of its own (the metrics' oldest-held age)."""
    async with engine.connect() as conn:
        return await Hits(conn).unreleased()
