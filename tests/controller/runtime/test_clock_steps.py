"""The system clock stepping backwards: history times never go back, durations stay true."""

from __future__ import annotations

import itertools

from controller.core.hands import HandCategory
from controller.core.reducer import (
    EntryKind,
    HitClaim,
    TableReading,
    apply_readings,
    display_frame,
    table_offline,
)
from controller.runtime.clock import SLEW_DIVISOR, SystemClock
from controller.runtime.links import LinkRuntime
from controller.storage.store import LedgerStore
from tests.conftest import KEY
from tests.conftest import T0 as STORE_T0
from tests.controller.core.test_reducer import SEC, T0, baseline, fund, new_link, read
from tests.controller.storage.helpers import make_link

MIN = 60 * SEC
HOUR = 60 * MIN


class Wall:
    """A wall clock and a monotonic clock that move together, until the wall one steps."""

    def __init__(self) -> None:
        self.wall = T0
        self.mono = 5 * SEC

    def advance(self, us: int) -> None:
        self.wall += us
        self.mono += us

    def clock(self) -> SystemClock:
        return SystemClock(wall_us=lambda: self.wall, monotonic_us=lambda: self.mono)


def test_the_clock_follows_the_wall_clock_and_its_steps_forward() -> None:
    w = Wall()
    clock = w.clock()
    assert clock.now_us() == T0
    w.advance(3 * SEC)
    assert clock.now_us() == T0 + 3 * SEC
    w.wall += HOUR  # forward: followed at once
    assert clock.now_us() == T0 + 3 * SEC + HOUR
    assert clock.steps_back == 0


def test_a_step_back_holds_the_clock_which_rejoins_the_wall_clock_later() -> None:
    w = Wall()
    clock = w.clock()
    before = clock.now_us()
    w.wall -= MIN  # an operator sets the clock back a minute
    times = [clock.now_us()]
    for _ in range(12 * 60):  # twelve minutes in one-second steps
        w.advance(SEC)
        times.append(clock.now_us())
    assert times[0] == before  # held, never back
    assert all(b >= a for a, b in itertools.pairwise(times))
    # Caught up at 1/10 of the pace: a one-minute step takes ten minutes.
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert gaps[0] == SEC - SEC // SLEW_DIVISOR
    assert times[-1] == w.wall and clock.ahead_us == 0
    assert gaps[-1] == SEC  # back on the wall clock's pace
    assert clock.steps_back == 1
    assert clock.largest_step_back_us == MIN


def test_an_hours_step_keeps_durations_within_a_tenth() -> None:
    w = Wall()
    clock = w.clock()
    clock.now_us()
    w.wall -= HOUR
    start = clock.now_us()
    w.advance(120 * SEC)
    assert 108 * SEC <= clock.now_us() - start <= 120 * SEC
    assert clock.steps_back == 1 and clock.largest_step_back_us == HOUR


def test_a_restart_behind_the_history_holds_at_its_newest_time() -> None:
    w = Wall()
    clock = w.clock()
    clock.not_before(T0 + HOUR)
    assert clock.now_us() == T0 + HOUR
    w.advance(10 * SEC)
    assert clock.now_us() == T0 + HOUR + 9 * SEC


def test_the_won_amount_shows_at_once_after_a_step_back() -> None:
    """68 IAC 10-6-5(g): the jackpot amount is shown immediately, whatever the clock did."""
    w = Wall()
    w.advance(10 * SEC)  # after the baseline reading
    clock = w.clock()
    state = fund(baseline(new_link(), 0), 5_000_00 * 10_000)
    royal = HitClaim(table_seq=1, seat=2, hand=HandCategory.ROYAL_FLUSH, round=1)
    reading = TableReading(
        table_id="t1", poll_seq=2, at_us=clock.now_us(), credits=0, pending_hits=1, head_hit=royal
    )
    state = apply_readings(state, [reading]).state
    assert state.last_win is not None
    w.wall -= HOUR
    w.advance(SEC)
    frame = display_frame(state, now_us=clock.now_us())
    assert frame.mode == "won" and frame.amount_cents == 5_000_00
    w.advance(200 * SEC)  # the hit phase (two minutes) ends on time, within a tenth
    assert display_frame(state, now_us=clock.now_us()).mode == "live"


