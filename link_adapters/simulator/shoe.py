"""Where a simulated table's cards come from: a shoe of one or more decks (and a joker), drawn
one card at a time from the table's own random generator.

``Shoe.shuffle`` puts every card back; ``draw`` then takes a uniformly random card of those
left (a Fisher-Yates step, so a round costs only the cards it deals, not a shuffle of the
whole shoe); ``take`` removes given cards first (a forced hand). Every choice comes from the
``random.Random`` passed in, so a seed replays the same cards.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable

from controller.core.games import Deck
from controller.core.hands import JOKER

__all__ = ["Shoe"]


class Shoe:
    """The cards of ``deck``: 52 codes 0-51 ``deck.decks`` times each, and the joker (52)."""

    def __init__(self, deck: Deck, rng: random.Random) -> None:
        self._deck = deck
        self._rng = rng
        self._cards = [code for _ in range(deck.decks) for code in range(52)]
        if deck.joker:
            self._cards.append(JOKER)
        self._dealt = 0  # the cards before this index are out of the shoe

    @property
    def deck(self) -> Deck:
        return self._deck

    @property
    def left(self) -> int:
        return len(self._cards) - self._dealt

    def shuffle(self) -> None:
        """Every card back in the shoe, in a random order still to be drawn."""
        self._dealt = 0

    def draw(self) -> int:
        """The next card: uniformly random among those left."""
        cards, at = self._cards, self._dealt
        if at >= len(cards):
            raise RuntimeError(f"the shoe of {self._deck.describe()} is empty")
        pick = self._rng.randrange(at, len(cards))
        cards[at], cards[pick] = cards[pick], cards[at]
        self._dealt = at + 1
        return cards[at]

    def draw_many(self, count: int) -> tuple[int, ...]:
        return tuple(self.draw() for _ in range(count))

    def take(self, codes: Iterable[int]) -> None:
        """Remove exactly these cards (a hand made to order) before anything is drawn;
        ValueError if the shoe does not hold them all."""
        wanted = Counter(codes)
        cards = self._cards
        for code, times in sorted(wanted.items()):
            for _ in range(times):
                try:
                    found = cards.index(code, self._dealt)
                except ValueError:
                    raise ValueError(
                        f"card {code} is not left {times} times in {self._deck.describe()}"
                    ) from None
                cards[self._dealt], cards[found] = cards[found], cards[self._dealt]
                self._dealt += 1
