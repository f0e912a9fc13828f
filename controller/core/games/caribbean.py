"""Caribbean Stud Poker (68 IAC 10-6) and Caribbean Draw Poker (68 IAC 10-8): the progressive
side bet on the player's five cards from one deck (10-6-3(b), 10-8-3(b))."""

from __future__ import annotations

from functools import cache

from controller.core.games import five_card
from controller.core.games.lines import PaytableLine
from controller.core.games.module import Game, GameRules, HandCounts, RegisterFields
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
    game=Game.CARIBBEAN_STUD,
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
    game=Game.CARIBBEAN_DRAW,
    label="Caribbean Draw Poker",
    hand=five_card.SHAPE,
    ranking=RANKING,
    default_lines=DEFAULT_LINES,
    count=count,
    judge=five_card.judge_for(RANKING),
    judged_on="the player's five cards dealt before the draw",
    # The table judges the hand the player holds after the draw, and which cards a player
    # draws to is the player's choice: no strategy-free exact figure exists for it.
    assumption=(
        "the table judges the side bet on the hand after the draw, which depends on what the "
        "player keeps; these figures are computed on the five cards dealt before the draw"
    ),
    deals_are=five_card.DEALS_ARE,
    register=RegisterFields(cards_per_hit=5),
)
