"""A table power-cycled just below 2**32: its credits counter looks as if it wrapped."""

from __future__ import annotations

from controller.core.reducer import EntryKind, TableReading, apply_readings
from tests.controller.core.test_reducer import SEC, T0, new_link

U32 = 2**32


def _read(seq: int, credits: int, rounds: int, at_s: int) -> TableReading:
    return TableReading(
        table_id="t1", poll_seq=seq, at_us=T0 + at_s * SEC, credits=credits, rounds=rounds
    )


def test_a_restart_just_below_the_wrap_is_a_restart_not_a_wrap() -> None:
    state = apply_readings(new_link(), [_read(1, U32 - 5, 700, 1)]).state
    # Power cycle: both counters back to zero, then one round of 7 credits. Read as a wrap
    # the credits counter says 12 (5 + 7); the round counter went back from 700 to 1.
    out = apply_readings(state, [_read(2, 7, 1, 30)])
    assert [e.kind for e in out.events] == [EntryKind.TABLE_COUNTER_RESET, EntryKind.CONTRIBUTION]
    assert out.events[1].delta_units == 7 * 100 * 8000


def test_both_counters_wrapping_together_is_a_wrap() -> None:
    state = apply_readings(new_link(), [_read(1, U32 - 5, U32 - 1, 1)]).state
    out = apply_readings(state, [_read(2, 7, 1, 30)])  # two rounds: 12 credits
    assert [e.kind for e in out.events] == [EntryKind.CONTRIBUTION]
    assert out.events[0].delta_units == 12 * 100 * 8000
    assert "counter wrapped" in out.events[0].explanation


def test_a_restart_of_a_small_counter_is_a_restart() -> None:
    # The credits counter had just wrapped (2): after the restart and one round it reads 7,
    # forwards; the round counter went back from 900 to 1.
    state = apply_readings(new_link(), [_read(1, 2, 900, 1)]).state
    out = apply_readings(state, [_read(2, 7, 1, 30)])
    assert [e.kind for e in out.events] == [EntryKind.TABLE_COUNTER_RESET, EntryKind.CONTRIBUTION]
    assert out.events[1].delta_units == 7 * 100 * 8000


def test_a_round_counter_gone_back_with_a_large_credits_counter_is_held() -> None:
    state = apply_readings(new_link(), [_read(1, 5_000, 900, 1)]).state
    out = apply_readings(state, [_read(2, 5_007, 1, 30)])
    assert [e.kind for e in out.events] == [EntryKind.ANOMALY_HELD]
    assert "round counter went backwards from 900 to 1" in out.events[0].explanation
    assert out.anomalies[0].credits == 7
