"""The retention purge as the service runs it: on a schedule, from the settings, never fatal."""

from __future__ import annotations

import logging
import time

import pytest
from pydantic import ValidationError
from sqlalchemy import func, insert, select, update

from controller.core.games import Game
from controller.core.reducer import TableReading
from controller.paperwork.corrections import CorrectionCategory, Corrections
from controller.paperwork.retention import RetentionBusy, run_retention, years_before
from controller.rules import RuleViolation
from controller.runtime.clock import FixedClock
from controller.runtime.links import LinkRuntime
from controller.runtime.service import FloorService
from controller.settings import Settings
from controller.storage.models import LedgerMetaRow, MeterEntryRow
from controller.storage.sessions import only_one
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from tests.app.helpers import progressive
from tests.conftest import KEY
from tests.controller.storage.helpers import table

SEC = 1_000_000


async def six_years_of_history(store: LedgerStore, now: int) -> None:
    """Entries and a correction six years old, and one contribution a year old."""
    await store.create_link(
        link_id="old", name="Old bank", game=Game.CARIBBEAN_STUD, rate_bp=8000,
        reset_cents=1_000_00, tables=[table("o1")], at_us=years_before(now, 6), actor="test",
    )  # fmt: skip
    clock = FixedClock(years_before(now, 6))
    rt = LinkRuntime(store, clock)
    await rt.memory.load()

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
    clock.advance(years_before(now, 1) - clock.now_us())
    await rt.readings.apply([reading(3, 20)])


def settings(db_url: str, **kw: object) -> Settings:
    return Settings(
        database_url=db_url,
        ledger_key=KEY.hex(),
        retention_first_run_s=0.01,
        retention_interval_s=0.01,
        **kw,  # type: ignore[arg-type]
    )


async def kinds(store: LedgerStore) -> list[str]:
    async with store.engine.connect() as conn:
        q = select(MeterEntryRow.kind).where(MeterEntryRow.link_id == "old")
        return list((await conn.scalars(q.order_by(MeterEntryRow.seq))).all())


@pytest.mark.usefixtures("no_leaked_tasks")
async def test_the_service_purges_on_its_schedule_and_keeps_the_young(
    store: LedgerStore, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    now = time.time_ns() // 1_000
    await six_years_of_history(store, now)
    service = FloorService(settings(db_url), clock=FixedClock(now))
    caplog.set_level(logging.INFO, logger="controller.paperwork.retention")
    await service.start()
    try:
        job = service.retention
        assert job is not None
        await job.wait_for_runs(2)  # the first run purges; the next finds nothing more
        assert job.failures == 0
    finally:
        await service.stop()
    assert service.retention is None
    assert await kinds(store) == ["contribution", "retention_purge"]  # the year-old one stays
    report = await verify_ledger(store.engine, KEY)
    assert report.ok, report.problems
    purged = [r.getMessage() for r in caplog.records if "link old: entries 1-" in r.getMessage()]
    assert len(purged) == 1, caplog.text


@pytest.mark.usefixtures("no_leaked_tasks")
async def test_a_failed_purge_is_logged_and_tried_again(
    store: LedgerStore, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    now = time.time_ns() // 1_000
    await six_years_of_history(store, now)
    service = FloorService(settings(db_url), clock=FixedClock(now))
    await service.start()
    try:
        job = service.retention
        assert job is not None
        # Another process puts a longer period in force: this service's runs are refused.
        async with store.engine.begin() as conn:
            await conn.execute(
                insert(LedgerMetaRow).values(name="retention_meter_years", value="7")
            )
        await job.wait_for_runs(job.runs + 2)
        assert job.failures >= 1 and service.started
        assert "the retention purge failed" in caplog.text
        assert "cannot be shortened" in caplog.text
        async with store.engine.begin() as conn:
            await conn.execute(
                update(LedgerMetaRow)
                .where(LedgerMetaRow.name == "retention_meter_years")
                .values(value="5")
            )
        failures = job.failures
        await job.wait_for_runs(job.runs + 2)
        assert job.failures <= failures + 1  # a run under way may still have seen the 7
        assert job.last_report is not None
    finally:
        await service.stop()
    assert "retention_purge" in await kinds(store)
    assert (await verify_ledger(store.engine, KEY)).ok


def test_retention_settings_never_below_the_regulations() -> None:
    # 68 IAC 10-6-5(d): five years; 68 IAC 10-1-6.2(c): one year.
    assert (Settings().meter_retention_years, Settings().integrity_retention_years) == (5, 1)
    with pytest.raises(ValidationError, match=r"at least 5 years, not 4 \(68 IAC 10-6-5\(d\)\)"):
        Settings(meter_retention_years=4)
    with pytest.raises(ValidationError, match=r"68 IAC 10-1-6.2\(c\)"):
        Settings(integrity_retention_years=0)
    assert Settings(meter_retention_years=7).meter_retention_years == 7


async def test_a_setting_shorter_than_the_period_in_force_is_refused_at_start(
    store: LedgerStore, db_url: str
) -> None:
    longer = FloorService(settings(db_url, meter_retention_years=7), retention_schedule=False)
    await longer.start()
    try:
        await run_retention(longer.runtime, meter_years=7, integrity_years=1)
    finally:
        await longer.stop()
    shorter = FloorService(settings(db_url, meter_retention_years=6))
    with pytest.raises(RuleViolation, match="cannot be shortened to 6"):
        await shorter.start()
    assert not shorter.started


async def test_retention_run_takes_its_periods_from_the_settings(
    store: LedgerStore, db_url: str
) -> None:
    env = {"PROGRESSIVE_METER_RETENTION_YEARS": "6", "PROGRESSIVE_INTEGRITY_RETENTION_YEARS": "2"}
    code, _, err = await progressive("retention", "run", db_url=db_url, env=env)
    assert code == 0, err
    async with store.engine.connect() as conn:
        rows = dict((await conn.execute(select(LedgerMetaRow.name, LedgerMetaRow.value))).all())
    assert (rows["retention_meter_years"], rows["retention_integrity_years"]) == ("6", "2")
    # Its option still overrides, and still only lengthens.
    code, _, err = await progressive(
        "retention", "run", "--meter-years", "5", db_url=db_url, env=env
    )
    assert code != 0 and "cannot be shortened to 5" in err


async def test_one_process_of_a_floor_purges_at_a_time(store: LedgerStore, db_kind: str) -> None:
    if db_kind != "postgres":
        pytest.skip("on SQLite one process owns the file")
    now = time.time_ns() // 1000
    await six_years_of_history(store, now)
    rt = LinkRuntime(store, FixedClock(now))
    await rt.memory.load()
    async with store.engine.connect() as conn:
        before = await conn.scalar(select(func.count()).select_from(MeterEntryRow))
    async with only_one(store.engine, "retention") as alone:  # another process purging
        assert alone
        with pytest.raises(RetentionBusy):
            await run_retention(rt, meter_years=5, integrity_years=1)
        async with store.engine.connect() as conn:
            during = await conn.scalar(select(func.count()).select_from(MeterEntryRow))
        assert during == before  # nothing removed meanwhile
    report = await run_retention(rt, meter_years=5, integrity_years=1)
    assert report.links["old"]["counts"]["meter_entries"] >= 1
    assert (await verify_ledger(store.engine, KEY)).ok
