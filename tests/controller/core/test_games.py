"""Tests for controller.core.games: the default paytables and the paytable validator."""

from __future__ import annotations

import pytest

from controller.core.games import (
    Game,
    Paytable,
    PaytableError,
    PaytableLine,
    default_paytable,
    make_paytable,
)
from controller.core.hands import HandCategory

H = HandCategory


def amounts(table: Paytable) -> dict[HandCategory, tuple[int | None, int | None]]:
    return {line.hand: (line.percent_bp, line.fixed_cents) for line in table.lines}


# --- defaults ------------------------------------------------------------------------------


def test_let_it_ride_bonus_default_is_68_iac_10_7_5_e():
    table = default_paytable(Game.LET_IT_RIDE_BONUS)
    assert table.game is Game.LET_IT_RIDE_BONUS
    assert amounts(table) == {
        H.ROYAL_FLUSH: (None, 10_000_00),
        H.STRAIGHT_FLUSH: (None, 2_000_00),
        H.FOUR_OF_A_KIND: (None, 100_00),
        H.FULL_HOUSE: (None, 75_00),
        H.FLUSH: (None, 50_00),
        H.STRAIGHT: (None, 25_00),
        H.THREE_OF_A_KIND: (None, 8_00),
        H.TWO_PAIR: (None, 4_00),
    }
    # Nothing below two pair, and nothing paid from a meter.
    assert table.line_for(H.ONE_PAIR) is None
    assert table.line_for(H.HIGH_CARD) is None
    assert not any(line.from_meter for line in table.lines)
    assert not table.has_jackpot


@pytest.mark.parametrize("game", [Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW])
def test_caribbean_default(game):
    table = default_paytable(game)
    assert table.game is game
    assert amounts(table) == {
        H.ROYAL_FLUSH: (10_000, None),
        H.STRAIGHT_FLUSH: (1_000, None),
        H.FOUR_OF_A_KIND: (None, 500_00),
        H.FULL_HOUSE: (None, 100_00),
        H.FLUSH: (None, 50_00),
    }
    royal = table.line_for(H.ROYAL_FLUSH)
    straight_flush = table.line_for(H.STRAIGHT_FLUSH)
    assert royal is not None and royal.from_meter and royal.resets_meter
    assert straight_flush is not None and straight_flush.from_meter
    assert not straight_flush.resets_meter
    assert table.has_jackpot
    for hand in (H.STRAIGHT, H.THREE_OF_A_KIND, H.TWO_PAIR, H.ONE_PAIR, H.HIGH_CARD):
        assert table.line_for(hand) is None


def test_lines_are_kept_best_hand_first():
    table = make_paytable(
        Game.CARIBBEAN_STUD,
        [
            PaytableLine(hand=H.FLUSH, fixed_cents=50_00),
            PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=10_000),
            PaytableLine(hand=H.FULL_HOUSE, fixed_cents=100_00),
        ],
    )
    assert [line.hand for line in table.lines] == [H.ROYAL_FLUSH, H.FULL_HOUSE, H.FLUSH]


def test_mapping_input_works_and_round_trips():
    table = make_paytable(
        Game.CARIBBEAN_STUD,
        [
            {"hand": "royal flush", "percent_bp": 10_000},
            {"hand": "STRAIGHT_FLUSH", "percent_bp": 1_000},
            {"hand": "Four-of-a-kind", "fixed_cents": 500_00},
        ],
    )
    assert amounts(table) == {
        H.ROYAL_FLUSH: (10_000, None),
        H.STRAIGHT_FLUSH: (1_000, None),
        H.FOUR_OF_A_KIND: (None, 500_00),
    }
    assert make_paytable(Game.CARIBBEAN_STUD, table.to_dicts()) == table


def test_describe():
    table = default_paytable(Game.CARIBBEAN_STUD)
    assert table.lines[0].describe() == "royal flush: 100% of the meter"
    assert table.lines[1].describe() == "straight flush: 10% of the meter"
    assert table.lines[2].describe() == "four of a kind: $500.00"


# --- refusals ------------------------------------------------------------------------------

ROYAL = {"hand": "ROYAL_FLUSH", "percent_bp": 10_000}


def refuse(game, lines) -> str:
    with pytest.raises(PaytableError) as info:
        make_paytable(game, lines)
    return str(info.value)


