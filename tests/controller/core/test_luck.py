"""Luck against the exact odds: the binomial tails against sums made exactly with fractions,
the direction judged, the threshold that keeps a floor's false alarms to their rate, and the
figure a person reads."""

from __future__ import annotations

import decimal
import math
from decimal import Decimal
from fractions import Fraction

import pytest

from controller.core.hands import HandCategory
from controller.core.luck import (
    DEFAULT_FALSE_ALARMS_PER_MONTH,
    Direction,
    Tally,
    at_least,
    at_most,
    count_text,
    judge,
    luck_text,
    threshold,
)
from controller.core.odds import probability

ROYAL = probability(HandCategory.ROYAL_FLUSH)  # 1 in 649,740
FLUSH = probability(HandCategory.FLUSH)


# Sums to 80 significant digits: as good as exact next to the 1e-9 the tails are held to, and
# fast where fractions of (1 - p) ** 100,000 would not be.
DIGITS = decimal.Context(prec=80)


def exact_pmf(k: int, n: int, p: Fraction) -> Decimal:
    q = DIGITS.divide(Decimal(p.numerator), Decimal(p.denominator))
    return DIGITS.multiply(
        DIGITS.multiply(Decimal(math.comb(n, k)), DIGITS.power(q, k)),
        DIGITS.power(DIGITS.subtract(Decimal(1), q), n - k),
    )


def exact_at_most(k: int, n: int, p: Fraction) -> Decimal:
    total = Decimal(0)
    for i in range(k + 1):
        total = DIGITS.add(total, exact_pmf(i, n, p))
    return total


def exact_at_least(k: int, n: int, p: Fraction) -> Decimal:
    # Eighty digits: one minus the other tail loses nothing the test can see.
    return DIGITS.subtract(Decimal(1), exact_at_most(k - 1, n, p))


@pytest.mark.parametrize(
    ("k", "n", "p"),
    [
        (1, 1, Fraction(1, 7)),
        (2, 3, Fraction(1, 2)),
        (3, 1000, Fraction(1, 1000)),
        (12, 400, Fraction(1, 100)),
        (2, 10_000, ROYAL),  # a top hand twice in ten thousand hands
        (5, 100_000, ROYAL),  # five royal flushes in a hundred thousand: rigged
        (40, 5_000, FLUSH),
    ],
)
def test_the_tails_are_the_exact_sums(k: int, n: int, p: Fraction) -> None:
    assert at_least(k, n, p) == pytest.approx(float(exact_at_least(k, n, p)), rel=1e-9)
    assert at_most(k, n, p) == pytest.approx(float(exact_at_most(k, n, p)), rel=1e-9)


def test_known_values() -> None:
    # Three or more of a 1-in-1,000 hand in 1,000 hands: 1 - (0.999^1000 + ...) = 0.0802.
    assert at_least(3, 1000, Fraction(1, 1000)) == pytest.approx(0.080_209_3, abs=1e-7)
    # No flush in 500 hands: (1 - 5,108/2,598,960)^500 = 0.3742.
    assert at_most(0, 500, FLUSH) == pytest.approx((1 - 5108 / 2_598_960) ** 500, rel=1e-12)
    assert at_least(0, 10, ROYAL) == 1.0
    assert at_most(10, 10, ROYAL) == 1.0


def test_a_small_tail_is_not_a_normal_approximations() -> None:
    # Two royal flushes in 10,000 hands: expected 0.0154. A normal approximation puts this
    # 16 standard deviations out, about 1e-57; the exact chance is 1.17e-4.
    exact = float(exact_at_least(2, 10_000, ROYAL))
    assert exact == pytest.approx(1.1722e-4, rel=1e-4)
    assert at_least(2, 10_000, ROYAL) == pytest.approx(exact, rel=1e-9)


