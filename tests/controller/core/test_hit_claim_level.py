"""A hit claim's level (register map v2): written only when the table said one, so every claim
stored before reads back the same."""

from __future__ import annotations

from controller.core.hands import HandCategory
from controller.core.reducer import HitClaim

BEFORE = {
    "table_seq": 7,
    "seat": 2,
    "hand": "ROYAL_FLUSH",
    "round": 3,
    "cards": [51, 47, 43, 39, 35],
}


def test_a_claim_without_a_level_is_stored_as_before() -> None:
    claim = HitClaim.from_dict(BEFORE)
    assert claim.level is None
    assert claim.to_dict() == BEFORE
    assert HitClaim(table_seq=None, seat=1, hand=HandCategory.FLUSH, round=1).to_dict() == {
        "table_seq": None,
        "seat": 1,
        "hand": "FLUSH",
        "round": 1,
        "cards": None,
    }


def test_a_level_and_seven_cards_with_the_joker_round_trip() -> None:
    cards = (51, 47, 43, 39, 52, 0, 5)
    claim = HitClaim(
        table_seq=8, seat=4, hand=HandCategory.ROYAL_FLUSH, round=3, cards=cards, level=2
    )
    stored = claim.to_dict()
    assert stored == {**BEFORE, "table_seq": 8, "seat": 4, "cards": list(cards), "level": 2}
    assert HitClaim.from_dict(stored) == claim
    assert list(stored)[-1] == "level"
