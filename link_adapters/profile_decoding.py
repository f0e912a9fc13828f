"""Decoding one block read of a table with its profile into a ``TableRegisters``, and the
profile's word order for 32-bit values written to it.

A table that does not report the configured profile id and version is refused
(``ProfileMismatch``) before anything else is looked at: a counter read through the wrong
map is a wrong number, and money follows counters.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import NamedTuple

from link_adapters.errors import DeviceError, ProfileMismatch
from link_adapters.profile_map import (
    CARD_COUNT,
    CARD_COUNT_FIELD,
    CARD_NOT_REPORTED,
    CARDS_FIELD,
    LEVEL_FIELD,
    MAX_CARDS,
    MORE_CARDS_FIELD,
    PER_SEAT_FIELD,
    U16_MAX,
    Profile,
)
from link_adapters.reading import HeadHit, TableRegisters
from link_adapters.register_map import (
    MAX_CARD_CODE,
    bet_seats,
    hit_hand,
    status_flags,
    u32_words,
)

__all__ = ["decode", "decode_words", "encode_u32"]


def encode_u32(profile: Profile, value: int) -> list[int]:
    """Two registers carrying ``value`` in the profile's word order."""
    return u32_words(value, profile.word_order)


def decode(profile: Profile, block: Sequence[int], *, table: str = "") -> TableRegisters:
    """The registers of one read of ``profile.read_start``/``read_count``, decoded.

    Raises ProfileMismatch when the table reports another profile id or version, and
    DeviceError when a value cannot be what the map allows (a head hit at a seat the table
    does not have, a card code that is no card, more cards than seven). Messages name
    ``table``, the address and the value read. Raises ValueError when ``block`` is not
    ``read_count`` values 0-65535.
    """
    if len(block) != profile.read_count:
        raise ValueError(
            f"profile {profile.name} decodes {profile.read_count} registers, got {len(block)}"
        )
    for offset, word in enumerate(block):
        if type(word) is not int or not 0 <= word <= U16_MAX:  # not a bool either
            raise ValueError(
                f"register {profile.read_start + offset} holds {word!r}, not a value 0-65535"
            )
    return decode_words(profile, block, table=table)


def decode_words(profile: Profile, words: Sequence[int], *, table: str = "") -> TableRegisters:
    """``decode`` of a block known to hold ``read_count`` ints 0-65535, as a Modbus link
    hands back (the registers of an answer are unpacked from 16-bit fields): the block is
    not checked again, every value it holds is."""
    plan = _plan_of(profile)
    if (found := words[plan.profile_id]) != profile.profile_id:
        raise ProfileMismatch(
            f"{_where(table)}address {profile.addresses['profile_id']} reads 0x{found:04X}, "
            f"expected profile id 0x{profile.profile_id:04X}"
        )
    if (found := words[plan.version]) != profile.version:
        raise ProfileMismatch(
            f"{_where(table)}address {profile.addresses['version']} reads {found}, expected "
            f"profile version {profile.version}"
        )
    first, second = plan.u32_order
    pending = words[plan.pending]
    head = _decode_head(profile, _BlockReader(profile, words), _where(table)) if pending else None
    per_seat = None
    if plan.per_seat is not None:
        start, end, as_words, as_u32 = plan.per_seat
        # Unpacked in C: the seats' words packed in the profile's word order, read as u32s.
        per_seat = as_u32.unpack(as_words.pack(*words[start:end]))
    rounds, credits = plan.rounds, plan.credits
    # Positional, in the field order of TableRegisters: one is built at every poll.
    return TableRegisters(
        profile.profile_id,
        profile.version,
        status_flags(words[plan.status]),
        words[rounds + first] << 16 | words[rounds + second],
        words[credits + first] << 16 | words[credits + second],
        bet_seats(words[plan.bet_bitmap]),
        pending,
        head,
        per_seat,
    )


def _where(table: str) -> str:
    return f"table {table}: " if table else ""


class _Plan(NamedTuple):
    """Where each field of a profile sits in its read block (offsets, not addresses)."""

    profile_id: int
    version: int
    status: int
    rounds: int
    credits: int
    bet_bitmap: int
    pending: int
    # The per-seat counters: (first offset, end offset, their words as 16-bit fields, the
    # same bytes as 32-bit fields), both in the profile's byte order.
    per_seat: tuple[int, int, struct.Struct, struct.Struct] | None
    u32_order: tuple[int, int]  # offsets of the high and the low word within a u32


_PLANS: dict[int, tuple[Profile, _Plan]] = {}


