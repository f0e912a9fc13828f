"""The Let It Ride bonus feature's wager (68 IAC 10-7-5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.core.money import format_cents
from controller.rules.violation import RuleViolation

if TYPE_CHECKING:
    from controller.core.games import Game

# 68 IAC 10-7-5(b)-(c): the table controller registers the one dollar bonus bet, placed as a
# one dollar chip: every credit a Let It Ride bonus table reports is one dollar.
DENOMINATION_CLAUSE = "68 IAC 10-7-5(b)"
LET_IT_RIDE_BONUS_BET_CENTS = 100


def check_denomination(game: Game, denomination_cents: int) -> int:
    """A table's denomination, refused when its game fixes the wager at another amount."""
    fixed = game.fixed_wager_cents
    if fixed is not None and denomination_cents != fixed:
        raise RuleViolation(DENOMINATION_CLAUSE, f"the {game.label} bet is {format_cents(fixed)}")
    return denomination_cents
