"""The one clock. The pure core never reads it; services read it and pass times in.

History times come from ``Clock.now_us``. The system's wall clock can step backwards (an
operator setting the date, NTP correcting a fast clock, a server booting with a bad RTC).
A meter history whose times run backwards cannot be read in order by an auditor, and
68 IAC 10-6-5(b)-(c) and 10-8-5(b)-(c) judge every entry against "a previous entry"; the
display phases of 10-6-5(g)-(i) are durations. So ``SystemClock`` never goes backwards: when
the wall clock steps back it holds, keeps counting at nine tenths of the monotonic clock's
pace and rejoins the wall clock once it has caught up (a minute's step in ten minutes, an
hour's in ten hours). Durations measured between its readings stay within a tenth of the
truth and are never negative; every step is logged and counted. A step forward is followed
at once. The link engine also holds every chain's times at its newest entry
(``LinkState.last_at_us``), so neither another clock nor a restart can take them back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

US_PER_SECOND = 1_000_000
US_PER_DAY = 86_400 * US_PER_SECOND

# While ahead of the wall clock, the clock runs at (SLEW_DIVISOR - 1) / SLEW_DIVISOR of the
# monotonic pace.
SLEW_DIVISOR = 10
# A wall clock that falls behind its own pace by more than this has stepped (logged, counted);
# less is the jitter of reading two clocks one after the other.
STEP_TOLERANCE_US = 100_000


def _wall_us() -> int:
    return time.time_ns() // 1_000


def _monotonic_us() -> int:
    return time.monotonic_ns() // 1_000


class SystemClock:
    """The system's wall clock, held when it steps backwards (see the module's docstring).

    ``wall_us`` and ``monotonic_us`` are the two sources, replaceable for tests that step the
    wall clock.
    """

    def __init__(
        self,
        *,
        wall_us: Callable[[], int] = _wall_us,
        monotonic_us: Callable[[], int] = _monotonic_us,
    ) -> None:
        self._wall = wall_us
        self._monotonic = monotonic_us
        self._last: int | None = None  # the last time handed out
        self._last_wall = 0
        self._last_mono = 0
        self.steps_back = 0  # how many times the wall clock stepped backwards
        self.largest_step_back_us = 0

    @property
    def ahead_us(self) -> int:
        """How far the clock is ahead of the wall clock now (0 once it has caught up)."""
        return max(0, (self._last or 0) - self._wall())

    def now_us(self) -> int:
        wall, mono = self._wall(), self._monotonic()
        last = self._last
        if last is None:
            self._last, self._last_wall, self._last_mono = wall, wall, mono
            return wall
        elapsed = max(0, mono - self._last_mono)
        step = self._last_wall + elapsed - wall
        if step > STEP_TOLERANCE_US:
            self.steps_back += 1
            self.largest_step_back_us = max(self.largest_step_back_us, step)
            log.warning(
                "the system clock stepped back %.3f s: history times hold and rejoin it at "
                "1/%d of the pace",
                step / US_PER_SECOND,
                SLEW_DIVISOR,
            )
        now = max(wall, last + elapsed - elapsed // SLEW_DIVISOR)
        self._last, self._last_wall, self._last_mono = now, wall, mono
        return now

    def not_before(self, at_us: int) -> None:
        """Never hand out a time before ``at_us`` (the newest recorded time, at start-up)."""
        current = self.now_us()
        if at_us > current:
            log.warning(
                "the system clock is %.3f s behind the newest recorded time: history times "
                "hold and rejoin it at 1/%d of the pace",
                (at_us - current) / US_PER_SECOND,
                SLEW_DIVISOR,
            )
            self._last = at_us


class FixedClock:
    """A clock that moves only when told: for tests and replays."""

    def __init__(self, start_us: int) -> None:
        self._now = start_us

    def now_us(self) -> int:
        return self._now

    def advance(self, us: int) -> int:
        self._now += us
        return self._now
