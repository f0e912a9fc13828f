"""Indiana read exactly for a link's levels: no jackpot limited except by the wager (68 IAC
10-1-5(d)), the rate of progression is what the jackpots a patron can win grow by (10-1-1.1(b),
bounded by (c)), and a level's share is locked until its own jackpot is won (10-1-1.1(d)).
The same shapes work under a jurisdiction that allows them; a link made before, or under
another setting, is reported and never changed."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from controller.core.games import Game, PaytableLine, default_paytable, make_paytable
from controller.core.hands import HandCategory, parse_cards
from controller.core.law import Law
from controller.core.ledger import GENESIS, seal
from controller.core.rebuild import rebuild_pool
from controller.core.reducer import (
    HitClaim,
    LinkState,
    TableConfig,
    TableReading,
    apply_readings,
    open_link,
)
from controller.core.reducer.levels import AboveLimit, LevelConfig, Mystery, MysteryDraw
from controller.paperwork.governance import PacketFacts, build_packet, packet_json
from controller.paperwork.pool_packet import current_terms, new_link_proposal
from controller.rules import RuleViolation
from controller.rules.filing import Proposal, SubmissionKind, check_new_link
from controller.rules.jurisdictions import INDIANA
from controller.runtime.lawful import not_lawful, standing_problems
from tests.conftest import KEY
from tests.controller.permissive_law import PERMISSIVE

H = HandCategory
SEC = 1_000_000
T0 = 1_700_000_000 * SEC
STUD = Game.CARIBBEAN_STUD
CAPPED = "68 IAC 10-1-5(d)"
SHOWN_RATE = "68 IAC 10-1-1.1(b)-(c)"
U = 10_000


def stud_lines(levels: int) -> object:
    hands = (H.ROYAL_FLUSH, H.STRAIGHT_FLUSH, H.FOUR_OF_A_KIND, H.FULL_HOUSE)
    return make_paytable(
        STUD,
        [PaytableLine(hand=hands[i], percent_bp=10_000, level=i + 1) for i in range(levels)],
    )


def opened(levels: tuple[LevelConfig, ...], law: Law = INDIANA) -> LinkState:
    return open_link(
        law=law,
        link_id="pool",
        game=STUD,
        rate_bp=0,
        reset_cents=0,
        paytable=stud_lines(len(levels)),  # type: ignore[arg-type]
        tables=(TableConfig(table_id="t1", denomination_cents=100, max_credits_per_seat_round=9),),
        at_us=T0,
        levels=levels,
        draws={i: [MysteryDraw(15_00, "ab" * 16)] for i, c in enumerate(levels) if c.mystery},
    ).state


CAPPED_JACKPOT = (
    LevelConfig(name="Jackpot", reset_cents=1_000_00, rate_bp=8_000, limit_cents=2_000_00),
)
MYSTERY_MINI = (
    LevelConfig(name="Grand", reset_cents=10_000_00, rate_bp=7_000),
    LevelConfig(
        name="Mini",
        reset_cents=10_00,
        rate_bp=500,
        mystery=Mystery(floor_cents=10_01, ceiling_cents=20_00),
    ),
)
NEXT_LEVEL = (
    LevelConfig(
        name="Grand",
        reset_cents=10_000_00,
        rate_bp=6_000,
        limit_cents=50_000_00,
        above_limit=AboveLimit.NEXT_LEVEL,
    ),
    LevelConfig(name="Major", reset_cents=1_000_00, rate_bp=1_500),
)
HIDDEN_FUNDED = (LevelConfig(name="Grand", reset_cents=10_000_00, rate_bp=100, reserve_bp=5_900),)
LAWFUL = (
    LevelConfig(name="Grand", reset_cents=10_000_00, rate_bp=4_500, reserve_bp=1_000),
    LevelConfig(name="Major", reset_cents=1_000_00, rate_bp=1_500),
    LevelConfig(name="Minor", reset_cents=100_00, rate_bp=500),
    LevelConfig(name="Mini", reset_cents=10_00, rate_bp=300, reserve_bp=200),
)


def test_a_stud_link_whose_only_jackpot_is_capped_at_2000_is_refused() -> None:
    with pytest.raises(RuleViolation) as caught:
        opened(CAPPED_JACKPOT)
    assert caught.value.clause == CAPPED
    assert "level 1 (Jackpot) is capped at $2,000.00" in caught.value.message
    assert "limited only by limiting the wager" in caught.value.message
    assert "give the level no limit" in caught.value.message
    assert opened(CAPPED_JACKPOT, PERMISSIVE).levels[0].config.limit_cents == 2_000_00


@pytest.mark.parametrize(
    ("levels", "named"),
    [
        (MYSTERY_MINI, "level 2 (Mini) is a mystery level that must hit by $20.00"),
        (NEXT_LEVEL, "level 1 (Grand) is capped at $50,000.00 (its share then going to the next"),
    ],
)
def test_a_mystery_level_or_a_limit_passing_on_is_refused(
    levels: tuple[LevelConfig, ...], named: str
) -> None:
    with pytest.raises(RuleViolation) as caught:
        opened(levels)
    assert caught.value.clause == CAPPED and named in caught.value.message
    assert opened(levels, PERMISSIVE).level_configs == levels


def test_only_the_shown_shares_are_the_rate_of_progression() -> None:
    # 1% shown and 59% hidden: 60% of every wager, but the jackpot grows by 1%.
    with pytest.raises(RuleViolation) as caught:
        opened(HIDDEN_FUNDED)
    assert caught.value.clause == SHOWN_RATE
    assert "rate of progression 1% is outside 60% to 100%" in caught.value.message
    assert "raise the shown shares to at least 60%" in caught.value.message
    assert opened(HIDDEN_FUNDED, PERMISSIVE).rate_of_progression_bp == 6_000
    # Shown 100% and hidden 1%: more than the wager, money that is not the patrons'.
    over = (LevelConfig(name="Grand", reset_cents=10_000_00, rate_bp=10_000, reserve_bp=100),)
    with pytest.raises(RuleViolation) as caught:
        opened(over)
    assert caught.value.clause == SHOWN_RATE
    assert "lower the hidden shares to at most 0%" in caught.value.message
    s = opened(LAWFUL)
    assert (s.rate_bp, s.rate_of_progression_bp) == (8_000, 6_800)
    assert replace(s, law=PERMISSIVE).rate_of_progression_bp == 8_000


def test_filing_a_new_link_holds_it_to_the_law() -> None:
    with pytest.raises(RuleViolation) as caught:
        check_new_link(
            law=INDIANA,
            game=STUD,
            rate_bp=0,
            reset_cents=0,
            paytable=stud_lines(1),  # type: ignore[arg-type]
            levels=CAPPED_JACKPOT,
        )
    assert caught.value.clause == CAPPED
    check_new_link(
        law=PERMISSIVE,
        game=STUD,
        rate_bp=0,
        reset_cents=0,
        paytable=stud_lines(1),  # type: ignore[arg-type]
        levels=CAPPED_JACKPOT,
    )


def test_the_packet_calls_the_shown_shares_the_rate_of_progression() -> None:
    s = opened(LAWFUL)
    facts = PacketFacts(
        submission_id="sub-1",
        kind=SubmissionKind.NEW_LINK,
        link_id="pool",
        link_name="pool",
        game=STUD,
        current=None,
        proposal=new_link_proposal(s),
        effective_at_us=T0,
        notice_days=60,
        notice_override=None,
        filed_by="sup",
        filed_at_us=T0,
        floor_tables=[],
        law=INDIANA,
    )
    packet = json.loads(packet_json(build_packet(facts)))
    rate = packet["pool"]["rate_of_progression"]
    assert (rate["rate_bp"], rate["shown_bp"], rate["hidden_bp"]) == (6_800, 6_800, 1_200)
    assert not rate["hidden_counted"] and rate["clause"] == "68 IAC 10-1-1.1(b), 68 IAC 10-1-1.1(c)"
    assert (
        "a hidden share (a level's reserve) funds its next reset and is not part of it"
        in (rate["note"])
    )
    assert packet["proposed"]["rate_bp"] == 6_800
    assert packet["pool"]["rate_lock"]["clause"] == "68 IAC 10-1-1.1(d)"
    permissive = json.loads(packet_json(build_packet(replace(facts, law=PERMISSIVE))))
    assert permissive["pool"]["rate_of_progression"]["rate_bp"] == 8_000
    assert current_terms(s)["rate_bp"] == 6_800
    assert current_terms(s)["levels_won_since_share_set"] == [False] * 4


def test_a_link_made_under_another_setting_is_reported_and_keeps_playing() -> None:
    """Made where limits and mystery levels are allowed, then read under Indiana: every
    problem is named with its clause and the way into line (a levels change); nothing of the
    link changes, and it keeps crediting its meters (the levels change that brings it into
    line applies at a jackpot reset, which a stopped link would never reach)."""
    made = opened(
        (
            replace(MYSTERY_MINI[0], limit_cents=20_000_00),
            MYSTERY_MINI[1],
        ),
        PERMISSIVE,
    )
    assert standing_problems(made) == []
    under_indiana = replace(made, law=INDIANA)
    found = standing_problems(under_indiana)
    assert [p.clause for p in found] == [CAPPED, CAPPED]
    assert "level 1 (Grand) is capped at $20,000.00" in found[0].message
    assert "level 2 (Mini) is a mystery level" in found[1].message
    assert all("file a levels change" in p.message for p in found)
    text = not_lawful(under_indiana)
    assert text is not None and text.startswith("not lawful under Indiana: ")
    out = apply_readings(
        under_indiana,
        [TableReading(table_id="t1", poll_seq=1, at_us=T0 + SEC, credits=0, rounds=0)],
    )
    out = apply_readings(
        out.state,
        [
            TableReading(
                table_id="t1", poll_seq=2, at_us=T0 + 60 * SEC, credits=2, rounds=1,
                elapsed_us=60 * SEC,
            )
        ],
    )  # fmt: skip
    assert out.state.levels[0].meter_units == (10_000_00 + 1_40) * U
    assert out.state.level_configs == under_indiana.level_configs


def test_each_levels_lock_comes_back_from_the_history() -> None:
    """A recovery rebuilds which levels were won since their shares were set from the
    history alone: a win unlocks its level; a reset that applies new shares unlocks none."""
    opening = open_link(
        law=INDIANA,
        link_id="pool",
        game=STUD,
        rate_bp=0,
        reset_cents=0,
        paytable=stud_lines(4),  # type: ignore[arg-type]
        tables=(TableConfig(table_id="t1", denomination_cents=100),),
        at_us=T0,
        levels=LAWFUL,
    )
    s = opening.state
    events = list(opening.events)
    out = apply_readings(
        s, [TableReading(table_id="t1", poll_seq=1, at_us=T0 + SEC, credits=0, rounds=0)]
    )
    events += out.events
    quads = parse_cards("9c 9d 9h 9s 2c")
    claim = HitClaim(table_seq=1, seat=1, hand=H.FOUR_OF_A_KIND, round=1, cards=quads)
    out = apply_readings(
        out.state,
        [
            TableReading(
                table_id="t1", poll_seq=2, at_us=T0 + 60 * SEC, credits=0, rounds=1,
                head_hit=claim, pending_hits=1, elapsed_us=60 * SEC,
            )
        ],
    )  # fmt: skip
    events += out.events
    assert out.state.won_since_share_set() == (False, False, True, False)
    rows = [tuple(e) for e in seal(KEY, "pool", events, last_seq=0, last_hash=GENESIS)]
    rebuilt = rebuild_pool("pool", rows).levels(s.levels)
    assert rebuilt is not None
    assert [lv.won_since_share_set for lv in rebuilt] == [False, False, True, False]


def test_a_classic_link_outside_the_bounds_is_refused_with_the_jurisdictions_figures() -> None:
    narrow = replace(INDIANA, numbers=replace(INDIANA.numbers, min_rate_bp=7_000))
    with pytest.raises(RuleViolation, match="outside 70% to 100%"):
        open_link(
            law=narrow,
            link_id="c",
            game=STUD,
            rate_bp=6_500,
            reset_cents=1_000_00,
            paytable=default_paytable(STUD),
            tables=(TableConfig(table_id="t1", denomination_cents=100),),
            at_us=T0,
        )
    assert Proposal(kind=SubmissionKind.NEW_LINK).kind is SubmissionKind.NEW_LINK
