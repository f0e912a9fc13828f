"""Submissions on real databases: filed with their packets, reviewed once, armed, applied."""

from __future__ import annotations

import hashlib
import json
from datetime import date

import pytest
from sqlalchemy import select

from controller.core.games import Game, make_paytable
from controller.core.reducer import EntryKind
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.rules import RuleViolation
from controller.rules.filing import DAY_US, NoticeWaiver, Proposal, SubmissionKind
from controller.runtime.clock import FixedClock
from controller.runtime.links import LinkRuntime
from controller.storage.errors import StoreError
from controller.storage.models import AuditRow, LinkRow, MeterEntryRow
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from tests.conftest import T0
from tests.controller.storage.helpers import Poller, make_link, table

K = SubmissionKind
AGENT = Role.COMMISSION_AGENT
WAIVER = NoticeWaiver(
    given_by="J. Doe, Executive Director",
    reference="IGC letter 2026-114",
    given_on=date(2025, 12, 30),
    document_sha256=hashlib.sha256(b"the director's letter").hexdigest(),
)


async def floor(
    store: LedgerStore,
) -> tuple[LinkRuntime, FilingDesk, ReviewDesk, FixedClock]:
    await make_link(store)
    clock = FixedClock(T0)
    rt = LinkRuntime(store, clock)
    await rt.memory.load()
    filing = FilingDesk(rt)
    return rt, filing, ReviewDesk(filing), clock


async def playing(store: LedgerStore) -> tuple[LinkRuntime, FilingDesk, ReviewDesk, Poller]:
    """The floor, both tables read once at T0."""
    rt, filing, review, _ = await floor(store)
    poll = Poller()
    poll.at = T0
    await rt.readings.apply([poll.reading("t1", 0), poll.reading("t2", 0)])
    return rt, filing, review, poll


async def test_a_rate_change_filed_approved_and_applied_at_the_next_reset(
    store: LedgerStore,
) -> None:
    rt, filing, review, poll = await playing(store)
    # 68 IAC 10-1-1.1(d): no jackpot yet, so no rate change.
    with pytest.raises(RuleViolation, match=r"10-1-1\.1\(d\)"):
        await filing.file_change(
            link_id="stud", proposal=Proposal(kind=K.RATE_CHANGE, rate_bp=9000), filed_by="sup"
        )
    await rt.readings.apply([poll.royal("t1", 1, seq=1)])
    with pytest.raises(RuleViolation, match="30 days"):
        await filing.file_change(
            link_id="stud", proposal=Proposal(kind=K.RATE_CHANGE, rate_bp=9000),
            filed_by="sup", effective_at_us=T0 + 29 * DAY_US,
        )  # fmt: skip
    row = await filing.file_change(
        link_id="stud", proposal=Proposal(kind=K.RATE_CHANGE, rate_bp=9000), filed_by="sup"
    )
    assert row.status == "filed" and row.effective_at_us == T0 + 30 * DAY_US
    # The packet is kept whole, by SHA-256, as JSON and as PDF.
    content, name, ctype = await review.packet(row.submission_id, "json")
    assert name.endswith(".json") and ctype == "application/json"
    assert hashlib.sha256(content).hexdigest() == row.packet_json_sha256
    packet = json.loads(content)
    games = packet["progressive_games"]["games"]
    assert [g["table_id"] for g in games] == ["t1", "t2"]
    assert {g["rate_bp"] for g in games} == {9000} and {g["reset_cents"] for g in games} == {
        10_000_00
    }
    assert packet["rules_of_the_game"]["number_of_tables"] == 2
    assert packet["rules_of_the_game"]["clause"] == "68 IAC 10-6-2(b)(2)-(4)"
    pdf, _, pdf_type = await review.packet(row.submission_id, "pdf")
    assert pdf.startswith(b"%PDF") and pdf_type == "application/pdf"
    assert hashlib.sha256(pdf).hexdigest() == row.packet_pdf_sha256
    # One at a time per link.
    with pytest.raises(RuleViolation, match="awaiting review"):
        await filing.file_change(
            link_id="stud", proposal=Proposal(kind=K.RESET_CHANGE, reset_cents=5), filed_by="sup"
        )
    # Only a commission agent approves.
    for role in (Role.SUPERVISOR, Role.ADMIN):
        with pytest.raises(RuleViolation, match="commission agent"):
            await review.approve(row.submission_id, reviewer="boss", role=role)
    approved = await review.approve(row.submission_id, reviewer="agent", role=AGENT)
    assert approved.status == "approved" and approved.reviewed_by == "agent"
    with pytest.raises(StoreError, match="already approved"):
        await review.reject(row.submission_id, reviewer="agent", role=AGENT, reason="late")
    assert rt.memory.states["stud"].armed is not None
    # Approved, it waits for the link's next jackpot: the next change is filed once it applied.
    with pytest.raises(RuleViolation, match=f"waits to apply submission {row.submission_id}"):
        await filing.file_change(
            link_id="stud", proposal=Proposal(kind=K.RESET_CHANGE, reset_cents=5), filed_by="sup"
        )
    # Effective date passes while the link accumulates: the rate does not move.
    poll.at = T0 + 31 * DAY_US
    await rt.readings.apply([poll.reading("t1", 5), poll.reading("t2", 5)])
    assert rt.memory.states["stud"].rate_bp == 8250
    # The next jackpot: applied at its reset, and the submission records when.
    await rt.readings.apply([poll.royal("t2", 6, seq=2)])
    assert rt.memory.states["stud"].rate_bp == 9000 and rt.memory.states["stud"].armed is None
    done = await filing.get(row.submission_id)
    assert done.applied_at_us == poll.at
    # Reloaded from the database, the link is what memory said.
    again = await store.load_link("stud")
    assert again.rate_bp == 9000 and again.armed is None
    async with store.engine.connect() as conn:
        kinds = (
            await conn.scalars(
                select(MeterEntryRow.kind).where(MeterEntryRow.link_id == "stud")
                .order_by(MeterEntryRow.seq)
            )
        ).all()  # fmt: skip
        actions = (await conn.scalars(select(AuditRow.action))).all()
    assert str(EntryKind.CHANGE_ARMED) in kinds
    assert kinds[kinds.index(str(EntryKind.RATE_CHANGED)) - 1] == str(EntryKind.JACKPOT_RESET)
    assert {"submission.file", "submission.approve"} <= set(actions)
    assert (await verify_ledger(store.engine, store.key)).ok


