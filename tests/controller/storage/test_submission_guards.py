"""A filed submission is a record: the database keeps its facts and reviews it only once."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, insert, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from controller.storage.models import SubmissionRow
from controller.storage.store import LedgerStore
from tests.conftest import T0


async def _file(store: LedgerStore) -> None:
    async with store.engine.begin() as conn:
        digest = await store.store_document(
            conn,
            content=b"{}",
            filename="p.json",
            content_type="application/json",
            uploaded_by="sup",
            at_us=T0,
        )
        await conn.execute(
            insert(SubmissionRow).values(
                submission_id="s1",
                kind="rate_change",
                link_id="stud",
                proposal="{}",
                effective_at_us=T0,
                notice_days=30,
                notice_override=None,
                packet_json_sha256=digest,
                packet_pdf_sha256=digest,
                filed_by="sup",
                filed_at_us=T0,
                status="filed",
            )
        )


async def test_review_once_facts_never(store: LedgerStore) -> None:
    await _file(store)
    row = SubmissionRow.submission_id == "s1"
    with pytest.raises((DBAPIError, IntegrityError)):
        async with store.engine.begin() as conn:
            await conn.execute(update(SubmissionRow).where(row).values(proposal='{"x":1}'))
    with pytest.raises((DBAPIError, IntegrityError)):
        async with store.engine.begin() as conn:
            await conn.execute(update(SubmissionRow).where(row).values(status="rejected"))
    async with store.engine.begin() as conn:
        await conn.execute(
            update(SubmissionRow)
            .where(row)
            .values(status="approved", reviewed_by="agent", reviewed_at_us=T0 + 1)
        )
    with pytest.raises((DBAPIError, IntegrityError), match="reviewed once"):
        async with store.engine.begin() as conn:
            await conn.execute(
                update(SubmissionRow)
                .where(row)
                .values(status="rejected", reviewed_by="x", review_reason="no")
            )
    async with store.engine.begin() as conn:
        await conn.execute(update(SubmissionRow).where(row).values(applied_at_us=T0 + 2))
    with pytest.raises((DBAPIError, IntegrityError), match="takes effect once"):
        async with store.engine.begin() as conn:
            await conn.execute(update(SubmissionRow).where(row).values(applied_at_us=T0 + 3))
    with pytest.raises((DBAPIError, IntegrityError), match="never"):
        async with store.engine.begin() as conn:
            await conn.execute(delete(SubmissionRow).where(row))
