"""A plain poker hand evaluator: sort, count, compare. Slow and obviously right.

The oracle the fast evaluator is checked against in the tests, and the baseline its
benchmark is measured against.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations


def reference_five(cards: Sequence[int]) -> tuple[int, tuple[int, ...]]:
    """(category, tie-break ranks) of exactly five cards, by sorting and counting."""
    ranks = sorted((card // 4 for card in cards), reverse=True)
    suits = {card % 4 for card in cards}
    counts = Counter(ranks)
    by_count = sorted(counts, key=lambda rank: (counts[rank], rank), reverse=True)
    pattern = sorted(counts.values(), reverse=True)
    flush = len(suits) == 1
    straight_high = None
    if len(counts) == 5:
        if ranks[0] - ranks[4] == 4:
            straight_high = ranks[0]
        elif ranks == [12, 3, 2, 1, 0]:
            straight_high = 3
    if straight_high is not None and flush:
        return (9 if straight_high == 12 else 8), (straight_high,)
    if pattern == [4, 1]:
        return 7, tuple(by_count)
    if pattern == [3, 2]:
        return 6, tuple(by_count)
    if flush:
        return 5, tuple(ranks)
    if straight_high is not None:
        return 4, (straight_high,)
    if pattern == [3, 1, 1]:
        return 3, tuple(by_count)
    if pattern == [2, 2, 1]:
        return 2, tuple(by_count)
    if pattern == [2, 1, 1, 1]:
        return 1, tuple(by_count)
    return 0, tuple(ranks)


def reference(cards: Sequence[int]) -> tuple[int, tuple[int, ...]]:
    return max(reference_five(five) for five in combinations(cards, 5))
