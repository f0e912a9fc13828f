"""The ledger's own facts (``ledger_meta``): the fingerprint of the key its history is sealed
with, since when the state of links is sealed, and since when the installation has run in
demonstration mode (links opened and filed without their notice periods)."""

from __future__ import annotations

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.state_seal import SEALED_SINCE
from controller.storage.models import LedgerMetaRow

__all__ = ["DEMONSTRATION_SINCE", "KEY_FINGERPRINT", "LedgerMeta"]

KEY_FINGERPRINT = "key_fingerprint"
# When the installation first ran in demonstration mode (microseconds since the epoch): once
# written, never removed, whatever the setting says later.
DEMONSTRATION_SINCE = "demonstration_since"


class LedgerMeta:
    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    async def get(self, name: str) -> str | None:
        value: str | None = await self.conn.scalar(
            select(LedgerMetaRow.value).where(LedgerMetaRow.name == name)
        )
        return value

    async def put(self, name: str, value: str) -> None:
        await self.conn.execute(insert(LedgerMetaRow).values(name=name, value=value))

    async def sealing(self) -> bool:
        """Whether link rows must carry seals: their first sealing is recorded."""
        return await self.get(SEALED_SINCE) is not None
