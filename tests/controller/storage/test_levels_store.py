"""A link of levels, a mixed-game link and a fixed-pay link come back from the database
exactly: after a restart, and in a second controller taking them over."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from controller.core.games import Game, PaytableLine, default_paytable, make_paytable
from controller.core.hands import HandCategory, parse_cards
from controller.core.reducer import HitClaim, LinkState, TableConfig
from controller.core.reducer.levels import AboveLimit, LevelConfig, Mystery
from controller.runtime.links import LinkRuntime
from controller.runtime.mystery_draws import READY, first_draws
from controller.storage.hits import Hits
from controller.storage.links import TableSpec
from controller.storage.models import HitRow, LinkRow, TableRow
from controller.storage.store import LedgerStore
from tests.conftest import KEY, T0
from tests.controller.permissive_law import permissive
from tests.controller.storage.helpers import Poller, runtime, table

H = HandCategory
STUD, DRAW, LIR = Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW, Game.LET_IT_RIDE_BONUS
QUADS = parse_cards("9c 9d 9h 9s 2c")

LEVELS = (
    LevelConfig(name="Grand", reset_cents=10_000_00, rate_bp=4_000, reserve_bp=1_000),
    LevelConfig(
        name="Major",
        reset_cents=1_000_00,
        rate_bp=1_500,
        limit_cents=1_000_50,
        reserve_bp=500,
        above_limit=AboveLimit.NEXT_LEVEL,
    ),
    LevelConfig(name="Minor", reset_cents=100_00, rate_bp=800, limit_cents=100_20),
    LevelConfig(
        name="Mini",
        reset_cents=10_00,
        rate_bp=200,
        mystery=Mystery(floor_cents=10_01, ceiling_cents=20_00),
    ),
)
POOL_LINES = make_paytable(
    STUD,
    (
        PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=10_000, level=1),
        PaytableLine(hand=H.STRAIGHT_FLUSH, percent_bp=10_000, level=2),
        PaytableLine(hand=H.FOUR_OF_A_KIND, percent_bp=10_000, level=3, envy_cents=25_00),
        PaytableLine(hand=H.FLUSH, fixed_cents=50_00, envy_cents=5_00),
    ),
)


def claim(seq: int, hand: HandCategory, cards: Any, seat: int = 1) -> HitClaim:
    return HitClaim(table_seq=seq, seat=seat, hand=hand, round=seq, cards=cards)


async def make_links(store: LedgerStore) -> None:
    """Links of every shape, limits and a mystery level among them: under a jurisdiction that
    allows them (Indiana refuses both, 68 IAC 10-1-5(d))."""
    permissive(store)
    await store.create_link(
        link_id="pool",
        name="Stud pool",
        game=STUD,
        rate_bp=0,
        reset_cents=0,
        paytable=POOL_LINES,
        tables=[table("t1"), table("t2")],
        at_us=T0,
        actor="test",
        levels=LEVELS,
        draws=first_draws(LEVELS),
    )
    await store.create_link(
        link_id="mixed",
        name="Stud and Draw",
        game=STUD,
        rate_bp=8_250,
        reset_cents=10_000_00,
        paytables={DRAW: default_paytable(DRAW)},
        tables=[
            table("m1"),
            TableSpec(
                config=TableConfig(
                    table_id="d1",
                    denomination_cents=100,
                    max_credits_per_seat_round=100,
                    min_round_us=1_000_000,
                    game=DRAW,
                )
            ),
        ],
        at_us=T0,
        actor="test",
    )
    await store.create_link(
        link_id="bonus",
        name="Let It Ride bonus",
        game=LIR,
        rate_bp=0,
        reset_cents=0,
        tables=[table("b1")],
        at_us=T0,
        actor="test",
    )


async def play(rt: LinkRuntime, p: Poller) -> None:
    base = [p.reading(t, 0, rounds=0) for t in ("t1", "t2", "m1", "d1", "b1")]
    await rt.readings.apply(base)
    # The Mini's trigger is at most $20.00 and it stands at $10.00: 1,000 credits of $1 bring
    # it $20.00, so it hits, at the seat whose wager reached it.
    await rt.readings.apply(
        [
            p.reading("t1", 300, rounds=1, seat_credits=(0, 100, 200, 0, 0, 0, 0)),
            p.reading("m1", 40, rounds=1),
            p.reading("d1", 30, rounds=1),
            p.reading("b1", 5, rounds=1, bet_seats=frozenset({1, 2})),
        ]
    )
    await rt.readings.apply([p.reading("t1", 1_000, rounds=2, seat_credits=(700,) + (0,) * 6)])
    await rt.readings.apply([p.royal("t2", 50, seq=1)])
    await rt.readings.apply(
        [
            p.reading(
                "d1", 35, rounds=2, pending_hits=1, head_hit=claim(1, H.FOUR_OF_A_KIND, QUADS)
            ),
            # Under the operator's amount: paid by the dealer, waits for no one.
            p.reading(
                "b1", 10, rounds=2, pending_hits=1, head_hit=claim(1, H.FOUR_OF_A_KIND, QUADS)
            ),
        ]
    )


async def test_levels_mixed_games_and_fixed_pay_survive_a_restart(store: LedgerStore) -> None:
    await make_links(store)
    rt = await runtime(store)
    p = Poller()
    await play(rt, p)
    pool = rt.memory.states["pool"]
    mini = pool.levels[3]
    assert mini.wins >= 1 and mini.armed is not None
    assert len(pool.levels) == 4 and pool.meter_units == sum(
        lv.meter_units + lv.reserve_units + lv.overflow_units for lv in pool.levels
    )
    assert pool.levels[2].overflow_units > 0  # the Minor stands at its limit
    assert pool.levels[1].reserve_units > 0
    async with store.engine.connect() as conn:
        rows = {lid: lv for lid, lv in await conn.execute(select(LinkRow.link_id, LinkRow.levels))}
        games = {tid: g for tid, g in await conn.execute(select(TableRow.table_id, TableRow.game))}
    assert rows["mixed"] is None and rows["bonus"] == "[]" and rows["pool"] is not None
    assert games["d1"] == "caribbean_draw" and games["m1"] is None

    again = await runtime(
        LedgerStore(store.engine, KEY, law=store.law)
    )  # a new process, nothing in memory
    assert again.memory.inoperable == {}
    assert again.memory.states == rt.memory.states
    back = again.memory.states["pool"].levels[3]
    assert (back.armed, back.draws) == (mini.armed, mini.draws)
    assert again.memory.states["mixed"].paytables == {DRAW: default_paytable(DRAW)}
    assert again.memory.states["mixed"].game_of("d1") is DRAW
    assert again.memory.states["bonus"].fixed_pay and again.memory.states["bonus"].rate_bp == 0


async def test_a_second_controller_takes_the_links_over_exactly(store: LedgerStore) -> None:
    await make_links(store)
    first = await runtime(store)
    p = Poller()
    await play(first, p)
    second = await runtime(LedgerStore(store.engine, KEY, law=store.law))
    wins = second.memory.states["pool"].levels[3].wins
    await second.readings.apply([p.reading("t1", 1_400, rounds=3), p.reading("b1", 15, rounds=3)])
    # Every mystery level keeps its draws made ready, committed with the step (less one for
    # each time it hit in the step: the trigger its reset armed).
    mini = second.memory.states["pool"].levels[3]
    assert len(mini.draws) == READY - (mini.wins - wins)
    for link_id in ("pool", "mixed", "bonus"):
        await first.memory.take_over(link_id)
    assert first.memory.states == second.memory.states
    await first.readings.apply([p.reading("t1", 1_500, rounds=4)])
    third = await runtime(LedgerStore(store.engine, KEY, law=store.law))
    assert third.memory.states == first.memory.states


def _state_of(rt: LinkRuntime, link_id: str) -> LinkState:
    return rt.memory.states[link_id]


async def test_hits_record_their_level_kind_and_whether_a_technician_is_needed(
    store: LedgerStore,
) -> None:
    await make_links(store)
    rt = await runtime(store)
    p = Poller()
    await play(rt, p)
    async with store.engine.connect() as conn:
        rows = await conn.execute(
            select(
                HitRow.link_id,
                HitRow.table_id,
                HitRow.level,
                HitRow.kind,
                HitRow.needs_technician,
                HitRow.paid_from,
            )
        )
        found = {(lid, tid, level, kind, tech, paid) for lid, tid, level, kind, tech, paid in rows}
    assert ("pool", "t1", "L4", "mystery", True, "meter") in found
    assert ("pool", "t2", "L1", "hand", True, "meter") in found
    # The Draw table's own line: a fixed pay under the operator's amount.
    assert ("mixed", "d1", None, "hand", False, "table") in found
    assert ("bonus", "b1", None, "hand", False, "table") in found


async def test_a_fixed_pay_under_the_amount_waits_for_no_technician(store: LedgerStore) -> None:
    await make_links(store)
    rt = await runtime(store)
    p = Poller()
    await play(rt, p)
    assert not _state_of(rt, "bonus").tables["b1"].hit_pending
    async with store.engine.connect() as conn:
        hits = Hits(conn)
        assert await hits.unverified("b1") == []
        assert [h for h in await hits.page(pending=True) if h.table_id == "b1"] == []
        assert "b1" not in {u.table_id for u in await hits.unreleased()}
    # A royal at the same table is at or above it: the table is held; the small pay does not
    # stand in the way of its release.
    royal = claim(2, H.ROYAL_FLUSH, parse_cards("As Ks Qs Js Ts"))
    await rt.readings.apply([p.reading("b1", 20, rounds=3, pending_hits=1, head_hit=royal)])
    assert _state_of(rt, "bonus").tables["b1"].hit_pending
    async with store.engine.connect() as conn:
        pending = [h for h in await Hits(conn).page(pending=True) if h.table_id == "b1"]
    assert [(h.hand, h.needs_technician) for h in pending] == [("ROYAL_FLUSH", True)]
    await rt.hits.release_table("b1", actor="tech")
    assert not _state_of(rt, "bonus").tables["b1"].hit_pending
