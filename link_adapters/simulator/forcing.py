"""Hands and hits a test makes a simulated table deal next round, held to the game's rules.

A forced hand (``force_hand``) is dealt as real cards the game's module judges to be that
hand. A forced hit (``force_hit``) names its cards: they are checked against what the table's
register map can carry, then judged by the game's module, and refused unless they make the
hand claimed; the seat is then dealt exactly those cards. Only ``lying=True`` makes the table
report a claim its cards do not make (the cards are then not dealt): a table that lies, which
a test of the controller's checks asks for by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from controller.core.games import Game
from controller.core.hands import HandCategory
from link_adapters.simulator.dealing import Dealing
from link_adapters.simulator.table_types import SimTableConfig, check_claim, check_int

__all__ = ["Claim", "Forcing"]


class Claim(NamedTuple):
    """A hit a seat reports next round: ``lying`` ones whatever it is dealt."""

    hand: HandCategory
    cards: tuple[int, ...]
    level: int | None
    lying: bool = False


class Forcing:
    """What the next round deals to order at one table."""

    def __init__(self, config: SimTableConfig, dealing: Dealing) -> None:
        self._config = config
        self._dealing = dealing
        self._cards: dict[int, tuple[int, ...]] = {}
        self._claims: dict[int, Claim] = {}

    def take(self) -> tuple[dict[int, tuple[int, ...]], dict[int, Claim]]:
        """The seats' forced cards and claims for the round about to be dealt; forgotten."""
        cards, claims = self._cards, self._claims
        self._cards, self._claims = {}, {}
        return cards, claims

    def _seat(self, seat: int) -> int:
        return check_int("seat", seat, 1, self._config.seat_count)

    def _others(self, seat: int) -> list[int]:
        """The cards forced for the other seats; in the Let It Ride bonus there may be none,
        as the community cards are shared."""
        others = {s: cards for s, cards in self._cards.items() if s != seat}
        if self._config.game is Game.LET_IT_RIDE_BONUS and others:
            raise ValueError(
                f"seat {next(iter(others))} is already forced this round: in the Let It Ride "
                "bonus the community cards are shared, so only one seat's hand can be forced"
            )
        return [card for cards in others.values() for card in cards]

    def force_hand(self, seat: int, hand: HandCategory) -> None:
        seat = self._seat(seat)
        if not isinstance(hand, HandCategory):
            raise ValueError(f"hand must be a HandCategory, got {hand!r}")
        used = self._others(seat)
        self._claims.pop(seat, None)
        self._cards[seat] = self._dealing.build(hand, used)

    def force_hit(
        self,
        seat: int,
        hand: HandCategory,
        cards: Sequence[int],
        *,
        level: int | None,
        lying: bool,
    ) -> None:
        seat = self._seat(seat)
        if not isinstance(hand, HandCategory):
            raise ValueError(f"hand must be a HandCategory, got {hand!r}")
        if not isinstance(lying, bool):
            raise ValueError(f"lying must be a bool, got {lying!r}")
        copies = self._config.game.rules.hand.deck.decks
        codes, level = check_claim(self._config.map_version, cards, level, copies=copies)
        if lying:
            self._cards.pop(seat, None)
            self._claims[seat] = Claim(hand, codes, level, lying=True)
            return
        problem = self._dealing.claim_problem(hand, codes)
        if problem is None:
            problem = self._dealing.clash(codes, self._others(seat))
        if problem is not None:
            raise ValueError(f"{problem}; a table made to lie is asked with lying=True")
        self._cards[seat] = codes
        self._claims[seat] = Claim(hand, codes, level)
