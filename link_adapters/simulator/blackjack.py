"""A Super Sevens table: blackjack from a six-deck shoe with the $1 Super Sevens side bet
(68 IAC 10-12-3), as the simulator deals it, judged by ``controller.core.games.super_sevens``.

The shoe is shuffled before every round, as an automatic shuffler does (68 IAC 10-2-6(d);
(g) lets the cards be reshuffled at any time before the cutting card). A cut-card shoe would
make a round's cards depend on the rounds before it (the cut-card effect: how many rounds a
shoe lasts depends on its cards), so a seat's first cards would follow the module's exact
odds only nearly. Shuffled each round they follow them exactly: every seat's first cards are
the first cards of a freshly shuffled shoe, and a long run can be held to the exact odds.

The deal (68 IAC 10-2): one card to each seat in seat order, the dealer's up card, a second
card to each seat; then each seat plays in seat order, hitting below 17 (a pair of sevens,
14, always takes the next card, as when it is split, 68 IAC 10-12-3(d)); then the dealer
draws to 17. The dealer takes the second card only after the players act, so no round ends on
a dealer's blackjack before a player holding two sevens draws: the module's odds take the
third card as dealt to every such player.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from controller.core.games import Game
from controller.core.games.super_sevens import SEVEN_RANK
from controller.core.hands import HandCategory
from link_adapters.simulator.shoe import Shoe
from link_adapters.simulator.table_types import SeatHand

__all__ = ["build_sevens", "deal_super_sevens", "deciding", "points"]

H = HandCategory

STAND_ON: Final = 17  # players (the simulated strategy) and the dealer stand from 17
_ACE: Final = 12
_KING: Final = 11


def deciding(cards: Sequence[int]) -> int:
    """How many of a player's first cards decide the Super Sevens hand (68 IAC 10-12-3(e),
    (f)): one unless it is a seven, two unless both are sevens, else three."""
    if cards[0] >> 2 != SEVEN_RANK:
        return 1
    if len(cards) < 2 or cards[1] >> 2 != SEVEN_RANK:
        return 2
    return 3


def points(cards: Iterable[int]) -> int:
    """A blackjack hand's total: deuce to ten their pips, faces ten, an ace eleven unless that
    busts the hand."""
    total = aces = 0
    for code in cards:
        rank = code >> 2
        if rank == _ACE:
            aces += 1
            total += 11
        else:
            total += min(rank + 2, 10)
    while total > 21 and aces:
        total -= 10
        aces -= 1
    return total


def deal_super_sevens(
    shoe: Shoe, seats: Sequence[int], forced: Mapping[int, tuple[int, ...]]
) -> tuple[dict[int, SeatHand], tuple[int, ...]]:
    """One round: every seat's hand judged for the side bet, and the dealer's cards.

    ``forced`` seats receive exactly those first cards (then play on from the shoe).
    """
    judge = Game.SUPER_SEVENS.rules.judge
    shoe.shuffle()
    shoe.take(card for cards in forced.values() for card in cards)
    held: dict[int, list[int]] = {seat: [] for seat in seats}

    def deal_to(seat: int) -> None:
        hand, made = held[seat], forced.get(seat, ())
        hand.append(made[len(hand)] if len(hand) < len(made) else shoe.draw())

    for seat in seats:
        deal_to(seat)
    dealer = [shoe.draw()]
    for seat in seats:
        deal_to(seat)
    for seat in seats:
        while points(held[seat]) < STAND_ON:
            deal_to(seat)
    while points(dealer) < STAND_ON:
        dealer.append(shoe.draw())

    hands: dict[int, SeatHand] = {}
    for seat, hand in held.items():
        first = tuple(hand[: deciding(hand)])
        assert seat not in forced or first == forced[seat], (seat, hand, forced[seat])
        hands[seat] = SeatHand(first, judge(first), played=tuple(hand))
    return hands, tuple(dealer)


def _seven(suit: int) -> int:
    return 4 * SEVEN_RANK + suit % 4


def _shapes(hand: HandCategory, suit: int) -> tuple[int, ...]:
    king = 4 * _KING + suit  # a card that is no seven ends the hand
    return {
        H.SEVEN: (_seven(suit), king),
        H.TWO_SEVENS: (_seven(suit), _seven(suit + 1), king),
        H.TWO_SUITED_SEVENS: (_seven(suit), _seven(suit), king),
        H.THREE_SEVENS: (_seven(suit), _seven(suit + 1), _seven(suit + 2)),
        H.THREE_SUITED_SEVENS: (_seven(suit),) * 3,
    }[hand]


def build_sevens(hand: HandCategory, used: Iterable[int], decks: int) -> tuple[int, ...]:
    """The first cards that make exactly ``hand`` and decide it, within what a shoe of
    ``decks`` decks still holds beside ``used``; the sevens of spades first."""
    rules = Game.SUPER_SEVENS.rules
    if hand not in rules.ranking:
        names = ", ".join(h.name for h in rules.ranking)
        raise ValueError(f"a Super Sevens hand is one of {names}, not {hand.name}")
    taken = Counter(used)
    for suit in (3, 2, 1, 0):
        cards = _shapes(hand, suit)
        if all(taken[c] + n <= decks for c, n in Counter(cards).items()):
            assert rules.judge(cards) is hand and deciding(cards) == len(cards)
            return cards
    raise ValueError(f"no {hand.label} is left in the shoe beside the cards already forced")
