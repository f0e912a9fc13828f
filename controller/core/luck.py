"""Luck held against the exact odds: how unlikely what a table reported is, by chance alone.

A paytable line's hand comes with an exact probability per hand bet (``odds.line_odds``); a
table that took ``bets`` side bets in a period is expected to report ``bets x p`` of them. What
it reported is judged by the exact tails of the binomial distribution of ``bets`` trials, the
probability of seeing at least that many (rigging, collusion, claims of hands never dealt) or
at most that many (a bet sensor or a reporting fault that stops patrons being paid) by luck
alone. Never a normal approximation: a top hand's counts are small, and there it is far off.

The tails are floating point (scipy's binomial survival and distribution functions, accurate
far into the tails): they are probabilities, never amounts, and no amount is derived from
them. The expected count stays an exact ``Fraction``.

Many tables, lines and periods are judged at once; one of them is always the unluckiest. A
threshold is what keeps an honest floor quiet: ``threshold`` divides the false alarms a floor
accepts in a month among every test it makes in that month (Bonferroni), which makes the
expected count of false alarms at most that figure whatever the tests' dependence, and the
discrete tails only make it smaller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction

__all__ = [
    "DEFAULT_FALSE_ALARMS_PER_MONTH",
    "Direction",
    "Judgement",
    "Tally",
    "at_least",
    "at_most",
    "count_text",
    "judge",
    "luck_text",
    "threshold",
]

# The false alarms an honest floor may raise in a month, all its tables, lines and periods
# together: one in about ten months.
DEFAULT_FALSE_ALARMS_PER_MONTH = Fraction(1, 10)


class Direction(StrEnum):
    """Which way a count is out of line with its odds."""

    TOO_MANY = "too_many"  # more hands than the odds give: rigging, collusion, false claims
    TOO_FEW = "too_few"  # fewer: a sensor or reporting fault, patrons not paid


def _check(observed: int, trials: int, p: Fraction) -> None:
    if trials < 0 or observed < 0:
        raise ValueError(f"counts are never negative: {observed} of {trials}")
    if observed > trials:
        raise ValueError(f"more hands ({observed}) than bets ({trials})")
    if not 0 < p < 1:
        raise ValueError(f"a probability between 0 and 1 is needed, not {p}")


def at_least(observed: int, trials: int, p: Fraction) -> float:
    """P(X >= observed) for X ~ Binomial(trials, p): the chance of that many or more."""
    _check(observed, trials, p)
    if observed == 0:
        return 1.0
    from scipy.stats import binom  # imported when first needed: a second of every start

    return float(binom.sf(observed - 1, trials, float(p)))


def at_most(observed: int, trials: int, p: Fraction) -> float:
    """P(X <= observed) for X ~ Binomial(trials, p): the chance of that many or fewer."""
    _check(observed, trials, p)
    if observed == trials:
        return 1.0
    from scipy.stats import binom

    return float(binom.cdf(observed, trials, float(p)))


@dataclass(frozen=True, slots=True)
class Tally:
    """One line of one table over one period: the hands reported among the bets taken."""

    observed: int
    bets: int
    probability: Fraction  # of the line's hand, per hand bet, exact

    @property
    def expected(self) -> Fraction:
        return self.bets * self.probability


@dataclass(frozen=True, slots=True)
class Judgement:
    """How unlikely a tally is by luck, in its more unlikely direction."""

    direction: Direction
    p_value: float
    expected: Fraction
    observed: int

    def alarming(self, at: float) -> bool:
        return self.p_value <= at

    @property
    def text(self) -> str:
        return luck_text(self.p_value)


def judge(tally: Tally) -> Judgement:
    """The tally's more unlikely tail: too many when it reported more than expected, too few
    when fewer (an exact match is no surprise either way)."""
    expected = tally.expected
    if tally.observed > expected:
        direction = Direction.TOO_MANY
        p = at_least(tally.observed, tally.bets, tally.probability)
    else:
        direction = Direction.TOO_FEW
        p = at_most(tally.observed, tally.bets, tally.probability)
    return Judgement(direction, p, expected, tally.observed)


def threshold(tests_per_month: int, false_alarms_per_month: Fraction) -> float:
    """The p-value at or below which one test alarms, so that a floor making
    ``tests_per_month`` tests a month raises at most ``false_alarms_per_month`` false alarms
    a month on average (Bonferroni: each test's share of the floor's rate)."""
    if tests_per_month < 1:
        raise ValueError(f"a floor makes at least one test a month, not {tests_per_month}")
    if false_alarms_per_month <= 0:
        raise ValueError(f"a false-alarm rate above zero is needed, not {false_alarms_per_month}")
    return float(false_alarms_per_month / tests_per_month)


def luck_text(p_value: float) -> str:
    """``2.4e-7`` -> ``1 in 4.2 million by luck``: how a person reads a small probability."""
    if not 0 <= p_value <= 1:
        raise ValueError(f"a probability is needed, not {p_value}")
    # Past a billion billion the figure says nothing more to a person (and a tail that small
    # is past what the floating point holds exactly): "1 in 46,007,771,448,917 trillion" no.
    if p_value < 1e-18:
        return "less than 1 in a billion billion by luck"
    one_in = 1 / p_value
    if one_in < 1.05:
        return "as likely as not by luck"
    for size, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if one_in >= size:
            return f"1 in {_figure(one_in / size)} {word} by luck"
    return f"1 in {_figure(one_in)} by luck"


def count_text(value: float) -> str:
    """An expected count as a person reads it, never in scientific notation: ``9.5e-05`` ->
    ``0.000095``, ``4.321`` -> ``4.3``, ``1204.4`` -> ``1,204``."""
    if value < 0:
        raise ValueError(f"a count is never negative: {value}")
    return "0" if value == 0 else _figure(value)


def _figure(value: float) -> str:
    """Two significant figures under 100, whole numbers above, with thousands commas."""
    if value >= 100:
        return f"{round(value):,}"
    digits = max(0, 1 - math.floor(math.log10(value)))
    return f"{value:,.{digits}f}"