def test_history_times_never_go_back_within_a_chain() -> None:
    state = baseline(new_link(), 0)
    late = read(state, 2, 7, at=T0 + 50 * SEC)
    assert late.state.last_at_us == T0 + 50 * SEC
    # A reading taken earlier (the clock went back, or it waited for its group commit while
    # a command was recorded) is recorded at the newest entry's time, and counts normally.
    early = read(late.state, 3, 14, at=T0 + 20 * SEC)
    (event,) = early.events
    assert event.kind is EntryKind.CONTRIBUTION and event.at_us == T0 + 50 * SEC
    assert early.state.table("t1").at_us == T0 + 50 * SEC
    offline = table_offline(early.state, table_id="t1", at_us=T0, reason="no answer")
    assert [e.at_us for e in offline.events] == [T0 + 50 * SEC]
    assert offline.state.last_at_us == T0 + 50 * SEC


async def test_the_newest_time_survives_a_reload(store: LedgerStore) -> None:
    await make_link(store)
    state = await store.load_link("stud")
    o = table_offline(state, table_id="t1", at_us=STORE_T0 + HOUR, reason="test")
    await store.commit([o])
    assert (await store.load_link("stud")).last_at_us == STORE_T0 + HOUR
    # A restarted controller whose wall clock is behind that does not record earlier times.
    w = Wall()
    w.wall = STORE_T0
    rt = LinkRuntime(LedgerStore(store.engine, KEY), w.clock())
    await rt.memory.load()
    assert rt.memory.clock.now_us() == STORE_T0 + HOUR


def _reading(seq: int, credits: int, *, at: int, rounds: int, elapsed: int | None) -> TableReading:
    return TableReading(
        table_id="t1", poll_seq=seq, at_us=at, credits=credits, rounds=rounds, elapsed_us=elapsed
    )


def test_a_duration_measured_by_the_poller_bounds_a_reading_not_the_clock() -> None:
    state = apply_readings(
        new_link(), [_reading(1, 1_000, at=T0 + 50 * SEC, rounds=100, elapsed=None)]
    ).state
    # The history's time is held (the wall clock went back): no time seems to pass, but the
    # poller measured 25 s on its monotonic clock: 3 rounds of 7 seats.
    held = T0 + 50 * SEC
    ok = apply_readings(state, [_reading(2, 1_021, at=held, rounds=103, elapsed=25 * SEC)])
    assert [e.kind for e in ok.events] == [EntryKind.CONTRIBUTION]
    over = apply_readings(state, [_reading(2, 1_022, at=held, rounds=103, elapsed=25 * SEC)])
    assert [e.kind for e in over.events] == [EntryKind.ANOMALY_HELD]


def test_the_first_reading_of_a_new_process_is_bounded_by_the_round_counter() -> None:
    """After a restart while the wall clock is behind the history (or a take-over by a host
    whose clock is), no duration is known: the rounds the table counted bound the reading."""
    state = apply_readings(
        new_link(), [_reading(1, 1_000, at=T0 + 50 * SEC, rounds=100, elapsed=None)]
    ).state
    held = T0 + 50 * SEC
    four = apply_readings(state, [_reading(2, 1_035, at=held, rounds=104, elapsed=None)])
    assert [e.kind for e in four.events] == [EntryKind.CONTRIBUTION]
    assert four.events[0].delta_units == 35 * 100 * 8000
    too_many = apply_readings(state, [_reading(2, 1_036, at=held, rounds=104, elapsed=None)])
    assert [e.kind for e in too_many.events] == [EntryKind.ANOMALY_HELD]
    # A round counter that went backwards bounds nothing: one round, as before.
    back = apply_readings(state, [_reading(2, 1_008, at=held, rounds=3, elapsed=None)])
    assert [e.kind for e in back.events] == [EntryKind.ANOMALY_HELD]
