"""Kept documents, read back whole (the writing is the ledger store's)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

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


class DocumentFile(NamedTuple):
    """A kept document as a record names it: its file, without its content."""

    sha256: str
    filename: str
    content_type: str
    size: int


_d = DocumentRow
# Read beside an entry through an outer join: NULL everywhere when the entry has no document.
FILE_COLUMNS = columns(DocumentFile, _d.sha256, _d.filename, _d.content_type, _d.size)
_COLUMNS = columns(
    Document,
    _d.sha256, _d.filename, _d.content_type, _d.size, _d.content, _d.uploaded_by, _d.at_us,
)  # fmt: skip


def document_file(values: Sequence[Any]) -> DocumentFile | None:
    """``FILE_COLUMNS``'s values as read through an outer join: None when no document was
    joined (its digest, its key, is NULL)."""
    return None if values[0] is None else DocumentFile._make(values)


async def load_document(conn: AsyncConnection, sha256: str) -> Document | None:
    row = (await conn.execute(select(*_COLUMNS).where(_d.sha256 == sha256))).one_or_none()
    return None if row is None else Document._make(row)
