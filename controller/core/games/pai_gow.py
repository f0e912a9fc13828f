"""The Pai Gow Poker progressive (68 IAC 10-9): a side bet on the best five of the player's
seven cards, dealt from one deck of 52 cards and a joker (10-9-3(b)).

The joker is an ace, or completes a straight, a flush, a straight flush or a royal flush
(10-9-3(c)); four aces and the joker are five aces, the best hand, above a royal flush
(10-9-1(d)(5), 10-9-14(a)). The progressive pays on the seven cards however the player sets
them. ``setting_problem`` checks a player's setting of the seven into a high and a low hand
(10-9-13(a)), for a simulated table.

The exact odds are counted in ``pai_gow_counts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from math import comb

from controller.core.games.lines import PaytableLine
from controller.core.games.module import (
    Deck,
    GameRules,
    HandCounts,
    HandShape,
    RegisterFields,
)
from controller.core.games.pai_gow_counts import (
    ACE,
    flush_hand,
    group_hand,
    hand_counts,
    has_run,
)
from controller.core.hands import JOKER, HandCategory, checked_cards, evaluate

H = HandCategory

SEVEN = 7
DECK = Deck(joker=True)

# 68 IAC 10-9-14(a)(1)-(10), best first.
RANKING = (
    H.FIVE_ACES,
    H.ROYAL_FLUSH,
    H.STRAIGHT_FLUSH,
    H.FOUR_OF_A_KIND,
    H.FULL_HOUSE,
    H.FLUSH,
    H.STRAIGHT,
    H.THREE_OF_A_KIND,
    H.TWO_PAIR,
    H.ONE_PAIR,
)

# An operator's paytable for a one dollar bet, as a licensee might file it: the rarest hand
# takes the meter, the royal flush a tenth of it, the rest fixed amounts.
DEFAULT_LINES = (
    PaytableLine(hand=H.FIVE_ACES, percent_bp=10_000),
    PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=1_000),
    PaytableLine(hand=H.STRAIGHT_FLUSH, fixed_cents=100_00),
    PaytableLine(hand=H.FOUR_OF_A_KIND, fixed_cents=50_00),
    PaytableLine(hand=H.FULL_HOUSE, fixed_cents=3_00),
    PaytableLine(hand=H.FLUSH, fixed_cents=2_00),
    PaytableLine(hand=H.STRAIGHT, fixed_cents=1_00),
    PaytableLine(hand=H.THREE_OF_A_KIND, fixed_cents=1_00),
)


def seven_card_hand(codes: Sequence[int]) -> HandCategory:
    """The best five-card hand of checked cards (naturals 0-51, the joker 52 at most once)."""
    joker = JOKER in codes
    need = 4 if joker else 5
    counts = [0] * 13
    suits = [0, 0, 0, 0]  # a 13-bit rank mask per suit
    for code in codes:
        if code != JOKER:
            counts[code >> 2] += 1
            suits[code & 3] |= 1 << (code >> 2)
    rank_mask = suits[0] | suits[1] | suits[2] | suits[3]
    if joker:
        counts[ACE] += 1  # as an ace wherever it completes nothing
    top, second = sorted(counts, reverse=True)[:2]
    best = group_hand(top, second)
    if has_run(rank_mask, need):
        best = max(best, H.STRAIGHT)
    for suit_mask in suits:
        if suit_mask.bit_count() >= need:
            best = max(best, flush_hand(suit_mask, need))
    return best


def judge_cards(cards: Sequence[int]) -> HandCategory | None:
    """The hand the player's seven cards make for the progressive, or None below one pair."""
    made = seven_card_hand(checked_cards(cards, counts=range(SEVEN, SEVEN + 1), joker=True))
    return made if made in RANKING else None


@cache
def count() -> HandCounts:
    """Exact odds over all C(53, 7) = 154,143,080 hands."""
    natural, with_joker = hand_counts()
    return HandCounts(comb(DECK.size, SEVEN), {h: natural[h] + with_joker[h] for h in RANKING})


# --- setting the hands (68 IAC 10-9-13(a)) ----------------------------------------------------


def high_hand_value(five: Sequence[int]) -> tuple[int, tuple[int, ...]]:
    """(category, tie-break ranks) of a five-card high hand; the joker as 10-9-3(c) lets it
    play: any card completing a straight or a flush, else an ace."""
    codes = checked_cards(five, counts=range(5, 6), joker=True)
    if JOKER not in codes:
        value = evaluate(codes)
        return value.category, value.ranks
    naturals = [code for code in codes if code != JOKER]
    if all(code >> 2 == ACE for code in naturals):
        return H.FIVE_ACES, ()
    playable = (H.STRAIGHT, H.FLUSH, H.STRAIGHT_FLUSH, H.ROYAL_FLUSH)
    best = None
    for stand_in in range(52):
        if stand_in in naturals:
            continue
        value = evaluate((*naturals, stand_in))
        if stand_in >> 2 == ACE or value.category in playable:
            best = value if best is None or value > best else best
    assert best is not None  # an ace of some suit is always free beside four naturals
    return best.category, best.ranks


def low_hand_value(two: Sequence[int]) -> tuple[int, tuple[int, ...]]:
    """(category, ranks) of a two-card low hand: a pair or two cards high first; the joker
    is an ace."""
    codes = checked_cards(two, counts=range(2, 3), joker=True)
    high, low = sorted((ACE if code == JOKER else code >> 2 for code in codes), reverse=True)
    if high == low:
        return H.ONE_PAIR, (high,)
    return H.HIGH_CARD, (high, low)


def setting_problem(high: Sequence[int], low: Sequence[int]) -> str | None:
    """Why a player's setting of seven cards is a foul, or None when it stands: the five-card
    high hand must be higher in rank than the two-card low hand (68 IAC 10-9-13(a)).

    Hands of one category compare by their ranks, highest first; when the low hand's ranks are
    all matched, the high hand's further cards make it the higher.
    """
    checked_cards([*high, *low], counts=range(SEVEN, SEVEN + 1), joker=True)
    high_value = high_hand_value(high)
    low_value = low_hand_value(low)
    if high_value > low_value:
        return None
    return (
        f"the two-card hand ({H(low_value[0]).label}) outranks the five-card hand "
        f"({H(high_value[0]).label}): a foul hand"
    )


RULES = GameRules(
    label="Pai Gow Poker",
    hand=HandShape(dealt=SEVEN, counted=5, deck=DECK),
    ranking=RANKING,
    default_lines=DEFAULT_LINES,
    count=count,
    judge=judge_cards,
    judged_on=(
        "the best five of the player's seven cards from one deck of 52 cards and a joker, the "
        "joker an ace or completing a straight, a flush or a straight flush; five aces above "
        "a royal flush"
    ),
    deals_are="seven-card hands of 52 cards and a joker",
    register=RegisterFields(cards_per_hit=SEVEN, joker_code=True, new_hand_codes=True),
)
