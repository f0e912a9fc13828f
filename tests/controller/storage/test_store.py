"""The store on real SQLite and PostgreSQL: one transaction per poll, exact restarts, guards."""

from __future__ import annotations

import dataclasses

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from controller.core.money import contribution_units
from controller.core.reducer import ConservationBroken, EntryKind, Outcome, apply_reading
from controller.storage.database import make_engine
from controller.storage.errors import StaleState, StoreError
from controller.storage.models import AnomalyRow, HitRow, LinkRow, MeterEntryRow, TableCounterRow
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from tests.conftest import KEY
from tests.controller.storage.helpers import Poller, make_link, runtime

RESET_UNITS = 10_000_00 * 10_000


async def test_poll_cycle_commits_and_restart_lands_on_exact_meter(store: LedgerStore) -> None:
    await make_link(store)
    rt = await runtime(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 1000), p.reading("t2", 50)])  # baselines
    await rt.readings.apply([p.reading("t1", 1013), p.reading("t2", 57)])
    await rt.readings.apply([p.reading("t1", 1020)])
    expected = RESET_UNITS + contribution_units(
        credits=20 + 7, denomination_cents=100, rate_bp=8250
    )
    assert rt.memory.states["stud"].meter_units == expected

    # A new process: same store contents, fresh memory.
    again = await runtime(LedgerStore(store.engine, KEY))
    assert again.memory.states["stud"] == rt.memory.states["stud"]
    # The tables' counters moved on while we were away: exactly the difference is credited.
    await again.readings.apply([p.reading("t1", 1030), p.reading("t2", 60)])
    expected += contribution_units(credits=10 + 3, denomination_cents=100, rate_bp=8250)
    assert again.memory.states["stud"].meter_units == expected
    report = await verify_ledger(store.engine, KEY)
    assert report.ok, report.problems


async def test_replaying_an_applied_reading_changes_nothing(store: LedgerStore) -> None:
    await make_link(store)
    rt = await runtime(store)
    p = Poller()
    first = p.reading("t1", 100)
    second = p.reading("t1", 140)
    await rt.readings.apply([first])
    await rt.readings.apply([second])
    before = rt.memory.states["stud"]
    async with store.engine.connect() as conn:
        n_before = await conn.scalar(
            select(MeterEntryRow.seq).order_by(MeterEntryRow.seq.desc()).limit(1)
        )
    assert await rt.readings.apply([second]) == []
    assert await rt.readings.apply([first]) == []
    assert rt.memory.states["stud"] == before
    async with store.engine.connect() as conn:
        n_after = await conn.scalar(
            select(MeterEntryRow.seq).order_by(MeterEntryRow.seq.desc()).limit(1)
        )
    assert n_after == n_before


async def test_a_failed_commit_leaves_nothing_and_memory_follows_the_database(
    store: LedgerStore,
) -> None:
    await make_link(store)
    rt = await runtime(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0), p.reading("t2", 0)])
    before = rt.memory.states["stud"]

    async def boom(_conn: object) -> None:
        raise ConnectionResetError("database went away mid-transaction")

    outcome_state = None
    original = store.commit

    async def failing_commit(outcomes, **kw):  # type: ignore[no-untyped-def]
        nonlocal outcome_state
        outcome_state = outcomes
        kw["extra"] = boom
        return await original(outcomes, **kw)

    store.commit = failing_commit  # type: ignore[method-assign]
    with pytest.raises(ConnectionResetError):
        await rt.readings.apply([p.reading("t1", 10), p.reading("t2", 5)])
    store.commit = original  # type: ignore[method-assign]
    assert outcome_state  # the engine did produce entries; none of them landed
    assert rt.memory.states["stud"] == before
    assert rt.memory.unrecorded == {}  # the database failed: no table is held for it
    async with store.engine.connect() as conn:
        credits = dict(
            (await conn.execute(select(TableCounterRow.table_id, TableCounterRow.credits))).all()
        )
    assert credits == {"t1": 0, "t2": 0}
    # The same readings, retried, are credited exactly once.
    await rt.readings.apply([p.reading("t1", 10), p.reading("t2", 5)])
    assert rt.memory.states["stud"].meter_units == RESET_UNITS + contribution_units(
        credits=15, denomination_cents=100, rate_bp=8250
    )
    assert (await verify_ledger(store.engine, KEY)).ok