async def test_an_armed_change_survives_a_restart_and_a_paytable_change_is_stored(
    store: LedgerStore,
) -> None:
    _, filing, review, clock = await floor(store)
    lines = [{"hand": "ROYAL_FLUSH", "percent_bp": 10_000}, {"hand": "FLUSH", "fixed_cents": 75_00}]
    pt = make_paytable(Game.CARIBBEAN_STUD, lines)
    # 68 IAC 10-1-4(1): the executive director provided otherwise for this amendment.
    row = await filing.file_change(
        link_id="stud", proposal=Proposal(kind=K.PAYTABLE_CHANGE, paytable=pt), filed_by="sup",
        waiver=WAIVER,
    )  # fmt: skip
    assert row.waiver == WAIVER.to_dict() and row.notice_override is None
    assert row.effective_at_us == T0  # at once: the director provided otherwise
    packet = json.loads((await review.packet(row.submission_id, "json"))[0])
    assert packet["notice"]["waiver"]["reference"] == WAIVER.reference
    # Approved only once the agent confirmed the director's direction.
    with pytest.raises(RuleViolation, match="confirm the executive director") as caught:
        await review.approve(row.submission_id, reviewer="agent", role=AGENT)
    assert caught.value.clause == "68 IAC 10-1-4(1)"
    await review.approve(row.submission_id, reviewer="agent", role=AGENT, waiver_confirmed=True)
    rt2 = LinkRuntime(store, clock)
    await rt2.memory.load()
    assert rt2.memory.states["stud"].armed is not None
    assert rt2.memory.states["stud"].armed.paytable == pt
    poll = Poller()
    poll.at = T0
    await rt2.readings.apply([poll.reading("t1", 0)])
    await rt2.readings.apply([poll.royal("t1", 1, seq=1)])
    reloaded = await store.load_link("stud")
    assert reloaded.paytable == pt
    async with store.engine.connect() as conn:
        assert await conn.scalar(select(LinkRow.armed_change)) is None


