"""A ``LinkClock`` on virtual time, for checking a link's timing exactly.

Time stands still until the test moves it (``advance``): a request waits for its real answer
however long that takes in real time, and its deadline passes only when the test says so.
With ``auto_sleep`` a sleep moves the time on by itself (as if the link had the bus to itself
meanwhile), so pacing and backoffs cost no real time; deadlines still wait for ``advance``.
Every sleep asked for is kept in ``sleeps``. Times in the tests are binary fractions
(0.125, 0.0625), so sums of them are exact.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable

START = 1000.0


class VirtualTimer:
    __slots__ = ("_when", "callback", "cancelled")

    def __init__(self, when: float, callback: Callable[[], object]) -> None:
        self._when = when
        self.callback = callback
        self.cancelled = False

    def when(self) -> float:
        return self._when

    def cancel(self) -> None:
        self.cancelled = True


class VirtualClock:
    def __init__(self, *, auto_sleep: bool = False, start: float = START) -> None:
        self.now = start
        self.auto_sleep = auto_sleep
        self.sleeps: list[float] = []
        self._timers: list[tuple[float, int, VirtualTimer]] = []
        self._order = itertools.count()

    def monotonic(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[[], object], /) -> VirtualTimer:
        timer = VirtualTimer(when, callback)
        heapq.heappush(self._timers, (when, next(self._order), timer))
        return timer

    async def sleep(self, seconds: float, /) -> None:
        self.sleeps.append(seconds)
        if seconds <= 0:
            await asyncio.sleep(0)
        elif self.auto_sleep:
            self._fire_until(self.now + seconds)
            await asyncio.sleep(0)
        else:
            woken = asyncio.get_running_loop().create_future()
            timer = self.call_at(self.now + seconds, lambda: woken.done() or woken.set_result(None))
            try:
                await woken
            finally:
                timer.cancel()

    def pending(self) -> float | None:
        """When the next timer or sleep is due; None when nothing waits for the time."""
        while self._timers and self._timers[0][2].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0][0] if self._timers else None

    async def advance(self, seconds: float) -> None:
        """Move the time on by ``seconds``, waking whatever falls due on the way, in order, and
        letting what it wakes run (and set new timers) before the time moves further."""
        target = self.now + seconds
        while True:
            await settle()
            due = self.pending()
            if due is None or due > target:
                break
            self._fire_next()
        self.now = max(self.now, target)
        await settle()

    def _fire_until(self, target: float) -> None:
        while (due := self.pending()) is not None and due <= target:
            self._fire_next()
        self.now = max(self.now, target)

    def _fire_next(self) -> None:
        when, _, timer = heapq.heappop(self._timers)
        self.now = max(self.now, when)
        timer.callback()


async def settle() -> None:
    """Let every task that can run without I/O or time run."""
    for _ in range(20):
        await asyncio.sleep(0)


async def until(condition: Callable[[], bool], within_s: float = 5.0) -> None:
    """Wait in real time for what real I/O brings (a request sent, an answer come)."""
    give_up = time.monotonic() + within_s
    while not condition():
        assert time.monotonic() < give_up, "it did not happen in real time"
        await asyncio.sleep(0.002)
