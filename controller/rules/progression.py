"""The rate of progression (68 IAC 10-1-1.1(b)-(d)).

Each check takes the jurisdiction's figures and clause; the defaults are Indiana's, whose
module (``jurisdictions.indiana``) hands them in like any other's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from controller.core.money import format_bp
from controller.rules.violation import RuleViolation

if TYPE_CHECKING:
    from controller.core.reducer.levels import LevelConfig

# 68 IAC 10-1-1.1(c): the rate of progression is at least 60% and not more than 100%.
RATE_CLAUSE = "68 IAC 10-1-1.1(c)"
MIN_RATE_BP = 6_000
MAX_RATE_BP = 10_000
# 68 IAC 10-1-1.1(b): the rate of progression is what the progressive jackpot increases by
# for each credit wagered: what a patron can win grows by it, nothing else counts.
RATE_DEFINITION_CLAUSE = "68 IAC 10-1-1.1(b)"

# 68 IAC 10-1-1.1(d): once established, the rate is not changed until a patron wins the jackpot.
RATE_LOCK_CLAUSE = "68 IAC 10-1-1.1(d)"
# 68 IAC 10-1-1.1(d)-(e): so a rate changes only through a submission, applied at a reset.
RATE_GOVERNED_CLAUSE = "68 IAC 10-1-1.1(d)-(e)"
# 68 IAC 10-1-1.1(d) on a link of levels: each level is a jackpot with its own rate (its
# share), and only a win of that jackpot unlocks it; a win of another level does not.
LEVEL_RATE_LOCK = "each level's share is locked until its own jackpot is won"


def check_rate_of_progression(
    rate_bp: int,
    *,
    low: int = MIN_RATE_BP,
    high: int = MAX_RATE_BP,
    clause: str = RATE_CLAUSE,
) -> int:
    """Return ``rate_bp`` when the regulations allow it; refuse it otherwise."""
    if isinstance(rate_bp, bool) or not isinstance(rate_bp, int):
        raise RuleViolation(clause, f"a rate of progression is whole basis points, got {rate_bp!r}")
    if not low <= rate_bp <= high:
        raise RuleViolation(
            clause,
            f"rate of progression {format_bp(rate_bp)} is outside "
            f"{format_bp(low)} to {format_bp(high)}",
        )
    return rate_bp


def check_rate_change(
    *,
    current_bp: int,
    proposed_bp: int,
    jackpot_won_since_rate_set: bool,
    low: int = MIN_RATE_BP,
    high: int = MAX_RATE_BP,
    clause: str = RATE_CLAUSE,
    lock_clause: str = RATE_LOCK_CLAUSE,
) -> int:
    """A proposed new rate for a link that already plays at ``current_bp``."""
    check_rate_of_progression(proposed_bp, low=low, high=high, clause=clause)
    if proposed_bp != current_bp and not jackpot_won_since_rate_set:
        raise RuleViolation(
            lock_clause,
            f"the rate of progression {format_bp(current_bp)} cannot change to "
            f"{format_bp(proposed_bp)} until a patron wins the jackpot",
        )
    return proposed_bp


def share_text(cfg: LevelConfig) -> str:
    """A level's share as people read it: ``40%`` or ``40% + 10% hidden``."""
    hidden = f" + {format_bp(cfg.reserve_bp)} hidden" if cfg.reserve_bp else ""
    return f"{format_bp(cfg.rate_bp)}{hidden}"


def check_shares_change(
    *,
    link_id: str,
    current: Sequence[LevelConfig],
    proposed: Sequence[LevelConfig],
    won_since_set: Sequence[bool],
    clause: str = RATE_LOCK_CLAUSE,
) -> None:
    """New shares for a link of levels: a level's share (shown and hidden) changes only once
    that level's own jackpot was won since the share was set (``won_since_set``, by level).
    A win of the Mini unlocks the Mini's share, never the Grand's."""
    for i, (cur, new) in enumerate(zip(current, proposed, strict=False)):
        if (cur.rate_bp, cur.reserve_bp) == (new.rate_bp, new.reserve_bp):
            continue
        if i < len(won_since_set) and won_since_set[i]:
            continue
        raise RuleViolation(
            clause,
            f"link {link_id}: level {i + 1} ({cur.name})'s share {share_text(cur)} cannot "
            f"change to {share_text(new)} until a patron wins the {cur.name} "
            f"({LEVEL_RATE_LOCK}); file the change with the {cur.name}'s share as it is, or "
            f"file it once the {cur.name} has been won",
        )
