"""The ledger's own facts (``ledger_meta``): the fingerprint of the key its history is sealed
with, since when the state of links is sealed, the links a failed check of the software
holds until two people recover them (``controller.rules.software``), and since when the
installation has run in demonstration mode (links opened and filed without their notice
periods)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.state_seal import SEALED_SINCE
from controller.storage.models import LedgerMetaRow

__all__ = ["DEMONSTRATION_SINCE", "KEY_FINGERPRINT", "SOFTWARE_HOLD", "LedgerMeta"]

KEY_FINGERPRINT = "key_fingerprint"
# One row per link held by a failed check of the software: the name and the reason.
SOFTWARE_HOLD = "software_hold:"
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

    async def put_first(self, name: str, value: str) -> bool:
        """Write ``name`` unless it is there already (kept as first written); whether this
        wrote it. One statement, so two processes starting together cannot both write it."""
        dialect = sqlite if self.conn.dialect.name == "sqlite" else postgresql
        result = await self.conn.execute(
            dialect.insert(LedgerMetaRow)
            .values(name=name, value=value)
            .on_conflict_do_nothing(index_elements=[LedgerMetaRow.name])
        )
        return bool(result.rowcount)

    async def sealing(self) -> bool:
        """Whether link rows must carry seals: their first sealing is recorded."""
        return await self.get(SEALED_SINCE) is not None

    async def software_holds(self, link_ids: Sequence[str]) -> dict[str, str]:
        """The links of ``link_ids`` a failed check of the software holds, with why."""
        if not link_ids:
            return {}
        rows = await self.conn.execute(
            select(LedgerMetaRow.name, LedgerMetaRow.value).where(
                LedgerMetaRow.name.in_([SOFTWARE_HOLD + lid for lid in link_ids])
            )
        )
        return {name.removeprefix(SOFTWARE_HOLD): value for name, value in rows.all()}

    async def hold_for_software(self, link_id: str, reason: str) -> bool:
        """Hold the link (a hold already there is kept, with its first reason); whether new."""
        return await self.put_first(SOFTWARE_HOLD + link_id, reason)

    async def release_software_hold(self, link_id: str) -> None:
        """The link recovered: its hold, if any, is lifted with the recovery."""
        await self.conn.execute(
            delete(LedgerMetaRow).where(LedgerMetaRow.name == SOFTWARE_HOLD + link_id)
        )
