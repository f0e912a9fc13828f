"""The audit log and the supporting documents: who did what, and the papers they filed; the
one writer and the one reader of the audit log."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.ledger import canonical_details
from controller.storage.models import AuditRow, DocumentRow
from controller.storage.typed_rows import columns

__all__ = ["AuditEntry", "AuditLog", "Documents", "audit_entries", "write_audit"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEntry:
    """A row of the audit log (``before``/``after`` as the canonical JSON written)."""

    audit_id: int
    at_us: int
    actor: str
    action: str
    target: str
    before: str | None
    after: str | None


_a = AuditRow
_ENTRY = columns(
    AuditEntry, _a.audit_id, _a.at_us, _a.actor, _a.action, _a.target, _a.before, _a.after
)


class AuditLog:
    """The audit log, written in the caller's transaction and read back."""

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

    async def entries(
        self,
        *,
        since_us: int | None,
        until_us: int | None,
        limit: int,
        actor: str | None = None,
        action: str | None = None,
    ) -> list[AuditEntry]:
        """The audit log of a period (``until`` exclusive), newest first; only ``actor``'s
        entries, only ``action``'s, when given."""
        q = select(*_ENTRY).order_by(_a.at_us.desc(), _a.audit_id.desc())
        if actor is not None:
            q = q.where(_a.actor == actor)
        if action is not None:
            q = q.where(_a.action == action)
        if since_us is not None:
            q = q.where(_a.at_us >= since_us)
        if until_us is not None:
            q = q.where(_a.at_us < until_us)
        return [AuditEntry(**r._mapping) for r in await self.conn.execute(q.limit(limit))]


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


async def audit_entries(
    conn: AsyncConnection,
    *,
    since_us: int | None,
    until_us: int | None,
    limit: int,
    actor: str | None = None,
    action: str | None = None,
) -> list[AuditEntry]:
    """``AuditLog.entries`` on ``conn``."""
    return await AuditLog(conn).entries(
        since_us=since_us, until_us=until_us, limit=limit, actor=actor, action=action
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
