"""The ledger's own facts (``ledger_meta``): the fingerprint of the key its history is sealed
with, and since when the state of links is sealed."""

from __future__ import annotations

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.state_seal import SEALED_SINCE
from controller.storage.models import LedgerMetaRow

__all__ = ["KEY_FINGERPRINT", "LedgerMeta"]

KEY_FINGERPRINT = "key_fingerprint"


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
