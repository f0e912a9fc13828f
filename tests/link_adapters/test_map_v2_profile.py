"""Register map v2 (docs/register-map-v2.md) as a profile: the bundled file, decoding blocks
built by hand from the doc's table, refusing what the map does not allow, and the simulator
writing the same map."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from controller.core.games import Game
from controller.core.hands import HandCategory
from link_adapters.errors import DeviceError, ProfileMismatch
from link_adapters.modbus_requests import MAX_READ
from link_adapters.profile_decoding import decode
from link_adapters.profile_files import load_profile, profile_from_dict
from link_adapters.profile_map import MAX_READ_COUNT, ProfileError
from link_adapters.reading import HeadHit, HitHand
from link_adapters.simulator import registers as sim
from link_adapters.simulator.table import SimTable
from link_adapters.simulator.table_types import SimTableConfig

BUNDLED = Path(__file__).resolve().parents[2] / "link_adapters" / "profiles"
JOKER = 52
# Pai Gow Poker, seven cards: A K Q J of spades, the joker, 2 of clubs, 3 of diamonds.
SEVEN_WITH_JOKER = (51, 47, 43, 39, JOKER, 0, 5)
SEVENS = (20, 21, 22)  # Super Sevens: the sevens of clubs, diamonds and hearts
NOT_REPORTED = 0xFFFF


def v2_block(
    *,
    hand: int = 1,
    level: int = 0,
    cards: tuple[int, ...] = SEVEN_WITH_JOKER,
    count: int | None = None,
) -> list[int]:
    """A reference v2 block written out from the table in docs/register-map-v2.md."""
    slots = [*cards, *(NOT_REPORTED,) * (7 - len(cards))]
    return [
        0x5450, 2,                  # 0 profile id, 1 version 2
        0,                          # 2 status
        0x0001, 0x0002,             # 3-4 rounds = 0x00010002
        0xDEAD, 0xBEEF,             # 5-6 credits = 0xDEADBEEF
        0b0001000,                  # 7 a bet at seat 4
        1,                          # 8 pending hits
        0x0000, 0x0058,             # 9-10 head sequence 88
        4,                          # 11 head seat
        hand,                       # 12 head hand
        0x0001, 0x0002,             # 13-14 head round
        *slots[:5],                 # 15-19 head cards 1-5
        0, 1, 0, 2, 0, 3, 0, 4,     # 20-27 seats 1-4
        0, 5, 0, 6, 0, 7,           # 28-33 seats 5-7
        level,                      # 34 head level (0: not said)
        len(cards) if count is None else count,  # 35 head card count
        *slots[5:],                 # 36-37 head cards 6-7
    ]  # fmt: skip


def v2_profile() -> Any:
    return load_profile("reference-v2")


# --- the bundled file ----------------------------------------------------------------------


def test_reference_v2_keeps_every_v1_field_and_reads_in_one_request() -> None:
    v1, v2 = load_profile("reference-v1"), v2_profile()
    assert (v2.profile_id, v2.version) == (0x5450, 2)
    assert (v2.has_level, v2.max_cards, v2.hand_codes) == (True, 7, 2)
    assert (v1.has_level, v1.max_cards, v1.hand_codes) == (False, 5, 1)
    # Registers 0-33 are v1's, field for field; v2 adds 34-37.
    assert {f: a for f, a in v2.addresses.items() if f in v1.addresses} == dict(v1.addresses)
    added = {f: a for f, a in v2.addresses.items() if f not in v1.addresses}
    assert added == {"head_level": 34, "head_card_count": 35, "head_more_cards": 36}
    assert (v2.read_start, v2.read_count) == (0, 38)
    # One poll is one read: the whole block fits one Modbus read (function 3 and the read
    # half of function 23 carry at most 125 registers).
    assert v2.read_count <= MAX_READ_COUNT == MAX_READ == 125
    ends = [address + v2.field_width(field) for field, address in v2.addresses.items()]
    assert max(ends) == v2.read_start + v2.read_count
    writes = (v2.ack_address, v2.command_address, v2.meter_address, v2.heartbeat_address)
    assert writes == (100, 102, 103, 105) and v2.write_span == v1.write_span == (102, 4)
    assert v2.read_write and v2.word_order == "high_first"


def test_simulator_writes_the_v2_profile() -> None:
    """The JSON is the source of the addresses; the simulator keeps its own copy."""
    profile = v2_profile()
    for field, address in {
        "head_level": sim.ADDR_HEAD_LEVEL,
        "head_card_count": sim.ADDR_HEAD_CARD_COUNT,
        "head_more_cards": sim.ADDR_HEAD_MORE_CARDS,
        "head_cards": sim.ADDR_HEAD_CARDS,
    }.items():
        assert profile.addresses[field] == address
    assert (profile.version, profile.read_count) == (sim.PROFILE_VERSION_V2, sim.READ_COUNT_V2)


# --- decoding ------------------------------------------------------------------------------


def test_seven_cards_with_the_joker_and_a_level() -> None:
    regs = decode(v2_profile(), v2_block(level=3), table="PG1")
    assert (regs.profile_id, regs.version, regs.credits) == (0x5450, 2, 0xDEADBEEF)
    assert regs.per_seat_credits == (1, 2, 3, 4, 5, 6, 7)
    assert regs.head == HeadHit(
        seq=88, seat=4, hand=HitHand.ROYAL_FLUSH, round=0x10002, cards=SEVEN_WITH_JOKER, level=3
    )


def test_three_cards_of_super_sevens_and_no_level_said() -> None:
    block = v2_block(hand=15, cards=SEVENS)
    block[19] = 999  # beyond the count: not read
    head = decode(v2_profile(), block).head
    assert head is not None
    assert (head.hand, head.cards, head.level) == (HitHand.THREE_SUITED_SEVENS, SEVENS, None)


def test_a_five_card_hit_under_v2_reads_as_under_v1() -> None:
    royal = (51, 47, 43, 39, 35)
    head = decode(v2_profile(), v2_block(cards=royal)).head
    assert head == HeadHit(seq=88, seat=4, hand=HitHand.ROYAL_FLUSH, round=0x10002, cards=royal)


@pytest.mark.parametrize(
    ("code", "hand"),
    [
        (1, HitHand.ROYAL_FLUSH),
        (9, HitHand.ONE_PAIR),
        (10, HitHand.FIVE_ACES),
        (11, HitHand.SEVEN),
        (12, HitHand.TWO_SEVENS),
        (13, HitHand.TWO_SUITED_SEVENS),
        (14, HitHand.THREE_SEVENS),
        (15, HitHand.THREE_SUITED_SEVENS),
        (16, None),
    ],
)
def test_v2_hand_codes(code: int, hand: HitHand | None) -> None:
    head = decode(v2_profile(), v2_block(hand=code)).head
    assert head is not None and head.hand is hand


def test_v1_reads_no_v2_hand_code() -> None:
    """A v1 profile decodes only codes 1-9: 10-15 name no hand there, as any unknown code."""
    block = v2_block(hand=10)[:34]
    block[1], block[15:20] = 1, (51, 47, 43, 39, 35)
    head = decode(load_profile("reference-v1"), block).head
    assert head is not None and head.hand is None and head.level is None


@pytest.mark.parametrize(
    "block",
    [
        v2_block(count=0),  # the table reports no cards
        v2_block(cards=(51, 47, NOT_REPORTED, 39)),  # one within the count not reported, as v1
    ],
)
def test_cards_not_reported(block: list[int]) -> None:
    head = decode(v2_profile(), block).head
    assert head is not None and head.cards is None


@pytest.mark.parametrize(
    ("address", "value", "message"),
    [
        (
            36,
            53,
            r"table PG2: head hit card \(address 36\) reads 53, expected a card code 0-52 "
            r"\(52 the joker\) or 0xFFFF \(not reported\)",
        ),
        (15, 0xFFFE, r"table PG2: head hit card \(address 15\) reads 65534, expected"),
        (35, 8, r"table PG2: head hit card count \(address 35\) reads 8, expected 0-7"),
        (35, 0xFFFF, r"table PG2: head hit card count \(address 35\) reads 65535, expected 0-7"),
        (11, 8, r"table PG2: head hit seat \(address 11\) reads 8, expected 1-7"),
    ],
)
def test_what_v2_does_not_allow_is_a_device_error(address: int, value: int, message: str) -> None:
    """As v1 refuses a card code that is no card (DeviceError naming table, address, value)."""
    block = v2_block()
    block[address] = value
    with pytest.raises(DeviceError, match=message):
        decode(v2_profile(), block, table="PG2")


def test_v1_still_refuses_the_joker() -> None:
    block = v2_block()[:34]
    block[1], block[15:20] = 1, (51, 47, 43, 39, JOKER)
    with pytest.raises(DeviceError, match=r"reads 52, expected a card code 0-51 or 0xFFFF"):
        decode(load_profile("reference-v1"), block, table="T1")


def test_each_map_refuses_a_table_of_the_other() -> None:
    v1_block = v2_block()[:34]
    v1_block[1] = 1
    with pytest.raises(ValueError, match="decodes 38 registers, got 34"):
        decode(v2_profile(), v1_block)
    block = v2_block()
    block[1] = 1
    with pytest.raises(ProfileMismatch, match="address 1 reads 1, expected profile version 2"):
        decode(v2_profile(), block)


# --- refusing bad files --------------------------------------------------------------------


def v2_json() -> dict[str, Any]:
    return json.loads((BUNDLED / "reference-v2.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"max_cards": 6}, "max_cards: expected 5 or 7, got 6"),
        ({"max_cards": 8}, "max_cards: 8 is outside 5-7"),
        ({"hand_codes": 3}, "hand_codes: expected 1 (map v1) or 2 (map v2), got 3"),
        ({"has_level": 1}, "has_level: expected true or false, got 1"),
        ({"has_level": False}, "addresses.head_level: given, but has_level is false"),
        ({"max_cards": 5}, "addresses.head_card_count: given, but max_cards is 5"),
        ({"read_count": 37}, "addresses.head_more_cards: registers 36-37 lie outside"),
        ({"read_count": 126}, "read_count: 126 is outside 1-125"),
    ],
)
def test_bad_v2_settings_are_refused(change: dict[str, Any], message: str) -> None:
    data = v2_json() | change
    with pytest.raises(ProfileError) as caught:
        profile_from_dict(data)
    assert message in str(caught.value)


def test_seven_cards_need_their_fields_and_the_cards() -> None:
    data = v2_json()
    del data["addresses"]["head_card_count"]
    with pytest.raises(
        ProfileError, match=r"addresses.head_card_count: missing \(max_cards is 7\)"
    ):
        profile_from_dict(data)
    data = v2_json()
    data["has_cards"] = False
    with pytest.raises(ProfileError, match="max_cards: 7 cards need has_cards true"):
        profile_from_dict(data)


def test_v1_files_need_no_v2_keys() -> None:
    """A profile file written before map v2 loads as it did: no level, five cards, v1 codes."""
    data = json.loads((BUNDLED / "reference-v1.json").read_text(encoding="utf-8"))
    assert not {"has_level", "max_cards", "hand_codes"} & set(data)
    assert profile_from_dict(data) == load_profile("reference-v1")


# --- the simulator -------------------------------------------------------------------------


def v2_table(game: Game = Game.CARIBBEAN_STUD, **config: Any) -> SimTable:
    table = SimTable(SimTableConfig(game=game, register_map=2, **config), random.Random(8))
    table.heartbeat(1, 0)
    return table


def test_a_v2_table_writes_a_forced_hit_with_seven_cards_and_a_level() -> None:
    # A Pai Gow Poker table: the joker completes the royal flush (68 IAC 10-9-3(c)).
    table = v2_table(Game.PAI_GOW_POKER)
    table.force_hit(4, HandCategory.ROYAL_FLUSH, SEVEN_WITH_JOKER, level=2)
    record = table.play_round(1)
    assert [(h.seat, h.cards, h.level) for h in record.hits if h.seat == 4] == [
        (4, SEVEN_WITH_JOKER, 2)
    ]
    block = sim.encode_block(table, 2)
    assert len(block) == 38 and block[1] == 2
    head = table.head_hit
    assert head is not None
    if head.seat != 4:  # a seat dealt a paying hand the same round comes first: take it
        table.acknowledge(head.seq)
        block = sim.encode_block(table, 2)
    regs = decode(v2_profile(), block, table="sim")
    assert regs.head is not None and regs.head.seat == 4
    assert (regs.head.cards, regs.head.level, regs.head.hand) == (
        SEVEN_WITH_JOKER,
        2,
        HitHand.ROYAL_FLUSH,
    )


def test_a_v2_table_writes_three_cards_and_a_dealt_hit_as_five_without_a_level() -> None:
    table = v2_table()
    # A lying table: three sevens are no stud hand, but map v2 carries three cards.
    table.force_hit(2, HandCategory.THREE_OF_A_KIND, SEVENS, lying=True)
    table.play_round(1)
    regs = decode(v2_profile(), sim.encode_block(table, 2))
    assert regs.head is not None
    assert (regs.head.seat, regs.head.cards, regs.head.level) == (2, SEVENS, None)
    assert table.acknowledge(regs.head.seq)
    table.force_hand(5, HandCategory.FLUSH)
    record = table.play_round(3)
    dealt = next(h for h in record.hits if h.seat == 5)
    while table.head_hit is not None and table.head_hit.seq != dealt.seq:
        table.acknowledge(table.head_hit.seq)
    block = sim.encode_block(table, 4)
    assert block[sim.ADDR_HEAD_CARD_COUNT] == 5 and block[36:38] == [NOT_REPORTED] * 2
    regs = decode(v2_profile(), block)
    assert regs.head is not None
    assert (regs.head.cards, regs.head.level) == (dealt.cards, None)


def test_a_v2_table_without_cards_counts_none() -> None:
    table = v2_table(report_cards=False)
    table.force_hit(1, HandCategory.ROYAL_FLUSH, SEVEN_WITH_JOKER, level=1, lying=True)
    table.play_round(1)
    block = sim.encode_block(table, 2)
    assert block[sim.ADDR_HEAD_CARD_COUNT] == 0
    regs = decode(v2_profile(), block)
    assert regs.head is not None and regs.head.cards is None and regs.head.level == 1


def test_a_v1_table_reads_as_before() -> None:
    table = SimTable(SimTableConfig(game=Game.CARIBBEAN_STUD), random.Random(8))
    table.heartbeat(1, 0)
    royal = (51, 47, 43, 39, 35)
    table.force_hit(3, HandCategory.ROYAL_FLUSH, royal)
    table.play_round(1)
    block = sim.encode_block(table, 2)
    assert len(block) == 34 and block[1] == 1
    regs = decode(load_profile("reference-v1"), block)
    assert regs.head is not None and (regs.head.cards, regs.head.level) == (royal, None)


@pytest.mark.parametrize(
    ("register_map", "cards", "level", "message"),
    [
        (1, SEVEN_WITH_JOKER, None, "a map v1 table reports five cards, not 7"),
        (1, (51, 47, 43, 39, 35), 2, "a map v1 table cannot say the level of a hit"),
        (1, (51, 47, 43, 39, JOKER), None, "card code must be between 0 and 51, got 52"),
        (2, (*SEVEN_WITH_JOKER, 1), None, "a map v2 table reports one to 7 cards, not 8"),
        (2, (), None, "a map v2 table reports one to 7 cards, not 0"),
        (2, (53, 1, 2), None, "card code must be between 0 and 52, got 53"),
        (2, (1, 1, 2), None, "cards (1, 1, 2) hold one card twice"),
        (2, (1, 2, 3), 0, "level must be between 1 and 65535, got 0"),
    ],
)
def test_a_forced_hit_the_map_cannot_carry_is_refused(
    register_map: int, cards: tuple[int, ...], level: int | None, message: str
) -> None:
    table = SimTable(
        SimTableConfig(game=Game.CARIBBEAN_STUD, register_map=register_map), random.Random(1)
    )
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        table.force_hit(1, HandCategory.ROYAL_FLUSH, cards, level=level)


def test_register_map_setting_is_checked() -> None:
    for bad in (0, 3, True, "2"):
        with pytest.raises(ValueError, match="register_map must be 1 or 2"):
            SimTableConfig(game=Game.CARIBBEAN_STUD, register_map=bad)  # type: ignore[arg-type]
