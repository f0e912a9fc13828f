"""The reference register map's encodings (shared/DESIGN.md, register map v1, and
docs/register-map-v2.md): hand codes, status and command bits, the seats' bet bitmap,
acknowledgement and heartbeat words."""

from __future__ import annotations

import pytest

from controller.core.hands import HandCategory
from link_adapters.reading import HitHand, TableCommand, TableFlags
from link_adapters.register_map import (
    HAND_CODES,
    HAND_CODES_V2,
    NO_HAND_CODE,
    acknowledgement_words,
    bet_seats,
    command_word,
    hand_code,
    hand_code_named,
    hit_hand,
    next_heartbeat,
    seat_bitmap,
    status_flags,
)

# Register 12 in shared/DESIGN.md: "1 royal flush, 2 straight flush, 3 four of a kind, 4 full
# house, 5 flush, 6 straight, 7 three of a kind, 8 two pair, 9 one pair".
DESIGN_HAND_CODES = {
    HandCategory.ROYAL_FLUSH: 1,
    HandCategory.STRAIGHT_FLUSH: 2,
    HandCategory.FOUR_OF_A_KIND: 3,
    HandCategory.FULL_HOUSE: 4,
    HandCategory.FLUSH: 5,
    HandCategory.STRAIGHT: 6,
    HandCategory.THREE_OF_A_KIND: 7,
    HandCategory.TWO_PAIR: 8,
    HandCategory.ONE_PAIR: 9,
}


# docs/register-map-v2.md, register 12: v1's codes, then "10 five aces, 11 seven, 12 two
# sevens, 13 two suited sevens, 14 three sevens, 15 three suited sevens".
V2_ONLY_HAND_CODES = {
    "FIVE_ACES": 10,
    "SEVEN": 11,
    "TWO_SEVENS": 12,
    "TWO_SUITED_SEVENS": 13,
    "THREE_SEVENS": 14,
    "THREE_SUITED_SEVENS": 15,
}


def test_hand_codes_cover_every_hand_category_the_map_defines() -> None:
    """The controller maps hands by name: every hand category map v1 gives a code has a
    ``HitHand`` of its name with that code, and v1 names no other hand."""
    assert set(HAND_CODES) == {HitHand[category.name] for category in DESIGN_HAND_CODES}
    for category, code in DESIGN_HAND_CODES.items():
        hand = HitHand[category.name]
        assert HAND_CODES[hand] == hand_code(hand) == hand_code_named(category.name) == code
        assert hit_hand(code) is hand
    # High card is a category the map gives no code: a table writes no hand.
    assert hand_code_named(HandCategory.HIGH_CARD.name) == NO_HAND_CODE == 0
    for code in (0, 10, 15, 42, 0xFFFF):
        assert hit_hand(code) is None


def test_map_v2_keeps_the_v1_codes_and_names_the_new_hands() -> None:
    assert {hand.name for hand in HitHand} == {c.name for c in DESIGN_HAND_CODES} | set(
        V2_ONLY_HAND_CODES
    )
    assert {hand.name: code for hand, code in HAND_CODES_V2.items()} == {
        **{category.name: code for category, code in DESIGN_HAND_CODES.items()},
        **V2_ONLY_HAND_CODES,
    }
    for hand, code in HAND_CODES_V2.items():
        assert hand_code(hand, 2) == hand_code_named(hand.name, 2) == code
        assert hit_hand(code, 2) is hand
    for name, code in V2_ONLY_HAND_CODES.items():
        # A v1 table has no code for them: it writes none, and v1 reads their codes as none.
        assert hand_code_named(name) == NO_HAND_CODE
        assert hit_hand(code) is None
        with pytest.raises(ValueError, match=f"register map v1 has no hand code for {name}"):
            hand_code(HitHand[name])
    for code in (0, 16, 0xFFFF):
        assert hit_hand(code, 2) is None


def test_status_bits_are_named() -> None:
    assert status_flags(0) == TableFlags(False, False, False, False)
    assert status_flags(0b0001).lockout and status_flags(0b0010).door_open
    assert status_flags(0b0100).fault and status_flags(0b1000).progressive_disabled
    assert status_flags(0xFFF0) == status_flags(0)  # bits the map does not define


def test_bet_bitmap_names_the_seats() -> None:
    """Bit n-1 is seat n, seats 1-7; bits above seat 7 name no seat."""
    assert bet_seats(0) == ()
    assert bet_seats(0b1000101) == (1, 3, 7)
    assert bet_seats(0b1111111) == (1, 2, 3, 4, 5, 6, 7)
    assert bet_seats(0xFF80) == () and bet_seats(0xFF81) == (1,)
    for word in range(1 << 7):
        assert seat_bitmap(bet_seats(word)) == word
    assert seat_bitmap([]) == 0 and seat_bitmap((2, 6)) == 0b100010


def test_commands_are_encoded_as_the_command_bits() -> None:
    assert command_word(TableCommand()) == 0b01  # not told anything yet: no side bets
    assert command_word(TableCommand(disable_progressive=False)) == 0
    assert command_word(TableCommand(disable_progressive=False, hit_pending=True)) == 0b10
    assert command_word(TableCommand(disable_progressive=True, hit_pending=True)) == 0b11


def test_acknowledgement_and_heartbeat_words() -> None:
    assert acknowledgement_words(0x12345, "high_first") == [0x1, 0x2345]
    assert acknowledgement_words(0x12345, "low_first") == [0x2345, 0x1]
    with pytest.raises(ValueError, match="unsigned 32-bit"):
        acknowledgement_words(1 << 32, "high_first")
    assert (next_heartbeat(0), next_heartbeat(65535)) == (1, 0)
