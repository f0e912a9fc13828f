"""The clock a Modbus link keeps its time by: monotonic time, sleeping and timers.

Every timing decision of a link (the pacing gap, an answer's deadline, a connect's deadline,
the retry backoff, the reconnect backoff, the drain after a timeout) reads and waits on one
``LinkClock``, so that a test can hand a link a clock of its own and check those decisions on
virtual time. Links use the event loop's clock unless given another.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "LinkClock", "SystemLinkClock", "Timer"]


class Timer(Protocol):
    """A callback set for a time (``asyncio.TimerHandle`` is one)."""

    def when(self) -> float: ...

    def cancel(self) -> None: ...


class LinkClock(Protocol):
    """Monotonic seconds, a sleep and a timer, all on the same time line."""

    def monotonic(self) -> float: ...

    def sleep(self, seconds: float, /) -> Awaitable[None]: ...

    def call_at(self, when: float, callback: Callable[[], object], /) -> Timer: ...


class SystemLinkClock:
    """The event loop's clock: ``time.monotonic``, ``asyncio.sleep`` and the loop's timers
    (an asyncio loop keeps its time by ``time.monotonic``)."""

    __slots__ = ()

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float, /) -> Awaitable[None]:
        return asyncio.sleep(seconds)

    def call_at(self, when: float, callback: Callable[[], object], /) -> Timer:
        return asyncio.get_running_loop().call_at(when, callback)


SYSTEM_CLOCK: LinkClock = SystemLinkClock()