async def test_the_commit_refuses_a_meter_its_entries_do_not_explain(store: LedgerStore) -> None:
    """Conservation of the meter is asserted where a step is committed, from the meter the
    store last read or wrote: a step whose state moves the meter with no entry, or whose
    entries start elsewhere, is refused and nothing of it lands."""
    await make_link(store)
    rt = await runtime(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0)])
    state = rt.memory.states["stud"]
    # A counter-only step (a table's row rewritten) that also moves the meter by one unit.
    invented = Outcome(
        dataclasses.replace(state, meter_units=state.meter_units + 1),
        tables_touched=frozenset({"t1"}),
    )
    with pytest.raises(ConservationBroken, match="difference \\+1 units"):
        await store.commit([invented])
    # A step that is whole in itself but starts from another meter than the stored one.
    other = LedgerStore(store.engine, KEY)
    rt2 = await runtime(other)
    step = apply_reading(rt2.memory.states["stud"], p.reading("t1", 25))
    assert step.events
    shifted = Outcome(
        dataclasses.replace(step.state, meter_units=step.state.meter_units + 7),
        events=tuple(e._replace(meter_before_units=e.meter_before_units + 7) for e in step.events),
        tables_touched=step.tables_touched,
    )
    with pytest.raises(ConservationBroken, match="starts from"):
        await other.commit([shifted])
    async with store.engine.connect() as conn:
        meter = await conn.scalar(select(LinkRow.meter_units).where(LinkRow.link_id == "stud"))
    assert meter == state.meter_units
    assert (await verify_ledger(store.engine, KEY)).ok


async def test_two_writers_cannot_interleave_one_chain(store: LedgerStore) -> None:
    await make_link(store)
    a = await runtime(store)
    b = await runtime(LedgerStore(store.engine, KEY))
    p = Poller()
    await a.readings.apply([p.reading("t1", 0)])
    with pytest.raises(StaleState):
        await b.readings.apply([p.reading("t2", 0)])
    # b reloaded from the database and can go on from there.
    await b.readings.apply([p.reading("t2", 0)])
    assert (await verify_ledger(store.engine, KEY)).ok


async def test_hit_is_recorded_once_with_its_award_and_reset(store: LedgerStore) -> None:
    await make_link(store)
    rt = await runtime(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0)])
    await rt.readings.apply([p.reading("t1", 1_000_000)])
    meter_cents = rt.memory.states["stud"].meter_cents
    await rt.readings.apply([p.royal("t1", 1_000_000, seq=1)])
    await rt.readings.apply([p.royal("t1", 1_000_000, seq=1)])  # ack not seen yet: same head
    async with store.engine.connect() as conn:
        hits = (await conn.execute(select(HitRow))).all()
    assert len(hits) == 1 and hits[0].award_cents == meter_cents and hits[0].paid_from == "meter"
    state = rt.memory.states["stud"]
    assert state.meter_cents == 10_000_00 and state.table("t1").hit_pending
    await rt.hits.verify(hits[0].hit_id, actor="tech1")
    await rt.hits.sign_off(hits[0].hit_id, actor="sup1")  # $10,000: the house's second signature
    await rt.hits.release_table("t1", actor="tech1")
    async with store.engine.connect() as conn:
        released = await conn.scalar(select(HitRow.released_by))
    assert released == "tech1"
    assert not rt.memory.states["stud"].table("t1").hit_pending
    assert (await verify_ledger(store.engine, KEY)).ok


async def test_anomaly_review_and_documented_correction(store: LedgerStore) -> None:
    await make_link(store)
    rt = await runtime(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0)])
    await rt.readings.apply([p.reading("t1", 5_000_000)])  # far beyond 7 seats x 100 in 1 s
    async with store.engine.connect() as conn:
        anomaly_id = await conn.scalar(select(AnomalyRow.anomaly_id))
    assert rt.memory.states["stud"].meter_units == RESET_UNITS
    await rt.commands.review_anomaly(anomaly_id, approve=True, reviewer="supervisor1")
    assert rt.memory.states["stud"].meter_units == RESET_UNITS + contribution_units(
        credits=5_000_000, denomination_cents=100, rate_bp=8250
    )
    with pytest.raises(StoreError, match="already approved"):
        await rt.commands.review_anomaly(anomaly_id, approve=False, reviewer="x", reason="late")

    with pytest.raises(ValueError, match="supporting document"):
        await rt.commands.correct(
            "stud",
            delta_cents=-100,
            category="malfunction",
            reason="meter glitch",
            requested_by="sup",
            approved_by="mgr",
        )
    before = rt.memory.states["stud"].meter_units
    await rt.commands.correct(
        "stud",
        delta_cents=-100,
        category="malfunction",
        reason="meter glitch",
        requested_by="sup",
        approved_by="mgr",
        document=b"%PDF-1.4 report",
        document_name="report.pdf",
        document_type="application/pdf",
    )
    assert rt.memory.states["stud"].meter_units == before - 100 * 10_000
    assert (await verify_ledger(store.engine, KEY)).ok


