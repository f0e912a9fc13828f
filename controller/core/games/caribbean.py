"""Caribbean Stud Poker (68 IAC 10-6) and Caribbean Draw Poker (68 IAC 10-8): the progressive
side bet on the player's five cards from one deck (10-6-3(b), 10-8-3(b))."""

from __future__ import annotations

from functools import cache

from controller.core.games import five_card
from controller.core.games.lines import PaytableLine
from controller.core.games.module import GameRules, HandCounts, RegisterFields
from controller.core.hands import HandCategory

H = HandCategory

# The table controller's hit codes stop at one pair (register map v1, address 12).
RANKING = tuple(h for h in five_card.POKER_RANKING if h >= H.ONE_PAIR)

DEFAULT_LINES = (
    PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=10_000),
    PaytableLine(hand=H.STRAIGHT_FLUSH, percent_bp=1_000),
    PaytableLine(hand=H.FOUR_OF_A_KIND, fixed_cents=500_00),
    PaytableLine(hand=H.FULL_HOUSE, fixed_cents=100_00),
    PaytableLine(hand=H.FLUSH, fixed_cents=50_00),
)


@cache
def count() -> HandCounts:
    return five_card.counts_for(RANKING)


STUD = GameRules(
    label="Caribbean Stud Poker",
    hand=five_card.SHAPE,
    ranking=RANKING,
    default_lines=DEFAULT_LINES,
    count=count,
    judge=five_card.judge_for(RANKING),
    judged_on="the player's five dealt cards",
    deals_are=five_card.DEALS_ARE,
    register=RegisterFields(cards_per_hit=5),
)

DRAW = GameRules(
    label="Caribbean Draw Poker",
    hand=five_card.SHAPE,
    ranking=RANKING,
    default_lines=DEFAULT_LINES,
    count=count,
    judge=five_card.judge_for(RANKING),
    # Play follows patent 5,725,216 (68 IAC 10-8-4(a), 10-8-5(j)): the player draws, and the
    # hand the player holds after the draw is the hand of the game, the one its bonus payment
    # hands (10-8-1(d)(1), 10-8-4(b)) and the progressive are judged on; the table reports
    # it. Which cards a player draws to is the player's choice, so the odds of that hand have
    # no exact figure: the par sheet counts the five cards as dealt and says so.
    judged_on="the player's five cards after the draw",
    assumption=(
        "the odds after the draw depend on which cards each player chooses to draw; these "
        "figures count the five cards as dealt, as if the player drew none"
    ),
    deals_are=five_card.DEALS_ARE,
    register=RegisterFields(cards_per_hit=5),
)
