"""Migrations go up and down on both engines, the hit guards survive the hand-pay columns, and
a database with data comes through 0007 (levels, games, what a hit is) as it was."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, select, text, update
from sqlalchemy.exc import DBAPIError

from controller.core.games import Game
from controller.storage.database import (
    SCHEMA_HEAD,
    SchemaNotCurrent,
    alembic_config,
    check_schema,
    downgrade,
    make_engine,
    upgrade,
)
from controller.storage.models import HitRow, MeterEntryRow, SubmissionRow
from controller.storage.papers.correction_records import insert_request
from controller.storage.papers.submissions import insert_submission, load_submission
from controller.storage.paperwork import CorrectionRequestRow
from controller.storage.store import LedgerStore
from tests.conftest import KEY
from tests.controller.storage.helpers import Poller, make_link, runtime


def test_the_schema_head_named_is_the_newest_migration() -> None:
    from alembic.script import ScriptDirectory

    assert ScriptDirectory.from_config(alembic_config()).get_current_head() == SCHEMA_HEAD


async def test_down_to_the_first_revision_and_up_again(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        await check_schema(engine)
        await downgrade(engine, "0001")
        with pytest.raises(SchemaNotCurrent, match="schema is at 0001, this controller needs"):
            await check_schema(engine)
        async with engine.connect() as conn:
            names = await conn.run_sync(lambda c: c.dialect.get_table_names(c))
        assert "users" not in names
        await upgrade(engine)
        await check_schema(engine)
    finally:
        await engine.dispose()


async def test_hand_pay_may_be_filled_in_but_the_facts_stay_fixed(store: LedgerStore) -> None:
    await make_link(store)
    rt = await runtime(store)
    poll = Poller()
    await rt.readings.apply([poll.reading("t1", 0)])
    await rt.readings.apply([poll.royal("t1", 5, seq=1)])
    async with store.engine.begin() as conn:
        hit_id = await conn.scalar(text("SELECT hit_id FROM hits"))
        await conn.execute(
            update(HitRow)
            .where(HitRow.hit_id == hit_id)
            .values(hand_paid_by="tech", hand_paid_at_us=1, hand_paid_cents=500_00)
        )
    with pytest.raises(DBAPIError, match=r"facts|never edited"):
        async with store.engine.begin() as conn:
            await conn.execute(update(HitRow).where(HitRow.hit_id == hit_id).values(award_cents=1))


async def test_sign_off_and_tax_form_may_be_filled_in_but_the_facts_stay_fixed(
    store: LedgerStore,
) -> None:
    # 0009 rebuilds PostgreSQL's guard with these marks; SQLite's guard names only the facts.
    await make_link(store)
    rt = await runtime(store)
    poll = Poller()
    await rt.readings.apply([poll.reading("t1", 0)])
    await rt.readings.apply([poll.royal("t1", 5, seq=1)])
    async with store.engine.begin() as conn:
        hit_id = await conn.scalar(text("SELECT hit_id FROM hits"))
        await conn.execute(
            update(HitRow)
            .where(HitRow.hit_id == hit_id)
            .values(
                signed_off_by="second",
                signed_off_at_us=2,
                tax_form_reference="W2G-0001",
                tax_form_by="cage",
                tax_form_at_us=3,
            )
        )
    async with store.engine.connect() as conn:
        marks = (
            await conn.execute(
                select(HitRow.signed_off_by, HitRow.tax_form_reference).where(
                    HitRow.hit_id == hit_id
                )
            )
        ).one()
    assert tuple(marks) == ("second", "W2G-0001")
    for fact in ({"award_cents": 1}, {"hand": "FLUSH"}, {"needs_technician": False}):
        with pytest.raises(DBAPIError, match=r"facts|never edited"):
            async with store.engine.begin() as conn:
                await conn.execute(update(HitRow).where(HitRow.hit_id == hit_id).values(**fact))


async def test_an_upgrade_from_0006_keeps_links_hits_seals_and_guards(db_url: str) -> None:
    """A database at 0006 with a played link and a hit: after 0007 the link resumes exactly
    (its seal from before still verifies), the hit reads as a hand that waits for a
    technician, the guards still refuse edits (of the new facts too), and a fixed-pay link
    with rate 0 may be made."""
    engine = make_engine(db_url)
    try:
        store = LedgerStore(engine, KEY)
        await store.check_key()
        await make_link(store)
        rt = await runtime(store)
        poll = Poller()
        await rt.readings.apply([poll.reading("t1", 0, rounds=0), poll.reading("t2", 0)])
        await rt.readings.apply([poll.royal("t1", 50, seq=1)])
        await downgrade(engine, "0006")
        async with engine.connect() as conn:
            names = await conn.run_sync(
                lambda c: {col["name"] for col in inspect(c).get_columns("hits")}
            )
        assert "kind" not in names and "needs_technician" not in names
        await upgrade(engine)
        await check_schema(engine)

        again = await runtime(LedgerStore(engine, KEY))
        assert again.memory.inoperable == {}
        assert again.memory.states == rt.memory.states
        async with engine.connect() as conn:
            (row,) = (
                await conn.execute(select(HitRow.level, HitRow.kind, HitRow.needs_technician))
            ).all()
        assert tuple(row) == (None, "hand", True)
        for statement in (
            update(HitRow).values(kind="mystery"),
            update(HitRow).values(needs_technician=False),
            update(MeterEntryRow).values(explanation="edited"),
        ):
            with pytest.raises(DBAPIError, match=r"facts|never edited|append-only"):
                async with engine.begin() as conn:
                    await conn.execute(statement)
        await make_link(
            again.memory.store,
            "bonus",
            ("b1",),
            game=Game.LET_IT_RIDE_BONUS,
            rate_bp=0,
            reset_cents=0,
        )
        await again.memory.reload_links(["bonus"])
        assert again.memory.states["bonus"].fixed_pay and again.memory.inoperable == {}
    finally:
        await engine.dispose()


async def test_the_meter_of_a_correction_request_is_a_fixed_fact(store: LedgerStore) -> None:
    # 0010 adds the column; SQLite's guard names it among the facts, PostgreSQL's fixes all
    # but the decision.
    async with store.engine.begin() as conn:
        await insert_request(
            conn, request_id="r1", link_id="stud", delta_units=5, category="other",
            reason="count", document_sha256=None, requested_by="sup", at_us=1,
            status="pending", meter="L1.reserve",
        )  # fmt: skip
    row = CorrectionRequestRow
    with pytest.raises(DBAPIError, match=r"facts|never edited"):
        async with store.engine.begin() as conn:
            await conn.execute(update(row).where(row.request_id == "r1").values(meter="L2"))
    async with store.engine.connect() as conn:
        assert await conn.scalar(select(row.meter)) == "L1.reserve"


WAIVER_COLUMNS = {
    "waiver_given_by", "waiver_reference", "waiver_given_on", "waiver_document_sha256",
}  # fmt: skip


async def test_a_submissions_waiver_is_a_fixed_fact_and_0011_goes_down_and_up(
    db_url: str,
) -> None:
    """0011 adds the waiver of an amendment's notice period (68 IAC 10-1-4(1)); SQLite's guard
    names its columns among the facts, PostgreSQL's fixes every column but the review's. Down
    to 0010 the columns go and the guard still fixes the facts of 0003; up again, both."""
    engine = make_engine(db_url)
    try:
        store = LedgerStore(engine, KEY)
        await store.check_key()
        await downgrade(engine, "0010")
        async with engine.connect() as conn:
            names = await conn.run_sync(
                lambda c: {col["name"] for col in inspect(c).get_columns("submissions")}
            )
        assert not names & WAIVER_COLUMNS
        await upgrade(engine)
        await check_schema(engine)
        async with engine.connect() as conn:
            names = await conn.run_sync(
                lambda c: {col["name"] for col in inspect(c).get_columns("submissions")}
            )
        assert names >= WAIVER_COLUMNS
        async with engine.begin() as conn:
            digest = await store.store_document(
                conn, content=b"{}", filename="p.json", content_type="application/json",
                uploaded_by="sup", at_us=1,
            )  # fmt: skip
            await insert_submission(
                conn, submission_id="s1", kind="rate_change", link_id="stud", proposal="{}",
                effective_at_us=1, notice_days=30, notice_override=None,
                waiver={
                    "given_by": "J. Doe", "reference": "IGC 2026-114",
                    "given_on": "2026-01-01", "document_sha256": "ab" * 32,
                },
                packet_json_sha256=digest, packet_pdf_sha256=digest, filed_by="sup",
                filed_at_us=1, status="filed",
            )  # fmt: skip
        row = SubmissionRow
        for column in WAIVER_COLUMNS:
            with pytest.raises(DBAPIError, match=r"facts|never edited"):
                async with engine.begin() as conn:
                    await conn.execute(update(row).values({column: "edited"}))
        async with engine.connect() as conn:
            loaded = await load_submission(conn, "s1")
        assert loaded is not None and loaded.waiver is not None
        assert loaded.waiver["reference"] == "IGC 2026-114"
        # The review is still added, once.
        async with engine.begin() as conn:
            await conn.execute(
                update(row).values(status="rejected", reviewed_by="agent", reviewed_at_us=2,
                                   review_reason="no")
            )  # fmt: skip
    finally:
        await engine.dispose()