def _plan_of(profile: Profile) -> _Plan:
    known = _PLANS.get(id(profile))
    if known is not None and known[0] is profile:
        return known[1]
    start = profile.read_start

    def offset(field: str) -> int:
        return profile.addresses[field] - start

    per_seat = None
    if profile.has_per_seat:
        seats, first = profile.seats, offset(PER_SEAT_FIELD)
        order = ">" if profile.word_order == "high_first" else "<"
        per_seat = (
            first,
            first + 2 * seats,
            struct.Struct(f"{order}{2 * seats}H"),
            struct.Struct(f"{order}{seats}I"),
        )
    plan = _Plan(
        profile_id=offset("profile_id"),
        version=offset("version"),
        status=offset("status"),
        rounds=offset("rounds"),
        credits=offset("credits"),
        bet_bitmap=offset("bet_bitmap"),
        pending=offset("pending_hits"),
        per_seat=per_seat,
        u32_order=(0, 1) if profile.word_order == "high_first" else (1, 0),
    )
    if len(_PLANS) > 256:  # profiles are few; never grow without bound
        _PLANS.clear()
    _PLANS[id(profile)] = (profile, plan)
    return plan


def _decode_head(profile: Profile, reader: _BlockReader, where: str) -> HeadHit:
    seat = reader.u16("head_seat")
    if not 1 <= seat <= profile.seats:
        raise DeviceError(
            f"{where}head hit seat (address {profile.addresses['head_seat']}) reads {seat}, "
            f"expected 1-{profile.seats}"
        )
    cards: tuple[int, ...] | None = None
    if profile.has_cards:
        if profile.max_cards == MAX_CARDS:
            cards = _counted_cards(profile, reader, where)
        else:
            start = profile.addresses[CARDS_FIELD]
            cards = _cards(reader, tuple(range(start, start + CARD_COUNT)), 1, where)
    level = None
    if profile.has_level:
        level = reader.u16(LEVEL_FIELD) or None  # 0: the table does not say
    return HeadHit(
        seq=reader.u32("head_seq"),
        seat=seat,
        hand=hit_hand(reader.u16("head_hand"), profile.hand_codes),
        round=reader.u32("head_round"),
        cards=cards,
        level=level,
    )


def _counted_cards(profile: Profile, reader: _BlockReader, where: str) -> tuple[int, ...] | None:
    """Map v2: the count says how many of the seven card registers hold the hand (cards 1-5
    where v1 keeps them, cards 6-7 after); the registers beyond the count are not read."""
    count = reader.u16(CARD_COUNT_FIELD)
    if count > MAX_CARDS:
        raise DeviceError(
            f"{where}head hit card count (address {profile.addresses[CARD_COUNT_FIELD]}) reads "
            f"{count}, expected 0-{MAX_CARDS}"
        )
    first, more = profile.addresses[CARDS_FIELD], profile.addresses[MORE_CARDS_FIELD]
    slots = (*range(first, first + CARD_COUNT), *range(more, more + MAX_CARDS - CARD_COUNT))
    return _cards(reader, slots[:count], 2, where) if count else None


def _cards(
    reader: _BlockReader, addresses: tuple[int, ...], version: int, where: str
) -> tuple[int, ...] | None:
    """The card codes at ``addresses``; None when any reads 0xFFFF (not reported). A code
    above what map ``version`` allows (v1 51, v2 52 the joker) is no card: DeviceError."""
    codes = tuple(reader.at(address) for address in addresses)
    if CARD_NOT_REPORTED in codes:
        return None
    highest = MAX_CARD_CODE[version]
    for address, code in zip(addresses, codes, strict=True):
        if code > highest:
            joker = f" ({highest} the joker)" if version == 2 else ""
            raise DeviceError(
                f"{where}head hit card (address {address}) reads {code}, "
                f"expected a card code 0-{highest}{joker} or 0xFFFF (not reported)"
            )
    return codes


class _BlockReader:
    """Registers of a block by absolute address, 32-bit values in the profile's word order."""

    __slots__ = ("_block", "_high_first", "_profile")

    def __init__(self, profile: Profile, block: Sequence[int]) -> None:
        self._profile = profile
        self._block = block
        self._high_first = profile.word_order == "high_first"

    def at(self, address: int) -> int:
        return self._block[address - self._profile.read_start]

    def u16(self, field: str) -> int:
        return self.at(self._profile.addresses[field])

    def u32_at(self, address: int) -> int:
        first, second = self.at(address), self.at(address + 1)
        high, low = (first, second) if self._high_first else (second, first)
        return high << 16 | low

    def u32(self, field: str) -> int:
        return self.u32_at(self._profile.addresses[field])
