"""The odds of a progressive jackpot: a bound adopted from New Jersey (NJ 13:69D-1.52)."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class OddsBound:
    """The worst odds (``to_one`` to 1) at which a jackpot line may be won, and the clause that
    sets the bound: a jurisdiction's (N.J.A.C. 13:69D-1.52(e)4) or the house's."""

    to_one: int
    clause: str = JACKPOT_ODDS_CLAUSE

    @property
    def text(self) -> str:
        return f"{self.to_one:,} to 1"


DEFAULT_BOUND = OddsBound(DEFAULT_JACKPOT_ODDS_BOUND)


def odds_bound(setting: int, *, law_bound: int | None, clause: str) -> OddsBound:
    """The bound in force: the installation's setting (``PROGRESSIVE_JACKPOT_ODDS_BOUND``),
    which may be stricter than a bound the jurisdiction sets (``law_bound``, cited by
    ``clause``), never looser; where the jurisdiction sets none the setting is house policy
    (``JACKPOT_ODDS_CLAUSE``)."""
    if isinstance(setting, bool) or not isinstance(setting, int) or setting < 1:
        raise RuleViolation(
            clause, f"the bound on a jackpot's odds is a whole number, got {setting!r}"
        )
    if law_bound is None:
        return OddsBound(setting, JACKPOT_ODDS_CLAUSE)
    if setting > law_bound:
        raise RuleViolation(
            clause,
            f"a jackpot may be won at odds of {law_bound:,} to 1 at the worst; the bound set "
            f"({setting:,} to 1) would allow rarer ones",
        )
    return OddsBound(setting, clause)


def check_jackpot_odds(paytable: Paytable, *, bound: OddsBound | int = DEFAULT_BOUND) -> Paytable:
    """Refuse a paytable whose jackpot line (the line paying the whole meter) is won at odds
    worse than ``bound`` to 1, citing the clause that sets the bound."""
    if not isinstance(bound, OddsBound):
        bound = odds_bound(bound, law_bound=None, clause=JACKPOT_ODDS_CLAUSE)
    for odds in line_odds(paytable):
        if odds.line.resets_meter and odds.odds_against > bound.to_one:
            raise RuleViolation(
                bound.clause,
                f"the jackpot line ({odds.line.hand.label}) is won at odds of "
                f"{number_text(odds.odds_against)} to 1, worse than the bound of {bound.text}",
            )
    return paytable
