"""Tests for controller.core.money and the rulebook (controller.rules): exact integers, strict parsers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.core import money
from controller.core.money import (
    UNITS_PER_CENT,
    MissingUnit,
    MoneyError,
    cents_to_units,
    contribution_units,
    displayed_cents,
    format_bp,
    format_cents,
    parse_cents,
    parse_rate_bp,
    percent_of_cents,
)
from controller.rules import RuleViolation
from controller.rules.meter_records import REDUCTION_CLAUSE, check_reduction_explained
from controller.rules.progression import (
    RATE_CLAUSE,
    RATE_LOCK_CLAUSE,
    check_rate_change,
    check_rate_of_progression,
)

# --- contributions -------------------------------------------------------------------------


def test_awkward_rate_over_ten_million_credits_is_exact():
    units = contribution_units(credits=10_000_000, denomination_cents=500, rate_bp=6137)
    assert units == 10_000_000 * 500 * 6137
    assert displayed_cents(units) == 3_068_500_000  # $30,685,000.00
    assert units % UNITS_PER_CENT == 0  # nothing left below the cent: the arithmetic is exact
    assert format_cents(displayed_cents(units)) == "$30,685,000.00"


def test_one_credit_at_an_awkward_rate_keeps_its_sub_cent_part():
    # 1 credit x 5c x 61.37% = 3.0685 cents: 3 cents shown, 0.0685 cent kept in the meter.
    units = contribution_units(credits=1, denomination_cents=5, rate_bp=6137)
    assert units == 30_685
    assert displayed_cents(units) == 3
    assert units - cents_to_units(displayed_cents(units)) == 685


def test_ten_million_polls_of_one_credit_sum_to_the_one_big_poll():
    # Simulated by arithmetic: the meter after n identical polls is n times one poll, with no
    # rounding step anywhere, so it equals the single poll of n credits to the unit.
    one = contribution_units(credits=1, denomination_cents=500, rate_bp=6137)
    meter = 0
    for _ in range(1000):  # a real loop for the first thousand, to exercise accumulation
        meter += one
    meter += one * (10_000_000 - 1000)
    assert meter == contribution_units(credits=10_000_000, denomination_cents=500, rate_bp=6137)
    assert displayed_cents(meter) == 3_068_500_000


@settings(max_examples=200, deadline=None)
@given(
    polls=st.lists(st.integers(min_value=0, max_value=5_000), min_size=1, max_size=60),
    denomination=st.sampled_from([1, 5, 25, 100, 500, 2500]),
    rate=st.integers(min_value=6000, max_value=10000),
)
def test_many_small_polls_equal_one_big_poll(polls, denomination, rate):
    summed = sum(
        contribution_units(credits=c, denomination_cents=denomination, rate_bp=rate) for c in polls
    )
    big = contribution_units(credits=sum(polls), denomination_cents=denomination, rate_bp=rate)
    assert summed == big
    assert type(summed) is int


def test_negative_credits_refused():
    with pytest.raises(MoneyError, match="negative"):
        contribution_units(credits=-1, denomination_cents=100, rate_bp=8000)


def test_displayed_cents_truncates_and_percent_of_cents_floors():
    assert displayed_cents(9_999) == 0
    assert displayed_cents(10_000) == 1
    assert displayed_cents(123_459_999) == 12_345
    assert cents_to_units(12_345) == 123_450_000
    # 10% of $1,234.57 is $123.457: $123.45 is paid, the rest is not.
    assert percent_of_cents(123_457, 1_000) == 12_345
    assert percent_of_cents(123_457, 10_000) == 123_457
    assert percent_of_cents(1, 9_999) == 0


# --- parsing amounts -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("$1,234.56", 123_456),
        ("1234.56", 123_456),
        ("0.05", 5),
        ("1234", 123_400),
        ("$1,234", 123_400),
        ("$1,234,567.89", 123_456_789),
        ("  $12.30 ", 1_230),
        ("$.50", 50),
        ("0", 0),
        ("7.5", 750),
        ("7.500", 750),  # trailing zeros are still exact
    ],
)
def test_parse_cents_accepts(text, cents):
    got = parse_cents(text)
    assert got == cents
    assert type(got) is int


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("1,23.4", "not an amount"),
        ("12,34", "not an amount"),
        ("1234,567", "not an amount"),
        ("$1.234", "fraction of a cent"),
        ("12.345", "fraction of a cent"),
        ("0.001", "fraction of a cent"),
        ("abc", "not an amount"),
        ("1.2.3", "not an amount"),
        ("$", "not an amount"),
        ("1e3", "not an amount"),
        ("", "required"),
        ("   ", "required"),
        ("-5", "negative"),
        ("-$1.00", "negative"),
    ],
)
def test_parse_cents_refuses_with_reason(text, why):
    with pytest.raises(MoneyError, match=why):
        parse_cents(text)


def test_parse_cents_negative_only_when_allowed():
    assert parse_cents("-5", allow_negative=True) == -500
    assert parse_cents("-$1,234.56", allow_negative=True) == -123_456
    with pytest.raises(MoneyError, match="fraction of a cent"):
        parse_cents("-0.001", allow_negative=True)


def test_parse_cents_message_quotes_the_input():
    with pytest.raises(MoneyError) as info:
        parse_cents("12.345")
    assert "'12.345'" in str(info.value)


# --- parsing rates -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "bp"),
    [
        ("82.5%", 8250),
        ("61.37%", 6137),
        ("100", 10_000),
        ("100%", 10_000),
        ("60%", 6_000),
        ("82.5", 8250),
        (" 75 % ", 7500),
        (".5%", 50),
    ],
)
def test_parse_rate_bp_accepts(text, bp):
    got = parse_rate_bp(text)
    assert got == bp
    assert type(got) is int


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("82.555%", "finer than 0.01%"),
        ("61.371", "finer than 0.01%"),
        ("abc", "not a percentage"),
        ("-5%", "not a percentage"),
        ("5%%", "not a percentage"),
        ("", "required"),
    ],
)
def test_parse_rate_bp_refuses_with_reason(text, why):
    with pytest.raises(MoneyError, match=why):
        parse_rate_bp(text)


# --- formatting and round trips ------------------------------------------------------------


@pytest.mark.parametrize(
    ("cents", "text"),
    [
        (0, "$0.00"),
        (5, "$0.05"),
        (123_456, "$1,234.56"),
        (100_000_000, "$1,000,000.00"),
        (-100, "-$1.00"),
        (-5, "-$0.05"),
    ],
)
def test_format_cents(cents, text):
    assert format_cents(cents) == text


@pytest.mark.parametrize(
    ("bp", "text"),
    [
        (8250, "82.5%"),
        (6137, "61.37%"),
        (10_000, "100%"),
        (6_000, "60%"),
        (5, "0.05%"),
        (10, "0.1%"),
    ],
)
def test_format_bp(bp, text):
    assert format_bp(bp) == text


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_cents_round_trip(cents):
    assert parse_cents(format_cents(cents), allow_negative=True) == cents


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=100_000))
def test_bp_round_trip(bp):
    assert parse_rate_bp(format_bp(bp)) == bp


def test_format_bp_of_a_negative_percentage():
    # Negative basis points reach refusal messages (a rate or a paytable percentage typed as
    # -0.5%); the message must show what was given, not a different number.
    assert format_bp(-50) == "-0.5%"
    assert format_bp(-6137) == "-61.37%"
    with pytest.raises(RuleViolation, match=r"rate of progression -0\.5% is outside"):
        check_rate_of_progression(-50)


def test_no_function_returns_a_float():
    results = [
        money.contribution_units(credits=3, denomination_cents=5, rate_bp=6137),
        money.cents_to_units(7),
        money.displayed_cents(123_456_789),
        money.percent_of_cents(123_457, 1_000),
        money.parse_cents("$1,234.56"),
        money.parse_cents("0.05"),
        money.parse_rate_bp("82.5%"),
        money.parse_rate_bp("100"),
    ]
    for value in results:
        assert type(value) is int, value


# --- regulations ---------------------------------------------------------------------------


@pytest.mark.parametrize("bp", [5999, 10_001, 0, -1, 20_000])
def test_rate_outside_sixty_to_hundred_refused(bp):
    with pytest.raises(RuleViolation) as info:
        check_rate_of_progression(bp)
    assert info.value.clause == "68 IAC 10-1-1.1(c)" == RATE_CLAUSE
    assert "68 IAC 10-1-1.1(c)" in str(info.value)
    assert "outside 60% to 100%" in str(info.value)


def test_rate_refusal_names_the_rate():
    with pytest.raises(RuleViolation, match=r"59\.99%"):
        check_rate_of_progression(5999)
    with pytest.raises(RuleViolation, match=r"100\.01%"):
        check_rate_of_progression(10_001)


@pytest.mark.parametrize("bp", [6000, 6137, 8250, 10_000])
def test_rate_inside_range_accepted(bp):
    assert check_rate_of_progression(bp) == bp


@pytest.mark.parametrize("bad", [82.5, "8250", True, None, 8250.0])
def test_rate_that_is_not_an_int_refused(bad):
    with pytest.raises(RuleViolation) as info:
        check_rate_of_progression(bad)
    assert info.value.clause == RATE_CLAUSE
    assert "whole basis points" in str(info.value)


def test_rate_change_locked_until_a_jackpot():
    with pytest.raises(RuleViolation) as info:
        check_rate_change(current_bp=8000, proposed_bp=8500, jackpot_won_since_rate_set=False)
    assert info.value.clause == "68 IAC 10-1-1.1(d)" == RATE_LOCK_CLAUSE
    assert "80%" in str(info.value) and "85%" in str(info.value)
    assert (
        check_rate_change(current_bp=8000, proposed_bp=8500, jackpot_won_since_rate_set=True)
        == 8500
    )
    # Restating the same rate is not a change.
    assert (
        check_rate_change(current_bp=8000, proposed_bp=8000, jackpot_won_since_rate_set=False)
        == 8000
    )


def test_rate_change_still_checks_the_range_after_a_jackpot():
    with pytest.raises(RuleViolation) as info:
        check_rate_change(current_bp=8000, proposed_bp=5999, jackpot_won_since_rate_set=True)
    assert info.value.clause == RATE_CLAUSE


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_reduction_without_reason_refused(reason):
    with pytest.raises(RuleViolation) as info:
        check_reduction_explained(delta_units=-1, reason=reason)
    assert info.value.clause == REDUCTION_CLAUSE


def test_reduction_with_reason_and_non_reductions_pass():
    check_reduction_explained(delta_units=-1, reason="hit t1#5")
    check_reduction_explained(delta_units=0, reason=None)
    check_reduction_explained(delta_units=10, reason=None)


def test_operator_text_can_be_made_to_carry_its_unit():
    """Where a person types an amount or a rate (command line, floor file), the unit is
    required, so 10 is never taken for $10 when 10% was meant; the refusal gives the form."""
    assert parse_cents("$10,000", unit_required=True) == 10_000_00
    assert parse_cents("-$5", allow_negative=True, unit_required=True) == -500
    assert parse_rate_bp("82.5%", unit_required=True) == 8250
    with pytest.raises(MissingUnit, match=r"'10000' needs its unit: write an amount like \$1"):
        parse_cents("10000", unit_required=True)
    with pytest.raises(
        MissingUnit, match=r"'82\.5' needs its unit: write a percentage like 82\.5%"
    ):
        parse_rate_bp("82.5", unit_required=True)
    with pytest.raises(MissingUnit, match=r"write a share like 2\.5%"):
        parse_rate_bp("2", unit_required=True, form="a share like 2.5%")
    # Malformed text is still named as such, unit or not.
    with pytest.raises(MoneyError, match="not an amount"):
        parse_cents("$1.2.3", unit_required=True)
