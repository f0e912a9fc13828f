"""What each game deals at a simulated table, and the hands a test makes to order.

``Dealing`` is one table's cards: the five-card games shuffle one deck a round
(``cards.deal_cards``), Super Sevens deals blackjack from a six-deck shoe (``blackjack``), Pai
Gow Poker seven stacks of seven from 52 cards and the joker (``pai_gow_deal``). Every hand is
judged by its game's module (``controller.core.games``); a hand made to order (``build``) or
claimed with given cards (``claim_problem``) is held to the same judge.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from controller.core.games import Game
from controller.core.hands import HandCategory, InvalidCards
from link_adapters.simulator.blackjack import build_sevens, deal_super_sevens, deciding
from link_adapters.simulator.cards import build_hand, deal_cards, random_hand
from link_adapters.simulator.pai_gow_deal import build_pai_gow, deal_pai_gow
from link_adapters.simulator.shoe import Shoe
from link_adapters.simulator.table_types import SeatHand

__all__ = ["Deal", "Dealing"]

# (every occupied seat's hand, the dealer's cards, the community cards)
Deal = tuple[dict[int, SeatHand], tuple[int, ...], tuple[int, ...]]

# A rigged round deals the other seats again until none makes the rigged hand; the rigged
# hands allowed (faults.rigging_chances) need a few deals at most, so this many means a bug.
_MOST_REDEALS = 10_000


class Dealing:
    """The cards of one table of ``game``, drawn from ``rng`` (the table's only chance)."""

    def __init__(self, game: Game, rng: random.Random) -> None:
        self._game = game
        self._rng = rng
        self._deck = game.rules.hand.deck
        self._shoe = Shoe(self._deck, rng)

    @property
    def game(self) -> Game:
        return self._game

    def deal(self, seats: Sequence[int], forced: Mapping[int, tuple[int, ...]]) -> Deal:
        """One round's cards for the occupied ``seats``; ``forced`` seats get exactly theirs."""
        if self._game is Game.SUPER_SEVENS:
            hands, dealer = deal_super_sevens(self._shoe, seats, forced)
            return hands, dealer, ()
        if self._game is Game.PAI_GOW_POKER:
            hands, dealer = deal_pai_gow(self._shoe, self._rng, seats, forced)
            return hands, dealer, ()
        return deal_cards(self._game, self._rng, seats, forced)

    def deal_rigged(self, seats: Sequence[int], seat: int, hand: HandCategory) -> Deal:
        """One round's cards with ``seat`` dealt a random hand of the category ``hand`` (real
        cards, judged by the game's module) and the other ``seats`` dealt from what is left,
        again until none of them makes ``hand`` (``faults.rigging_chances`` says why). The
        five-card games only."""
        cards = random_hand(hand, self._rng)
        problem = self.claim_problem(hand, cards)
        if problem is not None:
            raise RuntimeError(f"a rigged hand is not what it was built to be: {problem}")
        forced = {seat: cards}
        for _ in range(_MOST_REDEALS):
            deal = self.deal(seats, forced)
            if all(held.category is not hand for s, held in deal[0].items() if s != seat):
                return deal
        raise RuntimeError(f"{_MOST_REDEALS} deals all gave a second seat {hand.label}")

    def build(self, hand: HandCategory, used: Iterable[int]) -> tuple[int, ...]:
        """Cards that make exactly ``hand`` at this table beside the ``used`` ones: five for
        the five-card games, the one to three deciding first cards for Super Sevens, seven
        for Pai Gow Poker."""
        if self._game is Game.SUPER_SEVENS:
            return build_sevens(hand, used, self._deck.decks)
        if self._game is Game.PAI_GOW_POKER:
            return build_pai_gow(hand, used)
        return build_hand(hand, avoid=used)

    def clash(self, cards: Sequence[int], used: Iterable[int]) -> str | None:
        """Why ``cards`` cannot be dealt beside the ``used`` ones this round, or None."""
        left = Counter({code: self._deck.decks for code in range(52)})
        if self._deck.joker:
            left[52] = 1
        left.subtract(used)
        for code, times in Counter(cards).items():
            if times > left[code]:
                return f"card {code} is already forced for another seat this round"
        return None

    def claim_problem(self, hand: HandCategory, cards: Sequence[int]) -> str | None:
        """Why a hit of ``hand`` with ``cards`` is not what this game's cards make, or None.

        The game's module judges the cards; a Super Sevens hit reports exactly the cards that
        decide it (68 IAC 10-12-3(e), (f)), a Pai Gow Poker hit its seven.
        """
        rules = self._game.rules
        try:
            made = rules.judge(cards)
        except InvalidCards as exc:
            return f"cards {tuple(cards)} are no {rules.label} hand: {exc}"
        if made is not hand:
            what = "no hand the game ranks" if made is None else made.label
            return f"cards {tuple(cards)} make {what} at {rules.label}, not {hand.label}"
        if self._game is Game.SUPER_SEVENS and len(cards) != deciding(cards):
            return (
                f"cards {tuple(cards)}: a Super Sevens hit reports the {deciding(cards)} "
                "cards that decide it"
            )
        return None
