"""An approved change takes effect only at a jackpot reset on or after its effective date."""

from __future__ import annotations

from dataclasses import replace

import pytest

from controller.core.games import Game, default_paytable, make_paytable
from controller.core.hands import HandCategory, parse_cards
from controller.core.reducer import (
    ArmedChange,
    EngineError,
    EntryKind,
    HitClaim,
    LinkState,
    TableConfig,
    TableReading,
    apply_readings,
    arm_change,
    open_link,
)
from controller.rules.jurisdictions import INDIANA

SEC = 1_000_000
T0 = 1_700_000_000 * SEC
K = EntryKind
ROYAL = parse_cards("As Ks Qs Js Ts")


class Floor:
    def __init__(self) -> None:
        self.seq = 0
        self.at = T0
        self.credits = {"t1": 0, "t2": 0}

    def read(self, tid: str, add: int, *, royal: bool = False) -> TableReading:
        self.seq += 1
        self.at += 20 * SEC
        self.credits[tid] += add
        claim = None
        if royal:
            claim = HitClaim(
                table_seq=self.seq, seat=1, hand=HandCategory.ROYAL_FLUSH, round=self.seq,
                cards=ROYAL,
            )  # fmt: skip
        return TableReading(
            table_id=tid,
            poll_seq=self.seq,
            at_us=self.at,
            credits=self.credits[tid],
            pending_hits=1 if royal else 0,
            head_hit=claim,
        )


def link(floor: Floor) -> LinkState:
    tables = [
        TableConfig(table_id=t, denomination_cents=100, max_credits_per_seat_round=10)
        for t in ("t1", "t2")
    ]
    state = open_link(
        law=INDIANA,
        link_id="L1",
        game=Game.CARIBBEAN_STUD,
        rate_bp=8000,
        reset_cents=1_000_00,
        paytable=default_paytable(Game.CARIBBEAN_STUD),
        tables=tables,
        at_us=T0,
    ).state
    state = apply_readings(state, [floor.read("t1", 0), floor.read("t2", 0)]).state
    # A jackpot was won since the rate was set, so a rate change could be filed.
    return replace(state, jackpot_won_since_rate_set=True)


def contribution_rates(events: object) -> list[str]:
    return [e.details for e in events if e.kind is K.CONTRIBUTION]  # type: ignore[attr-defined]


def test_an_effective_change_waits_for_the_reset_then_applies_before_later_credits() -> None:
    floor = Floor()
    state = link(floor)
    change = ArmedChange(submission_id="s1", effective_at_us=T0, rate_bp=9000)
    state = arm_change(state, change=change, at_us=floor.at, by="agent").state
    # Effective already, but the link is accumulating: the rate stays until the reset.
    o = apply_readings(state, [floor.read("t1", 5), floor.read("t2", 5)])
    assert o.state.rate_bp == 8000 and o.state.armed == change
    assert all('"rate_bp":8000' in d for d in contribution_rates(o.events))
    assert not any(e.kind is K.RATE_CHANGED for e in o.events)
    # The jackpot: the reset, then the new rate, then the rest of the cycle's credits at 90%.
    o = apply_readings(o.state, [floor.read("t1", 1, royal=True), floor.read("t2", 3)])
    kinds = [e.kind for e in o.events]
    reset_at = kinds.index(K.JACKPOT_RESET)
    assert kinds[reset_at + 1] is K.RATE_CHANGED
    assert o.events[reset_at + 1].details["submission_id"] == "s1"  # type: ignore[index]
    later = [e for e in o.events[reset_at:] if e.kind is K.CONTRIBUTION]
    assert later and all('"rate_bp":9000' in str(e.details) for e in later)
    assert o.state.rate_bp == 9000 and o.state.armed is None
    # 68 IAC 10-1-1.1(d): the new rate is itself locked until the next jackpot.
    assert o.state.jackpot_won_since_rate_set is False


def test_a_change_before_its_effective_date_waits_past_a_reset() -> None:
    floor = Floor()
    state = link(floor)
    change = ArmedChange(submission_id="s2", effective_at_us=T0 + 10_000 * SEC, rate_bp=9000)
    state = arm_change(state, change=change, at_us=floor.at, by="agent").state
    o = apply_readings(state, [floor.read("t1", 1, royal=True)])
    assert K.JACKPOT_RESET in [e.kind for e in o.events]
    assert o.state.rate_bp == 8000 and o.state.armed == change
    floor.at = T0 + 10_000 * SEC
    o = apply_readings(o.state, [floor.read("t2", 1, royal=True)])
    assert o.state.rate_bp == 9000 and o.state.armed is None


def test_a_new_reset_amount_seeds_the_reset_where_it_takes_effect() -> None:
    floor = Floor()
    state = link(floor)
    change = ArmedChange(submission_id="s3", effective_at_us=T0, reset_cents=2_500_00)
    state = arm_change(state, change=change, at_us=floor.at, by="agent").state
    o = apply_readings(state, [floor.read("t1", 1, royal=True)])
    kinds = [e.kind for e in o.events]
    assert kinds.index(K.RESET_AMOUNT_CHANGED) < kinds.index(K.JACKPOT_RESET)
    reset = next(e for e in o.events if e.kind is K.JACKPOT_RESET)
    assert reset.delta_units == 2_500_00 * 10_000
    assert o.state.reset_cents == 2_500_00 and o.state.meter_cents == 2_500_00


def test_a_new_paytable_applies_at_the_reset() -> None:
    floor = Floor()
    state = link(floor)
    pt = make_paytable(Game.CARIBBEAN_STUD, [{"hand": "ROYAL_FLUSH", "percent_bp": 10_000}])
    change = ArmedChange(submission_id="s4", effective_at_us=T0, paytable=pt)
    state = arm_change(state, change=change, at_us=floor.at, by="agent").state
    assert state.paytable != pt
    o = apply_readings(state, [floor.read("t1", 1, royal=True)])
    assert o.state.paytable == pt
    assert K.PAYTABLE_CHANGED in [e.kind for e in o.events]


def test_one_change_waits_at_a_time() -> None:
    floor = Floor()
    state = link(floor)
    state = arm_change(
        state, change=ArmedChange(submission_id="a", effective_at_us=T0, rate_bp=9000),
        at_us=floor.at, by="agent",
    ).state  # fmt: skip
    with pytest.raises(EngineError, match="already waits"):
        arm_change(
            state, change=ArmedChange(submission_id="b", effective_at_us=T0, rate_bp=7000),
            at_us=floor.at, by="agent",
        )  # fmt: skip
