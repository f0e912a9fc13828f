"""Register-map profiles: the bundled files, decoding blocks built by hand, refusing bad files."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from controller.core.games import Game
from controller.core.hands import HandCategory
from link_adapters.errors import DeviceError, ProfileMismatch
from link_adapters.profile_decoding import decode, encode_u32
from link_adapters.profile_files import bundled_profiles, load_profile, profile_from_dict
from link_adapters.profile_map import Profile, ProfileError
from link_adapters.reading import HeadHit, HitHand, TableFlags
from link_adapters.simulator import registers as sim_registers
from link_adapters.simulator.table import SimTable
from link_adapters.simulator.table_types import SimTableConfig

BUNDLED = Path(__file__).resolve().parents[2] / "link_adapters" / "profiles"
ROYAL_SPADES = (51, 47, 43, 39, 35)  # A K Q J T of spades: rank * 4 + suit (3 = spades)


def reference_block() -> list[int]:
    """A reference v1 block written out from the table in shared/DESIGN.md."""
    return [
        0x5450, 1,                  # 0 profile id, 1 version
        0b1011,                     # 2 status: lockout, door open, progressive disabled
        0x0001, 0x0002,             # 3-4 rounds = 0x00010002
        0xDEAD, 0xBEEF,             # 5-6 credits = 0xDEADBEEF
        0b1000101,                  # 7 bets at seats 1, 3 and 7
        2,                          # 8 pending hits
        0x0000, 0x004D,             # 9-10 head sequence 77
        3,                          # 11 head seat
        1,                          # 12 head hand: royal flush
        0x0001, 0x0000,             # 13-14 head round 65536
        *ROYAL_SPADES,              # 15-19 head cards
        0, 1, 0, 2, 0, 3, 0, 4,     # 20-27 seats 1-4
        0, 5, 0, 6, 0xFFFF, 0xFFFF,  # 28-33 seats 5-7
    ]  # fmt: skip


def legacy_block() -> list[int]:
    """legacy-no-seats-v1: block at 200, 32-bit values low word first."""
    return [
        0x4C47, 2,                  # 200 profile id, 201 version
        0x0002, 0x0001,             # 202-203 rounds = 0x00010002 (low word first)
        0xBEEF, 0xDEAD,             # 204-205 credits = 0xDEADBEEF
        0b0100,                     # 206 status: fault
        0b100001,                   # 207 bets at seats 1 and 6
        1,                          # 208 pending hits
        0x0009, 0x0000,             # 209-210 head sequence 9
        0x0005, 0x0000,             # 211-212 head round 5
        6,                          # 213 head seat
        3,                          # 214 head hand: four of a kind
    ]  # fmt: skip


# --- the bundled files ---------------------------------------------------------------------


def test_reference_profile_is_the_design_map() -> None:
    profile = load_profile()
    assert profile == load_profile("reference-v1")
    assert (profile.profile_id, profile.version) == (0x5450, 1)
    assert (profile.read_start, profile.read_count) == (0, 34)
    assert profile.word_order == "high_first"
    assert (profile.seats, profile.has_per_seat, profile.has_cards) == (7, True, True)
    assert dict(profile.addresses) == {
        "profile_id": 0, "version": 1, "status": 2, "rounds": 3, "credits": 5,
        "bet_bitmap": 7, "pending_hits": 8, "head_seq": 9, "head_seat": 11, "head_hand": 12,
        "head_round": 13, "head_cards": 15, "per_seat": 20,
    }  # fmt: skip
    writes = (
        profile.ack_address,
        profile.command_address,
        profile.meter_address,
        profile.heartbeat_address,
    )
    assert writes == (100, 102, 103, 105)
    # Every poll writes command, meter and heartbeat; the acknowledgement only on its own.
    assert profile.write_span == (102, 4)


def test_simulator_speaks_the_reference_profile() -> None:
    """The JSON is the source of the addresses; the simulator keeps its own copy, so the two
    are held to the same map here."""
    profile = load_profile()
    sim_fields = {
        "profile_id": sim_registers.ADDR_PROFILE_ID,
        "version": sim_registers.ADDR_PROFILE_VERSION,
        "status": sim_registers.ADDR_STATUS,
        "rounds": sim_registers.ADDR_ROUNDS,
        "credits": sim_registers.ADDR_CREDITS,
        "bet_bitmap": sim_registers.ADDR_BET_BITMAP,
        "pending_hits": sim_registers.ADDR_PENDING_HITS,
        "head_seq": sim_registers.ADDR_HEAD_SEQ,
        "head_seat": sim_registers.ADDR_HEAD_SEAT,
        "head_hand": sim_registers.ADDR_HEAD_HAND,
        "head_round": sim_registers.ADDR_HEAD_ROUND,
        "head_cards": sim_registers.ADDR_HEAD_CARDS,
        "per_seat": sim_registers.ADDR_SEAT_CREDITS,
    }
    assert dict(profile.addresses) == sim_fields
    assert (profile.ack_address, profile.command_address) == (
        sim_registers.ADDR_ACK,
        sim_registers.ADDR_COMMAND,
    )
    assert (profile.meter_address, profile.heartbeat_address) == (
        sim_registers.ADDR_METER,
        sim_registers.ADDR_HEARTBEAT,
    )
    assert profile.write_span == (sim_registers.ADDR_COMMAND, 4)

    table = SimTable(SimTableConfig(game=Game.CARIBBEAN_STUD, seats=5), random.Random(3))
    now = 1_767_225_600_000_000
    table.heartbeat(1, now)
    table.force_hand(2, HandCategory.ROYAL_FLUSH)
    for index in range(6):
        table.play_round(now + index)
    regs = decode(profile, sim_registers.encode_block(table, now + 6), table="sim")
    assert (regs.credits, regs.rounds) == (table.credits, table.rounds)
    assert regs.per_seat_credits == table.per_seat_credits
    assert regs.bet_seats == table.records[-1].bet_seats
    assert regs.pending_hits == len(table.hit_fifo) > 0
    head = table.head_hit
    assert head is not None
    assert regs.head == HeadHit(
        head.seq, head.seat, HitHand[head.hand.name], head.round, head.cards
    )


def test_bundled_profiles_are_listed() -> None:
    assert bundled_profiles() == ("legacy-no-seats-v1", "reference-v1", "reference-v2")


# --- decoding ------------------------------------------------------------------------------


def test_reference_decodes_a_block_built_by_hand() -> None:
    regs = decode(load_profile(), reference_block(), table="T1")
    assert (regs.profile_id, regs.version) == (0x5450, 1)
    assert regs.rounds == 0x00010002
    assert regs.credits == 0xDEADBEEF
    assert regs.bet_seats == (1, 3, 7)
    assert regs.pending_hits == 2
    assert regs.head == HeadHit(
        seq=77, seat=3, hand=HitHand.ROYAL_FLUSH, round=65536, cards=ROYAL_SPADES
    )
    assert regs.per_seat_credits == (1, 2, 3, 4, 5, 6, 0xFFFFFFFF)
    assert regs.flags == TableFlags(
        lockout=True, door_open=True, fault=False, progressive_disabled=True
    )
    assert (regs.lockout, regs.door_open, regs.fault, regs.progressive_disabled) == regs.flags


def test_no_head_hit_when_none_is_pending() -> None:
    block = reference_block()
    block[8] = 0
    block[11] = 99  # what the head registers hold without a pending hit is not read
    assert decode(load_profile(), block).head is None


def test_cards_not_reported_when_any_card_reads_ffff() -> None:
    block = reference_block()
    block[17] = 0xFFFF
    head = decode(load_profile(), block).head
    assert head is not None and head.cards is None


def test_legacy_profile_decodes_its_own_layout() -> None:
    profile = load_profile("legacy-no-seats-v1")
    assert profile.word_order == "low_first"
    assert (profile.has_per_seat, profile.has_cards, profile.seats) == (False, False, 6)
    assert profile.write_span is None
    regs = decode(profile, legacy_block(), table="L1")
    assert regs.rounds == 0x00010002
    assert regs.credits == 0xDEADBEEF
    assert regs.fault and not regs.lockout
    assert regs.bet_seats == (1, 6)
    assert regs.head == HeadHit(seq=9, seat=6, hand=HitHand.FOUR_OF_A_KIND, round=5, cards=None)
    assert regs.per_seat_credits is None


def test_encode_u32_follows_the_word_order() -> None:
    assert encode_u32(load_profile(), 0x12345678) == [0x1234, 0x5678]
    assert encode_u32(load_profile("legacy-no-seats-v1"), 0x12345678) == [0x5678, 0x1234]
    for bad in (-1, 1 << 32, True, 1.0):
        with pytest.raises(ValueError, match="unsigned 32-bit"):
            encode_u32(load_profile(), bad)  # type: ignore[arg-type]


def test_wrong_profile_id_names_table_address_and_value() -> None:
    block = reference_block()
    block[0] = 0x1234
    with pytest.raises(ProfileMismatch) as caught:
        decode(load_profile(), block, table="T3")
    assert str(caught.value) == "table T3: address 0 reads 0x1234, expected profile id 0x5450"


def test_wrong_version_names_table_address_and_value() -> None:
    block = reference_block()
    block[1] = 2
    with pytest.raises(ProfileMismatch) as caught:
        decode(load_profile(), block, table="T3")
    assert str(caught.value) == "table T3: address 1 reads 2, expected profile version 1"


def test_legacy_mismatch_names_its_own_address() -> None:
    with pytest.raises(ProfileMismatch, match=r"table L1: address 200 reads 0x5450"):
        decode(load_profile("legacy-no-seats-v1"), reference_block()[:15], table="L1")


@pytest.mark.parametrize(
    ("address", "value", "message"),
    [
        (11, 0, r"table T4: head hit seat \(address 11\) reads 0, expected 1-7"),
        (11, 8, r"table T4: head hit seat \(address 11\) reads 8, expected 1-7"),
        (18, 52, r"table T4: head hit card \(address 18\) reads 52, expected a card code 0-51"),
    ],
)
def test_impossible_head_hit_is_a_device_error(address: int, value: int, message: str) -> None:
    block = reference_block()
    block[address] = value
    with pytest.raises(DeviceError, match=message):
        decode(load_profile(), block, table="T4")


def test_unknown_hand_code_is_passed_to_the_controller() -> None:
    block = reference_block()
    block[12] = 42
    head = decode(load_profile(), block).head
    assert head is not None and head.hand is None  # a claim of no hand the map knows


def test_block_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError, match="decodes 34 registers, got 33"):
        decode(load_profile(), reference_block()[:33])


@pytest.mark.parametrize("bad", [True, -1, 65536, 1.0, "1"])
def test_a_register_that_is_no_word_is_refused(bad: object) -> None:
    block: list[object] = list(reference_block())
    block[25] = bad
    with pytest.raises(ValueError, match=f"register 25 holds {bad!r}, not a value 0-65535"):
        decode(load_profile(), block)  # type: ignore[arg-type]


def test_per_seat_counters_follow_the_word_order() -> None:
    """Low word first: each seat's two registers swap, the counters do not change."""
    data = reference_json()
    data["word_order"] = "low_first"
    low_first = profile_from_dict(data)
    block = reference_block()
    swapped = list(block)
    for at in (3, 5, 9, 13, *range(20, 34, 2)):  # every u32 of the block
        swapped[at], swapped[at + 1] = block[at + 1], block[at]
    high, low = decode(load_profile(), block), decode(low_first, swapped)
    assert low.per_seat_credits == high.per_seat_credits == (1, 2, 3, 4, 5, 6, 0xFFFFFFFF)
    assert low == high


