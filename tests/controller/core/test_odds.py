"""The par sheet: exact odds of every hand, expected returns and the break-even meter, and the
bound on a jackpot's odds."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from itertools import combinations

import pytest

from controller.core.games import Game, PaytableLine, default_paytable, make_paytable
from controller.core.hands import HandCategory, evaluate
from controller.core.odds import (
    ASSUMPTION,
    FIVE_CARD_HANDS,
    category_counts,
    ceil_cents,
    one_in_text,
    par_sheet,
    par_sheet_dict,
    percent_text,
    probability,
)
from controller.rules import RuleViolation
from controller.rules.filing import check_paytable
from controller.rules.odds import DEFAULT_JACKPOT_ODDS_BOUND, OddsBound, check_jackpot_odds

H = HandCategory

# The published counts of the 2,598,960 five-card hands.
PUBLISHED = {
    H.ROYAL_FLUSH: 4,
    H.STRAIGHT_FLUSH: 36,
    H.FOUR_OF_A_KIND: 624,
    H.FULL_HOUSE: 3_744,
    H.FLUSH: 5_108,
    H.STRAIGHT: 10_200,
    H.THREE_OF_A_KIND: 54_912,
    H.TWO_PAIR: 123_552,
    H.ONE_PAIR: 1_098_240,
    H.HIGH_CARD: 1_302_540,
}


def test_the_combinatorial_counts_are_the_published_ones() -> None:
    assert FIVE_CARD_HANDS == 2_598_960
    assert dict(category_counts()) == PUBLISHED
    assert probability(H.ROYAL_FLUSH) == Fraction(1, 649_740)


def test_the_counts_agree_with_the_evaluator_on_every_five_card_hand() -> None:
    # As tests/controller/core/test_hands.py::test_all_five_card_hands does: every hand (2 s).
    seen = Counter(evaluate(cards).category for cards in combinations(range(52), 5))
    assert seen == category_counts()


@pytest.mark.parametrize(
    ("hand", "text"),
    [
        (H.ROYAL_FLUSH, "1 in 649,740"),
        (H.STRAIGHT_FLUSH, "1 in 72,193"),
        (H.FLUSH, "1 in 509"),
        (H.THREE_OF_A_KIND, "1 in 47.33"),
        (H.ONE_PAIR, "1 in 2.37"),
        (H.HIGH_CARD, "1 in 2.00"),
    ],
)
def test_one_in_n_is_rounded_to_be_read(hand: HandCategory, text: str) -> None:
    assert one_in_text(probability(hand)) == text


def test_percentages_round_half_up_with_integers() -> None:
    assert percent_text(Fraction(9_735, 10_000)) == "97.35%"
    assert percent_text(Fraction(1, 20_000)) == "0.01%"
    assert percent_text(Fraction(1, 20_001)) == "0.00%"
    assert percent_text(Fraction(3, 2)) == "150.00%"
    assert ceil_cents(Fraction(1, 3)) == 1 and ceil_cents(Fraction(6, 3)) == 2


def test_the_expected_return_matches_an_independent_sum() -> None:
    # Caribbean Stud's default on a $1 bet: royal 100 % and straight flush 10 % of the meter,
    # four of a kind $500, full house $100, flush $50. In cents, over all hands:
    reset, meter = 10_000_00, 25_000_00

    def independent(m: int) -> Fraction:
        paid = 4 * m + 36 * m // 10 + 624 * 500_00 + 3_744 * 100_00 + 5_108 * 50_00
        # 36 x 10 % of m is a whole number of cents here (m is a multiple of 10).
        return Fraction(paid, 2_598_960 * 100)

    sheet = par_sheet(default_paytable(Game.CARIBBEAN_STUD), wager_cents=100)
    assert sheet.expected_return(reset) == independent(reset)
    assert sheet.expected_return(meter) == independent(meter)
    assert percent_text(sheet.expected_return(reset)) == "39.16%"
    # Five times the bet, a fifth of the return.
    five = par_sheet(default_paytable(Game.CARIBBEAN_STUD), wager_cents=500)
    assert five.expected_return(meter) == sheet.expected_return(meter) / 5


def test_the_break_even_meter_solves_the_linear_equation() -> None:
    sheet = par_sheet(default_paytable(Game.CARIBBEAN_STUD), wager_cents=100)
    # 4 m + 3.6 m + 94,180,000 = 259,896,000 (cents over all hands at $1 a hand).
    assert sheet.break_even_meter == Fraction(259_896_000 - 94_180_000, 1) / Fraction(76, 10)
    cents = ceil_cents(sheet.break_even_meter)
    assert cents == 218_047_37
    assert sheet.expected_return(cents) >= 1 > sheet.expected_return(cents - 1)


def test_a_fixed_pay_table_has_no_break_even_meter() -> None:
    sheet = par_sheet(default_paytable(Game.LET_IT_RIDE_BONUS), wager_cents=100)
    assert sheet.break_even_meter is None and sheet.meter_share == 0
    pays = {
        H.ROYAL_FLUSH: 10_000_00,
        H.STRAIGHT_FLUSH: 2_000_00,
        H.FOUR_OF_A_KIND: 100_00,
        H.FULL_HOUSE: 75_00,
        H.FLUSH: 50_00,
        H.STRAIGHT: 25_00,
        H.THREE_OF_A_KIND: 8_00,
        H.TWO_PAIR: 4_00,
    }
    expected = Fraction(sum(PUBLISHED[h] * c for h, c in pays.items()), 2_598_960 * 100)
    assert sheet.expected_return(0) == sheet.expected_return(10**9) == expected
    # Fixed lines that already return more than the bet break even with an empty meter.
    rich = make_paytable(
        Game.CARIBBEAN_STUD,
        [
            PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=10_000),
            PaytableLine(hand=H.ONE_PAIR, fixed_cents=1_00),
        ],
    )
    assert par_sheet(rich, wager_cents=1).break_even_meter == 0


def test_caribbean_draw_states_its_assumption() -> None:
    sheet = par_sheet_dict(
        default_paytable(Game.CARIBBEAN_DRAW), wagers_cents=[100], reset_cents=1, meter_cents=1
    )
    assert sheet["assumption"] == ASSUMPTION[Game.CARIBBEAN_DRAW]
    # Judged on the hand after the draw (68 IAC 10-8-4(a)), and the sheet says nothing else.
    assert sheet["judged_on"] == "the player's five cards after the draw"
    assert "as if the player drew none" in sheet["assumption"]
    assert "before the draw" not in json.dumps(sheet)
    stud = par_sheet_dict(
        default_paytable(Game.CARIBBEAN_STUD), wagers_cents=[100], reset_cents=1, meter_cents=1
    )
    assert stud["assumption"] is None


# --------------------------------------------------------------------------------------------
# The bound on a jackpot's odds (house policy adopted from New Jersey)


def test_a_jackpot_rarer_than_the_bound_is_refused_naming_it() -> None:
    stud = default_paytable(Game.CARIBBEAN_STUD)  # royal flush: 649,739 to 1
    with pytest.raises(RuleViolation) as caught:
        check_paytable(Game.CARIBBEAN_STUD, stud, jackpot_odds_bound=OddsBound(500_000))
    assert "500,000 to 1" in caught.value.message
    assert "royal flush" in caught.value.message and "649,739 to 1" in caught.value.message
    assert caught.value.clause == "house policy adopted from NJ 13:69D-1.52"
    # Exactly at the bound is allowed: no worse than, not better than.
    check_jackpot_odds(stud, bound=649_739)
    with pytest.raises(RuleViolation, match="649,738 to 1"):
        check_jackpot_odds(stud, bound=649_738)


def test_the_default_bound_accepts_every_game() -> None:
    assert DEFAULT_JACKPOT_ODDS_BOUND == 100_000_000
    for game in Game:
        check_paytable(game, default_paytable(game))
    # Only the jackpot line (the whole meter) is bound; a rare line paying a share is not.
    share = make_paytable(
        Game.CARIBBEAN_STUD,
        [
            PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=5_000),
            PaytableLine(hand=H.FLUSH, percent_bp=10_000),
        ],
    )
    check_jackpot_odds(share, bound=600)
    with pytest.raises(RuleViolation, match="flush"):
        check_jackpot_odds(share, bound=500)


def test_the_long_run_return_grows_with_the_rate_and_the_seed() -> None:
    stud = Game.CARIBBEAN_STUD
    sheet = par_sheet(default_paytable(stud), wager_cents=5_00)
    at = sheet.long_run_return
    # Each point of rate is a point of return; the seed is the royal's chance x the reset.
    assert at(rate_bp=8_100, reset_cents=0) - at(rate_bp=8_000, reset_cents=0) == Fraction(1, 100)
    seed = at(rate_bp=8_000, reset_cents=10_000_00) - at(rate_bp=8_000, reset_cents=0)
    assert seed == Fraction(4, 2_598_960) * 10_000_00 / 5_00
    assert at(rate_bp=8_000, reset_cents=0) == sheet.fixed_return + Fraction(8, 10)
    # No line pays from the meter: what goes into it is never returned.
    fixed_only = make_paytable(stud, [{"hand": "FLUSH", "fixed_cents": 50_00}])
    sheet = par_sheet(fixed_only, wager_cents=1_00)
    assert sheet.long_run_return(rate_bp=8_000, reset_cents=10_000_00) == sheet.fixed_return
