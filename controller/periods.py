"""Periods asked of the records: the times people write, and the longest period answered.

Every period is half-open, ``[since_us, until_us)`` in microseconds since the epoch (UTC).
A time is a date or an ISO 8601 time with any UTC offset, UTC when it names none; it must
fall within the calendar in UTC (years 1 to 9999), so that every time of a period can be
written back as a date.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from controller.rules.records import METER_RETENTION_YEARS, RETENTION_CLAUSE

DAY_US = 86_400_000_000
# 68 IAC 10-6-5(d), 10-8-5(d): meter records are kept five years. One period answers for all
# of them at once (five years of 366 days, and a week to begin on a Monday: a weekly report
# of at most 263 weeks); a longer one is asked in parts.
MAX_SPAN_DAYS = METER_RETENTION_YEARS * 366 + 7
MAX_SPAN_US = MAX_SPAN_DAYS * DAY_US
DEFAULT_SPAN_US = DAY_US  # 'since' left out: the day before 'until'

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
EARLIEST_US = (datetime.min.replace(tzinfo=UTC) - _EPOCH) // _MICROSECOND
LATEST_US = (datetime.max.replace(tzinfo=UTC) - _EPOCH) // _MICROSECOND


class PeriodError(ValueError):
    """A time or period that cannot be answered; ``where`` names the part to blame."""

    def __init__(self, problem: str, *, where: str = "period") -> None:
        super().__init__(problem)
        self.where = where


def parse_instant(text: str, *, where: str = "time") -> int:
    """``2026-01-31`` or an ISO 8601 time (UTC unless it says otherwise) -> epoch microseconds."""
    try:
        dt = datetime.fromisoformat(text.strip())
    except ValueError:
        raise PeriodError(
            f"{text!r} is not a date or time; write it like 2026-01-31 or 2026-01-31T08:00",
            where=where,
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    at_us = (dt - _EPOCH) // _MICROSECOND  # exact whatever the offset: no overflow here
    if not EARLIEST_US <= at_us <= LATEST_US:
        raise PeriodError(
            f"{text!r} is {'before' if at_us < EARLIEST_US else 'after'} the calendar in UTC; "
            "a time is from 0001-01-01 to 9999-12-31 UTC",
            where=where,
        )
    return at_us


def check_period(since_us: int, until_us: int) -> None:
    if until_us <= since_us:
        raise PeriodError("the period is empty: 'until' must be after 'since'", where="until")


def period(since: str | None, until: str | None, now_us: int) -> tuple[int, int]:
    """The period ``since`` to ``until`` as people wrote them (``until`` left out: now;
    ``since`` left out: a day before ``until``), at most ``MAX_SPAN_DAYS`` long."""
    until_us = parse_instant(until, where="until") if until else now_us
    since_us = parse_instant(since, where="since") if since else until_us - DEFAULT_SPAN_US
    if since_us < EARLIEST_US:
        raise PeriodError(
            "a day before 'until' is before the calendar; say 'since' as well", where="since"
        )
    check_period(since_us, until_us)
    if until_us - since_us > MAX_SPAN_US:
        days = -(-(until_us - since_us) // DAY_US)
        raise PeriodError(
            f"the period is {days:,} days long; at most {MAX_SPAN_DAYS:,} days "
            f"(the {METER_RETENTION_YEARS} years meter records are kept, {RETENTION_CLAUSE}, "
            "and a week) are answered at once: ask for a later 'since', or in parts",
            where="since",
        )
    return since_us, until_us
