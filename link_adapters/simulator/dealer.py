"""When simulated tables deal: every table's round schedule on the floor's clock.

Each table has its own schedule, drawn from its own random generator, so a seed fixes every
table's timing. A table with the late-bet fault (``faults.TableFaults.late_bets_per_round``)
deals its rounds in phases an eighth of the mean interval apart (bets, lockout, late bet,
deal: ``SimTable.take_bets`` ...), so that a controller polling it sees a bet come in while
the bets are locked out; every other table deals each round at once (``play_round``).

Rounds are dealt by ``deal_forever`` (a background task on the wall clock, or
any clock) or by explicit steps (``deal_due`` with ``catch_up``, after moving a
``VirtualClock``), which deal exactly the rounds the clock has reached.
"""

from __future__ import annotations

import asyncio
import heapq
import math
import random
from collections.abc import Callable
from typing import Final, NamedTuple

from link_adapters.simulator.table import SimTable
from link_adapters.simulator.table_types import RoundRecord

__all__ = [
    "DEFAULT_ROUNDS_PER_SECOND",
    "MAX_ROUNDS_PER_SECOND",
    "Dealer",
    "DealtRound",
]

DEFAULT_ROUNDS_PER_SECOND: Final = 1 / 60  # a live table deals about one round a minute
MAX_ROUNDS_PER_SECOND: Final = 10_000.0

_MAX_SLEEP_S: Final = 0.5  # the dealer looks at the clock at least this often
_MAX_BEHIND_US: Final = 1_000_000  # a table this late skips the rounds it missed
_MAX_ROUNDS_PER_PASS: Final = 10_000  # then let the servers answer before dealing on


class DealtRound(NamedTuple):
    """One round a floor dealt: where, and what the table did."""

    gateway: str
    unit: int
    record: RoundRecord


class _Scheduled(NamedTuple):
    gateway: str
    unit: int
    table: SimTable
    rng: random.Random  # the table's schedule, apart from its cards
    phased: bool  # deals in phases (a table with late bets)


# The phases of a round dealt in phases, in order (a heap entry's step).
_BETS, _LOCKOUT, _LATE_BET, _DEAL = range(4)


class Dealer:
    """The round schedule of every table of a floor, in the order the tables were added."""

    def __init__(self, rounds_per_second: float, now_us: Callable[[], int]) -> None:
        if (
            isinstance(rounds_per_second, bool)
            or not isinstance(rounds_per_second, int | float)
            or not math.isfinite(rounds_per_second)
            or not 0 < rounds_per_second <= MAX_ROUNDS_PER_SECOND
        ):
            raise ValueError(
                f"rounds_per_second must be a number above 0 and at most "
                f"{MAX_ROUNDS_PER_SECOND:g}, got {rounds_per_second!r}"
            )
        self._period_us = 1_000_000 / rounds_per_second
        # Three gaps: the deal comes well before the next round's bets (half an interval
        # at the soonest).
        self._phase_us = max(1, round(self._period_us / 8))
        self._now_us = now_us
        self._tables: list[_Scheduled] = []
        # (time, index into _tables, phase): the next round's bets, or the next phase of a
        # round being dealt in phases.
        self._heap: list[tuple[int, int, int]] = []

    def add(self, gateway: str, unit: int, table: SimTable, schedule: random.Random) -> None:
        """A table dealing on ``schedule`` (its own generator); before ``schedule_from``."""
        faults = table.config.faults
        phased = faults is not None and faults.late_bets_per_round > 0
        self._tables.append(_Scheduled(gateway, unit, table, schedule, phased))

    @property
    def scheduled(self) -> bool:
        return bool(self._heap)

    def schedule_from(self, now: int) -> None:
        """Every table's first round, within one mean interval of ``now``."""
        heap = []
        for index, entry in enumerate(self._tables):
            heap.append((now + round(self._period_us * entry.rng.random()), index, _BETS))
        heapq.heapify(heap)
        self._heap = heap

    def _interval_us(self, entry: _Scheduled) -> int:
        # Half to one and a half times the mean: tables do not deal in lockstep.
        return max(1, round(self._period_us * (0.5 + entry.rng.random())))

    def deal_due(self, now: int, *, catch_up: bool) -> list[DealtRound]:
        """Deal the rounds the schedule holds up to ``now``, in time order.

        With ``catch_up`` every one of them. Without (the background dealer) at most
        ``_MAX_ROUNDS_PER_PASS`` are dealt and a table more than ``_MAX_BEHIND_US`` late
        skips the rounds it missed.
        """
        heap = self._heap
        dealt: list[DealtRound] = []
        while heap and heap[0][0] <= now and (catch_up or len(dealt) < _MAX_ROUNDS_PER_PASS):
            due, index, phase = heapq.heappop(heap)
            entry = self._tables[index]
            table = entry.table
            if entry.phased:
                if phase != _BETS and not table.round_open:
                    # The table lost the round (a power cycle): it bets again next round.
                    heapq.heappush(heap, (due + self._interval_us(entry), index, _BETS))
                    continue
                if phase == _BETS and table.round_open:
                    phase = _DEAL  # rescheduled mid-round (the clock went back): deal it
            if entry.phased and phase != _DEAL:
                if phase == _BETS:
                    table.take_bets(due)
                elif phase == _LOCKOUT:
                    table.lock_out(due)
                else:
                    table.take_late_bet(due)
                heapq.heappush(heap, (due + self._phase_us, index, phase + 1))
                continue
            if entry.phased:
                table.lock_out(due)  # already, unless the round is dealt early (above)
                record = table.deal(due)
                started = due - 3 * self._phase_us
            else:
                record = table.play_round(due)
                started = due
            dealt.append(DealtRound(entry.gateway, entry.unit, record))
            next_us = started + self._interval_us(entry)
            if not catch_up and now - next_us > _MAX_BEHIND_US:
                # The loop stalled: a real dealer does not catch up at machine speed.
                next_us = now + self._interval_us(entry)
            heapq.heappush(heap, (next_us, index, _BETS))
        return dealt

    async def deal_forever(self) -> None:
        """Deal as the clock reaches each round; runs until cancelled (after scheduling)."""
        while True:
            now = self._now_us()
            if self._heap and self._heap[0][0] - now > 2 * self._period_us:
                self.schedule_from(now)  # the clock went back
            self.deal_due(now, catch_up=False)
            wait_us = max(0, self._heap[0][0] - self._now_us())
            await asyncio.sleep(min(wait_us / 1_000_000, _MAX_SLEEP_S))
