"""Periods asked of the records: the times people write (and an instant as it is printed,
``at_text``), the longest period answered, and the property's gaming days and shifts (local
times, ``FloorPeriod``).

Every period is half-open, ``[since_us, until_us)`` in microseconds since the epoch (UTC).
A time is a date or an ISO 8601 time with any UTC offset, UTC when it names none; it must
fall within the calendar in UTC (years 1 to 9999), so that every time of a period can be
written back as a date.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Protocol

from controller.refusal import Invalid
from controller.rules.meter_records import METER_RETENTION_YEARS, RETENTION_CLAUSE

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


class Clock(Protocol):
    """What dates a record: the wall time now (``controller.runtime.clock`` keeps the
    process's, never behind its history)."""

    def now_us(self) -> int:
        """Wall time, microseconds since the epoch (UTC)."""
        ...


class PeriodError(Invalid):
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


def at_text(at_us: int) -> str:
    """An instant in UTC to the second, as logs, pages and problems print it."""
    when = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=at_us)
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")


def iso_text(at_us: int) -> str:
    """An instant in UTC as ISO 8601 to the microsecond, as ``parse_instant`` reads it back."""
    when = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=at_us)
    return when.isoformat().replace("+00:00", "Z")


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


# ----------------------------------------------------------------------------- gaming days


@dataclass(frozen=True, slots=True)
class FloorPeriod:
    """A gaming day, or one shift of it: ``[since_us, until_us)``. Its bounds are local times
    of the property, so across a change of daylight saving time a gaming day lasts 23 or 25
    hours (and so does the shift that holds the change)."""

    day: date  # the gaming day, named by the local date it starts on
    shift: int | None  # 1, 2, ... in the order the shifts start within the gaming day
    since_us: int
    until_us: int


# The gaming days a report may name: from the epoch the records count from, to a day whose
# next day (its end) is still in the calendar in every time zone.
FIRST_DAY = date(1970, 1, 1)
LAST_DAY = date(9999, 12, 29)


def parse_day(text: str, *, where: str = "date") -> date:
    """A gaming day as people write it: ``2026-11-23``."""
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise PeriodError(
            f"{text!r} is not a date; write it like 2026-11-23", where=where
        ) from None
    if not FIRST_DAY <= day <= LAST_DAY:
        raise PeriodError(
            f"{day.isoformat()} is outside the records: a gaming day is from "
            f"{FIRST_DAY.isoformat()} to {LAST_DAY.isoformat()}",
            where=where,
        )
    return day


def local_us(day: date, at: time, zone: tzinfo) -> int:
    """The moment the property's clocks show ``at`` on ``day``, in epoch microseconds. A time
    the clocks skip (spring forward) is read with the offset before the change, a time they
    show twice (fall back) as its first showing."""
    moment = datetime.combine(day, at, tzinfo=zone)
    return (moment - _EPOCH) // _MICROSECOND


def gaming_day(day: date, *, starts: time, zone: tzinfo) -> FloorPeriod:
    """The gaming day ``day``: from ``starts`` local time on ``day`` to the same on the next."""
    return FloorPeriod(
        day, None, local_us(day, starts, zone), local_us(day + timedelta(days=1), starts, zone)
    )


def shift_starts_in_day(starts: time, shifts: Sequence[time]) -> list[time]:
    """The shifts' start times in the order they come within a gaming day starting at
    ``starts``: those at or after it that day, then those before it (the next morning)."""
    return sorted(shifts, key=lambda t: (t < starts, t))


def shift_period(
    day: date, number: int, *, starts: time, shifts: Sequence[time], zone: tzinfo
) -> FloorPeriod:
    """Shift ``number`` (1, 2, ...) of gaming day ``day``: from its start to the next shift's
    start (the last shift: to the first shift's start the next gaming day)."""
    order = shift_starts_in_day(starts, shifts)
    if not 1 <= number <= len(order):
        raise PeriodError(
            f"there is no shift {number}: the gaming day has {len(order)} "
            f"(starting at {', '.join(t.strftime('%H:%M') for t in order)})",
            where="shift",
        )

    def start_of(index: int, on: date) -> int:
        t = order[index]
        return local_us(on + timedelta(days=1) if t < starts else on, t, zone)

    since = start_of(number - 1, day)
    last = number == len(order)
    until = start_of(0, day + timedelta(days=1)) if last else start_of(number, day)
    return FloorPeriod(day, number, since, until)


def gaming_day_of(at_us: int, *, starts: time, zone: tzinfo) -> date:
    """The gaming day a moment belongs to."""
    local = (_EPOCH + timedelta(microseconds=at_us)).astimezone(zone)
    day = local.date()
    return day - timedelta(days=1) if local_us(day, starts, zone) > at_us else day


@dataclass(frozen=True, slots=True)
class FloorCalendar:
    """How the property cuts time: its gaming day's start, its shifts' starts, its zone (the
    ``Calendar`` game protection tallies by, ``controller.core.protection``)."""

    day_starts: time
    shift_starts: tuple[time, ...]
    zone: tzinfo

    def day(self, at_us: int) -> date:
        return gaming_day_of(at_us, starts=self.day_starts, zone=self.zone)

    def day_start(self, day: date) -> int:
        return gaming_day(day, starts=self.day_starts, zone=self.zone).since_us

    def day_end(self, at_us: int) -> int:
        """When the gaming day holding ``at_us`` ends (the next one starts)."""
        return self.day_start(self.day(at_us) + timedelta(days=1))

    def shift_start(self, at_us: int) -> int:
        """When the shift holding ``at_us`` started (the gaming day's start if no shift has
        started yet that day)."""
        return self.periods_of(at_us)[2]

    def periods_of(self, at_us: int) -> tuple[date, int, int, int]:
        """``(day, since, until, shift_since, shift_until)`` trimmed to what a caller keeps:
        the gaming day holding ``at_us``, the moment it started, and the start and end of the
        shift holding it, ``(day, day_since, shift_since, shift_until)``."""
        day = self.day(at_us)
        starts = [self.day_start(day), self.day_start(day + timedelta(days=1))]
        for start in shift_starts_in_day(self.day_starts, self.shift_starts):
            on = day + timedelta(days=1) if start < self.day_starts else day
            starts.append(local_us(on, start, self.zone))
        starts.sort()
        since = max(s for s in starts if s <= at_us)
        until = min(s for s in starts if s > at_us)
        return day, starts[0], since, until
