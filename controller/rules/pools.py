"""What a link's pool may be: its levels under the rate of progression, the Let It Ride
bonus as a fixed-pay link, and paytables that the pool can pay."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from controller.core.money import format_bp
from controller.rules.progression import RATE_CLAUSE, RATE_LOCK_CLAUSE, check_rate_of_progression
from controller.rules.violation import RuleViolation

if TYPE_CHECKING:
    from controller.core.games import Game, Paytable
    from controller.core.reducer.levels import LevelConfig

# 68 IAC 10-7-5(e): the Let It Ride bonus pays the fixed amounts it lists; no hand wins a
# meter, so its link has none (and no rate of progression to set or change).
FIXED_PAY_CLAUSE = "68 IAC 10-7-5(e)"


def fixed_pay_only(game: Game) -> bool:
    """A game whose side bet pays only fixed amounts, by its rules (``FIXED_PAY_CLAUSE``)."""
    return str(game) == "let_it_ride_bonus"


def check_levels_rate(levels: Sequence[LevelConfig]) -> int:
    """68 IAC 10-1-1.1(c) over the whole side bet: every level's shown and hidden shares
    together are the rate of progression, 60% to 100%. Returns that rate."""
    from controller.core.reducer.levels import pool_rate_bp

    total = pool_rate_bp(levels)
    try:
        return check_rate_of_progression(total)
    except RuleViolation as exc:
        if len(levels) == 1 and not levels[0].reserve_bp:
            raise
        shares = ", ".join(
            f"{cfg.name} {format_bp(cfg.rate_bp)}"
            + (f" + {format_bp(cfg.reserve_bp)} hidden" if cfg.reserve_bp else "")
            for cfg in levels
        )
        raise RuleViolation(
            RATE_CLAUSE,
            f"{exc.message}: the rate of progression is every level's shown and hidden share "
            f"together ({shares})",
        ) from None


def check_pool(game: Game, levels: Sequence[LevelConfig], paytable: Paytable) -> int:
    """Refuse a pool its game or paytable cannot have; return its rate of progression (0 for
    a fixed-pay link)."""
    if not levels:
        from_meter = [line for line in paytable.lines if line.from_meter]
        if from_meter:
            raise RuleViolation(
                FIXED_PAY_CLAUSE,
                f"a fixed-pay link has no meter: the {from_meter[0].hand.label} line cannot "
                "pay a percentage of one",
            )
        return 0
    if fixed_pay_only(game):
        raise RuleViolation(
            FIXED_PAY_CLAUSE,
            f"the {game.label} pays fixed amounts only: its link is a fixed-pay link, "
            "with no meter and no levels",
        )
    rate = check_levels_rate(levels)
    for line in paytable.lines:
        if line.from_meter and line.level_number > len(levels):
            from controller.core.reducer.levels import LevelError

            raise LevelError(
                f"the {line.hand.label} line pays from level {line.level_number}, "
                f"the link has {len(levels)}"
            )
    return rate


def check_levels_won(levels: Sequence[LevelConfig], paytables: Sequence[Paytable]) -> None:
    """Every level can be won: a mystery level by its trigger, any other by a paytable line
    paying 100 % of it. A meter no hand can win grows money no patron can ever receive (the
    Let It Ride bonus link of 10-7-5 once did), and its rate could never change (10-1-1.1(d))."""
    from controller.core.reducer.levels import LevelError

    for number, cfg in enumerate(levels, start=1):
        if cfg.mystery is not None:
            continue
        if not any(
            line.resets_meter and line.level_number == number
            for pt in paytables
            for line in pt.lines
        ):
            raise LevelError(
                f"level {number} ({cfg.name}) can never be won: no paytable line pays 100% of it "
                f"(a meter no hand can win is money no patron can receive; {RATE_CLAUSE})"
            )


def check_one_meter_change(
    *, link_id: str, fixed_pay: bool, one_meter: bool, levels: int, what: str
) -> None:
    """A rate or reset-amount change on its own is for a link of one meter. A fixed-pay link
    has neither (``FIXED_PAY_CLAUSE``); a link of levels changes them all together, by one
    submission of its levels, at the link's next jackpot (10-1-1.1(d) locks the link's rate)."""
    if fixed_pay:
        raise RuleViolation(
            FIXED_PAY_CLAUSE,
            f"link {link_id} is a fixed-pay link: it has no {what}, and it can never change",
        )
    if not one_meter:
        shape = f"{levels} levels" if levels > 1 else "a hidden share or an overflow meter"
        raise RuleViolation(
            RATE_LOCK_CLAUSE,
            f"link {link_id} has {shape}: its {what} changes with a submission of all its "
            "levels, applied at the link's next jackpot reset",
        )
