"""A mystery level armed while its meter already stands at or past the new trigger (what a
wager beyond the trigger leaves on top of the reset, or a level armed late) hits with the
next wager, instead of climbing past its ceiling for ever. A mystery level that is its link's
one meter is watched for its trigger like any other."""

from __future__ import annotations

from dataclasses import replace

from controller.core.games import PaytableLine
from controller.core.reducer import EntryKind
from controller.core.reducer.levels import MysteryDraw
from tests.controller.core.test_levels import MINI, H, U, link, paytable, read


def test_a_trigger_already_passed_when_armed_hits_with_the_next_wager() -> None:
    # Mini alone: $10 reset, 2% share, triggers $10.01 to $20.00. The first trigger is $15.00;
    # the next, $10.01, lies below what the wager that reached $15.00 leaves after the reset.
    first, low = MysteryDraw(15_00, "ab" * 16), MysteryDraw(10_01, "cd" * 16)
    flush = paytable(PaytableLine(hand=H.FLUSH, fixed_cents=50_00))
    s = link(levels=(replace(MINI, rate_bp=8_000),), draws={0: [first, low]}, pt=flush)
    s = read(s, "t1", 1, 0, rounds=0).state
    # 7 credits of $1 at 80%: $5.60, from $10.00 past $15.00 to $15.60; $15.00 is paid, the
    # level resets to $10.00 and keeps the $0.60 beyond: $10.60, past the $10.01 armed now.
    out = read(s, "t1", 2, 7, rounds=1, seat_credits=(7, 0, 0, 0, 0, 0, 0))
    mini = out.state.levels[0]
    assert [h.award_cents for h in out.hits if h.kind == "mystery"] == [15_00]
    assert mini.armed == low and mini.meter_units == 10_60 * U
    # The next wager, of one credit, hits the $10.01 trigger at once.
    nxt = read(out.state, "t1", 3, 8, rounds=2, seat_credits=(0, 1, 0, 0, 0, 0, 0))
    [hit] = [h for h in nxt.hits if h.kind == "mystery"]
    assert (hit.award_cents, hit.claim.seat) == (10_01, 2)
    assert nxt.state.levels[0].meter_units == (10_60 + 80 - 10_01 + 10_00) * U
    assert EntryKind.JACKPOT_RESET in [e.kind for e in nxt.events]
    # A reading with no wager hits nothing: a mystery is won by a wager.
    idle = read(out.state, "t1", 3, 7, rounds=2)
    assert [h for h in idle.hits if h.kind == "mystery"] == []


def test_on_a_link_of_levels_too() -> None:
    first, low = MysteryDraw(15_00, "ab" * 16), MysteryDraw(10_01, "cd" * 16)
    s = link(draws={3: [first, low]})
    s = read(s, "t1", 1, 0, rounds=0).state
    # $300 of wagers bring the Mini $6.00: from $10.00 past $15.00; $11.00 after the reset.
    out = read(s, "t1", 2, 300, rounds=5, seat_credits=(300, 0, 0, 0, 0, 0, 0))
    assert out.state.levels[3].meter_units == 11_00 * U and out.state.levels[3].armed == low
    nxt = read(out.state, "t1", 3, 301, rounds=6, seat_credits=(0, 0, 1, 0, 0, 0, 0))
    [hit] = [h for h in nxt.hits if h.kind == "mystery"]
    assert (hit.award_cents, hit.claim.seat, hit.level) == (10_01, 3, "L4")
