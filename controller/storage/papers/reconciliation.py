"""What reconciling a link's meter reads: the entries of a period, the meter before it, the
awards the hits record as paid from the meter, and the chain head. Entries are read from
rows and blocks alike, each entry of a block decoded (``Entries.read``): the reconciliation
recomputes every contribution from what it records, so no sum is kept beside a block."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import NamedTuple

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.games import Game
from controller.core.ledger import SealedEntry
from controller.rules.pools import fixed_pay_only
from controller.storage.blocks import never_blocked
from controller.storage.entries import SEALED_COLUMNS, Entries, Stretch, entry_of
from controller.storage.models import HitRow, LinkRow, MeterEntryRow
from controller.storage.typed_rows import columns


class ChainHead(NamedTuple):
    last_seq: int
    last_hash: str


_m = MeterEntryRow
_HEAD = columns(ChainHead, LinkRow.last_seq, LinkRow.last_hash)


async def link_exists(conn: AsyncConnection, link_id: str) -> bool:
    return await conn.scalar(select(LinkRow.link_id).where(LinkRow.link_id == link_id)) is not None


async def opening_units(conn: AsyncConnection, link_id: str, since_us: int) -> int:
    """The meter as the last entry before the period left it (0: none)."""
    before = await Entries(conn).last_before(link_id, since_us)
    return before.meter_after_units if before is not None else 0


async def entry_batches(
    conn: AsyncConnection, link_id: str, since_us: int, until_us: int, *, batch: int
) -> AsyncIterator[list[SealedEntry]]:
    """The period's entries in sequence order, about ``batch`` at a time as the database
    sends them."""
    stretch = Stretch(link_id=link_id, since_us=since_us, until_us=until_us)
    async for rows in Entries(conn).read(select(*SEALED_COLUMNS), stretch, batch=batch):
        yield [entry_of(r) for r in rows]


async def awarded_from_meter_cents(
    conn: AsyncConnection, link_id: str, since_us: int, until_us: int
) -> int:
    """The awards the period's hits record as paid from the meter, in cents."""
    paid = await conn.scalar(
        select(func.coalesce(func.sum(HitRow.award_cents), 0)).where(
            HitRow.link_id == link_id,
            HitRow.status == "awarded",
            HitRow.paid_from == "meter",
            HitRow.at_us >= since_us,
            HitRow.at_us < until_us,
        )
    )
    return int(paid or 0)


async def fixed_pay_link(conn: AsyncConnection, link_id: str) -> bool:
    """Is the link a fixed-pay bonus link (its game pays fixed amounts only)?"""
    game = await conn.scalar(select(LinkRow.game).where(LinkRow.link_id == link_id))
    return game is not None and fixed_pay_only(Game(game))


async def paid_at_table(
    conn: AsyncConnection, link_id: str, since_us: int, until_us: int
) -> tuple[int, int]:
    """The hits of the period recorded as paid at the table: how many, and in cents."""
    row = (
        await conn.execute(
            select(func.count(), func.coalesce(func.sum(HitRow.award_cents), 0)).where(
                HitRow.link_id == link_id,
                HitRow.status == "awarded",
                HitRow.paid_from == "table",
                HitRow.at_us >= since_us,
                HitRow.at_us < until_us,
            )
        )
    ).one()
    return int(row[0] or 0), int(row[1] or 0)


async def chain_head(conn: AsyncConnection, link_id: str) -> ChainHead | None:
    """The link's history head (sequence number, seal) as the database records it now."""
    row = (await conn.execute(select(*_HEAD).where(LinkRow.link_id == link_id))).one_or_none()
    return None if row is None else ChainHead(int(row.last_seq), str(row.last_hash))


async def award_entries(conn: AsyncConnection, link_id: str) -> list[SealedEntry]:
    """Every award of the link's history, newest first (awards are rare: a few a day)."""
    rows = await conn.execute(
        select(*SEALED_COLUMNS)
        .where(_m.link_id == link_id, _m.kind.in_(never_blocked(["award"])))
        .order_by(_m.seq.desc())
    )
    return [SealedEntry._make(r) for r in rows]
