"""What a hand is worth: the hand categories (with their names) and the value of a best
five-card hand, which compares, hashes and ties by its strength."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Final

from controller.core.hands.cards import InvalidCards


class HandCategory(enum.IntEnum):
    """The hands a side bet can be judged to make; within one game a higher value is a better
    hand (each game's own ranking, best first, is ``GameRules.ranking``).

    0-9 are the poker categories of five cards. The others belong to one game each: five aces
    (Pai Gow Poker, 68 IAC 10-9-14: four aces and the joker, above a royal flush) and the
    Super Sevens hands (68 IAC 10-12-3(f)), which count sevens among a blackjack hand's first
    one to three cards. ``HandValue`` and ``evaluate`` know only 0-9.
    """

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
    FIVE_ACES = 10
    SEVEN = 11
    TWO_SEVENS = 12
    TWO_SUITED_SEVENS = 13
    THREE_SEVENS = 14
    THREE_SUITED_SEVENS = 15
    # Not a hand: what a mystery level's hit is recorded as (its trigger reached, no cards).
    MYSTERY = 16

    @property
    def label(self) -> str:
        """Lower-case words, e.g. ``"royal flush"``, ``"one pair"``, ``"two suited sevens"``."""
        return self.name.lower().replace("_", " ")

    @property
    def title(self) -> str:
        """The label at the start of a line, as a paytable or a display shows it: ``"Royal
        flush"``."""
        label = self.label
        return label[:1].upper() + label[1:]

    @classmethod
    def label_of(cls, name: str) -> str:
        """The label of a hand kept by its name (``"ROYAL_FLUSH"``); a name no hand has is
        shown as it is, so a record holding one is still shown."""
        member = cls.__members__.get(name)
        return name if member is None else member.label

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
        # The poker categories best first, then the hands of one game each.
        poker = [member for member in reversed(cls) if member <= cls.ROYAL_FLUSH]
        others = (m for m in cls if cls.ROYAL_FLUSH < m < cls.MYSTERY)
        valid = ", ".join(m.name for m in [*poker, *others])
        raise InvalidCards(f"unknown hand {text!r}; valid hands are {valid}")


# A strength holds its category above the tie-break ranks: ``category << CATEGORY_SHIFT``.
CATEGORY_SHIFT: Final = 20
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
        if self.strength >> CATEGORY_SHIFT != self.category:
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
