"""What a game is to the controller: its side bet's hand, ranking, default paytable, exact
odds, judge of reported cards and the register fields it needs (``GameRules``).

One ``GameRules`` per ``Game``, kept by the registry (``controller.core.games.registry``,
which names the games and finds each one's rules with ``rules_of``). Everything here is pure
data and pure functions: the odds are counted exactly (integers over a total), never sampled,
and cached by the module that counts them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from controller.core.hands import HandCategory

if TYPE_CHECKING:
    from controller.core.games.lines import PaytableLine


@dataclass(frozen=True, slots=True, kw_only=True)
class Deck:
    """What the cards come from: ``decks`` standard decks shuffled together, and a joker."""

    decks: int = 1
    joker: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.decks, bool) or not isinstance(self.decks, int) or self.decks < 1:
            raise ValueError(f"a deck count is a whole number from 1, got {self.decks!r}")

    @property
    def size(self) -> int:
        return 52 * self.decks + (1 if self.joker else 0)

    def describe(self) -> str:
        if self.decks == 1:
            return "one deck of 52 cards and a joker" if self.joker else "one deck of 52 cards"
        return f"a shoe of {self.decks} decks ({self.size} cards)"


@dataclass(frozen=True, slots=True, kw_only=True)
class HandShape:
    """The side bet's hand: ``dealt`` cards judged, of which at most ``counted`` make the hand."""

    dealt: int
    counted: int
    deck: Deck


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterFields:
    """What a table controller must report for a hit of this game.

    Register map v1 carries five cards 0-51 (registers 15-19) and hand codes 1-9, royal flush
    to one pair (register 12); a game that reports more cards, the joker as code 52, or hands
    v1 has no code for (``new_hand_codes``) needs map v2.
    """

    cards_per_hit: int
    joker_code: bool = False
    new_hand_codes: bool = False

    @property
    def map_version(self) -> int:
        fits_v1 = self.cards_per_hit <= 5 and not self.joker_code and not self.new_hand_codes
        return 1 if fits_v1 else 2


@dataclass(frozen=True, slots=True)
class HandCounts:
    """Exact odds: of ``total`` equally likely deals, ``ways[hand]`` make ``hand``.

    ``ways`` holds every hand the game ranks; the deals that make none of them are
    ``no_hand``, so the ways and ``no_hand`` add up to ``total``.
    """

    total: int
    ways: Mapping[HandCategory, int]

    def __post_init__(self) -> None:
        if any(n < 0 for n in self.ways.values()) or sum(self.ways.values()) > self.total:
            raise ValueError("hand counts must be non-negative and at most the total")

    @property
    def no_hand(self) -> int:
        return self.total - sum(self.ways.values())

    def probability(self, hand: HandCategory) -> Fraction:
        return Fraction(self.ways.get(hand, 0), self.total)

    def odds_against(self, hand: HandCategory) -> Fraction:
        """Deals that miss ``hand`` per deal that makes it, x to 1."""
        ways = self.ways[hand]
        return Fraction(self.total - ways, ways)


# Cards -> the hand they make for the side bet, or None for no hand the game ranks. Raises
# ``InvalidCards`` when the cards cannot be a hand of the game.
Judge = Callable[[Sequence[int]], HandCategory | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class GameRules:
    """One game's side bet, as the controller needs it.

    ``ranking``: the hands the side bet can pay, best first. ``default_lines``: the paytable
    a new link of the game starts with. ``count``: the exact odds of every ranked hand (cached
    by the game's module). ``judge``: the hand reported cards make. ``judged_on`` and
    ``assumption``: what the odds are computed on, as the par sheet states it; ``deals_are``:
    what the counted deals are (``"five-card hands of one deck"``).
    """

    label: str
    hand: HandShape
    ranking: tuple[HandCategory, ...]
    default_lines: tuple[PaytableLine, ...]
    count: Callable[[], HandCounts]
    judge: Judge
    judged_on: str
    deals_are: str
    assumption: str | None = None
    register: RegisterFields
    fixed_wager_cents: int | None = None
    # The most a side bet may be, where the rules bound it without fixing it.
    max_wager_cents: int | None = None

    def __post_init__(self) -> None:
        if len(set(self.ranking)) != len(self.ranking):
            raise ValueError(f"{self.label}: a hand appears twice in the ranking")

    def pays(self, hand: HandCategory) -> bool:
        return hand in self.ranking

    def place(self, hand: HandCategory) -> int:
        """Where ``hand`` stands in the ranking: 0 for the best."""
        return self.ranking.index(hand)

    def probability(self, hand: HandCategory) -> Fraction:
        return self.count().probability(hand)
