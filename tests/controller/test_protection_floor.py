"""Game protection on simulated tables dealt with real shuffled cards and read as the
controller reads a poll (``bench.bench_protection``'s floors, smaller): an honest floor raises
nothing at the default threshold, and each fault the simulator injects through the register
map is flagged within the rounds the benchmark measured for it (README, game protection)."""

from __future__ import annotations

import pytest

from bench.bench_protection import FAULTS, fault_run, honest_share

SEED = 20261128


def test_an_honest_floor_raises_no_alert() -> None:
    # Six tables (two of each five-card game) for a gaming day of 1,000 rounds each, dealers
    # changing tables each shift, judged every hour at the threshold of a 300-table floor.
    share = honest_share((6, 0, 1, 1, 1000, SEED))
    assert share["rounds"] == 6_000 and share["hits"]
    assert share["raised"] == []


# Each fault's bound: about twice the slowest of the benchmark's five runs.
BOUNDS = {
    "a dead bet sensor (seat 3)": 200,
    "a bet sensor stuck lit (seat 5)": 200,
    "hits with no matching cards (1 round in 50)": 1_000,
    "late bets after lockout (1 round in 20)": 600,
    "flushes never reported": 10_500,
}


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_an_injected_fault_is_flagged_within_its_measured_rounds(name: str) -> None:
    index = next(i for i, f in enumerate(FAULTS) if f.name == name)
    _, rounds, _ = fault_run((index, 300, 11, 1000, SEED))
    assert rounds is not None and rounds <= BOUNDS[name], rounds
