"""A link's pool rebuilt from its sealed history alone, as a recovery rebuilds it."""

from __future__ import annotations

from dataclasses import replace

from controller.core.games import Game, PaytableLine, default_paytable, make_paytable
from controller.core.hands import HandCategory
from controller.core.ledger import GENESIS, ChainVerifier, seal
from controller.core.rebuild import rebuild_pool
from controller.core.reducer import EntryKind, LinkState, TableConfig, open_link, record_recovery
from controller.core.reducer.levels import MysteryDraw, meters_of
from tests.controller.core.levels_history import (
    FIRST_DRAW,
    LEVELS,
    LINK,
    STUD,
    T0,
    paytable,
    played,
    table,
)
from tests.controller.permissive_law import PERMISSIVE

KEY = b"k" * 32


def rows(events, link_id=LINK):
    return [tuple(e) for e in seal(KEY, link_id, events, last_seq=0, last_hash=GENESIS)]


def test_the_levels_come_back_from_the_history_meter_by_meter() -> None:
    p = played()
    pool = rebuild_pool(LINK, rows(p.events))
    assert pool.configs == LEVELS
    levels = pool.levels(())
    assert levels is not None
    assert meters_of(levels) == meters_of(p.state.levels)
    assert [lv.wins for lv in levels] == [lv.wins for lv in p.state.levels] == [1, 0, 0, 2]
    # The mystery level's trigger is not in the history: unarmed, nothing drawn.
    assert all(lv.armed is None and lv.draws == () for lv in levels)


def test_the_recovery_arms_each_mystery_level_with_a_fresh_draw_after_its_entry() -> None:
    p = played()
    entries = rows(p.events)
    v = ChainVerifier(KEY, LINK)
    assert v.feed_many(entries) is None
    levels = rebuild_pool(LINK, entries).levels(())
    assert levels is not None
    fresh = MysteryDraw(17_77, "77" * 16)
    levels = tuple(
        replace(lv, draws=(fresh,)) if lv.config.mystery is not None else lv for lv in levels
    )
    recovered = replace(p.state, levels=levels)
    out = record_recovery(recovered, at_us=p.at + 1, explanation="recovered", details={})
    assert [e.kind for e in out.events] == [EntryKind.STATE_RECOVERED, EntryKind.MYSTERY_ARMED]
    assert out.state.levels[3].armed == fresh and out.state.levels[3].draws == ()
    # The history with its recovery and the new arming still verifies meter by meter.
    more = seal(KEY, LINK, out.events, last_seq=v.seq, last_hash=v.prev_hash)
    assert v.feed_many([tuple(e) for e in more]) is None
    assert v.trail_part().state.armed["L4"].commitment == fresh.commitment(LINK, "L4")


def test_a_mixed_game_link_gets_its_paytables_and_each_tables_game_back() -> None:
    draw = Game.CARIBBEAN_DRAW
    draw_lines = make_paytable(
        draw,
        (
            PaytableLine(hand=HandCategory.ROYAL_FLUSH, percent_bp=5_000, level=1),
            PaytableLine(hand=HandCategory.FOUR_OF_A_KIND, fixed_cents=400_00),
        ),
    )
    out = open_link(
        law=PERMISSIVE,
        link_id="mixed",
        game=STUD,
        rate_bp=0,
        reset_cents=0,
        paytable=paytable(),  # type: ignore[arg-type]
        paytables={draw: draw_lines},
        tables=(table("t1"), TableConfig(table_id="d1", denomination_cents=100, game=draw)),
        at_us=T0,
        levels=LEVELS,
        draws={3: [FIRST_DRAW]},
    )
    pool = rebuild_pool("mixed", rows(out.events, "mixed"))
    assert pool.paytables == {draw: draw_lines}
    assert pool.games == {"t1": STUD, "d1": draw}
    assert pool.paytable == out.state.paytable.to_dicts()


def test_a_fixed_pay_link_has_no_levels_and_a_classic_link_its_one() -> None:
    lir = Game.LET_IT_RIDE_BONUS
    fixed = open_link(
        law=PERMISSIVE,
        link_id="bonus",
        game=lir,
        rate_bp=0,
        reset_cents=0,
        paytable=default_paytable(lir),
        tables=(table("t1"),),
        at_us=T0,
    )
    assert rebuild_pool("bonus", rows(fixed.events, "bonus")).levels(()) == ()
    classic = open_link(
        law=PERMISSIVE,
        link_id="stud",
        game=STUD,
        rate_bp=8000,
        reset_cents=1_000_00,
        paytable=default_paytable(STUD),
        tables=(table("t1"),),
        at_us=T0,
    )
    pool = rebuild_pool("stud", rows(classic.events, "stud"))
    assert pool.meters is None  # one meter: the chain's own
    state: LinkState = classic.state
    assert pool.levels(state.levels) is None  # the caller's one classic level
