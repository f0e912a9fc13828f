"""Failed sign-ins slow down whoever keeps guessing, by username and by client address.

After the n-th failure in a row the next attempt for the same key is refused until
``first_delay_s * 2**(n-1)`` seconds have passed (at most ``max_delay_s``); a success resets the
key. Memory is bounded: the least recently failed keys are forgotten first, and a key quiet for
``forget_after_s`` starts afresh. Pure: the clock is passed in, so tests need no sleeping.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(slots=True)
class _Failures:
    count: int
    not_before: float


class LoginThrottle:
    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        first_delay_s: float = 1.0,
        max_delay_s: float = 30.0,
        forget_after_s: float = 900.0,
        max_keys: int = 10_000,
    ) -> None:
        if not 0 < first_delay_s <= max_delay_s:
            raise ValueError("the first delay must be positive and at most the longest delay")
        if max_keys < 1:
            raise ValueError("the throttle must remember at least one key")
        self._clock = clock
        self.first_delay_s = first_delay_s
        self.max_delay_s = max_delay_s
        self.forget_after_s = forget_after_s
        self.max_keys = max_keys
        self._keys: OrderedDict[str, _Failures] = OrderedDict()

    def __len__(self) -> int:
        return len(self._keys)

    def _current(self, key: str, now: float) -> _Failures | None:
        entry = self._keys.get(key)
        if entry is not None and now - entry.not_before > self.forget_after_s:
            del self._keys[key]
            return None
        return entry

    def wait_s(self, *keys: str) -> float:
        """Seconds before another attempt is allowed for all of ``keys`` (0: go ahead)."""
        now = self._clock()
        waits = [0.0]
        for key in keys:
            entry = self._current(key, now)
            if entry is not None:
                waits.append(entry.not_before - now)
        return max(waits)

    def failed(self, *keys: str) -> None:
        now = self._clock()
        for key in keys:
            entry = self._current(key, now)
            count = 1 if entry is None else entry.count + 1
            # 2**(count-1) grows without bound; the cap is reached long before it matters.
            delay = min(self.max_delay_s, self.first_delay_s * 2 ** min(count - 1, 62))
            self._keys[key] = _Failures(count, now + delay)
            self._keys.move_to_end(key)
        while len(self._keys) > self.max_keys:
            self._keys.popitem(last=False)

    def succeeded(self, *keys: str) -> None:
        for key in keys:
            self._keys.pop(key, None)

    def failures(self, key: str) -> int:
        entry = self._current(key, self._clock())
        return 0 if entry is None else entry.count
