"""The wagers of side bets: the Let It Ride bonus's fixed one dollar (68 IAC 10-7-5) and Super
Sevens' one dollar at most (68 IAC 10-12-3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.core.games import let_it_ride, super_sevens
from controller.core.money import format_cents
from controller.rules.violation import RuleViolation

if TYPE_CHECKING:
    from controller.core.games import Game

# 68 IAC 10-7-5(b)-(c): the table controller registers the one dollar bonus bet, placed as a
# one dollar chip: every credit a Let It Ride bonus table reports is one dollar.
DENOMINATION_CLAUSE = "68 IAC 10-7-5(b)"
# 68 IAC 10-7-5(b): the bonus bets are registered by the table controller; a fixed-pay link's
# history registers them (bets_registered) and its reconciliation holds them against the pays.
BETS_REGISTERED_CLAUSE = DENOMINATION_CLAUSE
LET_IT_RIDE_BONUS_BET_CENTS = let_it_ride.BONUS_BET_CENTS

# 68 IAC 10-12-3(b): "A maximum wager of one dollar ($1) may be charged for a Super Sevens
# bet": a table's Super Sevens wager is at most one dollar (fifty cents is lawful), and (f)
# pays its amounts whatever the bet.
SUPER_SEVENS_CLAUSE = "68 IAC 10-12-3(b)"
SUPER_SEVENS_BET_CENTS = super_sevens.BET_CENTS

# The clause fixing or bounding each side bet's wager, by the game's value.
_WAGER_CLAUSES = {"let_it_ride_bonus": DENOMINATION_CLAUSE, "super_sevens": SUPER_SEVENS_CLAUSE}


def check_denomination(game: Game, denomination_cents: int) -> int:
    """A table's denomination, refused when its game fixes the wager at another amount, or
    bounds it below it."""
    clause = _WAGER_CLAUSES.get(game.value, DENOMINATION_CLAUSE)
    fixed = game.fixed_wager_cents
    if fixed is not None and denomination_cents != fixed:
        raise RuleViolation(clause, f"the {game.label} bet is {format_cents(fixed)}")
    most = game.max_wager_cents
    if most is not None and denomination_cents > most:
        raise RuleViolation(
            clause,
            f"the {game.label} bet is at most {format_cents(most)}, not "
            f"{format_cents(denomination_cents)}",
        )
    return denomination_cents
