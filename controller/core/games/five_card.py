"""Five cards from one 52-card deck, as Caribbean Stud, Caribbean Draw and the Let It Ride
bonus judge their side bets: the exact count of every poker category and the judge.

Whatever else is dealt at the table, the five cards a side bet is judged on are a uniformly
random five of the 52, so a hand's probability is the number of five-card hands of its
category over C(52, 5) = 2,598,960. The counts are derived by combinatorics, never typed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from math import comb

from controller.core.games.module import Deck, HandCounts, HandShape, Judge
from controller.core.hands import HandCategory, checked_cards, evaluate

H = HandCategory

RANKS = 13
SUITS = 4
DECK = RANKS * SUITS
HAND = 5
# Five ranks in a row: ace-low (A-2-3-4-5) up to ace-high (10-J-Q-K-A).
RUNS = RANKS - HAND + 2
FIVE_CARD_HANDS = comb(DECK, HAND)

DEALS_ARE = "five-card hands of one deck"
SHAPE = HandShape(dealt=HAND, counted=HAND, deck=Deck())
POKER_RANKING: tuple[HandCategory, ...] = tuple(
    sorted((h for h in HandCategory if h <= H.ROYAL_FLUSH), reverse=True)
)


@cache
def category_counts() -> Mapping[HandCategory, int]:
    """How many of the C(52, 5) five-card hands fall in each category, by combinatorics."""
    # Rank patterns: five distinct ranks, of which RUNS run; suit patterns of five cards over
    # distinct ranks: 4**5, of which 4 are one suit.
    distinct_ranks = comb(RANKS, HAND)
    suitings = SUITS**HAND
    one_suit = SUITS
    counts = {
        H.ROYAL_FLUSH: 1 * one_suit,
        H.STRAIGHT_FLUSH: (RUNS - 1) * one_suit,
        H.FOUR_OF_A_KIND: RANKS * comb(SUITS, 4) * (RANKS - 1) * SUITS,
        H.FULL_HOUSE: RANKS * comb(SUITS, 3) * (RANKS - 1) * comb(SUITS, 2),
        H.FLUSH: (distinct_ranks - RUNS) * one_suit,
        H.STRAIGHT: RUNS * (suitings - one_suit),
        H.THREE_OF_A_KIND: RANKS * comb(SUITS, 3) * comb(RANKS - 1, 2) * SUITS**2,
        H.TWO_PAIR: comb(RANKS, 2) * comb(SUITS, 2) ** 2 * (RANKS - 2) * SUITS,
        H.ONE_PAIR: RANKS * comb(SUITS, 2) * comb(RANKS - 1, 3) * SUITS**3,
        H.HIGH_CARD: (distinct_ranks - RUNS) * (suitings - one_suit),
    }
    assert sum(counts.values()) == FIVE_CARD_HANDS
    return counts


def counts_for(ranking: tuple[HandCategory, ...]) -> HandCounts:
    """The five-card odds of the hands of ``ranking``."""
    every = category_counts()
    return HandCounts(FIVE_CARD_HANDS, {hand: every[hand] for hand in ranking})


def judge_for(ranking: tuple[HandCategory, ...]) -> Judge:
    """Exactly five distinct cards 0-51 -> their poker category, if ``ranking`` holds it."""

    def judge(cards: Sequence[int]) -> HandCategory | None:
        made = evaluate(checked_cards(cards, counts=range(HAND, HAND + 1))).category
        return made if made in ranking else None

    return judge
