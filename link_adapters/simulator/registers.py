"""The reference table-controller register maps v1 (shared/DESIGN.md) and v2
(docs/register-map-v2.md) as pure encode/decode.

Holding registers, zero-based addresses, 32-bit values as two registers, high word first.
The controller reads the block 0-33 (v1) or 0-37 (v2) in one poll and writes 100-105; a
Modbus server wraps these two functions around a ``SimTable`` and adds nothing of its own.
A table speaks the map its ``SimTableConfig.register_map`` names. Map v2 keeps v1's registers
0-33 and adds the head hit's level (34), its card count (35) and its cards 6-7 (36-37).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from link_adapters.register_map import hand_code_named, u32_words
from link_adapters.simulator.table import SimTable

__all__ = [
    "ADDR_ACK",
    "ADDR_BET_BITMAP",
    "ADDR_COMMAND",
    "ADDR_CREDITS",
    "ADDR_HEAD_CARDS",
    "ADDR_HEAD_CARD_COUNT",
    "ADDR_HEAD_HAND",
    "ADDR_HEAD_LEVEL",
    "ADDR_HEAD_MORE_CARDS",
    "ADDR_HEAD_ROUND",
    "ADDR_HEAD_SEAT",
    "ADDR_HEAD_SEQ",
    "ADDR_HEARTBEAT",
    "ADDR_METER",
    "ADDR_PENDING_HITS",
    "ADDR_PROFILE_ID",
    "ADDR_PROFILE_VERSION",
    "ADDR_ROUNDS",
    "ADDR_SEAT_CREDITS",
    "ADDR_STATUS",
    "CARD_NOT_REPORTED",
    "PROFILE_ID",
    "PROFILE_VERSION",
    "PROFILE_VERSION_V2",
    "READ_COUNT",
    "READ_COUNT_V2",
    "READ_START",
    "WRITE_COUNT",
    "WRITE_START",
    "apply_write",
    "encode_block",
    "from_pair",
    "read_count",
    "u32_pair",
]

PROFILE_ID: Final = 0x5450
PROFILE_VERSION: Final = 1
PROFILE_VERSION_V2: Final = 2
READ_START: Final = 0
READ_COUNT: Final = 34
READ_COUNT_V2: Final = 38
WRITE_START: Final = 100
WRITE_COUNT: Final = 6
CARD_NOT_REPORTED: Final = 0xFFFF

ADDR_PROFILE_ID: Final = 0
ADDR_PROFILE_VERSION: Final = 1
ADDR_STATUS: Final = 2
ADDR_ROUNDS: Final = 3  # u32, 3-4
ADDR_CREDITS: Final = 5  # u32, 5-6
ADDR_BET_BITMAP: Final = 7
ADDR_PENDING_HITS: Final = 8
ADDR_HEAD_SEQ: Final = 9  # u32, 9-10
ADDR_HEAD_SEAT: Final = 11
ADDR_HEAD_HAND: Final = 12
ADDR_HEAD_ROUND: Final = 13  # u32, 13-14
ADDR_HEAD_CARDS: Final = 15  # five registers, 15-19
ADDR_SEAT_CREDITS: Final = 20  # seven u32, 20-33
# Map v2 only.
ADDR_HEAD_LEVEL: Final = 34  # 0: not said
ADDR_HEAD_CARD_COUNT: Final = 35  # 0-7
ADDR_HEAD_MORE_CARDS: Final = 36  # cards 6-7, 36-37 (cards 1-5 at 15-19)
_CARD_SLOTS: Final = 7

ADDR_ACK: Final = 100  # u32, 100-101
ADDR_COMMAND: Final = 102
ADDR_METER: Final = 103  # u32, 103-104
ADDR_HEARTBEAT: Final = 105

_U16_MAX: Final = 0xFFFF
# Registers 9-19 with no hit pending.
_NO_HEAD: Final = (0,) * (ADDR_SEAT_CREDITS - ADDR_HEAD_SEQ)
_NAMES: Final = {
    ADDR_ACK: "hit acknowledge",
    ADDR_COMMAND: "command bits",
    ADDR_METER: "meter display",
    ADDR_HEARTBEAT: "heartbeat",
}


def u32_pair(value: int) -> tuple[int, int]:
    """(high word, low word) of an unsigned 32-bit value (the map's word order)."""
    high, low = u32_words(value, "high_first")
    return high, low


def from_pair(hi: int, lo: int) -> int:
    """The unsigned 32-bit value of a (high word, low word) register pair."""
    _check_word(hi, "high word")
    _check_word(lo, "low word")
    return hi << 16 | lo


def _check_word(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _U16_MAX:
        raise ValueError(f"{what} {value!r} is not a register value 0-65535")
    return value


def read_count(table: SimTable) -> int:
    """How many registers from ``READ_START`` the table's map shows: 34 (v1) or 38 (v2)."""
    return READ_COUNT_V2 if table.config.register_map == 2 else READ_COUNT


def encode_block(table: SimTable, now_us: int) -> list[int]:
    """Registers 0-33 (map v1) or 0-37 (map v2) as the table shows them at ``now_us``."""
    # Every read of every table comes here: 32-bit values are split inline (the table keeps
    # its counters within 0..2**32 - 1, high word first as the map says).
    v2 = table.config.register_map == 2
    rounds, credits = table.rounds, table.credits
    fifo = table.hit_fifo
    block = [
        PROFILE_ID,
        PROFILE_VERSION_V2 if v2 else PROFILE_VERSION,
        table.status_bits(now_us),
        rounds >> 16,
        rounds & _U16_MAX,
        credits >> 16,
        credits & _U16_MAX,
        table.bet_bitmap,
        # A register cannot say more than 65535; the controller only needs "some are pending".
        min(len(fifo), _U16_MAX),
    ]
    v2_tail: tuple[int, ...] = (0, 0, 0, 0)  # registers 34-37: level, card count, cards 6-7
    if fifo:
        head = fifo[0]
        block += (
            head.seq >> 16,
            head.seq & _U16_MAX,
            head.seat,
            hand_code_named(head.hand.name, 2 if v2 else 1),
            head.round >> 16,
            head.round & _U16_MAX,
        )
        if v2:
            cards = head.cards if table.config.report_cards else ()
            slots = [*cards, *(CARD_NOT_REPORTED,) * (_CARD_SLOTS - len(cards))]
            v2_tail = (head.level or 0, len(cards), *slots[5:])
        else:
            cards = head.cards if table.config.report_cards else (CARD_NOT_REPORTED,) * 5
            slots = list(cards)
        block += slots[:5]
    else:
        block += _NO_HEAD
    for seat_credits in table.per_seat_credits:
        block += (seat_credits >> 16, seat_credits & _U16_MAX)
    if v2:
        block += v2_tail
    return block


def apply_write(table: SimTable, address: int, values: Sequence[int], now_us: int) -> None:
    """A write of ``values`` to consecutive registers from ``address`` (100-105 only).

    The whole write is checked before anything is applied, and a 32-bit field must be
    written whole (both words in one write): a half-written acknowledge could pop the
    wrong hit. Anything else raises ValueError naming the address.
    """
    address = _check_address(address)
    if not values:
        raise ValueError(f"write to register {address} carries no values")
    for offset, value in enumerate(values):  # every poll writes here: checked inline
        if type(value) is not int or not 0 <= value <= _U16_MAX:
            _check_word(value, f"value for register {address + offset}")  # raises, naming it
    end = address + len(values)  # exclusive
    if address < WRITE_START or end > WRITE_START + WRITE_COUNT:
        for target in range(address, end):
            if not WRITE_START <= target < WRITE_START + WRITE_COUNT:
                kind = (
                    "read-only"
                    if READ_START <= target < READ_START + read_count(table)
                    else "not mapped"
                )
                raise ValueError(
                    f"register {target} is {kind}; the controller may write only "
                    f"{WRITE_START}-{WRITE_START + WRITE_COUNT - 1}"
                )
    for pair in (ADDR_ACK, ADDR_METER):
        if (address <= pair < end) != (address <= pair + 1 < end):
            raise ValueError(
                f"register {pair}-{pair + 1} ({_NAMES[pair]}) is a 32-bit value: "
                "write both registers in one request"
            )
    # In address order, as a device applies one multi-register write; every word is known
    # to be 0-65535 by now.
    if address <= ADDR_ACK < end:
        at = ADDR_ACK - address
        table.acknowledge(values[at] << 16 | values[at + 1])
    if address <= ADDR_COMMAND < end:
        table.set_command_bits(values[ADDR_COMMAND - address])
    if address <= ADDR_METER < end:
        at = ADDR_METER - address
        table.set_meter_display(values[at] << 16 | values[at + 1])
    if address <= ADDR_HEARTBEAT < end:
        table.heartbeat(values[ADDR_HEARTBEAT - address], now_us)


def _check_address(address: object) -> int:
    if isinstance(address, bool) or not isinstance(address, int) or address < 0:
        raise ValueError(f"register address {address!r} is not a non-negative int")
    return address