@pytest.mark.parametrize(
    ("observed", "bets", "p", "direction"),
    [
        (3, 10_000, ROYAL, Direction.TOO_MANY),
        (0, 5_000, FLUSH, Direction.TOO_FEW),  # expected 9.8 flushes, none reported
        (10, 5_000, FLUSH, Direction.TOO_MANY),
        (9, 5_000, FLUSH, Direction.TOO_FEW),
    ],
)
def test_a_tally_is_judged_on_its_more_unlikely_side(
    observed: int, bets: int, p: Fraction, direction: Direction
) -> None:
    found = judge(Tally(observed, bets, p))
    assert found.direction is direction
    assert found.expected == bets * p  # exact
    tail = at_least if direction is Direction.TOO_MANY else at_most
    assert found.p_value == tail(observed, bets, p)


def test_no_flush_in_ten_thousand_hands_alarms_a_floor_and_none_in_five_thousand_does_not() -> None:
    # A floor of 10,000 tests a month at one false alarm in ten months: 1e-5 a test. No flush
    # in 10,000 hands (about 20 expected) is 2.9e-9; none in 5,000 (about 10), 5.3e-5, is
    # unlucky but not beyond what so many tests show by chance; 8 in 10,000, 2.6e-3, is not.
    at = threshold(10_000, DEFAULT_FALSE_ALARMS_PER_MONTH)
    assert at == pytest.approx(1e-5)
    assert judge(Tally(0, 10_000, FLUSH)).alarming(at)
    assert not judge(Tally(0, 5_000, FLUSH)).alarming(at)
    assert not judge(Tally(8, 10_000, FLUSH)).alarming(at)


def test_the_threshold_shares_the_floors_rate_among_its_tests() -> None:
    assert threshold(1_000, Fraction(1, 10)) == pytest.approx(1e-4)
    assert threshold(1, Fraction(1, 2)) == 0.5
    with pytest.raises(ValueError, match="at least one test"):
        threshold(0, Fraction(1, 10))
    with pytest.raises(ValueError, match="above zero"):
        threshold(10, Fraction(0))


@pytest.mark.parametrize(("n", "p"), [(50, Fraction(1, 10)), (2_000, Fraction(1, 500))])
@pytest.mark.parametrize("at", [0.2, 0.05, 1e-3, 1e-5])
def test_an_honest_table_alarms_no_more_often_than_the_threshold(
    n: int, p: Fraction, at: float
) -> None:
    # Every count an honest table can report, weighted by its exact chance: the share that
    # alarms on either side is at most the threshold's, so a floor's false alarms are at most
    # the rate the threshold shares out (the discrete tails only make it smaller).
    chance = Decimal(0)
    for k in range(n + 1):
        found = judge(Tally(k, n, p))
        if found.alarming(at / 2):
            chance += exact_pmf(k, n, p)
    assert chance <= Decimal(at)


def test_impossible_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="more hands"):
        at_least(3, 2, ROYAL)
    with pytest.raises(ValueError, match="never negative"):
        at_most(-1, 2, ROYAL)
    with pytest.raises(ValueError, match="between 0 and 1"):
        at_least(1, 2, Fraction(1))


@pytest.mark.parametrize(
    ("p_value", "text"),
    [
        (2.4e-7, "1 in 4.2 million by luck"),
        (1 / 649_740, "1 in 649,740 by luck"),
        (0.4, "1 in 2.5 by luck"),
        (1 / 42.0, "1 in 42 by luck"),
        (3e-10, "1 in 3.3 billion by luck"),
        (1.0, "as likely as not by luck"),
        (0.0, "less than 1 in a billion billion by luck"),
        (2.2e-29, "less than 1 in a billion billion by luck"),
        (1e-18, "1 in 1,000,000 trillion by luck"),
    ],
)
def test_the_chance_reads_as_one_in_so_many(p_value: float, text: str) -> None:
    assert luck_text(p_value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(9.5e-05, "0.000095"), (0.0, "0"), (4.321, "4.3"), (1204.4, "1,204"), (0.5, "0.50")],
)
def test_an_expected_count_reads_without_scientific_notation(value: float, text: str) -> None:
    assert count_text(value) == text
