"""The odds of a progressive jackpot: a bound adopted from New Jersey (NJ 13:69D-1.52)."""

from __future__ import annotations

from controller.core.games import Paytable
from controller.core.odds import line_odds, number_text
from controller.rules.violation import RuleViolation

# NJ 13:69D-1.52: the odds of winning a progressive jackpot are no worse than 100,000,000 to 1.
# Not an Indiana rule: 68 IAC 10 sets no bound on a jackpot's odds. This product keeps the New
# Jersey figure as house policy, a configured option (``Settings.jackpot_odds_bound``,
# PROGRESSIVE_JACKPOT_ODDS_BOUND): an installation may set another bound, and the refusal
# names the bound in force. Every hand of the three games is a five-card hand, the rarest a
# royal flush at 649,739 to 1, so the default refuses none of them; the bound guards the games
# to come (a Pai Gow progressive's five aces, a jackpot on two hands at once).
JACKPOT_ODDS_CLAUSE = "house policy adopted from NJ 13:69D-1.52"
DEFAULT_JACKPOT_ODDS_BOUND = 100_000_000


def check_jackpot_odds(paytable: Paytable, *, bound: int = DEFAULT_JACKPOT_ODDS_BOUND) -> Paytable:
    """Refuse a paytable whose jackpot line (the line paying the whole meter) is won at odds
    worse than ``bound`` to 1."""
    if isinstance(bound, bool) or not isinstance(bound, int) or bound < 1:
        raise RuleViolation(
            JACKPOT_ODDS_CLAUSE, f"the bound on a jackpot's odds is a whole number, got {bound!r}"
        )
    for odds in line_odds(paytable):
        if odds.line.resets_meter and odds.odds_against > bound:
            raise RuleViolation(
                JACKPOT_ODDS_CLAUSE,
                f"the jackpot line ({odds.line.hand.label}) is won at odds of "
                f"{number_text(odds.odds_against)} to 1, worse than the bound of "
                f"{bound:,} to 1",
            )
    return paytable
