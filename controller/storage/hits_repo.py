"""The hits as recorded, and the technician's work on them.

What a held table waits on before it may be reset (``unverified``: the one definition of an
unverified hit), the verification and the hand pay filled in once each, and the reset marked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, Select, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.storage.models import HitRow
from controller.storage.typed_rows import value


@dataclass(frozen=True, slots=True, kw_only=True)
class HitRecord:
    """A hit as the database holds it: its facts, then what the technician filled in."""

    hit_id: str
    link_id: str
    table_id: str
    table_seq: int | None
    seat: int
    hand: str
    round: int
    cards: str | None
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
    verified_by: str | None
    verified_at_us: int | None
    verified_cards: str | None
    released_by: str | None
    released_at_us: int | None
    hand_paid_by: str | None
    hand_paid_at_us: int | None
    hand_paid_cents: int | None


def _record(row: Row[Any]) -> HitRecord:
    return HitRecord(
        hit_id=value(row, HitRow.hit_id),
        link_id=value(row, HitRow.link_id),
        table_id=value(row, HitRow.table_id),
        table_seq=value(row, HitRow.table_seq),
        seat=value(row, HitRow.seat),
        hand=value(row, HitRow.hand),
        round=value(row, HitRow.round),
        cards=value(row, HitRow.cards),
        source=value(row, HitRow.source),
        status=value(row, HitRow.status),
        award_cents=value(row, HitRow.award_cents),
        paid_from=value(row, HitRow.paid_from),
        settlement_group=value(row, HitRow.settlement_group),
        settlement_order=value(row, HitRow.settlement_order),
        policy=value(row, HitRow.policy),
        refusal=value(row, HitRow.refusal),
        entered_by=value(row, HitRow.entered_by),
        at_us=value(row, HitRow.at_us),
        verified_by=value(row, HitRow.verified_by),
        verified_at_us=value(row, HitRow.verified_at_us),
        verified_cards=value(row, HitRow.verified_cards),
        released_by=value(row, HitRow.released_by),
        released_at_us=value(row, HitRow.released_at_us),
        hand_paid_by=value(row, HitRow.hand_paid_by),
        hand_paid_at_us=value(row, HitRow.hand_paid_at_us),
        hand_paid_cents=value(row, HitRow.hand_paid_cents),
    )


def _unverified(table_id: str) -> Select[Any]:
    """The awards paid from the meter at ``table_id`` since its last reset that no technician
    has verified yet, oldest first: the table is not reset until there are none."""
    return (
        select(HitRow)
        .where(
            HitRow.table_id == table_id,
            HitRow.released_by.is_(None),
            HitRow.status == "awarded",
            HitRow.paid_from == "meter",
            HitRow.verified_by.is_(None),
        )
        .order_by(HitRow.at_us, HitRow.hit_id)
    )


async def unverified(conn: AsyncConnection, table_id: str) -> list[HitRecord]:
    """The hits a held table waits on before it may be reset (``_unverified``)."""
    return [_record(r) for r in await conn.execute(_unverified(table_id))]


async def of_link(conn: AsyncConnection, link_id: str) -> list[HitRecord]:
    """A link's hits, newest first."""
    rows = await conn.execute(
        select(HitRow).where(HitRow.link_id == link_id).order_by(HitRow.at_us.desc())
    )
    return [_record(r) for r in rows]


async def find(conn: AsyncConnection, hit_id: str) -> HitRecord | None:
    row = (await conn.execute(select(HitRow).where(HitRow.hit_id == hit_id))).one_or_none()
    return None if row is None else _record(row)


async def mark_released(conn: AsyncConnection, table_id: str, *, by: str, at_us: int) -> None:
    """The table's hits not yet reset are reset now, by ``by``."""
    await conn.execute(
        update(HitRow)
        .where(HitRow.table_id == table_id, HitRow.released_by.is_(None))
        .values(released_by=by, released_at_us=at_us)
    )


async def mark_verified(
    conn: AsyncConnection, hit_id: str, *, by: str, at_us: int, cards: str
) -> bool:
    """The technician's verification, once: False if the hit was verified already."""
    result = await conn.execute(
        update(HitRow)
        .where(HitRow.hit_id == hit_id, HitRow.verified_by.is_(None))
        .values(verified_by=by, verified_at_us=at_us, verified_cards=cards)
    )
    return result.rowcount == 1


async def mark_hand_paid(
    conn: AsyncConnection, hit_id: str, *, by: str, at_us: int, cents: int
) -> bool:
    """A hand pay recorded, once: False if one was recorded already."""
    result = await conn.execute(
        update(HitRow)
        .where(HitRow.hit_id == hit_id, HitRow.hand_paid_by.is_(None))
        .values(hand_paid_by=by, hand_paid_at_us=at_us, hand_paid_cents=cents)
    )
    return result.rowcount == 1
