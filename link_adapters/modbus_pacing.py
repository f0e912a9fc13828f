"""Pacing a link: the least time between the end of one request and the start of the next.

On an RS-485 bus that is the RTU inter-frame gap; a slow gateway or controller may need more,
on the whole link or for one unit.
"""

from __future__ import annotations

import math

from link_adapters.link_clock import LinkClock

__all__ = ["Pacer"]


class Pacer:
    """Minimum gaps between requests: on the whole link, and optionally per unit.

    Used under the link's lock, so the gap measured from the last request holds for
    whichever unit is addressed next.
    """

    __slots__ = ("_clock", "_gap_s", "_last_end", "_unit_gap_s", "_unit_last_end", "paced")

    def __init__(self, gap_s: float, clock: LinkClock) -> None:
        self._clock = clock
        self._gap_s = gap_s
        self._last_end = -math.inf
        self._unit_gap_s: dict[int, float] = {}
        self._unit_last_end: dict[int, float] = {}
        # Any gap to keep at all: without one (a TCP gateway) requests are not timed.
        self.paced = gap_s > 0

    @property
    def gap_s(self) -> float:
        return self._gap_s

    def set_unit_gap(self, unit: int, seconds: float) -> None:
        if seconds:
            self._unit_gap_s[unit] = seconds
        else:
            self._unit_gap_s.pop(unit, None)
            self._unit_last_end.pop(unit, None)
        self.paced = self._gap_s > 0 or bool(self._unit_gap_s)

    def delay(self, unit: int) -> float:
        """Seconds to wait before the next request to ``unit`` may start (0 or less: none)."""
        ready_at = self._last_end + self._gap_s
        if unit in self._unit_gap_s:
            unit_end = self._unit_last_end.get(unit, -math.inf)
            ready_at = max(ready_at, unit_end + self._unit_gap_s[unit])
        return ready_at - self._clock.monotonic()

    def done(self, unit: int) -> None:
        self._last_end = self._clock.monotonic()
        if unit in self._unit_gap_s:
            self._unit_last_end[unit] = self._last_end
