"""The change feed's channel: how a commit tells other processes which links moved."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

__all__ = ["ChannelName", "changes_channel", "notify_held", "notify_paperwork"]


def changes_channel(schema: str) -> str:
    """The PostgreSQL notification channel of a floor's commits: one per schema, since two
    floors (or two test runs) may share a server and notifications are server-wide."""
    return "progressive_" + hashlib.blake2b(schema.encode(), digest_size=8).hexdigest()


class ChannelName:
    """The channel of the schema a store writes to, asked of the database once."""

    def __init__(self) -> None:
        self._name: str | None = None

    async def of(self, conn: AsyncConnection) -> str:
        if self._name is None:
            self._name = changes_channel(str(await conn.scalar(text("SELECT current_schema()"))))
        return self._name


_PG_NOTIFY_PAPERWORK = text(
    "SELECT pg_notify(:channel, 'p:' || x) FROM unnest(CAST(:link_ids AS text[])) AS x"
)


async def notify_paperwork(conn: AsyncConnection, channel: str, link_ids: Sequence[str]) -> None:
    """Tell the listeners (on commit) that these links' paperwork changed: whether they may
    play. PostgreSQL only; on SQLite there is no one to tell."""
    if link_ids and conn.dialect.name == "postgresql":
        await conn.execute(_PG_NOTIFY_PAPERWORK, {"channel": channel, "link_ids": list(link_ids)})


_PG_NOTIFY_HELD = text(
    "SELECT pg_notify(:channel, 'h:' || x) FROM unnest(CAST(:link_ids AS text[])) AS x"
)


async def notify_held(conn: AsyncConnection, channel: str, link_ids: Sequence[str]) -> None:
    """Tell the listeners (on commit) that these links were held by a failed check of the
    software: every process reads them again, the one driving them too. PostgreSQL only."""
    if link_ids and conn.dialect.name == "postgresql":
        await conn.execute(_PG_NOTIFY_HELD, {"channel": channel, "link_ids": list(link_ids)})
