"""Hits waiting for a technician's release, as the database holds them: since when each
table has waited (the metrics' oldest-held age)."""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from controller.storage.models import HitRow

__all__ = ["UnreleasedHit", "unreleased_hits"]


class UnreleasedHit(NamedTuple):
    """A table with hits not yet released, and when the earliest of them was taken."""

    link_id: str
    table_id: str
    first_at_us: int


async def unreleased_hits(engine: AsyncEngine) -> list[UnreleasedHit]:
    """Every table with a hit no technician has released yet, its earliest such hit's time."""
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(HitRow.link_id, HitRow.table_id, func.min(HitRow.at_us))
            .where(HitRow.released_by.is_(None))
            .group_by(HitRow.link_id, HitRow.table_id)
        )
        return [
            UnreleasedHit(link_id=link_id, table_id=table_id, first_at_us=at_us)
            for link_id, table_id, at_us in rows
            if at_us is not None
        ]
