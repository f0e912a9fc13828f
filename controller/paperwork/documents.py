"""Supporting documents people upload: what is accepted, and under what name it is kept.

A document is stored in the database by its SHA-256, never in a file named by a user, so a
name can do no harm there; it is still cleaned, because it is shown and offered for download.
"""

from __future__ import annotations

import re
import unicodedata

from controller.refusal import Invalid
from controller.text import FILE_NAME, TextRefused

MAX_DOCUMENT_BYTES = 10 * 1024 * 1024

# The kinds of supporting document a casino files, each with how its content begins.
ACCEPTED_TYPES: dict[str, tuple[bytes, ...]] = {
    "application/pdf": (b"%PDF-",),
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "text/plain": (),
}


class DocumentRefused(Invalid):
    """An upload that is not kept; the message says why."""


def clean_filename(name: str | None) -> str:
    """The last path part, letters, digits, dot, dash and underscore only; never empty."""
    base = re.split(r"[\\/]", name or "")[-1]
    base = unicodedata.normalize("NFKD", base).encode("ascii", "ignore").decode("ascii")
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("._-")[:100]
    return base or "document"


def accept_document(
    content: bytes, *, filename: str | None, content_type: str | None
) -> tuple[str, str]:
    """Check an upload; returns the name and content type it is kept under.

    A name with a control, bidirectional or invisible character is refused rather than
    cleaned: "invoice\u202efdp.exe" is someone hiding what a file is, and the record
    should not carry a tidied version of it as if nothing was tried."""
    if filename is not None:
        try:
            FILE_NAME.check(filename)
        except TextRefused as exc:
            raise DocumentRefused(f"the document's file name: {exc}") from None
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind not in ACCEPTED_TYPES:
        raise DocumentRefused(
            f"a supporting document is one of {', '.join(sorted(ACCEPTED_TYPES))}, "
            f"not {kind or 'unknown'}"
        )
    if not content:
        raise DocumentRefused("the document is empty")
    if len(content) > MAX_DOCUMENT_BYTES:
        raise DocumentRefused(
            f"the document is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MB"
        )
    magics = ACCEPTED_TYPES[kind]
    if magics and not any(content.startswith(m) for m in magics):
        raise DocumentRefused(f"the content is not a {kind} document")
    if kind == "text/plain":
        try:
            content.decode("utf-8")
        except UnicodeDecodeError:
            raise DocumentRefused("a text document must be UTF-8") from None
    return clean_filename(filename), kind
