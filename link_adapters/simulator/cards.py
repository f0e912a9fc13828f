"""The cards of a simulated table: a named hand on demand, the draw strategy, a round's deal.

Hands are real: each round of a five-card game shuffles a 52-card deck from the table's own
``random.Random``, deals by the game's rules and judges the final five cards of every seat
with ``controller.core.hands.evaluate``. Super Sevens and Pai Gow Poker deal in
``blackjack`` and ``pai_gow_deal``; ``dealing`` chooses.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final

from controller.core.games import Game
from controller.core.hands import HandCategory, evaluate
from link_adapters.simulator.table_types import SeatHand

__all__ = ["build_hand", "deal_cards", "draw_keep", "hands_of", "random_hand", "shuffle"]

H = HandCategory

# One example of each category: ranks (0 = deuce .. 12 = ace) and a suit pattern. Candidates
# shift every rank and rotate the suits, so several seats can be forced in one round; a shift
# that wraps a straight or turns a straight flush royal is dropped by the evaluate() check.
_SHAPES: Final[dict[HandCategory, tuple[tuple[int, ...], tuple[int, ...]]]] = {
    H.ROYAL_FLUSH: ((12, 11, 10, 9, 8), (0, 0, 0, 0, 0)),
    H.STRAIGHT_FLUSH: ((7, 6, 5, 4, 3), (0, 0, 0, 0, 0)),
    H.FOUR_OF_A_KIND: ((12, 12, 12, 12, 7), (0, 1, 2, 3, 0)),
    H.FULL_HOUSE: ((11, 11, 11, 4, 4), (0, 1, 2, 0, 1)),
    H.FLUSH: ((12, 9, 6, 4, 1), (0, 0, 0, 0, 0)),
    H.STRAIGHT: ((12, 11, 10, 9, 8), (0, 1, 2, 3, 0)),
    H.THREE_OF_A_KIND: ((10, 10, 10, 5, 2), (0, 1, 2, 3, 0)),
    H.TWO_PAIR: ((9, 9, 6, 6, 1), (0, 1, 2, 3, 0)),
    H.ONE_PAIR: ((8, 8, 12, 5, 2), (0, 1, 2, 3, 0)),
    H.HIGH_CARD: ((12, 10, 7, 5, 2), (0, 1, 2, 3, 0)),
}


def hands_of(hand: HandCategory) -> Iterator[tuple[int, ...]]:
    """Five cards making exactly the poker category ``hand``, example after example, always
    in the same order (the first is ``build_hand``'s first choice)."""
    ranks, suits = _SHAPES[hand]
    for shift in range(13):
        for turn in (3, 2, 1, 0):  # spades first: the first royal is A K Q J T of spades
            cards = tuple(
                4 * ((rank + shift) % 13) + (suit + turn) % 4
                for rank, suit in zip(ranks, suits, strict=True)
            )
            if evaluate(cards).category is hand:
                yield cards


def build_hand(hand: HandCategory, avoid: Iterable[int] = ()) -> tuple[int, ...]:
    """Five cards making exactly ``hand``, none of them in ``avoid``; always the same choice.

    The first choices are A K Q J T of spades for a royal flush and 9 8 7 6 5 of spades for
    a straight flush. Raises ValueError when ``avoid`` leaves no such hand (there are only
    four royal flushes).
    """
    if not isinstance(hand, HandCategory):
        raise ValueError(f"hand must be a HandCategory, got {hand!r}")
    if hand not in _SHAPES:
        raise ValueError(f"the simulator deals five-card poker hands, not {hand.label}")
    taken = frozenset(avoid)
    for cards in hands_of(hand):
        if taken.isdisjoint(cards):
            return cards
    raise ValueError(f"no {hand.label} is left that avoids the {len(taken)} cards already used")


# The rank runs of a straight, highest rank first: the wheel (5-4-3-2-A, the ace low) up
# to A-K-Q-J-T.
_RUNS: Final = tuple(tuple((top - i) % 13 for i in range(5)) for top in range(3, 13))
_RUN_SETS: Final = frozenset(frozenset(run) for run in _RUNS)


def random_hand(hand: HandCategory, rng: random.Random) -> tuple[int, ...]:
    """Five cards of one deck making exactly the poker category ``hand``, drawn from ``rng``
    uniformly among all such hands, in a shuffled order.

    Built by the category's own counting (ranks, then suits), as its number of hands is
    counted (``controller.core.games.five_card.category_counts``), rather than by dealing
    until one falls: a royal flush comes once in 649,740 hands.
    """
    if not isinstance(hand, HandCategory) or hand not in _SHAPES:
        raise ValueError(f"the simulator deals five-card poker hands, not {hand!r}")
    suit = rng.randrange
    if hand in (H.ROYAL_FLUSH, H.STRAIGHT_FLUSH):
        run = _RUNS[-1] if hand is H.ROYAL_FLUSH else _RUNS[rng.randrange(len(_RUNS) - 1)]
        s = suit(4)
        cards = [4 * rank + s for rank in run]
    elif hand in (H.FLUSH, H.HIGH_CARD, H.STRAIGHT):
        while True:
            if hand is H.STRAIGHT:
                ranks: list[int] = list(_RUNS[rng.randrange(len(_RUNS))])
            else:
                ranks = rng.sample(range(13), 5)
                if frozenset(ranks) in _RUN_SETS:
                    continue
            if hand is H.FLUSH:
                s = suit(4)
                suits = [s] * 5
            else:
                suits = [suit(4) for _ in range(5)]
                if len(set(suits)) == 1:
                    continue
            break
        cards = [4 * rank + s for rank, s in zip(ranks, suits, strict=True)]
    else:
        # Ranks held several times, then single ranks, none repeated: four of a kind (4, 1),
        # full house (3, 2), three of a kind (3, 1, 1), two pair (2, 2, 1), one pair
        # (2, 1, 1, 1).
        shape = {
            H.FOUR_OF_A_KIND: (4, 1),
            H.FULL_HOUSE: (3, 2),
            H.THREE_OF_A_KIND: (3, 1, 1),
            H.TWO_PAIR: (2, 2, 1),
            H.ONE_PAIR: (2, 1, 1, 1),
        }[hand]
        ranks = rng.sample(range(13), len(shape))
        cards = []
        for rank, times in zip(ranks, shape, strict=True):
            cards.extend(4 * rank + s for s in rng.sample(range(4), times))
    rng.shuffle(cards)
    return tuple(cards)


# Random.shuffle's steps for a list of n: for i from n - 1 down to 1, a draw below i + 1 of
# (i + 1).bit_length() random bits, drawn again while too high (CPython's _randbelow).
_STEPS: dict[int, tuple[tuple[int, int, int], ...]] = {}


def shuffle(rng: random.Random, cards: list[int]) -> None:
    """``rng.shuffle(cards)``, drawing exactly the same bits in the same order (the simulator's
    tests hold the two equal), three times as fast: every round of a five-card game shuffles
    a deck, and a benchmark deals millions."""
    steps = _STEPS.get(len(cards))
    if steps is None:
        steps = _STEPS[len(cards)] = tuple(
            (i, i + 1, (i + 1).bit_length()) for i in range(len(cards) - 1, 0, -1)
        )
    getrandbits = rng.getrandbits
    for i, n, k in steps:
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        cards[i], cards[r] = cards[r], cards[i]


def draw_keep(cards: Sequence[int]) -> tuple[int, ...]:
    """The cards the simulated Caribbean Draw player keeps of its five, in dealt order.

    A fixed, simple strategy: stand pat on a straight or better, keep the matched cards of a
    pair, two pair, trips or quads, else four to a flush, else four to a straight, else the
    two highest cards.
    """
    category = evaluate(cards).category
    if category in _PAT:
        return tuple(cards)
    ranks = [card >> 2 for card in cards]
    if category is not H.HIGH_CARD:
        # Quads keep their kicker too: drawing to four of a kind cannot improve it.
        if category is H.FOUR_OF_A_KIND:
            return tuple(cards)
        return tuple(card for card, rank in zip(cards, ranks, strict=True) if ranks.count(rank) > 1)
    suits = [card & 3 for card in cards]
    for suit in range(4):
        if suits.count(suit) == 4:
            return tuple(card for card in cards if card & 3 == suit)
    # A high-card hand has five distinct ranks; try the highest five-rank window first, the
    # wheel (ace playing low) last.
    held = frozenset(ranks)
    for window in _WINDOWS:
        if len(held & window) == 4:
            return tuple(card for card, rank in zip(cards, ranks, strict=True) if rank in window)
    top_two = sorted(cards, key=lambda card: card // 4, reverse=True)[:2]
    return tuple(card for card in cards if card in top_two)


# Hands the simulated Caribbean Draw player stands pat on, and the five-rank windows a
# straight draw looks in, highest first, the wheel (ace low) last.
_PAT: Final = frozenset((H.STRAIGHT, H.FLUSH, H.FULL_HOUSE, H.STRAIGHT_FLUSH, H.ROYAL_FLUSH))
_WINDOWS: Final = tuple(
    frozenset(rank % 13 for rank in range(high - 4, high + 1)) for high in range(12, 2, -1)
)


def deal_cards(
    game: Game, rng: random.Random, seats: Sequence[int], forced: Mapping[int, tuple[int, ...]]
) -> tuple[dict[int, SeatHand], tuple[int, ...], tuple[int, ...]]:
    """One round's cards: the final hands of ``seats``, the dealer's cards and the community
    cards, from one shuffle of ``rng`` (and, in Caribbean Draw, of the discards).

    ``forced`` seats get exactly their cards (and stand pat); the rest are dealt from what
    the forced hands leave. In the Let It Ride bonus the last two cards of the forced hand
    (one seat at most) are the community cards.
    """
    deck = list(range(52))
    shuffle(rng, deck)
    reserved = {card for cards in forced.values() for card in cards}
    stub = [card for card in deck if card not in reserved] if reserved else deck

    finals: dict[int, tuple[int, ...]] = {}
    dealer: tuple[int, ...] = ()
    community: tuple[int, ...] = ()
    if game is Game.LET_IT_RIDE_BONUS:
        # The forced hand's last two cards are the community cards (one forced seat).
        community = next(iter(forced.values()))[3:] if forced else _take(stub, 2)
        for seat in seats:
            own = forced[seat][:3] if seat in forced else _take(stub, 3)
            finals[seat] = own + community
    else:
        for seat in seats:
            finals[seat] = forced.get(seat) or _take(stub, 5)
        dealer = _take(stub, 5)
        if game is Game.CARIBBEAN_DRAW:
            discards: list[int] = []
            for seat in seats:
                if seat not in forced:
                    finals[seat] = _draw(rng, finals[seat], stub, discards)
    hands = {seat: SeatHand(cards, evaluate(cards).category) for seat, cards in finals.items()}
    return hands, dealer, community


def _draw(
    rng: random.Random, cards: tuple[int, ...], stub: list[int], discards: list[int]
) -> tuple[int, ...]:
    keep = draw_keep(cards)
    drawn: list[int] = []
    while len(drawn) < 5 - len(keep):
        if not stub:
            # Seven drawing seats can empty the stub: as at a real table, the earlier
            # players' discards are shuffled and dealt on; none is in a live hand.
            shuffle(rng, discards)
            stub.extend(discards)
            discards.clear()
        drawn.append(stub.pop(0))
    # Discarded only now, so a player never draws back a card just thrown away.
    discards.extend(card for card in cards if card not in keep)
    return keep + tuple(drawn)


def _take(stub: list[int], count: int) -> tuple[int, ...]:
    taken = tuple(stub[:count])
    del stub[:count]
    return taken
