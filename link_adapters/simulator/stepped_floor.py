"""A floor of simulated tables dealt on a simulated clock and read as a controller reads them,
with no network: for benchmarks and tests that need many rounds fast.

Each table deals one round every ``round_us``, in phases a poll can see between (``SimTable``:
bets, lockout, a late bet where the table has that fault, deal), ``phase_us`` apart. Each
reading is the table's registers encoded as its Modbus server would serve them
(``registers.encode_block``) and decoded as the controller decodes a poll
(``profile_decoding.decode_words``, with the table's profile, ``reference-v1`` or
``reference-v2``). Like the controller, the floor writes the heartbeat at every poll (the
progressive is never disabled) and acknowledges the head hit of every reading through the
table's register writes (``registers.apply_write``), so each hit is read as the head once and
then popped.

Two ways to poll: every table every ``poll_us`` (``phases_only=False``, as a controller
polls), or only right after each phase of a table's round, plus every ``poll_us`` while hits
wait in its FIFO (``phases_only=True``): a reading between two phases would repeat the one
before it, so nothing a check needs is lost and a run deals many times as many rounds.
Readings come in time order over the whole floor (tables in the order given at the same
instant); each table's rounds are staggered over one ``round_us``.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Final, NamedTuple

from link_adapters.profile_decoding import decode_words, encode_u32
from link_adapters.profile_files import load_profile
from link_adapters.profile_map import Profile
from link_adapters.reading import TableRegisters
from link_adapters.register_map import next_heartbeat
from link_adapters.simulator.registers import apply_write, encode_block
from link_adapters.simulator.table import SimTable
from link_adapters.simulator.table_types import RoundRecord, SimTableConfig

__all__ = [
    "DEFAULT_PHASE_US",
    "DEFAULT_POLL_US",
    "DEFAULT_ROUND_US",
    "FloorReading",
    "SteppedFloor",
    "TableTally",
]

DEFAULT_ROUND_US: Final = 60_000_000  # a live table deals about one round a minute
DEFAULT_POLL_US: Final = 1_000_000
DEFAULT_PHASE_US: Final = 5_000_000
DEFAULT_START_US: Final = 1_767_225_600_000_000  # 2026-01-01 00:00 UTC, as VirtualClock
_PROFILES: Final = {1: "reference-v1", 2: "reference-v2"}

# The phases of a round, in order; a table without the late-bet fault skips LATE_BET.
BETS, LOCKOUT, LATE_BET, DEAL = range(4)


class FloorReading(NamedTuple):
    """One poll of one table: which, when, and its registers decoded."""

    table_id: str
    at_us: int
    registers: TableRegisters


@dataclass(slots=True)
class TableTally:
    """What one table of the floor did, counted from its rounds as they were dealt: the
    truth a check's findings are measured against."""

    rounds: int = 0
    side_bets: int = 0  # seats with a side bet, over the rounds (late bets included)
    hits: int = 0  # hits queued, false claims included
    rigged_hands: int = 0
    late_bets: int = 0
    false_claims: int = 0
    unreported_hits: int = 0

    def add(self, record: RoundRecord) -> None:
        self.rounds += 1
        self.side_bets += len(record.bet_seats)
        self.hits += len(record.hits)
        faults = record.faults
        if faults is not None:
            self.rigged_hands += faults.rigged_seat is not None
            self.late_bets += faults.late_bet_seat is not None
            self.false_claims += faults.false_claim_seat is not None
            self.unreported_hits += len(faults.unreported_seats)


class _Run:
    """One table of the floor and where it is in its rounds."""

    __slots__ = (
        "ack_at",
        "heartbeat",
        "index",
        "next_phase",
        "offsets",
        "phases",
        "profile",
        "round_start",
        "started",
        "table",
        "table_id",
        "tally",
        "to_deal",
    )

    def __init__(
        self, index: int, table_id: str, table: SimTable, profile: Profile, first_round: int
    ) -> None:
        self.index = index
        self.table_id = table_id
        self.table = table
        self.profile = profile
        self.ack_at = profile.ack_address
        self.heartbeat = 0
        faults = table.config.faults
        late = faults is not None and faults.late_bets_per_round > 0
        self.phases = (BETS, LOCKOUT, LATE_BET, DEAL) if late else (BETS, LOCKOUT, DEAL)
        self.offsets: tuple[int, ...] = ()
        self.next_phase = 0  # index into phases
        self.round_start = first_round
        self.started = False
        self.tally = TableTally()
        self.to_deal = 0

    def phase_at(self) -> int:
        return self.round_start + self.offsets[self.next_phase]


