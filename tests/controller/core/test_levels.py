"""Links of levels: shares, limits with overflow or the next level, the hidden reserve,
mystery levels and their commitments, envy bonuses and fixed-pay links."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.core.games import Game, PaytableLine, default_paytable, make_paytable
from controller.core.hands import HandCategory, parse_cards
from controller.core.reducer import (
    ArmedChange,
    EngineError,
    EntryKind,
    HitClaim,
    LinkState,
    TableConfig,
    TableReading,
    apply_correction,
    apply_readings,
    arm_change,
    open_link,
)
from controller.core.reducer.conservation import entry_meters
from controller.core.reducer.levels import (
    AboveLimit,
    LevelConfig,
    Mystery,
    MysteryDraw,
    meters_of,
    mystery_commitment,
)
from controller.rules import RuleViolation
from tests.controller.core.levels_history import LEVELS
from tests.controller.permissive_law import PERMISSIVE

H = HandCategory
K = EntryKind
SEC = 1_000_000
T0 = 1_700_000_000 * SEC
STUD = Game.CARIBBEAN_STUD
ROYAL = parse_cards("As Ks Qs Js Ts")
QUADS = parse_cards("9c 9d 9h 9s 2c")
U = 10_000  # units per cent

# The pool of the history fixtures: Grand (hidden share), Major (limit, then the next level),
# Minor (limit, overflow), Mini (mystery).
GRAND, MAJOR, MINOR, MINI = LEVELS


def paytable(*lines: PaytableLine, game: Game = STUD):
    return make_paytable(
        game,
        lines
        or (
            PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=10_000, level=1),
            PaytableLine(hand=H.STRAIGHT_FLUSH, percent_bp=10_000, level=2),
            PaytableLine(hand=H.FOUR_OF_A_KIND, percent_bp=10_000, level=3, envy_cents=25_00),
            PaytableLine(hand=H.FLUSH, fixed_cents=50_00, envy_cents=5_00),
            PaytableLine(hand=H.FULL_HOUSE, fixed_cents=75_00),
        ),
    )


def table(tid: str = "t1", denom: int = 100) -> TableConfig:
    return TableConfig(table_id=tid, denomination_cents=denom, max_credits_per_seat_round=100)


def link(levels=(GRAND, MAJOR, MINOR, MINI), draws=None, pt=None, **kw) -> LinkState:
    out = open_link(
        law=PERMISSIVE,
        link_id="pool",
        game=STUD,
        rate_bp=0,
        reset_cents=0,
        paytable=pt or paytable(),
        tables=(table(), table("t2")),
        at_us=T0,
        levels=levels,
        draws=draws if draws is not None else {3: [MysteryDraw(15_00, "ab" * 16)]},
        **kw,
    )
    return out.state


def read(state, tid, seq, credits, *, rounds=None, head=None, pending=0, **kw):
    return apply_readings(
        state,
        [
            TableReading(
                table_id=tid,
                poll_seq=seq,
                at_us=T0 + seq * SEC,
                credits=credits,
                rounds=rounds,
                head_hit=head,
                pending_hits=pending,
                elapsed_us=SEC * 60,
                **kw,
            )
        ],
    )


def started(state=None):
    state = state or link()
    state = read(state, "t1", 1, 0, rounds=0).state
    return read(state, "t2", 1, 0, rounds=0).state


def test_the_pool_opens_with_every_level_seeded_and_the_mystery_committed():
    out = open_link(
        law=PERMISSIVE,
        link_id="pool",
        game=STUD,
        rate_bp=0,
        reset_cents=0,
        paytable=paytable(),
        tables=(table(),),
        at_us=T0,
        levels=(GRAND, MAJOR, MINOR, MINI),
        draws={3: [MysteryDraw(15_00, "ab" * 16)]},
    )
    s = out.state
    assert s.rate_bp == 4_000 + 1_000 + 1_500 + 500 + 800 + 200
    assert [lv.meter_units for lv in s.levels] == [
        10_000_00 * U,
        1_000_00 * U,
        100_00 * U,
        10_00 * U,
    ]
    assert s.meter_units == sum(meters_of(s.levels).values())
    assert [e.kind for e in out.events] == [K.LINK_OPENED, K.MYSTERY_ARMED]
    armed = out.events[1].details
    assert isinstance(armed, dict)
    assert armed["commitment"] == mystery_commitment("pool", "L4", 15_00, "ab" * 16)
    assert "15" not in out.events[1].explanation.replace("$10.01", "")  # the trigger is secret


def test_a_contribution_is_shared_exactly_with_the_reserve_hidden():
    s = started()
    out = read(s, "t1", 2, 2)  # 2 credits of $1 = $2 wagered: no level reaches its limit
    (e,) = [e for e in out.events if e.kind == K.CONTRIBUTION]
    assert entry_meters(e.details) == {
        "L1": [10_000_00 * U, 2_00 * 4_000],
        "L1.reserve": [0, 2_00 * 1_000],
        "L2": [1_000_00 * U, 2_00 * 1_500],
        "L2.reserve": [0, 2_00 * 500],
        "L3": [100_00 * U, 2_00 * 800],
        "L4": [10_00 * U, 2_00 * 200],
    }
    assert e.delta_units == 2_00 * 8_000  # the rate of progression, all levels together
    assert out.state.meter_cents == 10_000_00 + 80  # the first level, as shown


def test_above_its_limit_a_level_passes_to_the_next_level_or_overflows():
    s = started()
    # $10 wagered. Major +$1.50 with $0.50 of room: $1.00 passes on to the Minor.
    # Minor +$0.80 +$1.00 with $0.20 of room: $1.60 to its overflow meter.
    out = read(s, "t1", 2, 10, rounds=1)
    (e,) = [e for e in out.events if e.kind == K.CONTRIBUTION]
    split = entry_meters(e.details)
    assert split is not None
    assert split["L2"][1] == 50 * U and split["L3"][1] == 20 * U
    assert split["L3.overflow"][1] == 1_60 * U
    assert "L2.overflow" not in split
    lv = out.state.levels
    assert lv[1].meter_units == 1_000_50 * U and lv[2].meter_units == 100_20 * U
    assert lv[2].overflow_units == 1_60 * U
    assert out.state.meter_units == sum(meters_of(lv).values())


def test_a_level_reset_is_funded_from_its_reserve_and_its_overflow_moves_in():
    s = started()
    s = read(s, "t1", 2, 10, rounds=1).state  # Minor at its limit, $1.60 in its overflow
    minor = next(line for line in s.paytable.lines if line.level == 3)
    assert minor.hand is H.FOUR_OF_A_KIND
    claim = HitClaim(table_seq=1, seat=3, hand=H.FOUR_OF_A_KIND, round=1, cards=QUADS)
    out = read(s, "t1", 3, 10, rounds=1, head=claim, pending=1)
    (h,) = [h for h in out.hits if h.kind == "hand"]
    assert (h.award_cents, h.level) == (100_20, "L3")
    reset = next(e for e in out.events if e.kind == K.JACKPOT_RESET)
    split = entry_meters(reset.details)
    # The Minor has no hidden share: the house seeds the whole $100 reset, and the $1.60 of
    # overflow moves in (room to the $100.20 limit: $0.20; the rest stays in the overflow).
    assert reset.delta_units == 100_00 * U
    assert split == {"L3": [0, 100_20 * U], "L3.overflow": [1_60 * U, -20 * U]}
    assert out.state.levels[2].overflow_units == 1_40 * U
    assert out.state.jackpot_won_since_rate_set
    assert out.state.tables["t1"].hit_pending


def test_the_reserve_funds_the_reset_and_the_house_seeds_the_rest():
    s = started()
    s = read(s, "t1", 2, 1_000, rounds=1).state  # $1,000 wagered: Major reserve $50
    assert s.levels[1].reserve_units == 50_00 * U
    sf = parse_cards("9s 8s 7s 6s 5s")
    claim = HitClaim(table_seq=1, seat=3, hand=H.STRAIGHT_FLUSH, round=1, cards=sf)
    out = read(s, "t1", 3, 1_000, rounds=1, head=claim, pending=1)
    reset = next(e for e in out.events if e.kind == K.JACKPOT_RESET)
    split = entry_meters(reset.details)
    assert split is not None and split["L2.reserve"] == [50_00 * U, -50_00 * U]
    assert reset.delta_units == (1_000_00 - 50_00) * U  # seeded by the house
    assert out.state.levels[1].reserve_units == 0


def test_the_mystery_hit_reveals_a_trigger_that_matches_its_commitment():
    s = started()
    out = read(s, "t2", 2, 300, rounds=5, seat_credits=(0, 100, 200, 0, 0, 0, 0))
    (h,) = [h for h in out.hits if h.kind == "mystery"]
    award = next(e for e in out.events if e.hit_id == h.hit_id)
    reveal = award.details["mystery"]  # type: ignore[index]
    assert (
        mystery_commitment("pool", "L4", reveal["trigger_cents"], reveal["salt"])
        == (reveal["commitment"])
    )
    # Seats in order: seat 2's 100 credits bring $2.00 to the Mini, not the $5.00 it lacked;
    # seat 3's wager reaches it. (The Major passes $1.00 per $10 over its limit to the Minor,
    # whose own limit sends it to its overflow: nothing reaches the Mini but its share.)
    assert h.claim.seat == 3 and h.award_cents == 15_00 and h.claim.hand is H.MYSTERY
    # No draw was ready for the next trigger: the level waits unarmed, and a draw made ready
    # later is committed at the next step.
    assert out.state.levels[3].armed is None
    lv = out.state.levels[3]
    from dataclasses import replace

    levels = list(out.state.levels)
    levels[3] = replace(lv, draws=(MysteryDraw(12_34, "cd" * 16),))
    s2 = replace(out.state, levels=tuple(levels))
    nxt = read(s2, "t1", 2, 0, rounds=1)
    assert next(e.kind for e in nxt.events) == K.MYSTERY_ARMED


def test_a_draw_outside_the_range_is_refused():
    with pytest.raises(EngineError, match="outside"):
        link(draws={3: [MysteryDraw(50_00, "00")]})


def test_envy_pays_every_other_seat_with_a_bet():
    s = started()
    claim = HitClaim(table_seq=1, seat=2, hand=H.FOUR_OF_A_KIND, round=7, cards=QUADS)
    out = read(s, "t1", 2, 0, rounds=7, head=claim, pending=1, bet_seats=frozenset({1, 2, 5}))
    envy = [h for h in out.hits if h.kind == "envy"]
    assert [(h.claim.seat, h.award_cents, h.paid_from) for h in envy] == [
        (1, 25_00, "table"),
        (5, 25_00, "table"),
    ]
    assert all(not h.needs_technician for h in envy)


def test_envy_without_the_rounds_bets_is_held_for_people():
    s = started()
    claim = HitClaim(table_seq=1, seat=2, hand=H.FOUR_OF_A_KIND, round=7, cards=QUADS)
    out = read(s, "t1", 2, 0, rounds=8, head=claim, pending=1, bet_seats=frozenset({1, 2}))
    (envy,) = [h for h in out.hits if h.kind == "envy"]
    assert envy.status == "refused" and "not known" in (envy.refusal or "")
    assert out.state.tables["t1"].hit_pending


def test_the_rate_of_progression_is_every_share_together():
    with pytest.raises(RuleViolation, match="every level's shown and hidden share") as info:
        link(levels=(LevelConfig(name="A", reset_cents=0, rate_bp=3_000, reserve_bp=2_000),))
    assert info.value.clause == "68 IAC 10-1-1.1(c)"
    with pytest.raises(Exception, match="level 3"):
        link(levels=(GRAND, MAJOR), draws={})


def test_fixed_pay_link_registers_bets_and_holds_only_from_the_operators_amount():
    lir = Game.LET_IT_RIDE_BONUS
    state = open_link(
        law=PERMISSIVE,
        link_id="bonus",
        game=lir,
        rate_bp=0,
        reset_cents=0,
        paytable=default_paytable(lir),
        tables=(table(),),
        at_us=T0,
    ).state
    assert state.fixed_pay and state.meter_units == 0
    state = read(state, "t1", 1, 0, rounds=0).state
    out = read(state, "t1", 2, 5, rounds=1)
    assert [e.kind for e in out.events] == [K.BETS_REGISTERED]
    assert out.state.meter_units == 0
    four = HitClaim(table_seq=1, seat=1, hand=H.FOUR_OF_A_KIND, round=1, cards=QUADS)
    out = read(out.state, "t1", 3, 5, rounds=1, head=four, pending=1)
    (h,) = out.hits
    assert h.award_cents == 100_00 and not h.needs_technician
    assert not out.state.tables["t1"].hit_pending
    royal = HitClaim(table_seq=2, seat=1, hand=H.ROYAL_FLUSH, round=2, cards=ROYAL)
    out = read(out.state, "t1", 4, 5, rounds=2, head=royal, pending=1)
    (h,) = out.hits
    assert h.award_cents == 10_000_00 and h.needs_technician
    assert out.state.tables["t1"].hit_pending
    with pytest.raises(RuleViolation, match="fixed-pay"):
        open_link(
            law=PERMISSIVE,
            link_id="bonus",
            game=lir,
            rate_bp=6_500,
            reset_cents=0,
            paytable=default_paytable(lir),
            tables=(table(),),
            at_us=T0,
            levels=(LevelConfig(name="Jackpot", reset_cents=0, rate_bp=6_500),),
        )


def test_a_correction_names_its_meter_on_a_link_of_levels():
    s = started()
    with pytest.raises(EngineError, match="name the one"):
        apply_correction(
            s,
            correction_id="c1",
            delta_units=-U,
            reason="x",
            at_us=T0 + SEC,
            document_sha256="a" * 64,
        )
    out = apply_correction(
        s,
        correction_id="c1",
        delta_units=-U,
        reason="x",
        at_us=T0 + SEC,
        document_sha256="a" * 64,
        meter="L2",
    )
    assert out.state.levels[1].meter_units == 1_000_00 * U - U


def test_a_levels_change_applies_at_the_next_jackpot_reset():
    s = started()
    new = (
        GRAND,
        MAJOR,
        MINOR,
        LevelConfig(
            name="Mini",
            reset_cents=20_00,
            rate_bp=200,
            mystery=Mystery(floor_cents=20_01, ceiling_cents=30_00),
        ),
    )
    s = arm_change(
        s, change=ArmedChange(submission_id="S1", effective_at_us=T0, levels=new), at_us=T0, by="a"
    ).state
    claim = HitClaim(table_seq=1, seat=3, hand=H.ROYAL_FLUSH, round=1, cards=ROYAL)
    out = read(s, "t1", 2, 0, rounds=1, head=claim, pending=1)
    kinds = [e.kind for e in out.events]
    assert K.LEVELS_CHANGED in kinds and out.state.armed is None
    assert out.state.levels[3].config.reset_cents == 20_00


def test_a_level_no_hand_can_win_is_refused_and_fixed_pays_make_no_meter():
    with pytest.raises(EngineError, match="level 2 \\(Major\\) can never be won"):
        link(
            levels=(GRAND, MAJOR),
            pt=paytable(PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=10_000, level=1)),
            draws={},
        )
    sevens = Game.SUPER_SEVENS
    state = open_link(
        law=PERMISSIVE,
        link_id="sevens",
        game=sevens,
        rate_bp=8_000,
        reset_cents=100_00,
        paytable=default_paytable(sevens),
        tables=(table(),),
        at_us=T0,
    ).state
    assert state.fixed_pay and state.meter_units == 0  # 10-12-3(f) pays fixed amounts only


# --- property: conservation of every meter through any mix of play ---------------------------

LEVEL = st.builds(
    LevelConfig,
    name=st.sampled_from(["A"]),
    reset_cents=st.integers(0, 5_000),
    rate_bp=st.integers(1, 2_500),
    reserve_bp=st.integers(0, 800),
    limit_cents=st.none() | st.integers(5_001, 12_000),
    above_limit=st.sampled_from(list(AboveLimit)),
)


@st.composite
def pools(draw):
    n = draw(st.integers(1, 4))
    levels = []
    for i in range(n):
        cfg = draw(LEVEL)
        levels.append(
            LevelConfig(
                name=f"Level {i + 1}",
                reset_cents=cfg.reset_cents,
                rate_bp=cfg.rate_bp,
                reserve_bp=cfg.reserve_bp,
                limit_cents=cfg.limit_cents,
                above_limit=cfg.above_limit,
            )
        )
    if draw(st.booleans()):
        last = levels[-1]
        if last.above_limit is AboveLimit.NEXT_LEVEL:
            levels[-1] = LevelConfig(
                name=last.name,
                reset_cents=last.reset_cents,
                rate_bp=last.rate_bp,
                reserve_bp=last.reserve_bp,
                limit_cents=last.limit_cents,
            )
        levels.append(
            LevelConfig(
                name="Mystery",
                reset_cents=1_00,
                rate_bp=draw(st.integers(1, 1_000)),
                mystery=Mystery(floor_cents=1_01, ceiling_cents=draw(st.integers(1_01, 3_00))),
            )
        )
    total = sum(c.rate_bp + c.reserve_bp for c in levels)
    if not 6_000 <= total <= 10_000:
        # Scale the first level's share into range.
        first = levels[0]
        levels[0] = LevelConfig(
            name=first.name,
            reset_cents=first.reset_cents,
            rate_bp=max(1, first.rate_bp + 8_000 - total),
            reserve_bp=first.reserve_bp,
            limit_cents=first.limit_cents,
            above_limit=first.above_limit,
        )
    return tuple(levels)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pools(),
    st.lists(
        st.tuples(
            st.integers(0, 300),
            st.sampled_from([None, H.ROYAL_FLUSH, H.STRAIGHT_FLUSH, H.FOUR_OF_A_KIND, H.STRAIGHT]),
        ),
        min_size=1,
        max_size=25,
    ),
    st.randoms(use_true_random=False),
)
def test_every_meter_follows_from_the_history(levels, plays, rnd):
    n = len(levels)
    hands = [H.ROYAL_FLUSH, H.STRAIGHT_FLUSH, H.FOUR_OF_A_KIND, H.FULL_HOUSE, H.FLUSH]
    lines = [
        PaytableLine(hand=hands[i], percent_bp=10_000, level=i + 1)
        for i, c in enumerate(levels)
        if c.mystery is None
    ]
    lines.append(PaytableLine(hand=H.STRAIGHT, percent_bp=5_000, level=n))
    mystery = {
        i: [
            MysteryDraw(rnd.randint(c.mystery.floor_cents, c.mystery.ceiling_cents), f"s{k}")
            for k in range(40)
        ]
        for i, c in enumerate(levels)
        if c.mystery is not None
    }
    opened = open_link(
        law=PERMISSIVE,
        link_id="p",
        game=STUD,
        rate_bp=0,
        reset_cents=0,
        paytable=make_paytable(STUD, lines),
        tables=(table(),),
        at_us=T0,
        levels=levels,
        draws=mystery,
    )
    history = list(opened.events)
    s = read(opened.state, "t1", 1, 0, rounds=0).state
    credits, seq, hit = 0, 1, 0
    for add, hand in plays:
        seq += 1
        credits += add
        head = None
        if hand is not None and not s.tables["t1"].hit_pending:
            hit += 1
            head = HitClaim(table_seq=hit, seat=1, hand=hand, round=seq)
        out = read(s, "t1", seq, credits, rounds=seq, head=head, pending=int(head is not None))
        history.extend(out.events)
        s = out.state
        if s.tables["t1"].hit_pending:
            from controller.core.reducer import release_table

            out = release_table(s, table_id="t1", at_us=T0 + seq * SEC, by="tech")
            history.extend(out.events)
            s = out.state
    # Replayed from the history alone, entry by entry, every meter ends where the state has it.
    meters: dict[str, int] = {}
    total = 0
    for e in history:
        total += e.delta_units
        split = entry_meters(e.details)
        if split is None and e.delta_units:
            split = {"L1": [meters.get("L1", 0), e.delta_units]}  # a one-meter link
        for key, (before, delta) in (split or {}).items():
            assert meters.get(key, 0) == before
            meters[key] = before + delta
            assert meters[key] >= 0
    assert total == s.meter_units
    assert {k: v for k, v in meters.items() if v} == {
        k: v for k, v in meters_of(s.levels).items() if v
    }
    for lv in s.levels:
        if lv.config.limit_cents is not None:
            assert lv.meter_units <= max(lv.config.limit_cents * U, lv.config.reset_cents * U)
    json.dumps([e.details for e in history if isinstance(e.details, dict)])


def test_a_mixed_game_link_pays_each_table_from_its_own_games_paytable():
    draw = Game.CARIBBEAN_DRAW
    draw_lines = make_paytable(
        draw,
        (
            PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=5_000, level=1),
            PaytableLine(hand=H.FOUR_OF_A_KIND, fixed_cents=400_00),
        ),
    )
    s = open_link(
        law=PERMISSIVE,
        link_id="mixed",
        game=STUD,
        rate_bp=0,
        reset_cents=0,
        paytable=paytable(),
        paytables={draw: draw_lines},
        tables=(table(), TableConfig(table_id="d1", denomination_cents=100, game=draw)),
        at_us=T0,
        levels=(GRAND, MAJOR, MINOR, MINI),
        draws={3: [MysteryDraw(15_00, "ab" * 16)]},
    ).state
    assert s.games == (STUD, draw) and s.game_of("d1") is draw
    s = read(read(s, "t1", 1, 0, rounds=0).state, "d1", 1, 0, rounds=0).state
    claim = HitClaim(table_seq=1, seat=1, hand=H.FOUR_OF_A_KIND, round=1, cards=QUADS)
    at_draw = read(s, "d1", 2, 0, rounds=1, head=claim, pending=1)
    (h,) = at_draw.hits
    assert (h.award_cents, h.paid_from) == (400_00, "table")  # the draw table's fixed pay
    at_stud = read(s, "t1", 2, 0, rounds=1, head=claim, pending=1)
    main = [h for h in at_stud.hits if h.kind == "hand"]
    assert [(h.award_cents, h.level) for h in main] == [(100_00, "L3")]  # stud pays the Minor
    with pytest.raises(EngineError, match="deals Caribbean Draw Poker: the link has no paytable"):
        open_link(
            law=PERMISSIVE,
            link_id="mixed",
            game=STUD,
            rate_bp=0,
            reset_cents=0,
            paytable=paytable(),
            tables=(TableConfig(table_id="d1", denomination_cents=100, game=draw),),
            at_us=T0,
            levels=(GRAND, MAJOR, MINOR, MINI),
        )


def test_a_classic_link_takes_on_levels_at_its_next_jackpot():
    classic = open_link(
        law=PERMISSIVE,
        link_id="c",
        game=STUD,
        rate_bp=8_000,
        reset_cents=1_000_00,
        paytable=default_paytable(STUD),
        tables=(table(),),
        at_us=T0,
    ).state
    assert len(classic.levels) == 1 and classic.levels[0].config.name == "Jackpot"
    hidden = (LevelConfig(name="Jackpot", reset_cents=1_000_00, rate_bp=7_000, reserve_bp=1_000),)
    change = ArmedChange(submission_id="S9", effective_at_us=T0, levels=hidden)
    # 68 IAC 10-1-1.1(d): the classic link's one share changes only once its jackpot is won.
    with pytest.raises(RuleViolation, match="until a patron wins the Jackpot"):
        arm_change(classic, change=change, at_us=T0, by="agent")
    classic = replace(classic, jackpot_won_since_rate_set=True)
    s = arm_change(
        classic,
        change=ArmedChange(submission_id="S9", effective_at_us=T0, levels=hidden),
        at_us=T0,
        by="agent",
    ).state
    s = read(s, "t1", 1, 0, rounds=0).state
    s = read(s, "t1", 2, 10, rounds=1).state  # $10 at 80%, all to the one meter still
    assert s.levels[0].meter_units == (1_000_00 + 8_00) * U
    claim = HitClaim(table_seq=1, seat=1, hand=H.ROYAL_FLUSH, round=1, cards=ROYAL)
    out = read(s, "t1", 3, 10, rounds=1, head=claim, pending=1)
    assert K.LEVELS_CHANGED in [e.kind for e in out.events]
    after = read(out.state, "t1", 4, 20, rounds=2).state
    assert after.levels[0].reserve_units == 10_00 * 1_000  # now 10% hidden
    assert after.meter_units == sum(meters_of(after.levels).values())
    # The new share was set at that reset: locked again until its level is won again.
    assert after.won_since_share_set() == (False,)


def test_the_reducer_refuses_a_step_whose_meters_do_not_follow():
    from controller.core.reducer.conservation import ConservationBroken, check_meters

    s = started()
    out = read(s, "t1", 2, 2)
    (e,) = [e for e in out.events if e.kind == K.CONTRIBUTION]
    check_meters(s, out.events, out.state)  # the step as made follows
    split = dict(entry_meters(e.details) or {})
    was, units = split["L2"]
    bent = {**split, "L2": [was, units + U], "L1": [split["L1"][0], split["L1"][1] - U]}
    moved = [swap_details(x, bent) if x is e else x for x in out.events]
    with pytest.raises(ConservationBroken, match="the meters after are"):
        check_meters(s, moved, out.state)  # the same total, a cent moved between meters
    short = {**split, "L2": [was + U, units]}
    with pytest.raises(ConservationBroken, match="starts from"):
        check_meters(s, [swap_details(e, short)], out.state)


def swap_details(e, split):
    details = dict(e.details) if isinstance(e.details, dict) else json.loads(e.details)
    return e._replace(details={**details, "meters": split})
