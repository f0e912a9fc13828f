"""Gaming days and shifts in the property's local time, across changes of daylight saving."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from controller.periods import (
    PeriodError,
    gaming_day,
    gaming_day_of,
    parse_day,
    shift_period,
    shift_starts_in_day,
)

NEW_YORK = ZoneInfo("America/New_York")
INDIANAPOLIS = ZoneInfo("America/Indiana/Indianapolis")
SIX = time(6, 0)
SHIFTS = (time(6, 0), time(14, 0), time(22, 0))
HOUR_US = 3_600_000_000


def _us(*args: int) -> int:
    return int(datetime(*args, tzinfo=UTC).timestamp()) * 1_000_000


def test_an_ordinary_gaming_day_is_24_hours_from_its_local_start() -> None:
    day = gaming_day(date(2026, 11, 23), starts=SIX, zone=INDIANAPOLIS)
    assert day.since_us == _us(2026, 11, 23, 11)  # 06:00 EST
    assert day.until_us - day.since_us == 24 * HOUR_US


@pytest.mark.parametrize("zone", [NEW_YORK, INDIANAPOLIS])
def test_the_days_of_the_clock_changes_last_23_and_25_hours(zone: ZoneInfo) -> None:
    spring = gaming_day(date(2026, 3, 7), starts=SIX, zone=zone)  # holds 8 March 02:00
    assert spring.since_us == _us(2026, 3, 7, 11)  # 06:00 EST
    assert spring.until_us == _us(2026, 3, 8, 10)  # 06:00 EDT
    assert spring.until_us - spring.since_us == 23 * HOUR_US
    fall = gaming_day(date(2026, 10, 31), starts=SIX, zone=zone)  # holds 1 November 02:00
    assert fall.until_us - fall.since_us == 25 * HOUR_US
    # The night shift holds the change; the others keep their 8 hours.
    night = shift_period(date(2026, 10, 31), 3, starts=SIX, shifts=SHIFTS, zone=zone)
    assert (night.since_us, night.until_us) == (_us(2026, 11, 1, 2), fall.until_us)
    assert night.until_us - night.since_us == 9 * HOUR_US
    day_shift = shift_period(date(2026, 3, 7), 1, starts=SIX, shifts=SHIFTS, zone=zone)
    assert day_shift.until_us - day_shift.since_us == 8 * HOUR_US
    assert (
        shift_period(date(2026, 3, 7), 3, starts=SIX, shifts=SHIFTS, zone=zone).until_us
        - shift_period(date(2026, 3, 7), 3, starts=SIX, shifts=SHIFTS, zone=zone).since_us
        == 7 * HOUR_US
    )


def test_shifts_tile_the_gaming_day_in_the_order_they_start() -> None:
    # Shifts named out of order, one of them after midnight: the day's order is from its start.
    shifts = (time(2, 0), time(10, 0), time(18, 0))
    assert shift_starts_in_day(SIX, shifts) == [time(10, 0), time(18, 0), time(2, 0)]
    day = date(2026, 11, 23)
    parts = [shift_period(day, n, starts=SIX, shifts=shifts, zone=NEW_YORK) for n in (1, 2, 3)]
    assert parts[0].since_us == _us(2026, 11, 23, 15)  # 10:00 EST
    assert [p.until_us for p in parts[:-1]] == [p.since_us for p in parts[1:]]
    assert parts[-1].until_us == _us(2026, 11, 24, 15)  # the next gaming day's first shift
    with pytest.raises(PeriodError, match="there is no shift 4"):
        shift_period(day, 4, starts=SIX, shifts=shifts, zone=NEW_YORK)


def test_a_moment_belongs_to_the_gaming_day_started_before_it() -> None:
    at_five = _us(2026, 11, 24, 10)  # 05:00 EST on the 24th: still the 23rd's gaming day
    assert gaming_day_of(at_five, starts=SIX, zone=NEW_YORK) == date(2026, 11, 23)
    assert gaming_day_of(at_five + HOUR_US, starts=SIX, zone=NEW_YORK) == date(2026, 11, 24)


def test_a_day_is_written_as_a_date() -> None:
    assert parse_day(" 2026-11-23 ") == date(2026, 11, 23)
    with pytest.raises(PeriodError, match="write it like 2026-11-23") as refused:
        parse_day("23/11/2026")
    assert refused.value.where == "date"
    for outside in ("1969-12-31", "9999-12-31"):
        with pytest.raises(PeriodError, match="outside the records"):
            parse_day(outside)
    # The last day a report may name ends within the calendar, however far east the zone.
    last = parse_day("9999-12-29")
    assert gaming_day(last, starts=SIX, zone=ZoneInfo("Pacific/Kiritimati")).until_us > 0
    assert gaming_day(parse_day("1970-01-01"), starts=SIX, zone=NEW_YORK).since_us > 0