class SteppedFloor:
    """Simulated tables dealt on a simulated clock and polled as a controller polls them.

    ``tables``: (table id, config) pairs, ids unique. ``seed`` fixes every table's cards (each
    table draws from its own generator, seeded by ``seed`` and its id, so adding a table
    changes no other table's rounds). ``round_us``: one round per table every so long.
    ``poll_us``: the poll interval; ``phase_us``: the time between a round's phases (bets,
    lockout, late bet, deal), a multiple of ``poll_us`` so that every phase is polled.
    ``phases_only``: poll a table only right after each phase (see the module docstring).
    ``keep_records``: leave every dealt ``RoundRecord`` in ``table(table_id).records`` (a long
    run would hold every round in memory; ``tally`` counts them either way).
    """

    def __init__(
        self,
        tables: Sequence[tuple[str, SimTableConfig]],
        seed: int,
        *,
        round_us: int = DEFAULT_ROUND_US,
        poll_us: int = DEFAULT_POLL_US,
        phase_us: int = DEFAULT_PHASE_US,
        phases_only: bool = False,
        start_us: int = DEFAULT_START_US,
        keep_records: bool = False,
    ) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed must be an int, got {seed!r}")
        for name, value in (("round_us", round_us), ("poll_us", poll_us), ("phase_us", phase_us)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int of microseconds, got {value!r}")
        if isinstance(start_us, bool) or not isinstance(start_us, int) or start_us < 0:
            raise ValueError(f"start_us must be microseconds, 0 or more, got {start_us!r}")
        if phase_us % poll_us or round_us % poll_us:
            raise ValueError(
                f"round_us ({round_us}) and phase_us ({phase_us}) must be multiples of poll_us "
                f"({poll_us}), so that every phase falls on a poll"
            )
        if 4 * phase_us > round_us:
            raise ValueError(
                f"a round's phases take 3 x phase_us and leave as long again for its hits to "
                f"be read: phase_us ({phase_us}) must be at most a quarter of round_us "
                f"({round_us})"
            )
        if not isinstance(phases_only, bool) or not isinstance(keep_records, bool):
            raise ValueError("phases_only and keep_records must be bools")
        if not tables:
            raise ValueError("a floor needs at least one table")
        self._round_us = round_us
        self._poll_us = poll_us
        self._phases_only = phases_only
        self._keep_records = keep_records
        self._now_us = start_us
        profiles: dict[int, Profile] = {}
        runs: list[_Run] = []
        seen: set[str] = set()
        for index, entry in enumerate(tables):
            table_id, config = entry
            if not isinstance(table_id, str) or not table_id:
                raise ValueError(f"a table id must be a non-empty string, got {table_id!r}")
            if table_id in seen:
                raise ValueError(f"table id {table_id!r} is given twice")
            seen.add(table_id)
            if not isinstance(config, SimTableConfig):
                raise ValueError(f"table {table_id}: config must be a SimTableConfig")
            version = config.map_version
            if version not in profiles:
                profiles[version] = load_profile(_PROFILES[version])
            # A string seed is hashed the same on every run (unlike hash() of a string).
            table = SimTable(config, random.Random(f"{seed}/{table_id}"))
            # Staggered over one round, on the poll grid, from the poll after the first.
            offset = poll_us + index * round_us // len(tables) // poll_us * poll_us
            run = _Run(index, table_id, table, profiles[version], start_us + offset)
            # The deal comes 3 x phase_us after the bets, the phases between one apart.
            between = len(run.phases) - 1
            run.offsets = (*(i * phase_us for i in range(between)), 3 * phase_us)
            runs.append(run)
        self._runs = runs
        self._by_id = MappingProxyType({run.table_id: run for run in runs})

    @property
    def now_us(self) -> int:
        """The time of the last reading (the start, before any)."""
        return self._now_us

    @property
    def table_ids(self) -> tuple[str, ...]:
        return tuple(self._by_id)

    def table(self, table_id: str) -> SimTable:
        return self._by_id[table_id].table

    def tally(self, table_id: str) -> TableTally:
        """What the table did so far (a copy)."""
        return replace(self._by_id[table_id].tally)

    @property
    def tables(self) -> Mapping[str, SimTable]:
        return MappingProxyType({run.table_id: run.table for run in self._runs})

    def polls(self, rounds: int) -> Iterator[FloorReading]:
        """Deal ``rounds`` more rounds at every table, yielding every reading in time order.

        A table's first reading (of the floor's life) comes before its first round, as a
        controller's first poll reads a table's counters before it plays. The run ends when
        every table has dealt its rounds and every hit it queued has been read and
        acknowledged. Stop consuming early and the tables stay where the last reading left
        them, a round perhaps half played; the next ``polls`` deals on from there.
        """
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
            raise ValueError(f"rounds must be an int, 0 or more, got {rounds!r}")
        for run in self._runs:
            run.to_deal += rounds
            # A table that finished before the others waited: its next round starts on from
            # now, on its own time of the round.
            while run.next_phase == 0 and run.started and run.round_start <= self._now_us:
                run.round_start += self._round_us
        if self._phases_only:
            return self._polls_at_phases()
        return self._polls_every_poll()

    # --- the two ways to poll ---------------------------------------------------------

    def _polls_every_poll(self) -> Iterator[FloorReading]:
        poll_us = self._poll_us
        t = self._now_us
        if any(run.started for run in self._runs):
            t += poll_us
        active = [run for run in self._runs if run.to_deal or not run.started]
        while active:
            self._now_us = t
            for run in active:
                due = run.to_deal > 0 and run.phase_at() == t
                yield FloorReading(run.table_id, t, self._read(run, t, due))
            active = [run for run in active if run.to_deal or run.table.hit_fifo]
            t += poll_us

    def _polls_at_phases(self) -> Iterator[FloorReading]:
        poll_us = self._poll_us
        heap: list[tuple[int, int, bool]] = []  # (time, table index, a phase is due)
        for run in self._runs:
            if not run.started:
                heap.append((self._now_us, run.index, False))
            elif run.table.hit_fifo:
                heap.append((self._now_us + poll_us, run.index, False))
            elif run.to_deal:
                heap.append((run.phase_at(), run.index, True))
        heapq.heapify(heap)
        runs = self._runs
        while heap:
            t, index, due = heapq.heappop(heap)
            run = runs[index]
            self._now_us = t
            registers = self._read(run, t, due)
            yield FloorReading(run.table_id, t, registers)
            if run.table.hit_fifo:
                heapq.heappush(heap, (t + poll_us, index, False))
            elif run.to_deal:
                # A round's hits are read a poll apart after its deal; only a round with
                # dozens of them would put the next round's bets off.
                heapq.heappush(heap, (max(run.phase_at(), t + poll_us), index, True))

    def _read(self, run: _Run, t: int, due: bool) -> TableRegisters:
        """One poll of ``run``'s table at ``t``: the heartbeat written, the phase due (if
        ``due``) played, the registers read and decoded, the head hit acknowledged."""
        table = run.table
        if not run.started:
            run.started = True
            # Never disable the progressive: register 102 says take side bets.
            apply_write(table, run.profile.command_address, [0], t)
        # The heartbeat register, set as apply_write sets it, without checking the one word
        # again at every reading: a long run reads tens of millions of times.
        run.heartbeat = next_heartbeat(run.heartbeat)
        table.heartbeat(run.heartbeat, t)
        if due:
            self._play_phase(run, t)
        registers = decode_words(run.profile, encode_block(table, t), table=run.table_id)
        head = registers.head
        if head is not None:
            apply_write(table, run.ack_at, encode_u32(run.profile, head.seq), t)
        return registers

    def _play_phase(self, run: _Run, t: int) -> None:
        table = run.table
        phase = run.phases[run.next_phase]
        if phase == BETS:
            table.take_bets(t)
        elif phase == LOCKOUT:
            table.lock_out(t)
        elif phase == LATE_BET:
            table.take_late_bet(t)
        else:
            record = table.deal(t)
            run.tally.add(record)
            if not self._keep_records:
                table.take_records()
            run.to_deal -= 1
            run.next_phase = 0
            run.round_start += self._round_us
            return
        run.next_phase += 1
