"""The demo's two floors: each the floor its jurisdiction allows, opened, filed and approved
under it through the ledger store with no refusal, every level won by a hand the demo forces
(or by its mystery trigger), and a jackpot played through the runtime."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.demo_floor import (
    EVERY_SHAPE,
    NO_LIMITS,
    PLANS,
    SHAPES,
    DemoPlan,
    demo_floor,
    plan_for,
    shapes_of,
)
from controller.core.games import Game
from controller.core.hands import HandCategory, parse_cards
from controller.core.reducer.levels import pool_rate_bp
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.rules.jurisdictions import INDIANA, JURISDICTIONS, NEW_JERSEY, Jurisdiction
from controller.runtime.clock import SystemClock
from controller.runtime.config_entries import FloorConfig, LinkEntry
from controller.runtime.links import LinkRuntime
from controller.runtime.service import open_floor
from controller.storage.database import make_engine
from controller.storage.models import HitRow
from controller.storage.store import LedgerStore
from tests.conftest import KEY
from tests.e2e.pool import Readings

H = HandCategory
GAME_OF = {"stud": Game.CARIBBEAN_STUD, "draw": Game.CARIBBEAN_DRAW, "paigow": Game.PAI_GOW_POKER}


def floor(plan: DemoPlan) -> FloorConfig:
    return demo_floor({gw.name: 15_020 + i for i, gw in enumerate(plan.gateways)}, plan)


def link(config: FloorConfig, link_id: str) -> LinkEntry:
    return next(entry for entry in config.links if entry.link_id == link_id)


# ------------------------------------------------------------------ which floor, which shapes


def test_each_jurisdiction_runs_the_floor_with_the_most_shapes_it_allows() -> None:
    assert plan_for(INDIANA) is NO_LIMITS
    assert plan_for(NEW_JERSEY) is EVERY_SHAPE
    assert shapes_of(EVERY_SHAPE) == set(SHAPES)
    assert shapes_of(NO_LIMITS) == {"hidden_shares"}
    for law in JURISDICTIONS.values():
        plan = plan_for(law)
        assert plan in PLANS
        assert all(getattr(law.allows, shape) for shape in shapes_of(plan)), law.key


def test_indianas_floor_has_only_the_shapes_68_iac_10_allows() -> None:
    """No level limit and no mystery level (10-1-5(d)); the shown shares alone a rate of 60 %
    to 100 %, and the whole side bet no more than 100 % (10-1-1.1(b)-(c)); the Let It Ride
    bonus and Super Sevens paying exactly 10-7-5(e)'s and 10-12-3(f)'s amounts, with no envy;
    every table with its location (10-1-1.1(e)(2)); no envy line anywhere."""
    config = floor(NO_LIMITS)
    caribbean = link(config, "caribbean")
    assert caribbean.levels is not None
    assert [cfg.name for cfg in caribbean.levels] == ["Grand", "Major", "Minor", "Mini"]
    assert all(cfg.limit_cents is None and cfg.mystery is None for cfg in caribbean.levels)
    shown = sum(cfg.rate_bp for cfg in caribbean.levels)
    assert INDIANA.numbers.min_rate_bp <= shown <= INDIANA.numbers.max_rate_bp
    assert shown == 7_500 and pool_rate_bp(caribbean.levels) == 8_000
    # The levels a Draw player can win (Grand and Major) make 60 % on their own.
    assert sum(cfg.rate_bp for cfg in caribbean.levels[:2]) >= INDIANA.numbers.min_rate_bp
    for entry in config.links:
        for pt in (entry.paytable, *entry.paytables.values()):
            assert pt is None or not any(line.envy_cents for line in pt.lines), entry.link_id
        for t in entry.tables:
            assert t.location.strip(), t.config.table_id
    for link_id, game in (("lir", Game.LET_IT_RIDE_BONUS), ("sevens", Game.SUPER_SEVENS)):
        entry = link(config, link_id)
        paid = entry.paytable if entry.paytable is not None else None
        assert paid is None or paid.lines == INDIANA.fixed_pays[game].lines, link_id


def test_new_jerseys_floor_has_every_shape() -> None:
    caribbean = link(floor(EVERY_SHAPE), "caribbean")
    assert caribbean.levels is not None
    major, minor, mini = caribbean.levels[1:]
    assert major.limit_cents == 2_500_00 and minor.limit_cents == 500_00
    assert mini.mystery is not None and mini.mystery.ceiling_cents == 80_00
    assert caribbean.levels[0].reserve_bp == 1_000
    assert caribbean.paytable is not None
    assert {line.envy_cents for line in caribbean.paytable.lines} >= {500_00, 50_00}


@pytest.mark.parametrize("plan", PLANS, ids=[p.key for p in PLANS])
def test_the_demo_forces_a_hand_winning_each_level(plan: DemoPlan) -> None:
    """Each level not won by its mystery trigger is won by a hand the demo forces in turn, at
    a table of a game whose paytable pays all of it."""
    config = floor(plan)
    won: set[tuple[str, int]] = set()
    for gateway, hand in plan.forced:
        entry = link(config, plan.link_of(gateway))
        game = GAME_OF[gateway]
        pt = entry.paytable if game is entry.game else entry.paytables[game]
        assert pt is not None
        (line,) = [line for line in pt.lines if line.hand is hand]
        assert line.resets_meter, (gateway, hand)
        won.add((entry.link_id, line.level_number))
    for entry in config.links:
        for number, cfg in enumerate(entry.levels or (), start=1):
            assert cfg.mystery is not None or (entry.link_id, number) in won, (cfg.name, plan.key)
    assert ("paigow", 1) in won


# ------------------------------------------------- each floor opened under its jurisdiction


async def opened(db_url: str, law: Jurisdiction) -> tuple[LinkRuntime, list[str]]:
    """The floor ``law`` allows, opened through a ledger store under ``law``: created, filed
    and approved by a commission agent."""
    engine = make_engine(db_url)
    store = LedgerStore(engine, KEY, law=law)
    notes: list[str] = []
    runtime = await open_floor(
        store, floor(plan_for(law)), SystemClock(), demonstration=True, notes=notes
    )
    approved = await ReviewDesk(FilingDesk(runtime)).approve_new_links(
        reviewer="agent", role=Role.COMMISSION_AGENT
    )
    return runtime, approved


async def test_indianas_floor_opens_and_plays_under_indiana(db_url: str) -> None:
    runtime, approved = await opened(db_url, INDIANA)
    try:
        assert sorted(approved) == ["caribbean", "lir", "paigow", "sevens"]
        state = runtime.memory.states["caribbean"]
        assert state.law is INDIANA
        assert all(c.limit_cents is None and c.mystery is None for c in state.level_configs)
        for fixed, game in (("lir", Game.LET_IT_RIDE_BONUS), ("sevens", Game.SUPER_SEVENS)):
            assert runtime.memory.states[fixed].fixed_pay
            assert runtime.memory.states[fixed].paytable.lines == INDIANA.fixed_pays[game].lines
        # A full house at a Stud table wins the Mini, whole, from the meter.
        p = Readings(runtime.memory.clock.now_us)
        await runtime.readings.apply([p.of(t, 0, 0) for t in ("stud-1", "stud-2")])
        await runtime.readings.apply([p.of("stud-2", 100, 20)])
        mini = runtime.memory.states["caribbean"].levels[3]
        grown = mini.meter_units
        assert grown > 20_00 * 10_000
        full_house = parse_cards("Kc Kd Kh 4s 4c")
        await runtime.readings.apply([p.hit("stud-1", H.FULL_HOUSE, full_house, seat=2, hit_seq=1)])
        won = runtime.memory.states["caribbean"].last_win
        assert won is not None and (won.level, won.table_id) == ("L4", "stud-1")
        assert runtime.memory.states["caribbean"].levels[3].meter_units == 20_00 * 10_000
    finally:
        await runtime.memory.store.engine.dispose()


async def test_new_jerseys_floor_opens_and_plays_every_shape_under_new_jersey(
    db_url: str,
) -> None:
    runtime, approved = await opened(db_url, NEW_JERSEY)
    try:
        assert sorted(approved) == ["caribbean", "lir", "paigow", "sevens"]
        state = runtime.memory.states["caribbean"]
        assert state.law is NEW_JERSEY
        configs = state.level_configs
        assert configs[1].limit_cents and configs[2].limit_cents and configs[3].mystery
        assert state.levels[3].armed is not None  # the Mini's trigger drawn and sealed
        # A royal flush at a Draw table wins the Grand, and the other seats that bet are paid
        # their envy at the table.
        p = Readings(runtime.memory.clock.now_us)
        await runtime.readings.apply([p.of(t, 0, 0) for t in ("draw-1", "stud-1")])
        royal = parse_cards("As Ks Qs Js Ts")
        await runtime.readings.apply(
            [p.hit("draw-1", H.ROYAL_FLUSH, royal, seat=3, hit_seq=1,
                   bet_seats=frozenset({1, 3, 5}))]
        )  # fmt: skip
        after = runtime.memory.states["caribbean"]
        assert after.last_win is not None and after.last_win.level == "L1"
        async with runtime.memory.store.engine.connect() as conn:
            envy = (
                await conn.execute(
                    select(HitRow.seat, HitRow.award_cents).where(HitRow.kind == "envy")
                )
            ).all()
        assert sorted(envy) == [(1, 500_00), (5, 500_00)]
        # The filed packet names every linked table with its location.
        desk = ReviewDesk(FilingDesk(runtime))
        (filed,) = await desk.find(link_id="caribbean")
        content, _, _ = await desk.packet(filed.submission_id, "json")
        for t in link(floor(EVERY_SHAPE), "caribbean").tables:
            assert t.config.table_id in content.decode() and t.location in content.decode()
        # The ledger, read again under New Jersey, has every shape as it was opened.
        again = await runtime.memory.store.load_link("caribbean")
        assert again.law is NEW_JERSEY and again.level_configs == configs
    finally:
        await runtime.memory.store.engine.dispose()
