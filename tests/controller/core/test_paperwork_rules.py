"""Devices removed from play in the engine and on the record, and the rules of corrections,
recoveries and retention."""

from __future__ import annotations

from dataclasses import replace

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
from controller.paperwork.integrity import DeviceRemoval, RemedialAction
from controller.rules import RuleViolation
from controller.rules.house import TWO_PERSON_CLAUSE, check_correction_approval, check_recovery
from controller.rules.integrity import (
    INTEGRITY_RETENTION_YEARS,
    check_return_to_play,
    check_verification,
)
from controller.rules.jurisdictions import INDIANA
from controller.rules.meter_records import (
    METER_RETENTION_YEARS,
    check_correction_request,
    check_retention_not_shortened,
    check_retention_years,
)
from controller.storage.papers.integrity import Employee

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
    with pytest.raises(RuleViolation, match="must change the meter"):
        check_correction_request(delta_units=0, reason="glitch", document_sha256="ab")
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
    # As the texts say, not as the rulebook's constants say: meter records five (5) years
    # (68 IAC 10-6-5(d), 10-8-5(d)), records of devices removed from play one (1) year
    # (10-1-6.2(c)(1)). A rulebook that kept either for less fails here.
    assert (METER_RETENTION_YEARS, INTEGRITY_RETENTION_YEARS) == (5, 1)
    with pytest.raises(RuleViolation, match=r"10-6-5\(d\)"):
        check_retention_years(meter_years=4, integrity_years=1)
    with pytest.raises(RuleViolation, match=r"10-1-6.2\(c\)"):
        check_retention_years(meter_years=5, integrity_years=0)
    assert check_retention_years(meter_years=5, integrity_years=1) == (5, 1)
    assert check_retention_years(meter_years=7, integrity_years=2) == (7, 2)
    with pytest.raises(RuleViolation, match="cannot be shortened"):
        check_retention_not_shortened(name="meter", years=6, recorded_years=7)
    assert check_retention_not_shortened(name="meter", years=8, recorded_years=7) == 8


def removal() -> DeviceRemoval:
    return DeviceRemoval(
        questioned_at_us=T0,
        device_type="Caribbean Stud table controller",
        manufacturer_serial_number=None,
        commission_registration_number="IGC-77",
        malfunction_reason="the bet sensor of seat 3 counts twice",
    )


def test_a_removal_is_recorded_with_its_facts_when_questioned():
    # 68 IAC 10-1-6.2(b)(1)-(3), (5): when it was questioned, the type of device, the
    # commission's registration number (the manufacturer's serial number only "if any") and
    # why it was not functioning properly.
    removal().check(T0)
    for name in ("device_type", "commission_registration_number", "malfunction_reason"):
        with pytest.raises(RuleViolation, match=name.replace("_", " ")) as caught:
            replace(removal(), **{name: "  "}).check(T0)
        assert caught.value.clause == "68 IAC 10-1-6.2"
    with pytest.raises(RuleViolation, match="questioned in the future"):
        removal().check(T0 - 1)


def test_a_remedial_action_and_its_verification_are_recorded_whole():
    tech = Employee(printed_name="T. Tech", signature="T.T.", occupational_license_number="L-1")
    RemedialAction(description="replaced the seat 3 sensor", employees=[tech]).check()
    # (b)(6): what was done; (b)(7): every employee's name, signature and license number.
    with pytest.raises(RuleViolation, match="says what was done"):
        RemedialAction(description=" ", employees=[tech]).check()
    with pytest.raises(
        RuleViolation, match=r"occupational license number \(68 IAC 10-1-6.2\(b\)\(7\)"
    ):
        RemedialAction(
            description="replaced it", employees=[tech._replace(occupational_license_number="")]
        ).check()
    with pytest.raises(RuleViolation, match="names who took it"):
        RemedialAction(description="replaced it").check()
    # (b)(8): an outside company's name, address and telephone, and who did the work.
    with pytest.raises(RuleViolation, match=r"\(b\)\(8\)"):
        RemedialAction(description="fixed", outside_company_name="Acme").check()
    RemedialAction(
        description="fixed",
        outside_company_name="Acme",
        outside_company_address="2 Road",
        outside_company_telephone="555-0101",
        outside_individuals=["B. Smith"],
    ).check()
    # (b)(9): a verification says what was checked, after a remedial action.
    with pytest.raises(RuleViolation, match="states what was checked"):
        check_verification(verification=" ", remedial_actions=1)
    with pytest.raises(RuleViolation, match="after a remedial action") as caught:
        check_verification(verification="100 test rounds", remedial_actions=0)
    assert caught.value.clause == "68 IAC 10-1-6.2(b)(9)"
    check_verification(verification="100 test rounds", remedial_actions=1)


def test_a_recovery_states_its_reason_and_takes_two_people():
    check_recovery(reason="counters edited", by="ann", approved_by="bob")
    with pytest.raises(RuleViolation) as caught:
        check_recovery(reason=" ", by="ann", approved_by="bob")
    # A house policy, said to be one wherever the refusal is shown.
    assert str(caught.value) == (
        "a recovery states its reason (house policy adopted from NY 5321.18, NJ 13:69E-1.39B)"
    )
    with pytest.raises(RuleViolation, match="names who asks and who approves"):
        check_recovery(reason="counters edited", by="ann", approved_by=" ")
    with pytest.raises(RuleViolation, match="cannot also approve") as caught:
        check_recovery(reason="counters edited", by="ann", approved_by="ANN ")
    assert caught.value.clause == TWO_PERSON_CLAUSE
