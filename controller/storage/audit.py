"""The audit log and the supporting documents: who did what, and the papers they filed."""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.ledger import canonical_details
from controller.storage.models import AuditRow, DocumentRow

__all__ = ["AuditLog", "Documents", "write_audit"]


class AuditLog:
    """The audit log, written in the caller's transaction."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    async def write(
        self,
        *,
        at_us: int,
        actor: str,
        action: str,
        target: str,
        before: Any = None,
        after: Any = None,
    ) -> None:
        """One row: who, when, what, before, after (``before``/``after`` as canonical JSON)."""
        await self.conn.execute(
            insert(AuditRow).values(
                at_us=at_us,
                actor=actor,
                action=action,
                target=target,
                before=None if before is None else canonical_details(before),
                after=None if after is None else canonical_details(after),
            )
        )


async def write_audit(
    conn: AsyncConnection,
    *,
    at_us: int,
    actor: str,
    action: str,
    target: str,
    before: Any = None,
    after: Any = None,
) -> None:
    """One row of the audit log, in the caller's transaction: who, when, what, before, after."""
    await AuditLog(conn).write(
        at_us=at_us, actor=actor, action=action, target=target, before=before, after=after
    )


class Documents:
    """Supporting documents, kept whole and named by their SHA-256."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    async def store(
        self, *, content: bytes, filename: str, content_type: str, uploaded_by: str, at_us: int
    ) -> str:
        """Keep a document (never replaced: the same content is kept once); its digest."""
        digest = hashlib.sha256(content).hexdigest()
        known = await self.conn.scalar(
            select(DocumentRow.sha256).where(DocumentRow.sha256 == digest)
        )
        if known is None:
            await self.conn.execute(
                insert(DocumentRow).values(
                    sha256=digest,
                    filename=filename,
                    content_type=content_type,
                    size=len(content),
                    content=content,
                    uploaded_by=uploaded_by,
                    at_us=at_us,
                )
            )
        return digest
