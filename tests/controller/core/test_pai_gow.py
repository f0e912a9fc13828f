"""The Pai Gow Poker progressive: the judge of seven cards with the joker (68 IAC 10-9-3(c),
10-9-14), the exact odds of all C(53, 7) hands checked three ways (published counts, every
hand of smaller decks through the judge, the judge against a brute-force stand-in for the
joker), and the check of a player's setting (10-9-13(a))."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction
from itertools import combinations
from math import comb

import pytest

from controller.core.games import Game, default_paytable, rules_of
from controller.core.games import pai_gow as pg
from controller.core.games.pai_gow_counts import hand_counts
from controller.core.hands import JOKER, HandCategory, InvalidCards, evaluate, parse_cards
from controller.core.odds import par_sheet, par_sheet_dict, percent_text

H = HandCategory


def cards(text: str) -> tuple[int, ...]:
    return parse_cards(text, joker=True)


@pytest.mark.parametrize(
    ("hand", "made"),
    [
        ("As Ah Ad Ac Jk 2c 3d", H.FIVE_ACES),
        ("Ks Qs Js Ts Jk 2c 3d", H.ROYAL_FLUSH),  # the joker the ace of spades
        ("As Ks Qs Js Jk 2c 3d", H.ROYAL_FLUSH),  # the joker the ten
        ("As Ah Ad Jk Ks Qs Js", H.ROYAL_FLUSH),  # above the four aces it also makes
        ("9s 8s 7s 6s Jk 2c 3d", H.STRAIGHT_FLUSH),
        ("As 2s 3s 5s Jk Kd 9c", H.STRAIGHT_FLUSH),  # the wheel, the joker the four
        ("As Ah Ad Jk 2c 5d 9h", H.FOUR_OF_A_KIND),
        ("Kh Kd Kc Jk 2s 3d 8c", H.THREE_OF_A_KIND),  # an ace, never a fourth king
        ("Ah Ad Kc Ks Jk 2s 7d", H.FULL_HOUSE),
        ("Kh Kd Qc Qs Jk 2s 7d", H.TWO_PAIR),  # kings, queens and an ace
        ("2h 4h 6h 8h Jk Kd 9c", H.FLUSH),
        ("2h 3d 4c 5s Jk Kd 9c", H.STRAIGHT),
        ("2h 4d 5c 6s Jk Kd 9c", H.STRAIGHT),  # the joker the three
        ("Ah 4d 6c 8s Jk Kd Tc", H.ONE_PAIR),  # the joker pairs the ace
        ("2h 4d 6c 8s Jk Kd Tc", None),  # ace high: no paying hand
        ("As Ks Qs Js Ts 2c 3d", H.ROYAL_FLUSH),
        ("Ac Ad Ah As Kc Kd 2h", H.FOUR_OF_A_KIND),
    ],
)
def test_the_judge(hand: str, made: HandCategory | None) -> None:
    assert pg.judge_cards(cards(hand)) is made
    assert rules_of(Game.PAI_GOW_POKER).judge(cards(hand)) is made


@pytest.mark.parametrize(
    ("hand", "why"),
    [
        ("As Ah Ad Ac Jk 2c", "need 7 cards"),
        ("As Ah Ad Ac Jk 2c 3d 4d", "need 7 cards"),
        ("As As Ad Ac Jk 2c 3d", "appears twice"),
    ],
)
def test_the_judge_refuses_what_is_not_a_hand(hand: str, why: str) -> None:
    with pytest.raises(InvalidCards, match=why):
        pg.judge_cards(cards(hand))
    with pytest.raises(InvalidCards, match="appears twice"):
        pg.judge_cards((JOKER, JOKER, 1, 2, 3, 4, 5))


def test_the_joker_is_refused_where_the_game_deals_none() -> None:
    with pytest.raises(InvalidCards, match="outside 0-51"):
        evaluate((JOKER, 1, 2, 3, 4))
    with pytest.raises(InvalidCards, match="outside 0-51"):
        rules_of(Game.CARIBBEAN_STUD).judge((JOKER, 1, 2, 3, 4))
    with pytest.raises(InvalidCards, match="the joker is not a card of this game"):
        parse_cards("Jk")
    assert parse_cards("joker 2c", joker=True) == (JOKER, 0)


# --- the odds ------------------------------------------------------------------------------

FLUSHES = (H.ROYAL_FLUSH, H.STRAIGHT_FLUSH)

# Published counts of the 154,143,080 Pai Gow Poker hands (gamblingplanet.eu, "Pai Gow Poker
# Probabilities": straight and royal flushes together), and of the 133,784,560 seven-card
# hands without the joker (B. Alspach, "Pai Gow Poker Computations", 2003, table 1: straight
# and royal flushes together).
PUBLISHED = {
    H.FIVE_ACES: 1_128,
    FLUSHES: 210_964,
    H.FOUR_OF_A_KIND: 307_472,
    H.FULL_HOUSE: 4_188_528,
    H.FLUSH: 6_172_088,
    H.STRAIGHT: 11_236_028,
    H.THREE_OF_A_KIND: 7_470_676,
    H.TWO_PAIR: 35_553_816,
    H.ONE_PAIR: 64_221_960,
    H.HIGH_CARD: 24_780_420,
}
PUBLISHED_WITHOUT_JOKER = {
    FLUSHES: 41_584,
    H.FOUR_OF_A_KIND: 224_848,
    H.FULL_HOUSE: 3_473_184,
    H.FLUSH: 4_047_644,
    H.STRAIGHT: 6_180_020,
    H.THREE_OF_A_KIND: 6_461_620,
    H.TWO_PAIR: 31_433_400,
    H.ONE_PAIR: 58_627_800,
    H.HIGH_CARD: 23_294_460,
}


def _grouped(counts: dict[HandCategory, int]) -> dict[object, int]:
    """The counts as published: straight and royal flushes together, no empty hand."""
    out: dict[object, int] = {}
    for hand, n in counts.items():
        if n:
            key = FLUSHES if hand in FLUSHES else hand
            out[key] = out.get(key, 0) + n
    return out


def test_the_counts_are_the_published_ones() -> None:
    natural, with_joker = hand_counts()
    both = {h: natural[h] + with_joker[h] for h in natural}
    assert _grouped(both) == PUBLISHED
    assert _grouped(natural) == PUBLISHED_WITHOUT_JOKER
    assert sum(both.values()) == comb(53, 7) == 154_143_080
    # By hand: four aces, the joker and any two of the other 48 cards.
    assert both[H.FIVE_ACES] == comb(48, 2)
    # Without the joker, a royal flush of seven cards: its suit, then any two of the other 47.
    assert natural[H.ROYAL_FLUSH] == 4 * comb(47, 2)


def test_the_game_s_odds_are_every_ranked_hand_over_all_hands() -> None:
    counts = rules_of(Game.PAI_GOW_POKER).count()
    assert counts.total == 154_143_080
    assert counts.ways[H.FIVE_ACES] == 1_128
    assert counts.ways[H.ROYAL_FLUSH] == 26_132
    assert counts.ways[H.STRAIGHT_FLUSH] == 184_832
    assert counts.no_hand == 24_780_420
    assert counts.probability(H.FIVE_ACES) == Fraction(1_128, 154_143_080)


# Smaller decks of the four suits and the joker, every seven-card hand dealt through the
# judge: the wheel and five aces (21 cards), the royal flushes (25 cards), both (29 cards).
@pytest.mark.parametrize(
    "ranks",
    [(0, 1, 2, 3, 12), (7, 8, 9, 10, 11, 12), (0, 1, 2, 3, 10, 11, 12)],
    ids=["A-5", "9-A", "2-5,Q-A"],
)
def test_the_counting_method_matches_every_hand_of_a_smaller_deck(ranks: tuple[int, ...]) -> None:
    deck = [4 * rank + suit for rank in ranks for suit in range(4)] + [JOKER]
    seen = Counter(pg.judge_cards(hand) for hand in combinations(deck, 7))
    natural, with_joker = hand_counts(ranks)
    counted = {h: natural[h] + with_joker[h] for h in pg.RANKING}
    assert {h: n for h, n in seen.items() if h is not None} == {
        h: n for h, n in counted.items() if n
    }
    assert seen[None] == natural[H.HIGH_CARD] + with_joker[H.HIGH_CARD]
    assert sum(seen.values()) == comb(len(deck), 7)


def _brute_force(hand: tuple[int, ...]) -> HandCategory:
    """The joker tried as every card it may stand for, judged by the five-card evaluator."""
    if JOKER not in hand:
        return evaluate(hand).category
    naturals = [code for code in hand if code != JOKER]
    if sum(1 for code in naturals if code // 4 == 12) == 4:
        return H.FIVE_ACES
    best = H.HIGH_CARD
    completes = (H.STRAIGHT, H.FLUSH, H.STRAIGHT_FLUSH, H.ROYAL_FLUSH)
    for stand_in in range(52):
        if stand_in in naturals:
            continue
        if stand_in // 4 == 12:  # as an ace, in any hand
            best = max(best, evaluate((*naturals, stand_in)).category)
            continue
        for four in combinations(naturals, 4):  # completing a five it is part of
            made = evaluate((*four, stand_in)).category
            if made in completes:
                best = max(best, made)
    return best


def test_the_judge_agrees_with_a_brute_force_joker() -> None:
    rng = random.Random(10_9_3)
    rest = list(range(52))
    for _ in range(3_000):
        hand = (JOKER, *rng.sample(rest, 6))
        expected = _brute_force(hand)
        assert pg.seven_card_hand(hand) is expected, hand
    for _ in range(3_000):
        hand = tuple(rng.sample(rest, 7))
        assert pg.seven_card_hand(hand) is evaluate(hand).category, hand


# --- the default paytable --------------------------------------------------------------------


def test_the_default_paytable_and_its_return() -> None:
    table = default_paytable(Game.PAI_GOW_POKER)
    assert [line.hand for line in table.lines] == list(pg.RANKING[:8])
    five_aces = table.line_for(H.FIVE_ACES)
    assert five_aces is not None and five_aces.resets_meter
    sheet = par_sheet(table, wager_cents=100)
    # Per $1 bet, in cents over all hands: the fixed lines ...
    fixed = (
        184_832 * 100_00
        + 307_472 * 50_00
        + 4_188_528 * 3_00
        + 6_172_088 * 2_00
        + 11_236_028 * 1_00
        + 7_470_676 * 1_00
    )
    assert sheet.fixed_return == Fraction(fixed, 154_143_080 * 100)
    # ... and the meter: five aces all of it, a royal flush a tenth.
    assert sheet.meter_share == Fraction(1_128 * 10 + 26_132, 154_143_080 * 100 * 10)
    reset = 10_000_00
    assert percent_text(sheet.fixed_return) == "50.26%"
    assert percent_text(sheet.expected_return(reset)) == "74.53%"
    assert sheet.break_even_meter is not None
    dict_ = par_sheet_dict(table, wagers_cents=[100], reset_cents=reset, meter_cents=reset)
    assert dict_["deals"] == 154_143_080 and dict_["five_card_hands"] is None
    assert dict_["lines"][0]["ways"] == 1_128
    assert dict_["lines"][0]["one_in"] == "1 in 136,652"


def test_the_odds_are_counted_quickly_and_once() -> None:
    # The par sheet is built on every submission: counting is cached after the first time.
    first = pg.count()
    assert pg.count() is first


# --- setting the hands (68 IAC 10-9-13(a)) -------------------------------------------------


@pytest.mark.parametrize(
    ("high", "low", "fouled"),
    [
        ("Ks Kd 2c 5h 9d", "Ah Ad", True),  # a pair of aces behind a pair of kings
        ("Ks Kd Ah 5h 9d", "Qc Jd", False),
        ("Kc 9d 7h 4s 3c", "Ah 2d", True),  # the ace outranks the king
        ("Ac Kd 7h 4s 3c", "Ah Qd", False),  # ace and king over ace and queen
        ("Ks Kd 3c 3h 9d", "Jk Ad", False),  # two pair over the joker's pair of aces
        ("Ks Kd 3c 5h 9d", "Jk Ad", True),  # the joker an ace in the low hand
        ("Jk Ks Qs Js Ts", "2c 2d", False),  # the joker completes a royal flush
        ("Jk Ac Ad Ah As", "Kc Kd", False),  # five aces
        ("Qc Jd 9h 5s 3c", "Qh Jc", False),  # the high hand's further cards
        ("Qc Td 9h 5s 3c", "Qh Jc", True),
    ],
)
def test_a_setting_stands_only_when_the_high_hand_outranks_the_low(
    high: str, low: str, fouled: bool
) -> None:
    problem = pg.setting_problem(cards(high), cards(low))
    assert (problem is not None) is fouled
    if fouled:
        assert problem is not None and "foul" in problem


def test_a_setting_must_be_seven_distinct_cards() -> None:
    with pytest.raises(InvalidCards, match="appears twice"):
        pg.setting_problem(cards("Ks Kd 2c 5h 9d"), cards("Ks 3d"))
    with pytest.raises(InvalidCards, match="need 7 cards"):
        pg.setting_problem(cards("Ks Kd 2c 5h"), cards("Ah 3d"))
