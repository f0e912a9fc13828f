"""Benchmark the stepped floor: rounds dealt and read per second on one core.

Run from the project root: ``python bench/bench_stepped_floor.py [tables] [rounds]`` (default
30 tables, 500 rounds each). The floor is a third each of Caribbean Stud, Caribbean Draw and
the Let It Ride bonus, every table polled as the controller decodes a poll; one table in ten
has a fault (a rigged royal flush, a dead sensor, late bets). It times three runs of the same
tables in the same process:

* baseline: the same tables dealing their rounds alone (``SimTable.play_round``), nothing
  read: what dealing real cards costs;
* phases only: ``SteppedFloor(phases_only=True)``, a reading after each phase of a round and
  while hits wait, the mode for long quality runs;
* every poll: ``SteppedFloor()``, a reading every second (a tenth of the rounds).

and prints rounds per second of each, the stepped runs as a ratio of the baseline, and how
long the quality run (300 tables, 30 days of 20 hours, 50 rounds an hour: 9 million rounds)
would take on one core at the phases-only rate. Times are the process's CPU time, so the
figures are one core's even on a machine busy with other work.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from controller.core.games import Game  # noqa: E402
from controller.core.hands import HandCategory  # noqa: E402
from link_adapters.simulator.faults import RiggedHand, TableFaults  # noqa: E402
from link_adapters.simulator.stepped_floor import SteppedFloor  # noqa: E402
from link_adapters.simulator.table import SimTable  # noqa: E402
from link_adapters.simulator.table_types import SimTableConfig  # noqa: E402

SEED = 20260101
QUALITY_ROUNDS = 300 * 30 * 20 * 50
GAMES = (Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW, Game.LET_IT_RIDE_BONUS)
FAULTS = (
    TableFaults(rigged=RiggedHand(hand=HandCategory.ROYAL_FLUSH, factor=20)),
    TableFaults(dead_sensor_seat=3),
    TableFaults(late_bets_per_round=0.02),
)


def floor_tables(count: int) -> list[tuple[str, SimTableConfig]]:
    tables = []
    for index in range(count):
        faults = FAULTS[(index // 10) % len(FAULTS)] if index % 10 == 9 else None
        game = GAMES[index % len(GAMES)]
        tables.append((f"{game.value}-{index}", SimTableConfig(game=game, faults=faults)))
    return tables


def baseline(tables: list[tuple[str, SimTableConfig]], rounds: int) -> float:
    """Rounds per second of the tables dealing alone."""
    sims = [SimTable(config, random.Random(f"{SEED}/{tid}")) for tid, config in tables]
    started = time.process_time()
    for sim in sims:
        for n in range(rounds):
            now = (n + 1) * 60_000_000
            sim.heartbeat(n & 0xFFFF, now)
            sim.play_round(now)
            sim.take_records()
            while sim.hit_fifo:
                sim.acknowledge(sim.hit_fifo[0].seq)
    return len(sims) * rounds / (time.process_time() - started)


def stepped(
    tables: list[tuple[str, SimTableConfig]], rounds: int, *, phases_only: bool
) -> tuple[float, float]:
    """Rounds and readings per second of a stepped floor of the tables."""
    floor = SteppedFloor(tables, SEED, phases_only=phases_only)
    started = time.process_time()
    readings = sum(1 for _ in floor.polls(rounds))
    elapsed = time.process_time() - started
    dealt = sum(floor.tally(table_id).rounds for table_id in floor.table_ids)
    return dealt / elapsed, readings / elapsed


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    tables = floor_tables(count)
    # Warm up: the hand evaluator builds its tables once per process.
    list(SteppedFloor(tables[:3], SEED).polls(1))

    base = baseline(tables, rounds)
    phases, phase_readings = stepped(tables, rounds, phases_only=True)
    every, every_readings = stepped(tables, max(1, rounds // 10), phases_only=False)

    print(f"python {sys.version.split()[0]}; {count} tables x {rounds} rounds (seed {SEED})")
    print(f"{'':34}{'rounds/s':>12}{'readings/s':>14}{'vs baseline':>13}")
    print(f"{'baseline: play_round, no reading':34}{base:>12,.0f}{'':>14}{1:>12.2f}x")
    print(f"{'stepped, phases only':34}{phases:>12,.0f}{phase_readings:>14,.0f}"
          f"{phases / base:>12.2f}x")  # fmt: skip
    print(f"{'stepped, every poll (1 s)':34}{every:>12,.0f}{every_readings:>14,.0f}"
          f"{every / base:>12.2f}x")  # fmt: skip
    minutes = QUALITY_ROUNDS / phases / 60
    print(f"quality run, {QUALITY_ROUNDS:,} rounds, phases only: {minutes:,.0f} min on one core")
    return 0


if __name__ == "__main__":
    sys.exit(main())
