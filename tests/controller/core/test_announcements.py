"""Wins close together on a link's display: one announcement at a time, each whole
(68 IAC 10-6-5(g)-(i)), in the order ``controller.core.reducer.display.announcements`` says."""

from __future__ import annotations

import itertools
import random

from controller.core.hands import HandCategory
from controller.core.reducer.display import (
    ANNOUNCE_US,
    HIT_PHASE_US,
    Slot,
    announcements,
    announcing,
)
from controller.core.reducer.state import LastWin

S = 1_000_000
GRAND, MINI = 0, 3


def win(at_s: float, cents: int, table: str = "stud-1", level: str = "L1") -> LastWin:
    return LastWin(
        won_cents=cents,
        table_id=table,
        seats=(3,),
        hand=HandCategory.ROYAL_FLUSH,
        at_us=int(at_s * S),
        level=level,
    )


def shown_at(slots: tuple[Slot, ...], at_s: float) -> LastWin | None:
    slot = announcing(slots, int(at_s * S))
    return None if slot is None else slot.win


def test_a_mini_after_the_grand_waits_out_the_grands_whole_time() -> None:
    grand = win(0, 1_061_840)
    mini = win(7, 5_568, table="stud-2", level="L4")
    slots = announcements([(grand, GRAND), (mini, MINI)])
    # The Grand is announced from its win for the whole hit phase; the Mini takes none of it.
    for at in (0, 7, 7.5, 10, 12, 16, 60, 119.9):
        assert shown_at(slots, at) == grand, at
    assert shown_at(slots, HIT_PHASE_US / S) == mini
    assert slots == (
        Slot(grand, GRAND, 0, HIT_PHASE_US),
        Slot(mini, MINI, HIT_PHASE_US, 2 * HIT_PHASE_US),
    )


def test_a_grand_after_a_mini_is_shown_at_once_and_the_mini_again_whole_after() -> None:
    mini = win(0, 5_568, level="L4")
    grand = win(5, 1_061_840, table="stud-2")
    slots = announcements([(mini, MINI), (grand, GRAND)])
    assert shown_at(slots, 4.9) == mini
    assert shown_at(slots, 5) == grand  # 68 IAC 10-6-5(g): shown immediately
    assert slots[0] == Slot(mini, MINI, 0, 5 * S, cut=True)
    assert slots[1] == Slot(grand, GRAND, 5 * S, 5 * S + HIT_PHASE_US)
    # The Mini's announcement is not lost: it comes again, whole, after the Grand's.
    assert slots[2].win == mini and slots[2].start_us == 5 * S + HIT_PHASE_US
    assert slots[2].end_us - slots[2].start_us >= ANNOUNCE_US


def test_two_minis_in_a_row_each_get_their_whole_time() -> None:
    first, second = win(0, 5_568, level="L4"), win(5, 4_210, table="stud-2", level="L4")
    slots = announcements([(first, MINI), (second, MINI)])
    assert slots[0] == Slot(first, MINI, 0, ANNOUNCE_US)
    assert slots[1].win == second and slots[1].start_us == ANNOUNCE_US
    assert shown_at(slots, 29.9) == first
    assert shown_at(slots, 30) == second
    # A Mini well after another ends the first one's time past its whole time, not before.
    late = win(45, 3_000, level="L4")
    slots = announcements([(first, MINI), (late, MINI)])
    assert slots == (Slot(first, MINI, 0, 45 * S), Slot(late, MINI, 45 * S, 45 * S + HIT_PHASE_US))


def test_the_biggest_waiting_win_goes_first_then_the_earliest() -> None:
    grand = win(0, 1_000_000)
    mini1, minor, mini2 = win(1, 5_000, level="L4"), win(2, 20_000, level="L3"), win(3, 6_000)
    slots = announcements([(grand, GRAND), (mini1, MINI), (minor, 2), (mini2, MINI)])
    assert [s.win for s in slots] == [grand, minor, mini1, mini2]


def test_no_win_is_ever_dropped_or_announced_for_less_than_its_whole_time() -> None:
    rng = random.Random(1)
    for _ in range(200):
        wins = [
            (win(rng.uniform(0, 600), rng.randint(100, 10**6), level=f"L{r + 1}"), r)
            for r in (rng.choice((0, 1, 2, 3, 3, 3)) for _ in range(rng.randint(1, 12)))
        ]
        slots = announcements(wins)
        whole = [s for s in slots if not s.cut]
        assert sorted(id(s.win) for s in whole) == sorted(id(w) for w, _ in wins)
        for s in whole:
            assert s.end_us - s.start_us >= ANNOUNCE_US
            # Its won amount first, at once: no announcement starts before its win.
            assert s.start_us >= s.win.at_us
        for a, b in itertools.pairwise(slots):
            assert a.end_us <= b.start_us  # one at a time
        for s in slots:
            if s.cut:  # only ever by a bigger win, right when it came
                cutter = next(x for x in slots if x.start_us == s.end_us)
                assert cutter.rank < s.rank and cutter.win.at_us == s.end_us