@pytest.mark.parametrize(
    ("bad_line", "why"),
    [
        ({"hand": "FLUSH", "fixed_cents": -100}, "must be positive"),
        ({"hand": "FLUSH", "fixed_cents": 0}, "must be positive"),
        ({"hand": "STRAIGHT_FLUSH", "percent_bp": 10_001}, "at most 100%"),
        ({"hand": "STRAIGHT_FLUSH", "percent_bp": 0}, "above 0%"),
        ({"hand": "STRAIGHT_FLUSH", "percent_bp": -100}, "above 0%"),
        ({"hand": "STRAIGHT_FLUSH", "percent_bp": 1000, "fixed_cents": 100}, "either a percentage"),
        ({"hand": "STRAIGHT_FLUSH"}, "either a percentage"),
        ({"hand": "STRAIGHT_FLUSH", "percent_bp": 10.5}, "whole number"),
        ({"hand": "FLUSH", "fixed_cents": "5000"}, "whole number"),
        ({"hand": "HIGH_CARD", "fixed_cents": 100}, "cannot pay a high card"),
    ],
)
def test_bad_line_refused_naming_line_and_hand(bad_line, why):
    message = refuse(Game.CARIBBEAN_STUD, [ROYAL, bad_line])
    assert "paytable line 2" in message
    hand = HandCategory.parse(bad_line["hand"])
    assert f"({hand.label})" in message
    assert why in message


def test_refusal_shows_the_bad_amount():
    assert "-$1.00" in refuse(Game.CARIBBEAN_STUD, [ROYAL, {"hand": "FLUSH", "fixed_cents": -100}])
    assert "100.01%" in refuse(
        Game.CARIBBEAN_STUD, [ROYAL, {"hand": "STRAIGHT_FLUSH", "percent_bp": 10_001}]
    )


def test_let_it_ride_bonus_cannot_pay_one_pair():
    lines = [
        PaytableLine(hand=H.ROYAL_FLUSH, fixed_cents=10_000_00),
        PaytableLine(hand=H.TWO_PAIR, fixed_cents=4_00),
        PaytableLine(hand=H.ONE_PAIR, fixed_cents=1_00),
    ]
    message = refuse(Game.LET_IT_RIDE_BONUS, lines)
    assert "paytable line 3 (one pair)" in message
    assert "lowest paying hand is two pair" in message


@pytest.mark.parametrize("game", list(Game))
def test_no_game_pays_high_card(game):
    message = refuse(game, [PaytableLine(hand=H.HIGH_CARD, fixed_cents=1_00)])
    assert "paytable line 1 (high card)" in message


def test_caribbean_may_pay_one_pair():
    table = make_paytable(Game.CARIBBEAN_DRAW, [PaytableLine(hand=H.ONE_PAIR, fixed_cents=1_00)])
    assert table.line_for(H.ONE_PAIR) is not None


def test_duplicate_hand_refused():
    message = refuse(
        Game.CARIBBEAN_STUD,
        [ROYAL, {"hand": "flush", "fixed_cents": 50_00}, {"hand": "FLUSH", "fixed_cents": 60_00}],
    )
    assert "paytable line 3 (flush)" in message
    assert "appears twice" in message


def test_unknown_hand_name_refused():
    message = refuse(Game.CARIBBEAN_STUD, [ROYAL, {"hand": "royal straight", "fixed_cents": 1}])
    assert "paytable line 2" in message
    assert "'royal straight'" in message
    assert "unknown hand" in message


def test_missing_hand_refused():
    message = refuse(Game.CARIBBEAN_STUD, [ROYAL, {"percent_bp": 1000}])
    assert "paytable line 2" in message
    assert "'hand' is required" in message


def test_unknown_field_refused():
    message = refuse(
        Game.CARIBBEAN_STUD, [ROYAL, {"hand": "FLUSH", "fixed_cents": 50_00, "bonus": 1}]
    )
    assert "paytable line 2" in message
    assert "unknown field" in message
    assert "'bonus'" in message
    # Like every other refusal, it names the hand of the line.
    assert "flush" in message


def test_empty_paytable_refused():
    assert "at least one line" in refuse(Game.CARIBBEAN_STUD, [])
