"""The rate of progression (68 IAC 10-1-1.1(b)-(d))."""

from __future__ import annotations

from controller.core.money import format_bp
from controller.rules.violation import RuleViolation

# 68 IAC 10-1-1.1(c): the rate of progression is at least 60% and not more than 100%.
RATE_CLAUSE = "68 IAC 10-1-1.1(c)"
MIN_RATE_BP = 6_000
MAX_RATE_BP = 10_000

# 68 IAC 10-1-1.1(d): once established, the rate is not changed until a patron wins the jackpot.
RATE_LOCK_CLAUSE = "68 IAC 10-1-1.1(d)"
# 68 IAC 10-1-1.1(d)-(e): so a rate changes only through a submission, applied at a reset.
RATE_GOVERNED_CLAUSE = "68 IAC 10-1-1.1(d)-(e)"


def check_rate_of_progression(rate_bp: int) -> int:
    """Return ``rate_bp`` when the regulations allow it; refuse it otherwise."""
    if isinstance(rate_bp, bool) or not isinstance(rate_bp, int):
        raise RuleViolation(
            RATE_CLAUSE, f"a rate of progression is whole basis points, got {rate_bp!r}"
        )
    if not MIN_RATE_BP <= rate_bp <= MAX_RATE_BP:
        raise RuleViolation(
            RATE_CLAUSE,
            f"rate of progression {format_bp(rate_bp)} is outside "
            f"{format_bp(MIN_RATE_BP)} to {format_bp(MAX_RATE_BP)}",
        )
    return rate_bp


def check_rate_change(
    *, current_bp: int, proposed_bp: int, jackpot_won_since_rate_set: bool
) -> int:
    """A proposed new rate for a link that already plays at ``current_bp``."""
    check_rate_of_progression(proposed_bp)
    if proposed_bp != current_bp and not jackpot_won_since_rate_set:
        raise RuleViolation(
            RATE_LOCK_CLAUSE,
            f"the rate of progression {format_bp(current_bp)} cannot change to "
            f"{format_bp(proposed_bp)} until a patron wins the jackpot",
        )
    return proposed_bp