# ---------------------------------------------------------------------------------- guards


async def _refused(store: LedgerStore, sql: str, **params: object) -> str:
    with pytest.raises((IntegrityError, DBAPIError)) as info:
        async with store.engine.begin() as conn:
            await conn.execute(text(sql), params)
    return str(info.value)


async def _history(store: LedgerStore) -> None:
    await make_link(store)
    rt = await runtime(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0)])
    await rt.readings.apply([p.reading("t1", 500)])
    await rt.readings.apply([p.royal("t1", 500, seq=1)])


async def test_database_refuses_edits_and_young_deletes_of_history(store: LedgerStore) -> None:
    await _history(store)
    msg = await _refused(
        store, "UPDATE meter_entries SET delta_units = delta_units + 1 WHERE seq = 3"
    )
    assert "append-only" in msg
    msg = await _refused(store, "DELETE FROM meter_entries WHERE seq = 3")
    assert "older than 5 years" in msg
    assert "append-only" in await _refused(store, "UPDATE audit_log SET actor = 'nobody'")
    assert "append-only" in await _refused(store, "UPDATE paytables SET lines = '[]'")
    msg = await _refused(store, "UPDATE hits SET award_cents = award_cents + 100")
    assert "never edited" in msg
    # Filling in the verification is what hits allow.
    async with store.engine.begin() as conn:
        await conn.execute(text("UPDATE hits SET verified_by = 'tech1', verified_at_us = 1"))
    if store.engine.dialect.name == "postgresql":
        assert "append-only" in await _refused(store, "TRUNCATE meter_entries")


async def test_database_refuses_a_reduction_without_a_reason(store: LedgerStore) -> None:
    await _history(store)
    cols = (
        "link_id, seq, at_us, kind, meter_before_units, delta_units, meter_after_units, "
        "explanation, details, prev_hash, hash"
    )
    for kind, explanation in (("contribution", "x"), ("award", "no hit named"), ("correction", "")):
        msg = await _refused(
            store,
            f"INSERT INTO meter_entries ({cols}) VALUES ('stud', 99, 1, :kind, 100, -1, 99, "
            ":explanation, '{{}}', 'p', 'h')",
            kind=kind,
            explanation=explanation,
        )
        assert "reduction_has_reason" in msg


async def test_retention_purge_may_remove_only_entries_older_than_five_years(
    store: LedgerStore,
) -> None:
    six_years_ago_us = 1_577_836_800_000_000  # 2020-01-01
    four_years_ago_us = 1_672_531_200_000_000  # 2023-01-01 (the test date is 2026-11 or later)
    async with store.engine.begin() as conn:
        for seq, at in ((1, six_years_ago_us), (2, four_years_ago_us)):
            await conn.execute(
                text(
                    "INSERT INTO meter_entries (link_id, seq, at_us, kind, meter_before_units, "
                    "delta_units, meter_after_units, explanation, details, prev_hash, hash) "
                    "VALUES ('old', :seq, :at, 'contribution', 0, 0, 0, 'x', '{}', 'p', 'h')"
                ),
                {"seq": seq, "at": at},
            )
    msg = await _refused(store, "DELETE FROM meter_entries WHERE link_id = 'old' AND seq = 2")
    assert "68 IAC 10-6-5(d)" in msg
    async with store.engine.begin() as conn:
        await conn.execute(text("DELETE FROM meter_entries WHERE link_id = 'old' AND seq = 1"))
        left = (
            (await conn.execute(text("SELECT seq FROM meter_entries WHERE link_id = 'old'")))
            .scalars()
            .all()
        )
    assert left == [2]


async def test_a_store_with_another_key_refuses_to_write(store: LedgerStore) -> None:
    other = LedgerStore(store.engine, b"another key of sixteen+ bytes")
    with pytest.raises(StoreError, match="not the one the history was sealed with"):
        await other.check_key()


async def test_link_row_matches_its_chain_head(store: LedgerStore) -> None:
    await _history(store)
    async with store.engine.connect() as conn:
        link = (await conn.execute(select(LinkRow))).one()
        last = (
            await conn.execute(select(MeterEntryRow).order_by(MeterEntryRow.seq.desc()).limit(1))
        ).one()
    assert (link.last_seq, link.last_hash, link.meter_units) == (
        last.seq,
        last.hash,
        last.meter_after_units,
    )
    assert last.kind == EntryKind.JACKPOT_RESET


def test_sqlite_file_url_gets_wal(tmp_path: object) -> None:
    engine = make_engine(f"sqlite+aiosqlite:///{tmp_path}/x.db")
    assert engine.dialect.name == "sqlite"