async def test_a_new_link_does_not_play_until_approved(store: LedgerStore) -> None:
    rt, filing, review, clock = await floor(store)
    assert rt.memory.is_live("stud", T0)  # a link with no submission predates the filing desk
    row = await filing.file_new_link("stud", filed_by="sup")
    assert not rt.memory.is_live("stud", T0)
    with pytest.raises(RuleViolation, match="not yet approved"):
        await filing.file_change(
            link_id="stud", proposal=Proposal(kind=K.RESET_CHANGE, reset_cents=5), filed_by="sup"
        )
    rt2 = LinkRuntime(store, clock)
    await rt2.memory.load()
    assert not rt2.memory.is_live("stud", T0)
    rejected = await review.reject(
        row.submission_id, reviewer="agent", role=AGENT, reason="tables?"
    )
    assert rejected.review_reason == "tables?"
    again = await filing.file_new_link("stud", filed_by="sup", effective_at_us=T0 + 60 * DAY_US)
    await review.approve(again.submission_id, reviewer="agent", role=AGENT)
    assert not rt.memory.is_live("stud", T0)
    assert rt.memory.is_live("stud", T0 + 60 * DAY_US)
    # Approved once: never filed as new again.
    with pytest.raises(RuleViolation, match="already approved") as caught:
        await filing.file_new_link("stud", filed_by="sup")
    assert caught.value.clause == "68 IAC 10-1-3(c)(4), 10-1-4(3)"
    rt3 = LinkRuntime(store, clock)
    await rt3.memory.load()
    assert rt3.memory.is_live("stud", T0 + 60 * DAY_US) and not rt3.memory.is_live("stud", T0)


async def test_the_packet_carries_the_par_sheet_at_the_meter_and_the_bound_is_the_desks(
    store: LedgerStore,
) -> None:
    rt, filing, review, poll = await playing(store)
    await rt.readings.apply([poll.reading("t1", 40)])
    meter = rt.memory.states["stud"].meter_cents
    assert meter > rt.memory.states["stud"].reset_cents
    pt = make_paytable(Game.CARIBBEAN_STUD, [{"hand": "ROYAL_FLUSH", "percent_bp": 10_000}])
    proposal = Proposal(kind=K.PAYTABLE_CHANGE, paytable=pt)
    # A bound tighter than the royal flush's 649,739 to 1 refuses the filing, naming it.
    strict = FilingDesk(rt, jackpot_odds_bound=500_000)
    with pytest.raises(RuleViolation, match="worse than the bound of 500,000 to 1"):
        await strict.file_change(link_id="stud", proposal=proposal, filed_by="sup")
    row = await filing.file_change(link_id="stud", proposal=proposal, filed_by="sup")
    content, _, _ = await review.packet(row.submission_id, "json")
    par = json.loads(content)["par_sheet"]
    assert par["jackpot_odds_bound"]["to_one"] == 100_000_000
    assert par["current"]["meter_cents"] == par["proposed"]["meter_cents"] == meter
    assert [line["hand"] for line in par["proposed"]["lines"]] == ["ROYAL_FLUSH"]


async def test_a_new_links_sixty_days_are_never_waived(store: LedgerStore) -> None:
    _, filing, review, _ = await floor(store)
    for effective in (T0, T0 + 60 * DAY_US, None):
        with pytest.raises(RuleViolation, match="no one waives the 60 days") as caught:
            await filing.file_new_link(
                "stud", filed_by="sup", waiver=WAIVER, effective_at_us=effective
            )
        assert caught.value.clause == "68 IAC 10-1-3(c)(1)"
    assert await review.find() == []


async def test_a_new_link_is_filed_with_the_location_of_each_of_its_tables(
    store: LedgerStore,
) -> None:
    await store.create_link(
        link_id="stud", name="Caribbean Stud bank", game=Game.CARIBBEAN_STUD, rate_bp=8250,
        reset_cents=10_000_00, tables=[table("t1"), table("t2", location="")], at_us=T0,
        actor="test",
    )  # fmt: skip
    rt = LinkRuntime(store, FixedClock(T0))
    await rt.memory.load()
    filing = FilingDesk(rt)
    with pytest.raises(RuleViolation, match="none for t2") as caught:
        await filing.file_new_link("stud", filed_by="sup")
    assert caught.value.clause == "68 IAC 10-1-1.1(e)(2)"
    assert await ReviewDesk(filing).find() == []
