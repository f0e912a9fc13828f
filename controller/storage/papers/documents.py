"""Kept documents, read back whole (the writing is the ledger store's)."""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.storage.models import DocumentRow
from controller.storage.typed_rows import columns


class Document(NamedTuple):
    sha256: str
    filename: str
    content_type: str
    size: int
    content: bytes
    uploaded_by: str
    at_us: int


_d = DocumentRow
_COLUMNS = columns(
    Document,
    _d.sha256, _d.filename, _d.content_type, _d.size, _d.content, _d.uploaded_by, _d.at_us,
)  # fmt: skip


async def load_document(conn: AsyncConnection, sha256: str) -> Document | None:
    row = (await conn.execute(select(*_COLUMNS).where(_d.sha256 == sha256))).one_or_none()
    return None if row is None else Document._make(row)