# --- refusing bad files --------------------------------------------------------------------


def reference_json() -> dict[str, Any]:
    return json.loads((BUNDLED / "reference-v1.json").read_text(encoding="utf-8"))


def edited(change: str) -> dict[str, Any]:
    data = reference_json()
    if change == "missing key":
        del data["read_count"]
    elif change == "unknown key":
        data["read_cuont"] = 34
    elif change == "wrong type":
        data["seats"] = "7"
    elif change == "bool for int":
        data["version"] = True
    elif change == "bad hex":
        data["profile_id"] = "0xZZ"
    elif change == "bad word order":
        data["word_order"] = "big_endian"
    elif change == "field outside block":
        data["addresses"]["credits"] = 40
    elif change == "overlapping fields":
        data["addresses"]["credits"] = 4
    elif change == "unknown field":
        data["addresses"]["jackpot"] = 30
    elif change == "missing field":
        del data["addresses"]["head_seq"]
    elif change == "cards without flag":
        data["has_cards"] = False
    elif change == "overlapping writes":
        data["meter_address"] = 101
    elif change == "read too long":
        data["read_count"] = 200
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("missing key", "key 'read_count' is missing"),
        ("unknown key", "unknown key 'read_cuont'"),
        ("wrong type", "seats: expected an integer, got '7'"),
        ("bool for int", "version: expected an integer, got True"),
        ("bad hex", "profile_id: '0xZZ' is not a hex number"),
        ("bad word order", "word_order: expected 'high_first' or 'low_first', got 'big_endian'"),
        (
            "field outside block",
            "addresses.credits: registers 40-41 lie outside the read block 0-33",
        ),
        (
            "overlapping fields",
            "addresses.credits: registers 4-5 overlap addresses.rounds (registers 3-4)",
        ),
        ("unknown field", "addresses.jackpot: not a field of the register map"),
        ("missing field", "addresses.head_seq: missing"),
        ("cards without flag", "addresses.head_cards: given, but has_cards is false"),
        ("overlapping writes", "meter_address: registers 101-102 overlap ack_address"),
        ("read too long", "read_count: 200 is outside 1-125"),
    ],
)
def test_bad_profile_file_is_refused_naming_file_and_key(
    tmp_path: Path, change: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(edited(change)), encoding="utf-8")
    with pytest.raises(ProfileError) as caught:
        load_profile(str(path))
    assert str(caught.value).startswith(f"profile file {path}: ")
    assert message in str(caught.value)


def test_file_that_is_not_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"name": "x",\n  "version": }', encoding="utf-8")
    with pytest.raises(ProfileError, match=r"broken\.json: not valid JSON \(line 2, column 14"):
        load_profile(str(path))


def test_missing_file_and_unknown_name_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match=r"nope\.json: cannot be read"):
        load_profile(str(tmp_path / "nope.json"))
    with pytest.raises(ProfileError, match="no bundled profile is named 'reference-v9'"):
        load_profile("reference-v9")


def test_a_copy_of_a_bundled_file_loads_by_path(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(reference_json()), encoding="utf-8")
    assert load_profile(str(path)) == load_profile()


def test_profile_keeps_its_own_addresses() -> None:
    addresses = dict(load_profile().addresses)
    fields: dict[str, Any] = {
        key: getattr(load_profile(), key)
        for key, spec in Profile.__dataclass_fields__.items()
        if key != "addresses" and spec.init
    }
    profile = Profile(**fields, addresses=addresses)
    addresses["credits"] = 30
    assert profile.addresses["credits"] == 5
    with pytest.raises(TypeError):
        profile.addresses["credits"] = 30  # type: ignore[index]
