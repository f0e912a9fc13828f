"""The state a link resumes from is sealed: rows changed without the key make it inoperable.

Each attack is done as someone with database access and no ledger key: the history's guards
are dropped first, rows are edited in place, and a new controller process (a new store and
runtime on the same database) starts from them.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import delete, func, insert, select, text, update

from controller.core.state_seal import SEALED_SINCE
from controller.rules import RuleViolation
from controller.runtime.links import LinkRuntime
from controller.storage.errors import LinkInoperable
from controller.storage.models import (
    LedgerAnchorRow,
    LedgerMetaRow,
    LinkRow,
    MeterEntryRow,
    PaytableRow,
    TableCounterRow,
)
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from tests.conftest import KEY, T0
from tests.controller.storage.helpers import Poller, drop_guards, make_link, runtime


async def _played(store: LedgerStore) -> tuple[LinkRuntime, Poller]:
    await make_link(store)
    rt = await runtime(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0, rounds=0), p.reading("t2", 0, rounds=0)])
    await rt.readings.apply([p.reading("t1", 40, rounds=10), p.reading("t2", 30, rounds=10)])
    return rt, p


async def _restart(store: LedgerStore) -> LinkRuntime:
    """A new controller process on the same database: nothing of the old one in memory."""
    return await runtime(LedgerStore(store.engine, KEY))


_unguarded: set[int] = set()


async def _tamper(store: LedgerStore, *statements: Any) -> None:
    async with store.engine.begin() as conn:
        if id(store.engine) not in _unguarded:
            await drop_guards(conn)
            _unguarded.add(id(store.engine))
        for stmt in statements:
            await conn.execute(stmt)


async def _entries(store: LedgerStore) -> int:
    async with store.engine.connect() as conn:
        return int(await conn.scalar(select(func.count()).select_from(MeterEntryRow)) or 0)


async def _verify_problems(store: LedgerStore) -> str:
    report = await verify_ledger(store.engine, KEY)
    return "\n".join(str(p) for p in report.problems)


async def test_lowered_table_counters_make_the_link_inoperable(store: LedgerStore) -> None:
    rt, p = await _played(store)
    meter = rt.memory.states["stud"].meter_units
    # Lower t1's stored credits and rounds: the next reading would credit the difference.
    await _tamper(
        store,
        update(TableCounterRow)
        .where(TableCounterRow.table_id == "t1")
        .values(credits=TableCounterRow.credits - 30, rounds=TableCounterRow.rounds - 5),
    )
    rt2 = await _restart(store)
    reason = rt2.memory.is_inoperable("stud")
    assert reason is not None and "table t1" in reason and "credits 10" in reason
    assert rt2.memory.inoperable == {"stud": reason}
    assert not rt2.memory.is_live("stud", T0 + 10**12)

    before = await _entries(store)
    assert await rt2.readings.apply([p.reading("t1", 45, rounds=11)]) == []
    assert await _entries(store) == before  # not recorded, nothing credited
    assert rt2.memory.states["stud"].meter_units == meter
    with pytest.raises(LinkInoperable, match="table t1"):
        await rt2.commands.change_reset_amount("stud", reset_cents=5_000_00, actor="ops")

    assert "table t1" in await _verify_problems(store)


@pytest.mark.parametrize(
    ("field", "named"),
    [
        ("meter", "shows meter"),
        ("rate", "rate is 6000"),
        ("reset", "reset amount is 1"),
        ("paytable", "paytable"),
        ("last_seq", "ends at entry"),
        ("policy", "hit policy"),
    ],
)
async def test_an_edited_link_row_makes_the_link_inoperable(
    store: LedgerStore, field: str, named: str
) -> None:
    await _played(store)
    link = LinkRow
    if field == "paytable":
        async with store.engine.connect() as conn:
            lines = json.loads(await conn.scalar(select(PaytableRow.lines)) or "[]")
        lines[0] = {**lines[0], "percent_bp": 5000}
        async with store.engine.begin() as conn:
            pt_id = (
                await conn.execute(
                    insert(PaytableRow)
                    .values(
                        link_id="stud",
                        game="caribbean_stud",
                        lines=json.dumps(lines),
                        created_at_us=T0,
                    )
                    .returning(PaytableRow.paytable_id)
                )
            ).scalar_one()
        values: dict[str, Any] = {"paytable_id": pt_id}
    else:
        edits: dict[str, dict[str, Any]] = {
            "meter": {"meter_units": link.meter_units + 4_295_900_000},
            "rate": {"rate_bp": 6000},
            "reset": {"reset_cents": 100},
            "last_seq": {"last_seq": link.last_seq - 1},
            "policy": {"hit_policy": "sequential"},
        }
        values = edits[field]
    await _tamper(store, update(link).where(link.link_id == "stud").values(**values))
    rt2 = await _restart(store)
    reason = rt2.memory.is_inoperable("stud")
    assert reason is not None and named in reason, reason
    assert "stud" in await _verify_problems(store)


async def test_an_older_copy_of_one_table_row_put_back_is_found(store: LedgerStore) -> None:
    rt, p = await _played(store)
    async with store.engine.connect() as conn:
        old = (
            (
                await conn.execute(
                    select(TableCounterRow.__table__).where(TableCounterRow.table_id == "t1")
                )
            )
            .mappings()
            .one()
        )
    await rt.readings.apply([p.reading("t1", 90, rounds=20)])
    # The older row, its own seal intact: the next reading would credit 50 credits again.
    await _tamper(
        store,
        update(TableCounterRow)
        .where(TableCounterRow.table_id == "t1")
        .values({k: v for k, v in old.items() if k != "table_id"}),
    )
    rt2 = await _restart(store)
    reason = rt2.memory.is_inoperable("stud")
    assert reason is not None and "table t1" in reason and "older copy" in reason, reason
    assert "stud" in await _verify_problems(store)


async def test_a_row_without_a_seal_once_sealing_began_is_inoperable(store: LedgerStore) -> None:
    await _played(store)
    await _tamper(
        store, update(TableCounterRow).where(TableCounterRow.table_id == "t2").values(seal=None)
    )
    reason = (await _restart(store)).memory.is_inoperable("stud")
    assert reason is not None and "table t2" in reason and "no seal" in reason


def _opened_as_before_seals(monkeypatch: pytest.MonkeyPatch) -> None:
    """Links opened as the controller did before state seals: no word of them in the history."""
    import controller.storage.store as store_module

    opened = store_module.open_link

    def open_link(**kwargs: Any) -> Any:
        o = opened(**kwargs)
        first = o.events[0]
        details = {k: v for k, v in dict(first.details).items() if k != "state_sealed"}
        return replace(o, events=(first._replace(details=details), *o.events[1:]))

    monkeypatch.setattr(store_module, "open_link", open_link)


async def test_rows_from_before_the_seals_are_sealed_once_when_their_history_agrees(
    store: LedgerStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _opened_as_before_seals(monkeypatch)
    await _played(store)
    # A database from before state seals: no seals, no record that sealing began.
    await _tamper(
        store,
        update(TableCounterRow).values(seal=None),
        update(LinkRow).values(state_seal=None),
        delete(LedgerMetaRow).where(LedgerMetaRow.name == SEALED_SINCE),
    )
    rt2 = await _restart(store)
    assert rt2.memory.inoperable == {}
    async with store.engine.connect() as conn:
        assert await conn.scalar(select(LinkRow.state_seal)) is not None
        assert await conn.scalar(
            select(LedgerMetaRow.value).where(LedgerMetaRow.name == SEALED_SINCE)
        )
        # The history says so itself, sealed: from here on a row without a seal was stripped.
        kinds = (await conn.scalars(select(MeterEntryRow.kind))).all()
        assert kinds.count("state_sealed") == 1
    assert (await verify_ledger(store.engine, KEY)).ok
    # From now on the seals hold.
    await _tamper(store, update(TableCounterRow).values(credits=0))
    assert (await _restart(store)).memory.is_inoperable("stud") is not None
    # Stripping every seal and the record that sealing began does not make it "old" again.
    await _tamper(
        store,
        update(TableCounterRow).values(seal=None),
        update(LinkRow).values(state_seal=None),
        delete(LedgerMetaRow).where(LedgerMetaRow.name == SEALED_SINCE),
    )
    reason = (await _restart(store)).memory.is_inoperable("stud")
    assert reason is not None and "no seal" in reason, reason


async def test_seals_stripped_with_the_record_of_sealing_leave_lowered_counters_refused(
    store: LedgerStore,
) -> None:
    rt, p = await _played(store)
    meter = rt.memory.states["stud"].meter_units
    # Without the key: lower t1's counters, blank every seal and delete the record that
    # sealing began, as if this were a database from before seals.
    await _tamper(
        store,
        update(TableCounterRow)
        .where(TableCounterRow.table_id == "t1")
        .values(credits=TableCounterRow.credits - 30, rounds=TableCounterRow.rounds - 5),
        update(TableCounterRow).values(seal=None),
        update(LinkRow).values(state_seal=None),
        delete(LedgerMetaRow).where(LedgerMetaRow.name == SEALED_SINCE),
    )
    rt2 = await _restart(store)
    reason = rt2.memory.is_inoperable("stud")
    assert reason is not None and "no seal" in reason, reason  # its history says it was sealed
    entries = await _entries(store)
    await rt2.readings.apply([p.reading("t1", 60, rounds=12)])
    assert await _entries(store) == entries and rt2.memory.states["stud"].meter_units == meter


async def test_head_deletion_with_a_forged_anchor_is_named(store: LedgerStore) -> None:
    await _played(store)
    async with store.engine.connect() as conn:
        third = (
            await conn.execute(
                select(
                    MeterEntryRow.seq, MeterEntryRow.hash, MeterEntryRow.meter_after_units
                ).where(MeterEntryRow.link_id == "stud", MeterEntryRow.seq == 3)
            )
        ).one()
    await _tamper(
        store,
        delete(MeterEntryRow).where(MeterEntryRow.link_id == "stud", MeterEntryRow.seq <= 3),
        insert(LedgerAnchorRow).values(
            link_id="stud",
            seq=third.seq,
            hash=third.hash,
            meter_units=third.meter_after_units,
            purged_at_us=T0,
        ),
    )
    problems = await _verify_problems(store)
    assert "anchor" in problems and "retention purge" in problems, problems


async def test_a_recovery_by_two_people_brings_the_link_back(store: LedgerStore) -> None:
    rt, p = await _played(store)
    meter = rt.memory.states["stud"].meter_units
    await _tamper(
        store,
        update(TableCounterRow).where(TableCounterRow.table_id == "t1").values(credits=0),
        update(LinkRow).values(rate_bp=6000, meter_units=LinkRow.meter_units + 10**9),
    )
    rt2 = await _restart(store)
    assert rt2.memory.is_inoperable("stud") is not None
    with pytest.raises(RuleViolation, match="second person"):
        await rt2.commands.recover("stud", reason="counters edited", by="ops", approved_by="OPS")

    await rt2.commands.recover("stud", reason="counters edited", by="ops", approved_by="auditor")
    assert rt2.memory.is_inoperable("stud") is None
    state = rt2.memory.states["stud"]
    assert state.meter_units == meter and state.rate_bp == 8250
    assert all(ts.credits is None and ts.hit_pending for ts in state.tables.values())
    # The next reading is a baseline, nothing credited for what came between; then play on.
    await rt2.readings.apply([p.reading("t1", 500, rounds=30)])
    assert rt2.memory.states["stud"].meter_units == meter
    await rt2.readings.apply([p.reading("t1", 510, rounds=31)])
    assert rt2.memory.states["stud"].meter_units > meter

    assert (await verify_ledger(store.engine, KEY)).ok
    rt3 = await _restart(store)
    assert rt3.memory.inoperable == {}
    async with store.engine.connect() as conn:
        kinds = (await conn.scalars(text("SELECT kind FROM meter_entries ORDER BY seq"))).all()
    assert "state_recovered" in kinds


async def test_a_check_while_another_process_commits_sees_one_commit(store: LedgerStore) -> None:
    """Verification and the web's reads run while the controller commits: a link row read
    from one commit and its tables' rows (or its history) from the next is no tampering."""
    rt, p = await _played(store)
    other = LedgerStore(store.engine, KEY)
    stop = False

    async def play() -> int:
        n = 0
        while not stop:
            n += 1
            await rt.readings.apply(
                [p.reading("t1", 40 + n, rounds=10 + n), p.reading("t2", 30 + n, rounds=10 + n)]
            )
        return n

    player = asyncio.create_task(play())
    found: list[str] = []
    try:
        for _ in range(150):
            _, unsealed = await other.load_checked(["stud"])
            found.extend(unsealed.values())
            await asyncio.sleep(0)
    finally:
        stop = True
        played = await player
    assert played > 10  # the check really ran against commits
    assert found == []
    assert await _verify_problems(store) == ""
