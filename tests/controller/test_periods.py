"""The one parser of the times people write, and the longest period answered."""

from __future__ import annotations

import pytest

from controller.periods import (
    DAY_US,
    EARLIEST_US,
    LATEST_US,
    MAX_SPAN_DAYS,
    MAX_SPAN_US,
    PeriodError,
    parse_instant,
    period,
)

T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z
HOUR_US = 3_600_000_000


@pytest.mark.parametrize(
    ("text", "at_us"),
    [
        ("2026-01-01", T0),
        ("2026-01-01T00:00", T0),  # no offset: UTC
        ("2026-01-01T00:00Z", T0),
        ("2026-01-01T14:00:00+14:00", T0),
        ("2025-12-31T12:00:00-12:00", T0),
        ("2026-01-01T05:30+05:30", T0),
        (" 2026-01-01T00:00:00.000001 ", T0 + 1),
        ("0001-01-01T00:00:00+00:00", EARLIEST_US),
        ("0001-01-01T14:00:00+14:00", EARLIEST_US),
        ("9999-12-31T23:59:59.999999", LATEST_US),
        ("9999-12-31T09:59:59.999999-14:00", LATEST_US),
    ],
)
def test_a_time_with_any_offset_is_read_to_the_microsecond(text: str, at_us: int) -> None:
    assert parse_instant(text) == at_us


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("0001-01-01T00:00:00+14:00", "before"),
        ("0001-01-01T13:59:59.999999+14:00", "before"),
        ("9999-12-31T23:59:59.999999-14:00", "after"),
        ("9999-12-31T10:00:00-14:00", "after"),
    ],
)
def test_a_time_outside_the_calendar_in_utc_is_refused_by_name(text: str, word: str) -> None:
    with pytest.raises(PeriodError, match=f"is {word} the calendar in UTC") as refused:
        parse_instant(text, where="since")
    assert refused.value.where == "since"


def test_what_is_not_a_time_is_refused_by_name() -> None:
    with pytest.raises(PeriodError, match="not a date or time") as refused:
        parse_instant("yesterday", where="until")
    assert refused.value.where == "until"


def test_the_defaults_are_now_and_the_day_before() -> None:
    assert period(None, None, T0) == (T0 - DAY_US, T0)
    assert period("2025-12-01", None, T0) == (T0 - 31 * DAY_US, T0)
    assert period(None, "2026-01-01T01:00+01:00", T0 + 5 * DAY_US) == (T0 - DAY_US, T0)


def test_the_longest_period_covers_five_years_of_records_and_no_more() -> None:
    assert MAX_SPAN_DAYS == 5 * 366 + 7 and MAX_SPAN_US == MAX_SPAN_DAYS * DAY_US
    # Five years back to the day, with the week to begin the report on a Monday.
    assert period("2020-12-28", "2026-01-08", T0) == (T0 - 1830 * DAY_US, T0 + 7 * DAY_US)
    longest = period("2020-12-21T00:00", "2026-01-01T00:00", T0)
    assert longest == (T0 - MAX_SPAN_US, T0)
    with pytest.raises(PeriodError, match=f"at most {MAX_SPAN_DAYS:,} days") as refused:
        period("2020-12-20T23:59:59.999999", "2026-01-01T00:00", T0)
    assert refused.value.where == "since"
    with pytest.raises(PeriodError, match="3,652,058 days long") as ever:
        period("0001-01-01", "9999-12-31", T0)
    assert "68 IAC 10-6-5(d)" in str(ever.value)
    with pytest.raises(PeriodError, match="at most"):
        period("1900-01-01", "2100-12-31", T0)


def test_an_empty_period_and_one_before_the_calendar_are_refused() -> None:
    with pytest.raises(PeriodError, match="the period is empty") as empty:
        period("2026-02-01", "2026-01-01", T0)
    assert empty.value.where == "until"
    with pytest.raises(PeriodError, match="say 'since' as well") as early:
        period(None, "0001-01-01T12:00", T0)
    assert early.value.where == "since"
    with pytest.raises(PeriodError) as late:
        period(None, "9999-12-31T23:59:59.999999-14:00", T0)
    assert late.value.where == "until"
