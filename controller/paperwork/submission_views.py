"""A submission as people read it: its kept packet as a document, where it stands, and what
it changes, times in the property's time zone (``packet_document``)."""

from __future__ import annotations

import json
from typing import Any

from controller.paperwork.packet_document import Review, change_summary, packet_document
from controller.paperwork.submissions import ReviewDesk
from controller.rules.filing import SubmissionKind
from controller.storage.papers.submissions import Submission


def review_of(row: Submission) -> Review:
    return Review(
        status=row.status,
        reviewed_by=row.reviewed_by,
        reviewed_at_us=row.reviewed_at_us,
        reason=row.review_reason,
        applied_at_us=row.applied_at_us,
    )


async def submission_document(desk: ReviewDesk, row: Submission) -> dict[str, Any]:
    """The packet as kept (never rebuilt from the link as it is now), as a document."""
    content, _, _ = await desk.packet(row.submission_id, "json")
    return packet_document(
        json.loads(content), letterhead=desk.filing.letterhead, review=review_of(row)
    )


async def submission_words(
    desk: ReviewDesk, row: Submission, document: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A list's line: what kind of change, what it changes (current and proposed), when
    filed and effective, in words (``document``: its document, when the caller has it)."""
    lh = desk.filing.letterhead
    if document is None:
        document = await submission_document(desk, row)
    return {
        "kind": SubmissionKind(row.kind).label,
        "change": change_summary(document),
        "filed_at": lh.when(row.filed_at_us),
        "effective_on": lh.day(row.effective_at_us),
        "reviewed_at": None if row.reviewed_at_us is None else lh.when(row.reviewed_at_us),
    }
