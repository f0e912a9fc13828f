"""Poker hand evaluation: card codes, hand categories and best-five-card hand values.

Hand rankings follow the Let It Ride rules of play, section F, and 68 IAC 10-9-1(d): from
highest, royal flush, straight flush, four of a kind, full house, flush, straight, three of a
kind, two pair, one pair, high card. The royal flush (A-K-Q-J-10 of one suit) is a category of
its own above the straight flush. The ace plays high, or low only in A-2-3-4-5 (the "wheel",
a five-high straight and the lowest straight; suited, the lowest straight flush). Straights do
not wrap around (Q-K-A-2-3 is not one). Ties are broken by rank only, never by suit.

Card codes are ints 0-51: ``rank = code // 4`` (0 = deuce ... 8 = ten, 9 = jack, 10 = queen,
11 = king, 12 = ace) and ``suit = code % 4`` (0 clubs, 1 diamonds, 2 hearts, 3 spades).

Public API:

* ``HandCategory`` -- the ten categories, higher is better, with the table controller's
  register codes, labels and a forgiving ``parse``.
* ``HandValue`` -- ``category`` and ``strength``; values compare, hash and tie by ``strength``
  alone. ``ranks`` and ``description`` decode the strength on demand.
* ``evaluate(cards)`` -- the best five-card hand of five or more cards. It returns shared,
  interned ``HandValue`` objects, one per strength, never building one per call; that is why
  the value does not carry the cards.
* ``best_five(cards)`` -- the five cards making that hand (slower; for display and audit).
* ``card_code``, ``card_text``, ``parse_cards`` -- text <-> code conversions.
* ``InvalidCards`` -- every refusal, a ``ValueError`` whose message says what is wrong.

Strength layout: ``category << 20`` plus up to five 4-bit ranks, most significant first, that
decide ties within the category (pair rank then kickers, trips then pair, the high card of a
straight, every card of a flush ...). Comparing the ints therefore compares hands, the layout
is stable across runs and processes (it can be stored), and there are exactly 7462 distinct
strengths over the 2,598,960 five-card hands.

The module is pure: lookup tables are built at import from rank arithmetic alone, and the
only state is a bounded memo for hands of six or more cards, which never changes a result.
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import combinations, combinations_with_replacement
from operator import attrgetter
from typing import Final

__all__ = [
    "RANK_CHARS",
    "SUIT_CHARS",
    "HandCategory",
    "HandValue",
    "InvalidCards",
    "best_five",
    "card_code",
    "card_text",
    "evaluate",
    "parse_cards",
]

RANK_CHARS: Final = "23456789TJQKA"
SUIT_CHARS: Final = "cdhs"


class InvalidCards(ValueError):
    """Cards, card text or a hand name the evaluator refuses; the message says why."""


class HandCategory(enum.IntEnum):
    """Poker hand categories; a higher value is a better hand."""

    HIGH_CARD = 0
    ONE_PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9

    @property
    def register_code(self) -> int:
        """The table controller's wire code: 1 royal flush ... 9 one pair; high card is 0."""
        # The wire counts down from the best hand, so it is the mirror of the enum value.
        return 0 if self is HandCategory.HIGH_CARD else 10 - self.value

    @classmethod
    def from_register_code(cls, code: int) -> HandCategory:
        """Inverse of ``register_code`` for the hit codes 1-9; anything else is refused."""
        # bool is an int subclass, but True is not a wire code anyone means.
        if isinstance(code, bool) or not isinstance(code, int) or not 1 <= code <= 9:
            raise InvalidCards(
                f"register code {code!r} is not a hand: the table controller sends 1 (royal "
                "flush) to 9 (one pair)"
            )
        return cls(10 - code)

    @property
    def label(self) -> str:
        """Lower-case words, e.g. ``"royal flush"``, ``"one pair"``, ``"high card"``."""
        return self.name.lower().replace("_", " ")

    @classmethod
    def parse(cls, text: str) -> HandCategory:
        """A category from its name or label, ignoring case, ``_``, ``-`` and spacing."""
        if isinstance(text, str):
            # "ROYAL_FLUSH", "royal flush", "Royal-Flush" and "royal_flush" all normalise
            # to the member name.
            key = "_".join(re.split(r"[\s_\-]+", text.strip())).upper()
            member = cls.__members__.get(key)
            if member is not None:
                return member
        valid = ", ".join(member.name for member in reversed(cls))
        raise InvalidCards(f"unknown hand {text!r}; valid hands are {valid}")


