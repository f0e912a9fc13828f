"""Wall time that can be stopped, for a simulated floor whose dealers a test stops and starts.

A module of its own, light to import: a floor's own process needs it and nothing else of the
tests' harness."""

from __future__ import annotations

import time

__all__ = ["PausableClock"]


class PausableClock:
    """Wall time that can be stopped, so the simulated dealers stop dealing."""

    def __init__(self) -> None:
        self._offset = 0
        self._paused_at: int | None = None

    @staticmethod
    def _wall() -> int:
        return time.time_ns() // 1000

    def now_us(self) -> int:
        return (self._paused_at if self._paused_at is not None else self._wall()) - self._offset

    def pause(self) -> None:
        if self._paused_at is None:
            self._paused_at = self._wall()

    def resume(self) -> None:
        if self._paused_at is not None:
            self._offset += self._wall() - self._paused_at
            self._paused_at = None
