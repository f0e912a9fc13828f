"""Super Sevens (68 IAC 10-12-3): the judge of the first one to three cards, the default
paytable of (f)(1)-(5), and the exact odds checked against every deal of the first three cards
counted through the judge."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import permutations, product

import pytest

from controller.core.games import Game, PaytableError, default_paytable, make_paytable, rules_of
from controller.core.games import super_sevens as s7
from controller.core.hands import HandCategory, InvalidCards, parse_cards
from controller.core.odds import par_sheet, percent_text
from controller.rules import RuleViolation
from controller.rules.wagers import check_denomination

H = HandCategory


def judge(text: str, decks: int = 6) -> HandCategory | None:
    return s7.judge_cards(parse_cards(text), decks=decks)


@pytest.mark.parametrize(
    ("cards", "hand"),
    [
        ("7h 7h 7h", H.THREE_SUITED_SEVENS),
        ("7h 7h 7s", H.THREE_SEVENS),  # not all of one suit
        ("7c 7d 7h", H.THREE_SEVENS),
        ("7s 7s Kd", H.TWO_SUITED_SEVENS),
        ("7s 7d 2c", H.TWO_SEVENS),
        ("7s 7d 7d", H.THREE_SEVENS),
        # 68 IAC 10-12-3(f)(2)-(3): two sevens "on the first two cards", no third card dealt
        # (the player stands, or the dealer has blackjack).
        ("7s 7d", H.TWO_SEVENS),
        ("7s 7s", H.TWO_SUITED_SEVENS),
        ("7s Kd", H.SEVEN),
        ("7s Kd 7s", H.SEVEN),  # the third card counts only after two sevens
        ("7s 9c 4h", H.SEVEN),
        ("Kd", None),  # 68 IAC 10-12-3(e): no seven first, no win
        ("Kd 7s 7s", None),
        ("6h 7h", None),
    ],
)
def test_the_judge_reads_the_first_cards_in_order(cards: str, hand: HandCategory | None) -> None:
    assert judge(cards) is hand


@pytest.mark.parametrize(
    ("cards", "why"),
    [
        ("7h", "the second card decides"),
        ("7h 7d 7s 7c", "need 1 to 3 cards"),
        ("", "need 1 to 3 cards"),
    ],
)
def test_too_few_or_too_many_cards_are_refused(cards: str, why: str) -> None:
    with pytest.raises(InvalidCards, match=why):
        judge(cards)


def test_a_card_appears_at_most_as_often_as_the_shoe_holds_it() -> None:
    with pytest.raises(InvalidCards, match="appears twice"):
        judge("7h 7h 2c", decks=1)
    assert judge("7h 7h 2c", decks=2) is H.TWO_SUITED_SEVENS
    with pytest.raises(InvalidCards, match="more than 2 times"):
        judge("7h 7h 7h", decks=2)
    with pytest.raises(InvalidCards, match="outside 0-51"):
        s7.judge_cards((52,))


def test_the_default_paytable_is_68_iac_10_12_3_f() -> None:
    table = default_paytable(Game.SUPER_SEVENS)
    assert [(line.hand, line.fixed_cents, line.percent_bp) for line in table.lines] == [
        (H.THREE_SUITED_SEVENS, 5_000_00, None),
        (H.THREE_SEVENS, 500_00, None),
        (H.TWO_SUITED_SEVENS, 100_00, None),
        (H.TWO_SEVENS, 50_00, None),
        (H.SEVEN, 3_00, None),
    ]
    # An operator may file the top line from a meter instead.
    metered = make_paytable(
        Game.SUPER_SEVENS,
        [
            {"hand": "seven", "fixed_cents": 300},
            {"hand": "three suited sevens", "percent_bp": 10_000},
        ],
    )
    assert metered.has_jackpot and metered.lines[0].hand is H.THREE_SUITED_SEVENS
    with pytest.raises(PaytableError, match="Super Sevens cannot pay a royal flush"):
        make_paytable(Game.SUPER_SEVENS, [{"hand": "ROYAL_FLUSH", "fixed_cents": 100}])


def test_the_bet_is_at_most_one_dollar() -> None:
    """68 IAC 10-12-3(b): "A maximum wager of one dollar ($1)": no wager is fixed, one above a
    dollar is refused."""
    assert Game.SUPER_SEVENS.fixed_wager_cents is None
    assert Game.SUPER_SEVENS.max_wager_cents == 100
    assert check_denomination(Game.SUPER_SEVENS, 100) == 100
    assert check_denomination(Game.SUPER_SEVENS, 50) == 50
    assert check_denomination(Game.SUPER_SEVENS, 25) == 25
    with pytest.raises(RuleViolation, match=r"Super Sevens bet is at most \$1.00") as caught:
        check_denomination(Game.SUPER_SEVENS, 200)
    assert caught.value.clause == "68 IAC 10-12-3(b)"


def test_the_registered_game_deals_from_six_decks() -> None:
    rules = rules_of(Game.SUPER_SEVENS)
    assert s7.DEFAULT_DECKS == 6 and rules.hand.deck.decks == 6 and rules.hand.deck.size == 312
    assert rules.register.cards_per_hit == 3 and rules.register.map_version == 2
    with pytest.raises(ValueError, match="one to eight decks"):
        s7.rules(9)


def _ordered_deals(shoe: list[int]) -> Counter[HandCategory | None]:
    """Every ordered first three cards of the physical shoe, through the judge."""
    decks = len(shoe) // 52
    return Counter(s7.judge_cards(three, decks=decks) for three in permutations(shoe, 3))


@pytest.mark.parametrize("decks", [1, 2])
def test_the_counts_are_every_ordered_deal_of_a_small_shoe(decks: int) -> None:
    # 132,600 deals of one deck, 1,092,624 of two: each physical card its own.
    shoe = [code for code in range(52) for _ in range(decks)]
    seen = _ordered_deals(shoe)
    counts = s7.count(decks)
    assert counts.total == sum(seen.values())
    assert {h: n for h, n in seen.items() if h is not None} == {
        h: n for h, n in counts.ways.items() if n
    }
    assert seen[None] == counts.no_hand


def test_the_six_deck_counts_are_every_deal_weighted_by_its_copies() -> None:
    # Every sequence of three card faces (52**3) once, weighted by the ways a six-deck shoe
    # deals it: 6 x 5 x 4 for one face three times, and so on.
    decks = 6
    seen: Counter[HandCategory | None] = Counter()
    for three in product(range(52), repeat=3):
        weight = 1
        used: Counter[int] = Counter()
        for code in three:
            weight *= decks - used[code]
            used[code] += 1
        seen[s7.judge_cards(three, decks=decks)] += weight
    counts = s7.count(decks)
    assert sum(seen.values()) == counts.total == 312 * 311 * 310
    assert {h: n for h, n in seen.items() if h is not None} == dict(counts.ways)


def test_the_six_deck_odds_and_return() -> None:
    counts = rules_of(Game.SUPER_SEVENS).count()
    # 312 x 311 x 310 ordered first three cards; 24 sevens, 6 of each suit, 288 other cards.
    assert counts.total == 30_079_920
    assert dict(counts.ways) == {
        H.THREE_SUITED_SEVENS: 24 * 5 * 4,  # 480
        H.THREE_SEVENS: 24 * 23 * 22 - 480,  # 11,664
        H.TWO_SUITED_SEVENS: 24 * 5 * 288,  # 34,560
        H.TWO_SEVENS: 24 * 18 * 288,  # 124,416
        H.SEVEN: 24 * 288 * 310,  # 2,142,720
    }
    # 24 sevens in 312 cards: a seven first one time in 13.
    first_seven = sum(counts.ways.values())
    assert Fraction(first_seven, counts.total) == Fraction(24, 312)
    sheet = par_sheet(default_paytable(Game.SUPER_SEVENS), wager_cents=100)
    assert sheet.meter_share == 0
    paid = 480 * 5_000 + 11_664 * 500 + 34_560 * 100 + 124_416 * 50 + 2_142_720 * 3
    assert sheet.expected_return(0) == Fraction(paid, 30_079_920)
    assert percent_text(sheet.expected_return(0)) == "80.91%"
