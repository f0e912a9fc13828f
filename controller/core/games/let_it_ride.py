"""The Let It Ride bonus (68 IAC 10-7-5): a one dollar bet on the player's three cards and the
two community cards, five cards from one deck (10-7-3(b)), paid fixed amounts."""

from __future__ import annotations

from functools import cache

from controller.core.games import five_card
from controller.core.games.lines import PaytableLine
from controller.core.games.module import GameRules, HandCounts, RegisterFields
from controller.core.hands import HandCategory

H = HandCategory

# 68 IAC 10-7-5(b)-(c): the one dollar bonus bet (its rule: ``controller.rules.wagers``).
BONUS_BET_CENTS = 100

# 68 IAC 10-7-5(d): the Let It Ride bonus pays nothing below two pair.
RANKING = tuple(h for h in five_card.POKER_RANKING if h >= H.TWO_PAIR)

# 68 IAC 10-7-5(e)(1)-(8).
DEFAULT_LINES = (
    PaytableLine(hand=H.ROYAL_FLUSH, fixed_cents=10_000_00),
    PaytableLine(hand=H.STRAIGHT_FLUSH, fixed_cents=2_000_00),
    PaytableLine(hand=H.FOUR_OF_A_KIND, fixed_cents=100_00),
    PaytableLine(hand=H.FULL_HOUSE, fixed_cents=75_00),
    PaytableLine(hand=H.FLUSH, fixed_cents=50_00),
    PaytableLine(hand=H.STRAIGHT, fixed_cents=25_00),
    PaytableLine(hand=H.THREE_OF_A_KIND, fixed_cents=8_00),
    PaytableLine(hand=H.TWO_PAIR, fixed_cents=4_00),
)


@cache
def count() -> HandCounts:
    return five_card.counts_for(RANKING)


BONUS = GameRules(
    label="Let It Ride bonus",
    hand=five_card.SHAPE,
    ranking=RANKING,
    default_lines=DEFAULT_LINES,
    count=count,
    judge=five_card.judge_for(RANKING),
    judged_on="the player's five cards: three dealt and the two community cards",
    deals_are=five_card.DEALS_ARE,
    register=RegisterFields(cards_per_hit=5),
    fixed_wager_cents=BONUS_BET_CENTS,
)
