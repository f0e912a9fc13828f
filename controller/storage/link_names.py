"""The names people call a link and its tables by, as the database holds them."""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from controller.storage.models import LinkRow, TableRow

__all__ = ["LinkNames", "link_names"]


class LinkNames(NamedTuple):
    """A link's name and its tables' names by table id."""

    name: str
    tables: dict[str, str]


async def link_names(engine: AsyncEngine, link_id: str) -> LinkNames | None:
    """The link's name and its tables' names; None when there is no such link."""
    async with engine.connect() as conn:
        name = (
            await conn.execute(select(LinkRow.name).where(LinkRow.link_id == link_id))
        ).scalar_one_or_none()
        if name is None:
            return None
        rows = await conn.execute(
            select(TableRow.table_id, TableRow.name).where(TableRow.link_id == link_id)
        )
        return LinkNames(name=name, tables={tid: tname for tid, tname in rows})
