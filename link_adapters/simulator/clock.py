"""The clocks a simulated floor can deal on: the wall clock, or a virtual one a test steps.

A floor reads its clock through a plain ``Callable[[], int]`` of microseconds, so anything
that tells the time that way will do. ``VirtualClock`` stands still until told to move:
with it (and ``SimFloor(autodeal=False)``) the rounds a test sees are exactly the rounds it
asked for, whatever the machine's load.
"""

from __future__ import annotations

import math
import time
from typing import Final

__all__ = ["VirtualClock", "wall_clock_us"]

_US_PER_S: Final = 1_000_000
_MAX_US: Final = (1 << 63) - 1


def wall_clock_us() -> int:
    """Microseconds since the Unix epoch."""
    return time.time_ns() // 1_000


class VirtualClock:
    """A clock that moves only when ``advance`` is called; pass ``clock.now_us`` to a floor."""

    def __init__(self, start_us: int = 1_767_225_600_000_000) -> None:
        # The default start is 2026-01-01 00:00 UTC: a plausible date, the same every run.
        self._now_us = _check_us("start_us", start_us)

    def now_us(self) -> int:
        return self._now_us

    def advance(self, seconds: float) -> int:
        """Move on by ``seconds`` (whole microseconds, rounded); returns the new time."""
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not math.isfinite(seconds)
            or seconds < 0
        ):
            raise ValueError(f"seconds must be a number of seconds, 0 or more, got {seconds!r}")
        return self.advance_us(round(seconds * _US_PER_S))

    def advance_us(self, us: int) -> int:
        """Move on by ``us`` microseconds; returns the new time. A clock never goes back."""
        us = _check_us("us", us)
        self._now_us = _check_us("the clock", self._now_us + us)
        return self._now_us


def _check_us(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int of microseconds, got {value!r}")
    if not 0 <= value <= _MAX_US:
        raise ValueError(f"{name} must be between 0 and {_MAX_US} microseconds, got {value}")
    return value