# A straight's strength holds only its high card; the wheel's high card is the five.
_FIVE: Final = 3
_ACE: Final = 12
_CATEGORY_SHIFT: Final = 20
# How many ranks of the strength decide ties, per category.
_SIGNIFICANT: Final[dict[HandCategory, int]] = {
    HandCategory.HIGH_CARD: 5,
    HandCategory.ONE_PAIR: 4,
    HandCategory.TWO_PAIR: 3,
    HandCategory.THREE_OF_A_KIND: 3,
    HandCategory.STRAIGHT: 1,
    HandCategory.FLUSH: 5,
    HandCategory.FULL_HOUSE: 2,
    HandCategory.FOUR_OF_A_KIND: 2,
    HandCategory.STRAIGHT_FLUSH: 1,
    HandCategory.ROYAL_FLUSH: 1,
}
_RANK_NAMES: Final = (
    "deuce", "three", "four", "five", "six", "seven", "eight",
    "nine", "ten", "jack", "queen", "king", "ace",
)  # fmt: skip
_RANK_PLURALS: Final = (
    "deuces", "threes", "fours", "fives", "sixes", "sevens", "eights",
    "nines", "tens", "jacks", "queens", "kings", "aces",
)  # fmt: skip


@dataclass(frozen=True, slots=True, eq=False)
class HandValue:
    """The value of a best five-card hand.

    Values compare, hash and tie by ``strength`` alone: equal strength is an exact tie (a
    split pot), whatever the suits or the cards. ``evaluate`` hands out one shared instance
    per strength, so ``is`` also works, but use ``==``.
    """

    category: HandCategory
    strength: int

    def __post_init__(self) -> None:
        # The category is redundant with the strength's top bits; refuse a contradiction
        # rather than let two "equal" values disagree about what hand they are.
        if self.strength >> _CATEGORY_SHIFT != self.category:
            raise ValueError(f"strength {self.strength:#x} is not a {self.category.label} strength")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HandValue):
            return self.strength == other.strength
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.strength)

    def __lt__(self, other: HandValue) -> bool:
        if isinstance(other, HandValue):
            return self.strength < other.strength
        return NotImplemented

    def __le__(self, other: HandValue) -> bool:
        if isinstance(other, HandValue):
            return self.strength <= other.strength
        return NotImplemented

    def __gt__(self, other: HandValue) -> bool:
        if isinstance(other, HandValue):
            return self.strength > other.strength
        return NotImplemented

    def __ge__(self, other: HandValue) -> bool:
        if isinstance(other, HandValue):
            return self.strength >= other.strength
        return NotImplemented

    @property
    def ranks(self) -> tuple[int, ...]:
        """The ranks (0-12) that decide ties, most significant first.

        Pair rank then kickers; high pair, low pair, kicker; trips then kickers; trips then
        pair; quads then kicker; every card of a flush or high-card hand; only the high card
        of a straight or straight flush (3, the five, for the wheel).
        """
        count = _SIGNIFICANT[self.category]
        return tuple((self.strength >> (16 - 4 * i)) & 0xF for i in range(count))

    @property
    def description(self) -> str:
        """Plain words, e.g. ``"pair of kings"`` or ``"full house, kings over threes"``."""
        category = self.category
        ranks = self.ranks
        name = _RANK_NAMES[ranks[0]]
        plural = _RANK_PLURALS[ranks[0]]
        if category is HandCategory.ROYAL_FLUSH:
            return "royal flush"
        if category is HandCategory.STRAIGHT_FLUSH:
            return f"{name}-high straight flush"
        if category is HandCategory.FOUR_OF_A_KIND:
            return f"four {plural}"
        if category is HandCategory.FULL_HOUSE:
            return f"full house, {plural} over {_RANK_PLURALS[ranks[1]]}"
        if category is HandCategory.FLUSH:
            return f"{name}-high flush"
        if category is HandCategory.STRAIGHT:
            return f"{name}-high straight"
        if category is HandCategory.THREE_OF_A_KIND:
            return f"three {plural}"
        if category is HandCategory.TWO_PAIR:
            return f"two pair, {plural} and {_RANK_PLURALS[ranks[1]]}"
        if category is HandCategory.ONE_PAIR:
            return f"pair of {plural}"
        return f"{name} high"


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
    strength = category << _CATEGORY_SHIFT
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


