"""Tests for controller.core.hands: rankings, kickers, exhaustive counts, a reference cross-check."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from itertools import combinations, pairwise

import pytest

from controller.core.hands import (
    HandCategory,
    HandValue,
    InvalidCards,
    best_five,
    card_code,
    card_text,
    evaluate,
    parse_cards,
)
from tests.controller.core.reference_hands import reference, reference_five

H = HandCategory


def ev(text: str) -> HandValue:
    return evaluate(parse_cards(text))


def texts(codes: Sequence[int]) -> list[str]:
    return [card_text(code) for code in codes]


# --- an independent, deliberately plain reference evaluator ------------------------------


# --- every category, hand-picked ------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "category", "description"),
    [
        ("As Ks Qs Js Ts", H.ROYAL_FLUSH, "royal flush"),
        ("9h Kh Qh Jh Th", H.STRAIGHT_FLUSH, "king-high straight flush"),
        ("Ad 2d 3d 4d 5d", H.STRAIGHT_FLUSH, "five-high straight flush"),
        ("7c 7d 7h 7s 2c", H.FOUR_OF_A_KIND, "four sevens"),
        ("Kc Kd Kh 3s 3c", H.FULL_HOUSE, "full house, kings over threes"),
        ("Ac 9c 7c 4c 2c", H.FLUSH, "ace-high flush"),
        ("Tc Jd Qh Ks As", H.STRAIGHT, "ace-high straight"),
        ("Ac 2d 3h 4s 5c", H.STRAIGHT, "five-high straight"),
        ("Qc Qd Qh 4s 2c", H.THREE_OF_A_KIND, "three queens"),
        ("Kc Kd 5h 5s 2c", H.TWO_PAIR, "two pair, kings and fives"),
        ("Kc Kd 9h 5s 2c", H.ONE_PAIR, "pair of kings"),
        ("Ac Jd 9h 5s 2c", H.HIGH_CARD, "ace high"),
        ("2c 2d 2h 2s 3c", H.FOUR_OF_A_KIND, "four deuces"),
        ("7c 5d 4h 3s 2c", H.HIGH_CARD, "seven high"),
    ],
)
def test_categories(hand: str, category: HandCategory, description: str) -> None:
    value = ev(hand)
    assert value.category is category
    assert value.description == description
    assert reference_five(parse_cards(hand))[0] == category


def test_category_order_is_the_ranking() -> None:
    ladder = [
        "Ac Jd 9h 5s 2c",
        "2c 2d 3h 4s 6c",
        "2c 2d 3h 3s 4c",
        "2c 2d 2h 3s 4c",
        "Ac 2d 3h 4s 5c",
        "2c 3c 4c 5c 7c",
        "2c 2d 2h 3s 3c",
        "2c 2d 2h 2s 3c",
        "Ac 2c 3c 4c 5c",
        "Tc Jc Qc Kc Ac",
    ]
    values = [ev(hand) for hand in ladder]
    # The poker categories; the hands above ROYAL_FLUSH belong to one game each.
    assert [value.category for value in values] == [h for h in HandCategory if h <= 9]
    assert values == sorted(values)
    assert all(low < high for low, high in pairwise(values))


def test_wheel_is_the_lowest_straight() -> None:
    wheel = ev("Ac 2d 3h 4s 5c")
    six_high = ev("2c 3d 4h 5s 6c")
    assert wheel.category is H.STRAIGHT
    assert wheel < six_high
    assert wheel > ev("Ac Ad Ah Ks Qc")  # still a straight, above any trips
    assert wheel.ranks == (3,)


def test_steel_wheel_is_a_straight_flush_below_six_high() -> None:
    steel = ev("Ah 2h 3h 4h 5h")
    assert steel.category is H.STRAIGHT_FLUSH
    assert steel < ev("2h 3h 4h 5h 6h")
    assert steel > ev("Ac Ad Ah As Kc")
    assert ev("9s Ts Js Qs Ks") < ev("Ts Js Qs Ks As")


def test_no_wrap_around() -> None:
    assert ev("Qc Kd Ah 2s 3c").category is H.HIGH_CARD
    assert ev("Qc Kc Ac 2c 3c").category is H.FLUSH
    assert ev("Jc Qd Kh As 2c").category is H.HIGH_CARD


def test_kickers_and_ties() -> None:
    assert ev("Kc Kd Ah 7s 2c") > ev("Kh Ks Qh 7d 2d")
    assert ev("Kc Kd Ah 7s 3c") > ev("Kh Ks Ad 7d 2d")
    # Same ranks, other suits: an exact tie, equal and hashing alike.
    a, b = ev("Kc Kd Ah 7s 2c"), ev("Kh Ks Ad 7d 2h")
    assert a == b
    assert hash(a) == hash(b)
    assert not a < b and not a > b and a <= b and a >= b
    assert len({a, b}) == 1
    # Two pair: high pair, then low pair, then the kicker.
    assert ev("Kc Kd 5h 5s Ac") > ev("Kh Ks 5c 5d Qc")
    assert ev("Kc Kd 6h 6s 2c") > ev("Kh Ks 5c 5d Ac")
    assert ev("Ac Ad 2h 2s 3c") > ev("Kh Ks Qc Qd Jc")
    # Full house: trips first, then the pair.
    assert ev("4c 4d 4h 2s 2c") > ev("3c 3d 3h As Ac")
    assert ev("4c 4d 4h As Ac") > ev("4c 4d 4s Ks Kc")
    # Quads: quad rank, then kicker.
    assert ev("Kc Kd Kh Ks 2c") > ev("Qc Qd Qh Qs Ac")
    assert ev("3c 3d 3h 3s 2c") > ev("2c 2d 2h 2s Ac")
    assert ev("3c 3d 3h 3s Ac") > ev("3c 3d 3h 3s Kc")
    # Trips: trip rank then kickers.
    assert ev("5c 5d 5h Ks 2c") > ev("5c 5d 5s Qs Jc")
    # Flushes and high cards: each card in order.
    assert ev("Ac Kc 9c 7c 5c") > ev("Ad Kd 9d 7d 4d")
    assert ev("Ac Kc 9c 7c 5c") > ev("Ad Qd Jd Td 8d")
    assert ev("Ac Kd 9h 7s 5c") > ev("Ad Kc 9s 7h 4d")
    # Straights by high card only; suits never break ties.
    assert ev("5c 6d 7h 8s 9c") == ev("5d 6h 7s 8c 9h")
    assert ev("As Ks Qs Js Ts") == ev("Ah Kh Qh Jh Th")


def test_value_comparisons_with_other_types() -> None:
    value = ev("Ac Kd 9h 7s 5c")
    assert value != value.strength
    assert (value == "x") is False
    with pytest.raises(TypeError):
        _ = value < 3  # type: ignore[operator]
    with pytest.raises(ValueError, match="not a flush strength"):
        HandValue(H.FLUSH, value.strength)


def test_values_are_shared() -> None:
    assert evaluate([51, 47, 43, 39, 35]) is evaluate((50, 46, 42, 38, 34))


# --- more than five cards -------------------------------------------------------------------


def test_let_it_ride_three_plus_two_community() -> None:
    player = parse_cards("Qh Qd 4s")
    community = parse_cards("Qc 4h")
    value = evaluate(player + community)
    assert value.category is H.FULL_HOUSE
    assert value.description == "full house, queens over fours"


@pytest.mark.parametrize(
    ("hand", "category", "five"),
    [
        ("2c 7d 9h Jc Ks 3d 4h", H.HIGH_CARD, "Ks Jc 9h 7d 4h"),
        ("Ac Ad Kh Ks Qc Qd 2h", H.TWO_PAIR, "Ad Ac Ks Kh Qd"),
        ("Ac Ad Ah Ks Kc Qd Qh", H.FULL_HOUSE, "Ah Ad Ac Ks Kc"),
        ("Ac Ad Ah Ks Kc Kd 2h", H.FULL_HOUSE, "Ah Ad Ac Ks Kd"),
        ("Ac 2d 3h 4s 5c 6d Kh", H.STRAIGHT, "6d 5c 4s 3h 2d"),
        ("Ac 2d 3h 4s 5c Kd Kh", H.STRAIGHT, "5c 4s 3h 2d Ac"),
        ("9h 8h 7h 6h 5h Ah Kh", H.STRAIGHT_FLUSH, "9h 8h 7h 6h 5h"),
        ("Ah Kh 9h 7h 3h 2h 4c", H.FLUSH, "Ah Kh 9h 7h 3h"),
        ("Ah 2h 3h 4h 5h 6c 7c", H.STRAIGHT_FLUSH, "5h 4h 3h 2h Ah"),
        ("Ts Js Qs Ks As 9s 8s", H.ROYAL_FLUSH, "As Ks Qs Js Ts"),
        ("7c 7d 7h 7s Ac Ad Ah", H.FOUR_OF_A_KIND, "7s 7h 7d 7c Ah"),
        ("2c 2d 5h 6s 9c Jd Kh", H.ONE_PAIR, "2d 2c Kh Jd 9c"),
        ("3c 3d 3h 8s 9c Jd Kh", H.THREE_OF_A_KIND, "3h 3d 3c Kh Jd"),
    ],
)
def test_seven_cards_pick_the_best_five(hand: str, category: HandCategory, five: str) -> None:
    cards = parse_cards(hand)
    value = evaluate(cards)
    assert value.category is category
    assert texts(best_five(cards)) == five.split()
    assert evaluate(best_five(cards)) == value
    # The order of the cards given changes nothing.
    assert best_five(reversed(cards)) == best_five(cards)
    assert evaluate(list(reversed(cards))) is value


def test_six_cards_and_caribbean_draw_sized_hands() -> None:
    assert ev("Ac Kc Qc Jc 9c Td").category is H.FLUSH
    assert ev("Ac Kc Qc Jc Tc Td").category is H.ROYAL_FLUSH
    # Eight cards: quads can coexist with five of a suit, and win.
    assert ev("Ah Kh Qh Jh 9h As Ad Ac").category is H.FOUR_OF_A_KIND
    assert ev("Ah Kh Qh Jh 9h As Ad Kc Ks").category is H.FULL_HOUSE


def test_whole_deck() -> None:
    deck = list(range(52))
    assert evaluate(deck).category is H.ROYAL_FLUSH
    assert texts(best_five(deck)) == ["As", "Ks", "Qs", "Js", "Ts"]
    no_spades = [code for code in deck if code % 4 != 3]
    assert texts(best_five(no_spades)) == ["Ah", "Kh", "Qh", "Jh", "Th"]
    # One card of each rank, suits spread so no suit has five: an ace-high straight.
    rainbow = [4 * rank + rank % 4 for rank in range(13)]
    assert evaluate(rainbow).description == "ace-high straight"
    assert reference(rainbow) == (H.STRAIGHT, evaluate(rainbow).ranks)
    assert reference(rainbow[:9]) == (H.STRAIGHT, (8,))


def test_any_iterable() -> None:
    cards = parse_cards("Kc Kd Ah 7s 2c 9d 3h")
    expected = evaluate(cards)
    assert evaluate(list(cards)) is expected
    assert evaluate(iter(cards)) is expected
    assert evaluate(card for card in cards) is expected
    assert evaluate(set(cards)) is expected
    assert evaluate(frozenset(cards[:5])) is evaluate(cards[:5])


# --- exhaustive and cross-checked -----------------------------------------------------------


def test_all_five_card_hands() -> None:
    values = Counter(map(evaluate, combinations(range(52), 5)))
    assert len(values) == 7462
    assert len({value.strength for value in values}) == 7462
    per_category: Counter[HandCategory] = Counter()
    for value, count in values.items():
        per_category[value.category] += count
    assert per_category == {
        H.ROYAL_FLUSH: 4,
        H.STRAIGHT_FLUSH: 36,
        H.FOUR_OF_A_KIND: 624,
        H.FULL_HOUSE: 3744,
        H.FLUSH: 5108,
        H.STRAIGHT: 10200,
        H.THREE_OF_A_KIND: 54912,
        H.TWO_PAIR: 123552,
        H.ONE_PAIR: 1098240,
        H.HIGH_CARD: 1302540,
    }
    assert sum(per_category.values()) == 2_598_960


@pytest.mark.parametrize(
    ("size", "count"), [(5, 5_000), (6, 5_000), (7, 20_000), (8, 500), (10, 200)]
)
def test_matches_reference_on_random_hands(size: int, count: int) -> None:
    rng = random.Random(20240601 + size)
    hands = [rng.sample(range(52), size) for _ in range(count)]
    refs = [reference(hand) for hand in hands]
    values = [evaluate(hand) for hand in hands]
    for hand, ref, value in zip(hands, refs, values, strict=True):
        assert value.category == ref[0], texts(hand)
        assert value.ranks == ref[1], texts(hand)
        five = best_five(hand)
        assert set(five) <= set(hand) and len(set(five)) == 5
        assert reference_five(five) == ref, texts(hand)
    # Ordering: sorted by the reference, strengths must rise exactly when the reference does,
    # which checks the sign of every pairwise comparison at once.
    order = sorted(range(count), key=lambda i: refs[i])
    for i, j in pairwise(order):
        if refs[i] == refs[j]:
            assert values[i] == values[j]
        else:
            assert values[i] < values[j], (texts(hands[i]), texts(hands[j]))


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "message"),
    [
        ([0, 1, 2, 3], "need at least five cards, got 4"),
        ([], "need at least five cards, got 0"),
        ([51, 0, 1, 2, 51], r"card 51 \(As\) appears twice"),
        ([51, 0, 1, 2, 3, 4, 51], r"card 51 \(As\) appears twice"),
        ((0, 1, 2, 3, 52), "card code 52 is outside 0-51"),
        ([0, 1, 2, 3, 4, 5, 99], "card code 99 is outside 0-51"),
        ([0, 1, 2, 3, -1], "card code -1 is outside 0-51"),
        ([0, 1, 2, 3, -60], "card code -60 is outside 0-51"),
        ([0, 1, 2, 3, 1.0], r"card #5 is 1\.0 \(float\), not an int card code"),
        ([0, 1, 2, 3, "As"], r"card #5 is 'As' \(str\), not an int card code"),
        ([True, 1, 2, 3, 4], r"card #1 is True \(bool\), not an int card code"),
        ([None, 1, 2, 3, 4, 5], r"card #1 is None \(NoneType\), not an int card code"),
        ("As Ks Qs Js Ts", "not text 'As Ks Qs Js Ts'; convert with parse_cards"),
        (None, "cards must be an iterable of int card codes, got NoneType"),
        (5, "cards must be an iterable of int card codes, got int"),
    ],
)
def test_evaluate_refusals(cards: object, message: str) -> None:
    with pytest.raises(InvalidCards, match=message):
        evaluate(cards)  # type: ignore[arg-type]
    with pytest.raises(InvalidCards, match=message):
        best_five(cards)  # type: ignore[arg-type]


def test_invalid_cards_is_a_value_error() -> None:
    assert issubclass(InvalidCards, ValueError)


# --- names, card text ----------------------------------------------------------------------


def test_labels_and_parse() -> None:
    assert H.ROYAL_FLUSH.label == "royal flush"
    assert H.FOUR_OF_A_KIND.label == "four of a kind"
    assert H.ONE_PAIR.label == "one pair"
    assert H.HIGH_CARD.label == "high card"
    for text in ("ROYAL_FLUSH", "royal flush", "Royal-Flush", "royal_flush", " Royal  Flush "):
        assert H.parse(text) is H.ROYAL_FLUSH
    for category in H:
        assert H.parse(category.name) is category
        assert H.parse(category.label) is category
        assert H.parse(category.label.title().replace(" ", "-")) is category


@pytest.mark.parametrize("text", ["royal", "five of a kind", "", "royalflush", None])
def test_parse_unknown(text: object) -> None:
    with pytest.raises(InvalidCards, match="valid hands are ROYAL_FLUSH, STRAIGHT_FLUSH, "):
        H.parse(text)  # type: ignore[arg-type]


def test_card_text_round_trip() -> None:
    seen = set()
    for code in range(52):
        text = card_text(code)
        assert len(text) == 2
        assert card_code(text) == code
        assert card_code(text.lower()) == code
        assert card_code(text.upper()) == code
        seen.add(text)
    assert len(seen) == 52
    assert card_text(51) == "As"
    assert card_text(32) == "Tc"
    assert card_text(0) == "2c"
    assert card_code("As") == 51
    assert card_code("2c") == 0
    assert card_code("Td") == card_code("10d") == card_code("td") == 4 * 8 + 1
    assert card_code(" qh ") == 4 * 10 + 2


def test_parse_cards() -> None:
    royal = (51, 47, 43, 39, 35)
    assert parse_cards("As Ks Qs Js Ts") == royal
    assert parse_cards("As,Ks,Qs,Js,Ts") == royal
    assert parse_cards(" As, Ks ,Qs  Js,\tTs\n") == royal
    assert parse_cards("10s Js") == (35, 39)
    assert parse_cards("") == ()


@pytest.mark.parametrize("text", ["", "A", "1s", "Ax", "Asx", "11s", "s", "AA", "0s"])
def test_bad_card_text(text: str) -> None:
    with pytest.raises(InvalidCards, match=f"unrecognised card {text!r}"):
        card_code(text)


def test_bad_card_text_types_and_codes() -> None:
    with pytest.raises(InvalidCards, match="card text must be a str, got int 51"):
        card_code(51)  # type: ignore[arg-type]
    with pytest.raises(InvalidCards, match="card text must be a str"):
        parse_cards(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidCards, match="unrecognised card 'Xs'"):
        parse_cards("As Xs")
    with pytest.raises(InvalidCards, match="card code 52 is outside 0-51"):
        card_text(52)
    with pytest.raises(InvalidCards, match="card code -1 is outside 0-51"):
        card_text(-1)
    with pytest.raises(InvalidCards, match="not an int card code"):
        card_text("As")  # type: ignore[arg-type]
