"""The one clock. The pure core never reads it; services read it and pass times in."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now_us(self) -> int:
        """Wall time, microseconds since the epoch (UTC)."""
        ...


class SystemClock:
    def now_us(self) -> int:
        return time.time_ns() // 1_000


class FixedClock:
    """A clock that moves only when told: for tests and replays."""

    def __init__(self, start_us: int) -> None:
        self._now = start_us

    def now_us(self) -> int:
        return self._now

    def advance(self, us: int) -> int:
        self._now += us
        return self._now


US_PER_SECOND = 1_000_000
US_PER_DAY = 86_400 * US_PER_SECOND
