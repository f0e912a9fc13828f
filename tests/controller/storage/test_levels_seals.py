"""The seals cover a link's levels, its other games' paytables and a table's game only where
the rows have them: every seal made before still verifies, and an edited level does not."""

from __future__ import annotations

import json

from sqlalchemy import select, update

from controller.core.games import Game
from controller.core.state_seal import link_seal, table_seal
from controller.storage.codec import counter_fields
from controller.storage.draw_cipher import hide_draws, open_draws
from controller.storage.models import LinkRow, TableCounterRow
from controller.storage.store import LedgerStore
from tests.conftest import KEY
from tests.controller.storage.helpers import Poller, make_link, runtime
from tests.controller.storage.test_levels_store import make_links, play


async def test_a_classic_links_seal_is_the_one_made_before_levels(store: LedgerStore) -> None:
    await make_link(store)
    rt = await runtime(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0, rounds=0), p.reading("t2", 0, rounds=0)])
    await rt.readings.apply([p.reading("t1", 40, rounds=10), p.royal("t2", 30, seq=1)])
    state = rt.memory.states["stud"]
    async with store.engine.connect() as conn:
        row = (await conn.execute(select(LinkRow).where(LinkRow.link_id == "stud"))).one()
        seals = dict(
            (await conn.execute(select(TableCounterRow.table_id, TableCounterRow.seal))).all()
        )
    assert (row.levels, row.paytables) == (None, None)
    # The seals as they were made before levels: the same fields, nothing added.
    for tid, ts in state.tables.items():
        assert ts.config.game is None
        assert seals[tid] == table_seal(
            KEY, link_id="stud", config=ts.config, counters=counter_fields(ts)
        )
    before_levels = {
        "meter_units": row.meter_units,
        "rate_bp": row.rate_bp,
        "reset_cents": row.reset_cents,
        "jackpot_won_since_rate_set": row.jackpot_won_since_rate_set,
        "last_win": row.last_win,
        "armed_change": row.armed_change,
        "last_seq": row.last_seq,
        "last_hash": row.last_hash,
        "game": row.game,
        "hit_policy": row.hit_policy,
        "paytable": state.paytable.to_dicts(),
    }
    assert row.state_seal == link_seal(KEY, fields=before_levels, tables=sorted(seals.items()))


async def test_a_let_it_ride_row_from_before_levels_loads_as_fixed_pay(store: LedgerStore) -> None:
    await make_link(store, "bonus", ("b1",), game=Game.LET_IT_RIDE_BONUS, rate_bp=0, reset_cents=0)
    async with store.engine.begin() as conn:
        await conn.execute(update(LinkRow).values(levels=None))  # as a row from before levels
    rt = await runtime(LedgerStore(store.engine, KEY, law=store.law))
    assert rt.memory.inoperable == {}
    assert rt.memory.states["bonus"].fixed_pay


async def _levels_of(store: LedgerStore) -> list[dict[str, object]]:
    """The stored levels as someone holding the ledger key reads them (the draws opened)."""
    async with store.engine.connect() as conn:
        text = await conn.scalar(select(LinkRow.levels).where(LinkRow.link_id == "pool"))
    assert text is not None
    levels: list[dict[str, object]] = json.loads(open_draws(KEY, "pool", text) or "null")
    return levels


async def _edit_levels(store: LedgerStore, levels: list[dict[str, object]]) -> str | None:
    async with store.engine.begin() as conn:
        await conn.execute(
            update(LinkRow)
            .where(LinkRow.link_id == "pool")
            .values(levels=hide_draws(KEY, "pool", json.dumps(levels)))
        )
    rt = await runtime(LedgerStore(store.engine, KEY, law=store.law))
    assert set(rt.memory.inoperable) <= {"pool"}
    return rt.memory.is_inoperable("pool")


async def test_an_edited_mystery_trigger_makes_the_link_inoperable(store: LedgerStore) -> None:
    await make_links(store)
    rt = await runtime(store)
    await play(rt, Poller())
    levels = await _levels_of(store)
    mini = levels[3]
    armed = mini["armed"]
    assert isinstance(armed, list)
    trigger = int(armed[0])
    mini["armed"] = [10_01 if trigger != 10_01 else 20_00, armed[1]]
    reason = await _edit_levels(store, levels)
    assert reason is not None
    assert "level L4 (Mini): its armed mystery trigger" in reason, reason


async def test_an_edited_queued_draw_or_meter_makes_the_link_inoperable(store: LedgerStore) -> None:
    await make_links(store)
    rt = await runtime(store)
    await play(rt, Poller())
    levels = await _levels_of(store)
    original = json.loads(json.dumps(levels))
    draws = levels[3]["draws"]
    assert isinstance(draws, list) and draws
    draws[0] = [draws[0][0], "00" * 32]
    reason = await _edit_levels(store, levels)
    assert reason is not None and "levels" in reason, reason
    # Units moved from one level's meter to another's: the total still matches the history.
    original[0]["meter_units"] = int(original[0]["meter_units"]) + 10_000  # type: ignore[call-overload]
    original[1]["meter_units"] = int(original[1]["meter_units"]) - 10_000  # type: ignore[call-overload]
    assert await _edit_levels(store, original) is not None


async def test_each_levels_lock_is_kept_sealed_with_its_level(store: LedgerStore) -> None:
    """68 IAC 10-1-1.1(d), level by level: which levels were won since their shares were set
    is kept in the link's stored levels (no column changes), comes back after a restart, and
    is sealed: unlocking a level nobody won makes the link inoperable."""
    await make_links(store)
    rt = await runtime(store)
    await play(rt, Poller())
    # The Mini (mystery) and the Grand (royal flush) were won; the Major and Minor were not.
    assert rt.memory.states["pool"].won_since_share_set() == (True, False, False, True)
    levels = await _levels_of(store)
    assert [lv.get("won_since_share_set", False) for lv in levels] == [True, False, False, True]
    again = await runtime(LedgerStore(store.engine, KEY, law=store.law))
    assert again.memory.inoperable == {}
    assert again.memory.states["pool"].won_since_share_set() == (True, False, False, True)
    levels[1]["won_since_share_set"] = True
    reason = await _edit_levels(store, levels)
    assert reason is not None and "levels" in reason, reason
