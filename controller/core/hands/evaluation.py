"""Hand evaluation: the lookup tables built at import, the best five-card hand of five or
more cards (``evaluate``) and the cards that make it (``best_five``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import combinations, combinations_with_replacement
from operator import attrgetter
from typing import Final

from controller.core.hands.cards import validated
from controller.core.hands.values import CATEGORY_SHIFT, HandCategory, HandValue

# A straight's strength holds only its high card; the wheel's high card is the five.
_FIVE: Final = 3
_ACE: Final = 12


# --- lookup tables ------------------------------------------------------------------------
#
# A rank multiset is keyed by the sum of 5**rank over its cards: base 5 holds a count of up
# to four per rank, so the key is unique, and for five cards it stays below 2**30, where
# CPython's int arithmetic is cheapest. Per-code lists make the hot path plain indexing.

_RANK_KEY: Final[list[int]] = [5 ** (code >> 2) for code in range(52)]
_SUIT_BIT: Final[list[int]] = [1 << (code & 3) for code in range(52)]
_CARD_BIT: Final[list[int]] = [1 << code for code in range(52)]
# Bits of each suit's cards in a 52-bit card mask (code 4 * rank + suit).
_SUIT_MASKS: Final[tuple[int, ...]] = tuple(
    sum(1 << (4 * rank + suit) for rank in range(13)) for suit in range(4)
)


def _straight_high(desc: tuple[int, ...]) -> int | None:
    """High card of five distinct ranks (sorted high to low) if they run, else None."""
    if desc[0] - desc[4] == 4:
        return desc[0]
    if desc == (_ACE, _FIVE, 2, 1, 0):
        return _FIVE
    return None


def _classify(desc: tuple[int, ...], suited: bool) -> tuple[HandCategory, tuple[int, ...]]:
    """Category and tie-break ranks of five ranks sorted high to low (suited: one suit)."""
    counts: dict[int, int] = {}
    for rank in desc:
        counts[rank] = counts.get(rank, 0) + 1
    # Bigger groups first, then higher ranks: exactly the order in which ties are broken.
    groups = sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)
    shape = tuple(count for _, count in groups)
    order = tuple(rank for rank, _ in groups)
    if shape == (4, 1):
        return HandCategory.FOUR_OF_A_KIND, order
    if shape == (3, 2):
        return HandCategory.FULL_HOUSE, order
    if shape == (3, 1, 1):
        return HandCategory.THREE_OF_A_KIND, order
    if shape == (2, 2, 1):
        return HandCategory.TWO_PAIR, order
    if shape == (2, 1, 1, 1):
        return HandCategory.ONE_PAIR, order
    high = _straight_high(desc)
    if high is None:
        return (HandCategory.FLUSH if suited else HandCategory.HIGH_CARD), desc
    if not suited:
        return HandCategory.STRAIGHT, (high,)
    if high == _ACE:
        return HandCategory.ROYAL_FLUSH, (high,)
    return HandCategory.STRAIGHT_FLUSH, (high,)


_VALUES: Final[dict[int, HandValue]] = {}


def _value(category: HandCategory, ranks: tuple[int, ...]) -> HandValue:
    """The interned HandValue for a category and its tie-break ranks."""
    strength = category << CATEGORY_SHIFT
    for i, rank in enumerate(ranks):
        strength |= rank << (16 - 4 * i)
    value = _VALUES.get(strength)
    if value is None:
        value = _VALUES[strength] = HandValue(category, strength)
    return value


def _build_tables() -> tuple[dict[int, HandValue], dict[int, HandValue]]:
    """Five-card values by rank key: (any five cards not all one suit, five suited cards)."""
    offsuit: dict[int, HandValue] = {}
    suited: dict[int, HandValue] = {}
    for desc in combinations_with_replacement(range(12, -1, -1), 5):
        if desc[0] == desc[4]:
            continue  # five of a kind needs a fifth suit
        key = sum(5**rank for rank in desc)
        offsuit[key] = _value(*_classify(desc, suited=False))
        if len(set(desc)) == 5:
            suited[key] = _value(*_classify(desc, suited=True))
    return offsuit, suited


_OFFSUIT, _SUITED = _build_tables()

# Memos for six or more cards, filled on demand because precomputing every seven-card rank
# multiset would blow the import-time budget. Keys: the rank key of all the cards, and the
# 52-bit mask of one suit's cards. Bounded so odd card counts cannot grow them without limit.
# No lock: dict get and set are atomic under the GIL, and a race only computes a value twice.
_MEMO_LIMIT: Final = 1 << 18
_OFFSUIT_BEST: Final[dict[int, HandValue]] = {}
_SUITED_BEST: Final[dict[int, HandValue]] = {}
_STRENGTH: Final = attrgetter("strength")


def _sub_multisets(groups: list[tuple[int, int]], size: int, start: int = 0) -> Iterator[int]:
    """Rank keys of every ``size``-card sub-multiset of ``groups`` from index ``start`` on.

    ``groups`` holds (5**rank, cards of that rank) for each rank present.
    """
    if size == 0:
        yield 0
        return
    for index in range(start, len(groups)):
        unit, count = groups[index]
        for take in range(1, min(count, size) + 1):
            for rest in _sub_multisets(groups, size - take, index + 1):
                yield take * unit + rest


def _best_offsuit(codes: tuple[int, ...]) -> HandValue:
    """Best hand of the cards' ranks, valuing every five as offsuit.

    Five distinct ranks that can only be taken all from one suit get their offsuit value
    here, which is too low (a flush beats a straight or high card, a straight flush beats a
    straight); the caller also takes that suit's best suited hand, so the maximum is exact.
    """
    keys = [_RANK_KEY[code] for code in codes]
    key = sum(keys)
    value = _OFFSUIT_BEST.get(key)
    if value is None:
        if len(codes) <= 7:
            # At most 21 fives: trying them all is cheaper than anything cleverer.
            fives: Iterable[int] = map(sum, combinations(keys, 5))
        else:
            # C(n, 5) explodes for big hands, but distinct rank fives stay at most 6175.
            units = Counter(keys)
            fives = _sub_multisets(sorted(units.items()), 5)
        value = max((_OFFSUIT[five] for five in fives), key=_STRENGTH)
        if len(_OFFSUIT_BEST) < _MEMO_LIMIT:
            _OFFSUIT_BEST[key] = value
    return value


def _best_suited(suit_cards: int) -> HandValue:
    """Best five-card hand among five or more cards of one suit (a 52-bit card mask)."""
    value = _SUITED_BEST.get(suit_cards)
    if value is None:
        keys = [_RANK_KEY[code] for code in range(52) if suit_cards >> code & 1]
        value = max((_SUITED[sum(five)] for five in combinations(keys, 5)), key=_STRENGTH)
        if len(_SUITED_BEST) < _MEMO_LIMIT:
            _SUITED_BEST[suit_cards] = value
    return value


# --- evaluation ----------------------------------------------------------------------------


def evaluate(cards: Iterable[int]) -> HandValue:
    """The value of the best five-card hand among five or more distinct card codes.

    Returns a shared HandValue (do not rely on identity; compare with ``==``/``<``). Use
    ``best_five`` for the cards themselves. Raises InvalidCards for fewer than five cards,
    duplicates, codes outside 0-51 and anything that is not an int code.
    """
    # Hot path: a list or tuple of five plain ints. Every check here is a cheap bit trick;
    # anything odd falls through to the general path, which re-checks and names the fault.
    if (type(cards) is tuple or type(cards) is list) and len(cards) == 5:
        a, b, c, d, e = cards
        if (
            type(a) is int
            and type(b) is int
            and type(c) is int
            and type(d) is int
            and type(e) is int
            and (a | b | c | d | e) >= 0  # negative if any code is; the lists would wrap
        ):
            try:
                distinct = (
                    _CARD_BIT[a] | _CARD_BIT[b] | _CARD_BIT[c] | _CARD_BIT[d] | _CARD_BIT[e]
                ).bit_count() == 5
            except IndexError:  # a code above 51
                distinct = False
            if distinct:
                key = _RANK_KEY[a] + _RANK_KEY[b] + _RANK_KEY[c] + _RANK_KEY[d] + _RANK_KEY[e]
                if _SUIT_BIT[a] & _SUIT_BIT[b] & _SUIT_BIT[c] & _SUIT_BIT[d] & _SUIT_BIT[e]:
                    return _SUITED[key]
                return _OFFSUIT[key]
    return _evaluate_general(cards)


def _evaluate_general(cards: Iterable[int]) -> HandValue:
    codes, seen = validated(cards)
    if len(codes) == 5:
        key = sum(_RANK_KEY[code] for code in codes)
        flush = any(seen & mask == seen for mask in _SUIT_MASKS)
        return _SUITED[key] if flush else _OFFSUIT[key]
    best = _best_offsuit(codes)
    for mask in _SUIT_MASKS:
        suit_cards = seen & mask
        if suit_cards.bit_count() >= 5:
            candidate = _best_suited(suit_cards)
            if candidate.strength > best.strength:
                best = candidate
    return best


def best_five(cards: Iterable[int]) -> tuple[int, ...]:
    """The five card codes making the best hand of ``cards`` (same rules as ``evaluate``).

    Order: the cards that decide the hand first, as in ``HandValue.ranks`` -- the pair or
    trips or quads before kickers, kickers high to low, straights high to low with the
    wheel's ace last; within one rank, higher code first. Where several choices are equally
    strong (e.g. two kickers of the same rank), the higher card code is taken, so the result
    does not depend on the order of ``cards``.
    """
    codes, seen = validated(cards)
    value = _evaluate_general(codes)
    category = value.category
    ranks = value.ranks
    if category in (
        HandCategory.STRAIGHT,
        HandCategory.STRAIGHT_FLUSH,
        HandCategory.ROYAL_FLUSH,
    ):
        high = ranks[0]
        ranks = (_FIVE, 2, 1, 0, _ACE) if high == _FIVE else tuple(range(high, high - 5, -1))
    if category in (HandCategory.FLUSH, HandCategory.STRAIGHT_FLUSH, HandCategory.ROYAL_FLUSH):
        for suit in (3, 2, 1, 0):
            suited = tuple(4 * rank + suit for rank in ranks)
            if all(seen >> code & 1 for code in suited):
                return suited
        raise AssertionError("no suit holds the flush evaluate() found")  # pragma: no cover
    # Offsuit hands: how many cards of each deciding rank the category uses.
    takes = {
        HandCategory.FOUR_OF_A_KIND: (4, 1),
        HandCategory.FULL_HOUSE: (3, 2),
        HandCategory.THREE_OF_A_KIND: (3, 1, 1),
        HandCategory.TWO_PAIR: (2, 2, 1),
        HandCategory.ONE_PAIR: (2, 1, 1, 1),
    }.get(category, (1, 1, 1, 1, 1))
    chosen: list[int] = []
    for rank, take in zip(ranks, takes, strict=True):
        held = [code for code in range(4 * rank + 3, 4 * rank - 1, -1) if seen >> code & 1]
        chosen.extend(held[:take])
    # A straight or high card taken this way cannot be all one suit: if it were, evaluate()
    # would have found that flush, which beats both.
    return tuple(chosen)
