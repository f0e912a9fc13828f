"""The second signature (house policy): an award from a meter at or above the amount is signed
off by a second person, after its verification, before its table is reset."""

from __future__ import annotations

import pytest

from controller.rules import RuleViolation
from controller.rules.house import (
    SECOND_SIGNATURE_CLAUSE,
    check_second_signature,
    check_sign_off,
    needs_second_signature,
)

AMOUNT = 10_000_00


def sign(**changes: object) -> None:
    terms: dict[str, object] = {
        "hit_id": "stud-1#1",
        "award_cents": AMOUNT,
        "from_cents": AMOUNT,
        "from_meter": True,
        "verified_by": "ann",
        "signed_off_by": None,
        "signer": "bob",
    }
    check_sign_off(**{**terms, **changes})  # type: ignore[arg-type]


def test_only_an_award_from_a_meter_at_or_above_the_amount_needs_a_signature() -> None:
    assert needs_second_signature(award_cents=AMOUNT, from_cents=AMOUNT)
    assert not needs_second_signature(award_cents=AMOUNT - 1, from_cents=AMOUNT)
    assert not needs_second_signature(award_cents=AMOUNT, from_cents=AMOUNT, from_meter=False)


def test_a_second_different_person_signs_once_after_the_verification() -> None:
    sign()  # a second person, after the verification: accepted
    with pytest.raises(RuleViolation, match="verify it first") as before:
        sign(verified_by=None)
    assert before.value.clause == SECOND_SIGNATURE_CLAUSE
    with pytest.raises(RuleViolation, match="ANN verified hit stud-1#1 and cannot also sign"):
        sign(signer="ANN")
    with pytest.raises(RuleViolation, match="already signed off by carl"):
        sign(signed_off_by="carl")
    with pytest.raises(RuleViolation, match="needs no second signature"):
        sign(award_cents=AMOUNT - 1)
    with pytest.raises(RuleViolation, match="needs no second signature"):
        sign(from_meter=False)


def test_the_reset_waits_for_every_signature_and_names_the_hits() -> None:
    check_second_signature(table_id="stud-1", unsigned_hit_ids=[])
    with pytest.raises(RuleViolation) as refused:
        check_second_signature(table_id="stud-1", unsigned_hit_ids=["stud-1#1", "stud-1#2"])
    assert refused.value.clause == SECOND_SIGNATURE_CLAUSE
    assert "stud-1 cannot be reset" in str(refused.value)
    assert "stud-1#1, stud-1#2" in str(refused.value)