# --- validation ----------------------------------------------------------------------------


def _describe_code(code: int) -> str:
    return f"card {code} ({RANK_CHARS[code >> 2]}{SUIT_CHARS[code & 3]})"


def _check_code(card: object, where: str) -> int:
    """A plain int code 0-51, or InvalidCards naming the problem."""
    # bool is an int subclass, but True/False in a hand is a caller bug, not a deuce.
    if isinstance(card, bool) or not isinstance(card, int):
        raise InvalidCards(f"{where} is {card!r} ({type(card).__name__}), not an int card code")
    if not 0 <= card <= 51:
        raise InvalidCards(f"card code {card} is outside 0-51")
    return int(card)


def _validated(cards: Iterable[int]) -> tuple[tuple[int, ...], int]:
    """The codes as plain ints and their 52-bit mask; InvalidCards on any problem."""
    if isinstance(cards, str | bytes):
        raise InvalidCards(
            f"cards must be int card codes, not text {cards!r}; convert with parse_cards()"
        )
    try:
        items = tuple(cards)
    except TypeError:
        raise InvalidCards(
            f"cards must be an iterable of int card codes, got {type(cards).__name__}"
        ) from None
    seen = 0
    for code in items:
        if type(code) is not int or not 0 <= code <= 51:
            break
        bit = 1 << code
        if seen & bit:
            break
        seen |= bit
    else:
        if len(items) < 5:
            raise InvalidCards(f"need at least five cards, got {len(items)}")
        return items, seen
    # Something is off (or an int subclass needs converting): walk again to name it.
    codes: list[int] = []
    seen = 0
    for position, card in enumerate(items, start=1):
        code = _check_code(card, f"card #{position}")
        bit = 1 << code
        if seen & bit:
            raise InvalidCards(f"{_describe_code(code)} appears twice")
        seen |= bit
        codes.append(code)
    if len(codes) < 5:
        raise InvalidCards(f"need at least five cards, got {len(codes)}")
    return tuple(codes), seen


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
    codes, seen = _validated(cards)
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
    codes, seen = _validated(cards)
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


# --- card text -----------------------------------------------------------------------------

_RANK_FROM_TEXT: Final[dict[str, int]] = {char: rank for rank, char in enumerate(RANK_CHARS)}
_RANK_FROM_TEXT["10"] = 8
_CARD_FORMAT: Final = "rank 2-9, T or 10, J, Q, K or A, then suit c, d, h or s (e.g. 'As', '10d')"


def card_code(text: str) -> int:
    """The code of a card written like ``"As"``, ``"2c"``, ``"Td"`` or ``"10d"``.

    Rank and suit letters are case-insensitive; surrounding whitespace is ignored.
    """
    if not isinstance(text, str):
        raise InvalidCards(f"card text must be a str, got {type(text).__name__} {text!r}")
    stripped = text.strip()
    rank = _RANK_FROM_TEXT.get(stripped[:-1].upper())
    suit = SUIT_CHARS.find(stripped[-1:].lower()) if stripped else -1
    if rank is None or suit < 0:
        raise InvalidCards(f"unrecognised card {text!r}: expected {_CARD_FORMAT}")
    return 4 * rank + suit


def card_text(code: int) -> str:
    """Two-character text of a card code, e.g. 51 -> ``"As"``, 32 -> ``"Tc"``."""
    checked = _check_code(code, "card")
    return RANK_CHARS[checked >> 2] + SUIT_CHARS[checked & 3]


def parse_cards(text: str) -> tuple[int, ...]:
    """Codes of cards separated by whitespace and/or commas, e.g. ``"As Ks, Qs,Js Ts"``.

    Only parses: duplicates and the card count are left to ``evaluate``.
    """
    if not isinstance(text, str):
        raise InvalidCards(f"card text must be a str, got {type(text).__name__} {text!r}")
    return tuple(card_code(token) for token in re.split(r"[\s,]+", text) if token)
