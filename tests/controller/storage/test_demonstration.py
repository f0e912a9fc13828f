"""Demonstration mode on real databases (SQLite and PostgreSQL): the one way past the notice
periods, recorded in the history for good and read back from it."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from sqlalchemy import select

from controller.core.games import Game
from controller.core.reducer import HitPolicy, TableReading
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.retention import run_retention, years_before
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.rules import RuleViolation
from controller.rules.filing import DAY_US, Proposal, SubmissionKind
from controller.runtime.clock import FixedClock
from controller.runtime.links import LinkRuntime
from controller.runtime.new_links import create_and_file_link
from controller.storage.meta import DEMONSTRATION_SINCE
from controller.storage.models import AuditRow, LedgerMetaRow, MeterEntryRow
from controller.storage.papers.submissions import Submission
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from tests.conftest import KEY, T0
from tests.controller.storage.helpers import table

AGENT = Role.COMMISSION_AGENT
NEW_LINK_NOTICE = "demonstration mode: the notice period of 68 IAC 10-1-3(c)(1) was not given"


async def _open(
    rt: LinkRuntime, desk: FilingDesk, link_id: str, tables: tuple[str, ...]
) -> Submission:
    return await create_and_file_link(
        rt,
        desk,
        link_id=link_id,
        name=f"{link_id} bank",
        game=Game.CARIBBEAN_STUD,
        rate_bp=8_000,
        reset_cents=1_000_00,
        hit_policy=HitPolicy.SPLIT,
        tables=[table(t) for t in tables],
        at_us=T0,
        actor="configuration",
    )


async def test_a_link_filed_in_demonstration_mode_plays_at_once_and_its_history_says_so(
    store: LedgerStore,
) -> None:
    clock = FixedClock(T0)
    rt = LinkRuntime(store, clock)
    await rt.memory.load()
    shown = FilingDesk(rt, demonstration=True)
    plain = FilingDesk(rt)
    review = ReviewDesk(plain)

    # In demonstration mode: filed with an effective date of now, saying which notice was not
    # given; approved, it plays at once.
    filed = await _open(rt, shown, "demo", ("d1",))
    assert filed.effective_at_us == filed.filed_at_us == T0
    packet = json.loads((await review.packet(filed.submission_id, "json"))[0])
    assert packet["notice"]["demonstration"] == NEW_LINK_NOTICE
    assert packet["jurisdiction"]["title"] == "Indiana (68 IAC 10)"
    assert packet["demonstration"].startswith("DEMONSTRATION MODE (PROGRESSIVE_DEMONSTRATION)")
    assert "link demo was opened in demonstration mode" in packet["demonstration"]
    await review.approve(filed.submission_id, reviewer="agent", role=AGENT)
    assert rt.memory.is_live("demo", T0)

    # Without it: held to the 60 days of 68 IAC 10-1-3(c)(1), which nothing waives.
    held = await _open(rt, plain, "held", ("h1",))
    assert held.effective_at_us == T0 + 60 * DAY_US
    packet = json.loads((await review.packet(held.submission_id, "json"))[0])
    assert "demonstration" not in packet["notice"] and "demonstration" not in packet
    await review.approve(held.submission_id, reviewer="agent", role=AGENT)
    assert not rt.memory.is_live("held", T0) and not rt.memory.is_live("held", T0 + 59 * DAY_US)
    assert rt.memory.is_live("held", T0 + 60 * DAY_US)
    with pytest.raises(RuleViolation, match=r"at least 60 days .*10-1-3\(c\)\(1\)"):
        await plain.prepare_new_link("held2", effective_at_us=T0, state=rt.memory.states["held"])

    # An amendment in demonstration mode: at once too, citing the amendment's notice.
    change = await shown.file_change(
        link_id="demo",
        proposal=Proposal(kind=SubmissionKind.RESET_CHANGE, reset_cents=2_000_00),
        filed_by="sup",
    )
    packet = json.loads((await review.packet(change.submission_id, "json"))[0])
    assert change.effective_at_us == T0
    assert packet["notice"]["demonstration"] == (
        "demonstration mode: the notice period of 68 IAC 10-1-4(1) was not given"
    )
    with pytest.raises(RuleViolation, match=r"at least 30 days .*10-1-4\(1\)"):
        await plain.prepare_change(
            link_id="demo",
            proposal=Proposal(kind=SubmissionKind.RESET_CHANGE, reset_cents=3_000_00),
            effective_at_us=T0 + DAY_US,
        )

    # The history says it, read back from the database by a store that never saw it made
    # (the setting now off): the link opened in demonstration mode stays marked, for good.
    async with store.engine.connect() as conn:
        first = (
            await conn.execute(
                select(MeterEntryRow.link_id, MeterEntryRow.kind, MeterEntryRow.details).where(
                    MeterEntryRow.seq == 1
                )
            )
        ).all()
        audit = [
            json.loads(a)
            for a in await conn.scalars(
                select(AuditRow.after).where(AuditRow.action == "submission.file")
            )
        ]
    opened = {link_id: json.loads(details) for link_id, kind, details in first}
    assert {kind for _, kind, _ in first} == {"link_opened"}
    assert opened["demo"]["demonstration"] is True
    assert "demonstration" not in opened["held"]
    assert sum(a.get("demonstration") == NEW_LINK_NOTICE for a in audit) == 1
    again = LedgerStore(store.engine, KEY)
    assert (await again.load_link("demo")).demonstration is True
    assert (await again.load_link("held")).demonstration is False
    rt2 = LinkRuntime(again, clock)
    await rt2.memory.load()
    assert rt2.memory.states["demo"].demonstration and not rt2.memory.states["held"].demonstration
    assert (await verify_ledger(store.engine, KEY)).ok


async def test_the_installation_records_since_when_it_runs_in_demonstration_mode(
    store: LedgerStore,
) -> None:
    assert await store.demonstration_since() is None
    assert await store.note_demonstration(at_us=T0, actor="configuration") is True
    assert await store.note_demonstration(at_us=T0 + 5, actor="configuration") is False
    assert await store.demonstration_since() == T0  # the first time, never moved
    async with store.engine.connect() as conn:
        meta = await conn.scalar(
            select(LedgerMetaRow.value).where(LedgerMetaRow.name == DEMONSTRATION_SINCE)
        )
        starts = [
            json.loads(a)
            for a in await conn.scalars(
                select(AuditRow.after)
                .where(AuditRow.action == "installation.demonstration")
                .order_by(AuditRow.at_us)
            )
        ]
    assert meta == str(T0)
    assert [s["first"] for s in starts] == [True, False]
    assert {s["jurisdiction"] for s in starts} == {"indiana"}


async def test_controllers_started_together_note_it_once_and_all_start(store: LedgerStore) -> None:
    """Several controllers starting at once on one database each note demonstration mode and
    check the ledger key: one write of each stands, and none of them fails for the others."""
    stores = [LedgerStore(store.engine, store.key) for _ in range(6)]
    await asyncio.gather(*(s.check_key() for s in stores))
    firsts = await asyncio.gather(
        *(s.note_demonstration(at_us=T0 + i, actor="configuration") for i, s in enumerate(stores))
    )
    assert sorted(firsts) == [False] * 5 + [True]
    assert await store.demonstration_since() == T0 + firsts.index(True)


async def test_the_retention_purge_carries_the_mark_on(store: LedgerStore) -> None:
    """Five years on, the purge removes the first entry that said so; its manifest says it on,
    and the link read back is still marked."""
    now = time.time_ns() // 1_000
    six_years_ago = years_before(now, 6)
    await store.create_link(
        link_id="old", name="Old bank", game=Game.CARIBBEAN_STUD, rate_bp=8000,
        reset_cents=1_000_00, tables=[table("o1")], at_us=six_years_ago, actor="test",
        demonstration=True,
    )  # fmt: skip
    clock = FixedClock(six_years_ago)
    rt = LinkRuntime(store, clock)
    await rt.memory.load()
    await rt.readings.apply(
        [TableReading(table_id="o1", poll_seq=1, at_us=clock.now_us(), credits=0)]
    )
    clock.advance(now - clock.now_us())
    await rt.readings.apply(
        [TableReading(table_id="o1", poll_seq=2, at_us=clock.now_us(), credits=5)]
    )
    report = await run_retention(rt, meter_years=5, integrity_years=1)
    assert report.links["old"]["demonstration"] is True
    async with store.engine.connect() as conn:
        kinds = list(
            await conn.scalars(select(MeterEntryRow.kind).where(MeterEntryRow.link_id == "old"))
        )
    assert "link_opened" not in kinds and "retention_purge" in kinds
    assert (await LedgerStore(store.engine, KEY).load_link("old")).demonstration is True
