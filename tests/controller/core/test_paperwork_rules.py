"""Devices removed from play in the engine, and the rules of corrections and retention."""

from __future__ import annotations

import pytest

from controller.core.games import Game, default_paytable
from controller.core.hands import HandCategory, parse_cards
from controller.core.money import contribution_units
from controller.core.reducer import (
    EngineError,
    EntryKind,
    HitClaim,
    TableConfig,
    TableReading,
    apply_readings,
    open_link,
    remove_from_play,
    return_to_play,
)
from controller.rules import RuleViolation
from controller.rules.house import check_correction_approval
from controller.rules.integrity import INTEGRITY_RETENTION_YEARS, check_return_to_play
from controller.rules.jurisdictions import INDIANA
from controller.rules.records import (
    METER_RETENTION_YEARS,
    check_correction_request,
    check_retention_not_shortened,
    check_retention_years,
)

SEC = 1_000_000
T0 = 1_700_000_000 * SEC


def link():
    cfg = TableConfig(
        table_id="t1", denomination_cents=100, max_credits_per_seat_round=10, min_round_us=SEC
    )
    return open_link(
        law=INDIANA,
        link_id="L1",
        game=Game.CARIBBEAN_STUD,
        rate_bp=8000,
        reset_cents=1_000_00,
        paytable=default_paytable(Game.CARIBBEAN_STUD),
        tables=[cfg],
        at_us=T0,
    ).state


def reading(seq: int, credits: int, **kw):
    return TableReading(
        table_id="t1", poll_seq=seq, at_us=T0 + seq * 10 * SEC, credits=credits, **kw
    )


def test_a_table_out_of_play_credits_nothing_and_credits_again_after_return():
    s = apply_readings(link(), [reading(1, 100)]).state
    opened = s.meter_units
    s = remove_from_play(
        s, table_id="t1", record_id="r1", reason="sensor", at_us=T0, by="tech"
    ).state
    assert s.table("t1").out_of_play
    o = apply_readings(s, [reading(2, 130)])
    # The contributions still arrive: recorded as refused, the meter does not move.
    assert o.state.meter_units == opened
    assert [e.kind for e in o.events] == [EntryKind.CREDITS_REFUSED]
    assert o.state.table("t1").credits == 130  # the baseline follows the counter
    s = return_to_play(o.state, table_id="t1", record_id="r1", at_us=T0, by="sup").state
    s = apply_readings(s, [reading(3, 135)]).state
    assert s.meter_units == opened + contribution_units(
        credits=5, denomination_cents=100, rate_bp=8000
    )


def test_a_hit_at_a_table_out_of_play_is_refused_and_recorded():
    s = apply_readings(link(), [reading(1, 0)]).state
    s = remove_from_play(s, table_id="t1", record_id="r1", reason="x", at_us=T0, by="t").state
    claim = HitClaim(
        table_seq=1,
        seat=1,
        hand=HandCategory.ROYAL_FLUSH,
        round=1,
        cards=parse_cards("As Ks Qs Js Ts"),
    )
    o = apply_readings(s, [reading(2, 1, pending_hits=1, head_hit=claim)])
    assert [h.status for h in o.hits] == ["refused"]
    assert "out of play" in (o.hits[0].refusal or "")
    assert o.state.meter_units == s.meter_units


def test_remove_and_return_only_once():
    s = remove_from_play(link(), table_id="t1", record_id="r", reason="x", at_us=T0, by="t").state
    with pytest.raises(EngineError, match="already out of play"):
        remove_from_play(s, table_id="t1", record_id="r", reason="x", at_us=T0, by="t")
    with pytest.raises(EngineError, match="not out of play"):
        return_to_play(link(), table_id="t1", record_id="r", at_us=T0, by="t")


def test_a_correction_needs_a_second_different_person():
    with pytest.raises(RuleViolation, match="second person"):
        check_correction_approval(requested_by="sup1", approved_by=None)
    with pytest.raises(RuleViolation, match="cannot also approve"):
        check_correction_approval(requested_by="sup1", approved_by="SUP1")
    assert check_correction_approval(requested_by="sup1", approved_by="sup2") == "sup2"


def test_a_reduction_request_needs_a_reason_and_a_document():
    with pytest.raises(RuleViolation, match="supporting document"):
        check_correction_request(delta_units=-1, reason="glitch", document_sha256=None)
    with pytest.raises(RuleViolation, match="reason"):
        check_correction_request(delta_units=-1, reason=" ", document_sha256="ab")
    check_correction_request(delta_units=-1, reason="glitch", document_sha256="ab")


def test_return_to_play_needs_remedial_action_and_verification():
    with pytest.raises(RuleViolation, match="remedial action"):
        check_return_to_play(remedial_actions=0, verified=True)
    with pytest.raises(RuleViolation, match="verified"):
        check_return_to_play(remedial_actions=1, verified=False)
    check_return_to_play(remedial_actions=1, verified=True)


def test_retention_periods_can_only_lengthen():
    with pytest.raises(RuleViolation, match=r"10-6-5\(d\)"):
        check_retention_years(meter_years=METER_RETENTION_YEARS - 1, integrity_years=1)
    with pytest.raises(RuleViolation, match=r"10-1-6.2\(c\)"):
        check_retention_years(meter_years=5, integrity_years=INTEGRITY_RETENTION_YEARS - 1)
    assert check_retention_years(meter_years=7, integrity_years=2) == (7, 2)
    with pytest.raises(RuleViolation, match="cannot be shortened"):
        check_retention_not_shortened(name="meter", years=6, recorded_years=7)
    assert check_retention_not_shortened(name="meter", years=8, recorded_years=7) == 8
