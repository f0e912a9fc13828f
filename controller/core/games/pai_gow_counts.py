"""The exact odds of the Pai Gow Poker progressive: every hand of seven cards from 52 and the
joker, counted by combinatorics over rank multisets and the ranks of the flush suit.

A hand is a multiset of ranks (seven naturals, or six and the joker) and suits for its cards.
Its hand is the better of what its ranks make (groups, the joker an ace; a straight, the joker
completing it) and what a flush suit makes (a flush, straight flush or royal flush). A flush
needs five naturals of one suit, or four and the joker; with seven cards at most one suit can
have that many, so the deals of one rank multiset split exactly by the set S of ranks that the
flush suit holds: 4 x prod over S of C(3, n - 1) x prod over the others of C(3, n) deals, for
rank counts n, and the rest have no flush. 68 IAC 10-9-3(c): the joker is an ace, or completes
a straight or a flush; 10-9-14: five aces rank above a royal flush.

Counted on any set of ranks of the four suits (``ranks``), so the tests can check it against
an exhaustive deal of a smaller deck through the game's judge.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cache
from itertools import combinations, combinations_with_replacement, groupby
from math import comb, prod
from typing import Final

from controller.core.hands import HandCategory

H = HandCategory

SUITS: Final = 4
HAND: Final = 7
ACE: Final = 12
ALL_RANKS: Final = tuple(range(13))
# Five ranks in a row as 13-bit masks: the wheel (A-2-3-4-5), then six-high to ace-high.
RUN_MASKS: Final = (0b1_0000_0000_1111, *(0b11111 << low for low in range(9)))
ROYAL_MASK: Final = 0b11111 << 8


@cache
def has_run(mask: int, need: int) -> bool:
    """Do the ranks of ``mask`` hold ``need`` of some five ranks in a row (the joker the
    fifth when ``need`` is 4)?"""
    return any((mask & run).bit_count() >= need for run in RUN_MASKS)


def group_hand(top: int, second: int) -> HandCategory:
    """The hand of a rank multiset's two biggest groups (the joker counted as an ace)."""
    if top >= 5:
        return H.FIVE_ACES  # only aces: four and the joker
    if top == 4:
        return H.FOUR_OF_A_KIND
    if top == 3:
        return H.FULL_HOUSE if second >= 2 else H.THREE_OF_A_KIND
    if top == 2:
        return H.TWO_PAIR if second == 2 else H.ONE_PAIR
    return H.HIGH_CARD


@cache
def flush_hand(suit_mask: int, need: int) -> HandCategory:
    """The hand of a flush suit holding the ranks of ``suit_mask`` (``need`` 4 with the joker)."""
    if (suit_mask & ROYAL_MASK).bit_count() >= need:
        return H.ROYAL_FLUSH
    if has_run(suit_mask, need):
        return H.STRAIGHT_FLUSH
    return H.FLUSH


def _rank_multisets(ranks: Sequence[int], cards: int) -> Iterator[list[tuple[int, int]]]:
    """Every way to take ``cards`` cards of ``ranks``, as (rank, how many) for the ranks
    taken, at most four of a rank."""
    for taken in combinations_with_replacement(ranks, cards):
        held = [(rank, len(list(group))) for rank, group in groupby(taken)]
        if all(n <= SUITS for _, n in held):
            yield held


# C(3, n - 1) and C(3, n): a rank's n cards with one of them, or none, in the flush suit.
_IN_SUIT: Final = tuple(comb(SUITS - 1, n - 1) if n else 0 for n in range(SUITS + 1))
_OFF_SUIT: Final = tuple(comb(SUITS - 1, n) for n in range(SUITS + 1))


def _count_into(out: dict[HandCategory, int], ranks: Sequence[int], joker: bool) -> None:
    need = 4 if joker else 5
    for held in _rank_multisets(ranks, HAND - 1 if joker else HAND):
        groups = sorted((n + (1 if joker and rank == ACE else 0) for rank, n in held), reverse=True)
        if joker and all(rank != ACE for rank, _ in held):
            groups = sorted([*groups, 1], reverse=True)  # the joker, an ace of its own
        rank_mask = sum(1 << rank for rank, _ in held)
        best = group_hand(groups[0], groups[1] if len(groups) > 1 else 0)
        if has_run(rank_mask, need):
            best = max(best, H.STRAIGHT)
        deals = prod(comb(SUITS, n) for _, n in held)
        flushed = 0
        if len(held) >= need:
            bits = [1 << rank for rank, _ in held]
            inside = [_IN_SUIT[n] for _, n in held]
            outside = [_OFF_SUIT[n] for _, n in held]
            everyone = range(len(held))
            for size in range(need, len(held) + 1):
                for chosen in combinations(everyone, size):
                    ways = SUITS
                    suit_mask = 0
                    for i in everyone:
                        if i in chosen:
                            ways *= inside[i]
                            suit_mask |= bits[i]
                        else:
                            ways *= outside[i]
                    if ways:
                        hand = max(best, flush_hand(suit_mask, need))
                        out[hand] += ways
                        flushed += ways
        out[best] += deals - flushed


@cache
def hand_counts(
    ranks: tuple[int, ...] = ALL_RANKS,
) -> tuple[dict[HandCategory, int], dict[HandCategory, int]]:
    """How many seven-card hands make each hand: (without the joker, with it), over a deck of
    the ``ranks`` of four suits and the joker. Every category is present, high card included."""
    natural: dict[HandCategory, int] = dict.fromkeys(HandCategory, 0)
    with_joker: dict[HandCategory, int] = dict.fromkeys(HandCategory, 0)
    _count_into(natural, ranks, joker=False)
    _count_into(with_joker, ranks, joker=True)
    cards = SUITS * len(ranks)
    assert sum(natural.values()) == comb(cards, HAND)
    assert sum(with_joker.values()) == comb(cards, HAND - 1)
    return natural, with_joker
