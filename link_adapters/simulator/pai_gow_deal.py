"""A Pai Gow Poker table with the progressive side bet, as the simulator deals it, judged by
``controller.core.games.pai_gow`` on the best five of each player's seven cards.

One deck of 52 cards and the joker (68 IAC 10-9-3(b)), shuffled before every round (10-9-7(e)).
Seven stacks of seven are dealt whatever the number of players, four cards are left
(10-9-12(a), (b)); the dice choose which position takes the first stack (10-9-11) and the
stacks go round clockwise to the six player positions and the dealer's (10-9-12(c)). A stack
at a position without a player is set aside unseen (10-9-12(d)).

Players set their hands (10-9-13(a)) the simple house way of ``house_way``, which never
fouls; the progressive is judged on the seven cards however they are set.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Final

from controller.core.games import Game
from controller.core.games.pai_gow import (
    high_hand_value,
    low_hand_value,
    setting_problem,
    seven_card_hand,
)
from controller.core.hands import JOKER, HandCategory
from link_adapters.simulator.cards import hands_of
from link_adapters.simulator.shoe import Shoe
from link_adapters.simulator.table_types import PAI_GOW_SEATS, SeatHand

__all__ = ["POSITIONS", "build_pai_gow", "deal_pai_gow", "house_way"]

H = HandCategory

POSITIONS: Final = PAI_GOW_SEATS + 1  # six player positions and the dealer's
STACK: Final = 7
_ACE: Final = 12
_FIVE_ACES: Final = (51, 50, 49, 48, JOKER)
# The hands a player keeps whole in the high hand however the pairs fall.
_RUNS: Final = frozenset({H.STRAIGHT, H.FLUSH, H.STRAIGHT_FLUSH, H.ROYAL_FLUSH})


def _rank(code: int) -> int:
    return _ACE if code == JOKER else code >> 2  # the joker sets as an ace (10-9-3(c))


def house_way(seven: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The (high, low) hands a simulated player sets, always valid (68 IAC 10-9-13(a)).

    A straight, a flush or a straight flush stays in the high hand, with the best two cards
    that leave it there going low. Otherwise, counting the joker as an ace: with no two cards
    of one rank, the second and third highest cards go low (the highest stays high); with two
    unmatched cards or more, the two highest unmatched cards go low (every matched card stays
    high); else the lowest pair (or two cards of the lowest set) goes low, leaving two pair,
    a full house, trips or better high. Each setting is checked with ``setting_problem``.
    """
    made = seven_card_hand(seven)
    if made in _RUNS:
        low = list(_keeping(seven, made))
    elif len(ranks := Counter(_rank(code) for code in seven)) == len(seven):
        low = sorted(seven, key=_rank, reverse=True)[1:3]
    elif len(singles := sorted((c for c in seven if ranks[_rank(c)] == 1), key=_rank)) >= 2:
        low = singles[-2:]
    else:
        groups = [rank for rank, n in ranks.items() if n >= 2]
        pairs = [rank for rank in groups if ranks[rank] == 2]
        lowest = min(pairs or groups)
        low = [code for code in seven if _rank(code) == lowest][:2]
    high = tuple(code for code in seven if code not in low)
    problem = setting_problem(high, low)
    assert problem is None, (seven, high, low, problem)
    return high, tuple(low)


def _keeping(seven: Sequence[int], made: HandCategory) -> tuple[int, ...]:
    """The best two cards whose removal leaves ``made`` (a straight or better) high."""
    best: tuple[tuple[int, tuple[int, ...]], tuple[int, ...]] | None = None
    for low in combinations(seven, 2):
        high = [code for code in seven if code not in low]
        if high_hand_value(high)[0] == made:
            value = low_hand_value(low)
            if best is None or value > best[0]:
                best = value, low
    assert best is not None, (seven, made)
    return best[1]


def deal_pai_gow(
    shoe: Shoe, rng: random.Random, seats: Sequence[int], forced: Mapping[int, tuple[int, ...]]
) -> tuple[dict[int, SeatHand], tuple[int, ...]]:
    """One round: the seven cards of every seat in ``seats`` (judged, and set the house way)
    and the dealer's seven. ``forced`` seats receive exactly their seven cards."""
    judge = Game.PAI_GOW_POKER.rules.judge
    shoe.shuffle()
    shoe.take(card for cards in forced.values() for card in cards)
    stacks: dict[int, tuple[int, ...]] = {}
    first = rng.randrange(POSITIONS)  # the dice's starting position (10-9-11)
    for turn in range(POSITIONS):
        position = (first + turn) % POSITIONS  # 0-5: seats 1-6; 6: the dealer
        seat = position + 1
        stacks[position] = forced[seat] if seat in forced else shoe.draw_many(STACK)
    hands = {}
    for seat in seats:
        seven = stacks[seat - 1]
        hands[seat] = SeatHand(seven, judge(seven), setting=house_way(seven))
    return hands, stacks[POSITIONS - 1]


def _fives(hand: HandCategory) -> Iterable[tuple[int, ...]]:
    if hand is H.FIVE_ACES:
        return (_FIVE_ACES,)
    return hands_of(hand)


def build_pai_gow(hand: HandCategory, used: Iterable[int]) -> tuple[int, ...]:
    """Seven cards whose best five make exactly ``hand``, none of them in ``used``: a five-card
    example (A K Q J T of spades for a royal flush, four aces and the joker for five aces) and
    the two lowest cards that leave it the best."""
    rules = Game.PAI_GOW_POKER.rules
    if hand not in rules.ranking:
        names = ", ".join(h.name for h in rules.ranking)
        raise ValueError(f"a Pai Gow Poker progressive hand is one of {names}, not {hand.name}")
    taken = frozenset(used)
    for five in _fives(hand):
        if not taken.isdisjoint(five):
            continue
        rest = [code for code in range(JOKER + 1) if code not in taken and code not in five]
        for pair in combinations(rest, 2):
            seven = (*five, *pair)
            if rules.judge(seven) is hand:
                return seven
    raise ValueError(f"no {hand.label} is left that avoids the {len(taken)} cards already used")
