"""Devices removed from play, corrections by two people, retention and reconciliation, on
real SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import time

import pytest
from sqlalchemy import delete, select, text, update
from sqlalchemy.exc import DBAPIError

from controller.core.games import Game
from controller.core.money import contribution_units
from controller.core.reducer import EntryKind, TableReading
from controller.paperwork import reconciliation
from controller.paperwork.corrections import CorrectionCategory, Corrections
from controller.paperwork.integrity import DeviceRemoval, IntegrityRecords, RemedialAction
from controller.paperwork.retention import run_retention, years_before
from controller.rules import RuleViolation
from controller.runtime.clock import FixedClock
from controller.runtime.links import LinkRuntime
from controller.storage.errors import NotFound, StoreError
from controller.storage.models import DocumentRow, LedgerAnchorRow, MeterEntryRow
from controller.storage.papers.integrity import Employee
from controller.storage.papers.reconciliation import opening_units
from controller.storage.paperwork import CorrectionRequestRow, IntegrityRecordRow
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from tests.conftest import KEY, T0
from tests.controller.storage.helpers import Poller, make_link, table

PDF = b"%PDF-1.4 service report"
SEC = 1_000_000


def removal() -> DeviceRemoval:
    return DeviceRemoval(
        questioned_at_us=T0,
        device_type="Caribbean Stud table controller",
        manufacturer_serial_number="SN-1234",
        commission_registration_number="IGC-77",
        malfunction_reason="bet sensor of seat 3 counts twice",
        complainant_name="A. Patron",
        complainant_address="1 Main St",
        complainant_telephone="555-0100",
        complaint_nature="bet counted twice",
    )


ACTION = RemedialAction(
    description="replaced the seat 3 sensor",
    employees=[
        Employee(printed_name="T. Tech", signature="T.T.", occupational_license_number="L1")
    ],
)


async def rt_at(store: LedgerStore, at_us: int) -> tuple[LinkRuntime, FixedClock]:
    clock = FixedClock(at_us)
    rt = LinkRuntime(store, clock)
    await rt.memory.load()
    return rt, clock


async def test_an_out_of_play_table_credits_nothing_until_returned(store: LedgerStore) -> None:
    await make_link(store)
    rt, clock = await rt_at(store, T0)
    integrity = IntegrityRecords(store.engine, rt, clock)
    poll = Poller()
    await rt.readings.apply([poll.reading("t1", 100)])
    opened = rt.memory.states["stud"].meter_units
    record_id = await integrity.remove_from_play(table_id="t1", removal=removal(), actor="tech1")
    # Its contributions still arrive: nothing is credited, the baseline follows.
    await rt.readings.apply([poll.reading("t1", 140)])
    assert rt.memory.states["stud"].meter_units == opened
    # A hit is refused and recorded.
    await rt.readings.apply([poll.royal("t1", 141, seq=1)])
    assert rt.memory.states["stud"].meter_units == opened
    hits = await rt.hits.of_link("stud")
    assert [h.status for h in hits] == ["refused"]

    with pytest.raises(RuleViolation, match="remedial action"):
        await integrity.return_to_play(table_id="t1", record_id=record_id, actor="sup1")
    with pytest.raises(RuleViolation, match="after a remedial action"):
        await integrity.verify(table_id="t1", record_id=record_id, verification="ok", actor="sup1")
    await integrity.add_remedial_action(
        table_id="t1", record_id=record_id, action=ACTION, actor="tech1"
    )
    # Read back as recorded: its lists as lists, decoded where they are stored.
    (action,) = (await integrity.record("t1", record_id)).remedial_actions
    assert action.employees == tuple(ACTION.employees) and action.outside_individuals == ()
    with pytest.raises(RuleViolation, match="verified"):
        await integrity.return_to_play(table_id="t1", record_id=record_id, actor="sup1")
    await integrity.verify(
        table_id="t1", record_id=record_id, verification="100 test rounds", actor="sup1"
    )
    await integrity.return_to_play(table_id="t1", record_id=record_id, actor="sup1")
    assert not rt.memory.states["stud"].tables["t1"].out_of_play
    await rt.readings.apply([poll.reading("t1", 150)])
    assert rt.memory.states["stud"].meter_units == opened + contribution_units(
        credits=9, denomination_cents=100, rate_bp=8250
    )
    # The state survives a reload, and the chain is whole.
    assert (await store.load_link("stud")).tables["t1"].out_of_play is False
    assert (await verify_ledger(store.engine, KEY)).ok

    row = (await integrity.record("t1", record_id)).record
    async with store.engine.connect() as conn:
        notice = (
            await conn.execute(select(DocumentRow).where(DocumentRow.sha256 == row.notice_sha256))
        ).one()
    assert notice.content.startswith(b"%PDF")
    assert hashlib.sha256(notice.content).hexdigest() == row.notice_sha256
    # The facts of the record are fixed; its follow-up is filled in once.
    with pytest.raises(DBAPIError, match="never edited"):
        async with store.engine.begin() as conn:
            await conn.execute(
                update(IntegrityRecordRow)
                .where(IntegrityRecordRow.record_id == record_id)
                .values(malfunction_reason="nothing")
            )
    with pytest.raises(DBAPIError, match="never edited"):
        async with store.engine.begin() as conn:
            await conn.execute(
                update(IntegrityRecordRow)
                .where(IntegrityRecordRow.record_id == record_id)
                .values(returned_by="someone else")
            )


async def test_an_outside_company_is_recorded_whole(store: LedgerStore) -> None:
    with pytest.raises(RuleViolation, match=r"\(b\)\(8\)"):
        RemedialAction(description="fixed", outside_company_name="Acme").check()
    RemedialAction(
        description="fixed",
        outside_company_name="Acme",
        outside_company_address="2 Road",
        outside_company_telephone="555",
        outside_individuals=["B. Smith"],
    ).check()


async def test_a_correction_takes_two_people_and_a_document(store: LedgerStore) -> None:
    await make_link(store)
    rt, clock = await rt_at(store, T0)
    corrections = Corrections(store.engine, rt, clock)
    with pytest.raises(RuleViolation, match="supporting document"):
        await corrections.ask(
            link_id="stud", delta_cents=-500, category=CorrectionCategory.MALFUNCTION,
            reason="meter ran on", requested_by="sup1", document=None,
        )  # fmt: skip
    request_id = await corrections.ask(
        link_id="stud", delta_cents=-500, category=CorrectionCategory.MALFUNCTION,
        reason="meter ran on", requested_by="sup1", document=PDF, document_name="report.pdf",
        document_type="application/pdf",
    )  # fmt: skip
    before = rt.memory.states["stud"].meter_units  # a request moves nothing
    with pytest.raises(RuleViolation, match="cannot also approve"):
        await corrections.approve(request_id, approved_by="sup1")
    # The runtime itself refuses a correction without a second person.
    with pytest.raises(RuleViolation, match="second person"):
        await rt.commands.correct(
            "stud", delta_cents=-500, category="malfunction", reason="x", requested_by="sup1",
            approved_by=None, document=PDF,
        )  # fmt: skip
    assert rt.memory.states["stud"].meter_units == before
    correction_id = await corrections.approve(request_id, approved_by="admin1")
    assert rt.memory.states["stud"].meter_units == before - 500 * 10_000
    req = await corrections.request(request_id)
    assert (req.status, req.decided_by, req.correction_id) == ("approved", "admin1", correction_id)
    with pytest.raises(StoreError, match="already approved"):
        await corrections.approve(request_id, approved_by="admin2")
    assert (await verify_ledger(store.engine, KEY)).ok


async def test_a_correction_of_an_unknown_link_is_not_found(store: LedgerStore) -> None:
    await make_link(store)
    rt, clock = await rt_at(store, T0)
    corrections = Corrections(store.engine, rt, clock)
    with pytest.raises(NotFound, match="no link 'nope'"):
        corrections.meters("nope")
    with pytest.raises(NotFound, match="no link 'nope'"):
        await corrections.requests(link_id="nope")
    with pytest.raises(NotFound, match="no link 'nope'"):
        await corrections.ask(
            link_id="nope", delta_cents=5, category=CorrectionCategory.OTHER, reason="x",
            requested_by="sup1", document=None,
        )  # fmt: skip
    with pytest.raises(NotFound, match="no correction request"):
        await corrections.approve("nope", approved_by="sup2")


async def test_an_unknown_table_or_another_tables_record_is_not_found(store: LedgerStore) -> None:
    await make_link(store)
    rt, clock = await rt_at(store, T0)
    integrity = IntegrityRecords(store.engine, rt, clock)
    with pytest.raises(NotFound, match="no table 'nope'"):
        await integrity.records("nope")
    with pytest.raises(NotFound, match="no table 'nope'"):
        await integrity.remove_from_play(table_id="nope", removal=removal(), actor="tech1")
    record_id = await integrity.remove_from_play(table_id="t1", removal=removal(), actor="tech1")
    # A record is found under its own table only.
    with pytest.raises(NotFound, match="for table 't2'"):
        await integrity.record("t2", record_id)
    with pytest.raises(NotFound, match="for table 't2'"):
        await integrity.add_remedial_action(
            table_id="t2", record_id=record_id, action=ACTION, actor="tech1"
        )
    assert [r.record.record_id for r in await integrity.records("t1")] == [record_id]
    assert await integrity.records("t2") == []


async def test_reconciliation_balances_to_the_unit_after_play(store: LedgerStore) -> None:
    await make_link(store)
    rt, clock = await rt_at(store, T0)
    poll = Poller()
    await rt.readings.apply([poll.reading("t1", 0), poll.reading("t2", 0)])
    for n in range(1, 6):
        await rt.readings.apply([poll.reading("t1", 7 * n), poll.reading("t2", 3 * n)])
    await rt.readings.apply([poll.royal("t1", 36, seq=1)])
    corrections = Corrections(store.engine, rt, clock)
    request_id = await corrections.ask(
        link_id="stud", delta_cents=-123, category=CorrectionCategory.TRANSFER,
        reason="moved to the draw link", requested_by="sup1", document=PDF,
        document_type="application/pdf",
    )  # fmt: skip
    await corrections.approve(request_id, approved_by="sup2")
    total, weeks = await reconciliation.reconciliation(store.engine, "stud", T0, poll.at + SEC)
    assert total.balanced, total.problems
    assert total.difference_units == 0
    assert total.closing_units == rt.memory.states["stud"].meter_units
    assert {t.table_id: t.credits for t in total.tables.values()} == {"t1": 36, "t2": 15}
    assert total.tables["t1"].units == contribution_units(
        credits=36, denomination_cents=100, rate_bp=8250
    )
    assert total.corrections_units == -123 * 10_000
    assert total.awards_units > 0
    assert sum(w.contributions_units for w in weeks) == total.contributions_units
    assert weeks[-1].closing_units == total.closing_units

    # One unit more credited than the credits make, carried through consistently to the
    # closing meter: flagged loudly.
    async with store.engine.connect() as conn:
        opening = await opening_units(conn, "stud", T0)
        batches = reconciliation.entry_batches(conn, "stud", T0, poll.at + SEC)
        entries = [e async for batch in batches for e in batch]
    i = next(k for k, e in enumerate(entries) if e.kind == EntryKind.CONTRIBUTION)
    entries = [
        e._replace(
            delta_units=e.delta_units + (k == i),
            meter_before_units=e.meter_before_units + (k > i),
            meter_after_units=e.meter_after_units + (k >= i),
        )
        for k, e in enumerate(entries)
    ]
    tampered = reconciliation.reconcile("stud", T0, poll.at + SEC, opening, entries)
    assert not tampered.balanced
    assert any(p.startswith("DIFFERENCE") for p in tampered.problems)
    assert tampered.difference_units == 1


async def test_retention_purges_the_old_keeps_the_young_and_verify_stays_whole(
    store: LedgerStore,
) -> None:
    now = time.time_ns() // 1_000
    six_years_ago = years_before(now, 6)
    await store.create_link(
        link_id="old", name="Old bank", game=Game.CARIBBEAN_STUD, rate_bp=8000,
        reset_cents=1_000_00, tables=[table("o1")], at_us=six_years_ago, actor="test",
    )  # fmt: skip
    rt, clock = await rt_at(store, six_years_ago)

    def reading(seq: int, credits: int) -> TableReading:
        return TableReading(table_id="o1", poll_seq=seq, at_us=clock.now_us(), credits=credits)

    await rt.readings.apply([reading(1, 0)])
    clock.advance(SEC)
    await rt.readings.apply([reading(2, 10)])
    corrections = Corrections(store.engine, rt, clock)
    request_id = await corrections.ask(
        link_id="old", delta_cents=-100, category=CorrectionCategory.MALFUNCTION,
        reason="old fix", requested_by="sup1", document=b"%PDF-old", document_type="application/pdf",
    )  # fmt: skip
    await corrections.approve(request_id, approved_by="sup2")
    clock.advance(years_before(now, 4) - clock.now_us())  # two years on: four years ago
    await rt.readings.apply([reading(3, 20)])
    meter = rt.memory.states["old"].meter_units

    # A shorter period than the regulations ask is refused with its clause.
    with pytest.raises(RuleViolation, match=r"10-6-5\(d\)"):
        await run_retention(rt, meter_years=4, integrity_years=1)

    clock.advance(now - clock.now_us())
    report = await run_retention(rt, meter_years=5, integrity_years=1)
    manifest = report.links["old"]
    assert manifest["first_seq"] == 1
    assert manifest["counts"]["meter_entries"] == manifest["last_seq"]
    assert manifest["counts"]["corrections"] == 1
    assert len(manifest["documents_sha256"]) == 1
    async with store.engine.connect() as conn:
        kinds = (
            await conn.scalars(
                select(MeterEntryRow.kind)
                .where(MeterEntryRow.link_id == "old")
                .order_by(MeterEntryRow.seq)
            )
        ).all()
        anchor = (await conn.execute(select(LedgerAnchorRow))).one()
        young_seq = await conn.scalar(
            select(MeterEntryRow.seq).where(MeterEntryRow.kind == "contribution")
        )
    # The four-year-old contribution stays; the manifest is sealed into the chain.
    assert kinds == ["contribution", "retention_purge"]
    assert anchor.seq == manifest["last_seq"]
    assert rt.memory.states["old"].meter_units == meter
    report = await verify_ledger(store.engine, KEY)
    assert report.ok, report.problems

    # The database itself refuses to purge the four-year-old entry.
    with pytest.raises(DBAPIError, match="older than 5 years"):
        async with store.engine.begin() as conn:
            await conn.execute(
                delete(MeterEntryRow).where(
                    MeterEntryRow.link_id == "old", MeterEntryRow.seq == young_seq
                )
            )
    # A second run purges nothing more; a period in force cannot be shortened.
    again = await run_retention(rt, meter_years=6, integrity_years=1)
    assert again.links == {}
    with pytest.raises(RuleViolation, match="cannot be shortened"):
        await run_retention(rt, meter_years=5, integrity_years=1)
    async with store.engine.connect() as conn:
        assert await conn.scalar(select(text("count(*)")).select_from(CorrectionRequestRow)) == 0
