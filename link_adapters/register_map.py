"""The reference register map's encodings (shared/DESIGN.md, "Reference table-controller
register map, v1", and docs/register-map-v2.md): status bits, the seats' bet bitmap, command
bits, hit hand codes, card codes, 32-bit words and the hit acknowledgement. The one place that
knows them; the controller sees ``link_adapters.reading``.

Where each field lives (addresses, word order) is the profile's; what its bits and codes mean
is here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final, Literal

from link_adapters.reading import HitHand, TableCommand, TableFlags

__all__ = [
    "COMMAND_DISABLE_PROGRESSIVE",
    "COMMAND_HIT_PENDING",
    "HAND_CODES",
    "HAND_CODES_V2",
    "HAND_CODE_TABLES",
    "JOKER_CODE",
    "MAX_CARD_CODE",
    "NO_HAND_CODE",
    "STATUS_DOOR_OPEN",
    "STATUS_FAULT",
    "STATUS_LOCKOUT",
    "STATUS_PROGRESSIVE_DISABLED",
    "HandCodes",
    "WordOrder",
    "acknowledgement_words",
    "bet_seats",
    "command_word",
    "hand_code",
    "hand_code_named",
    "hit_hand",
    "next_heartbeat",
    "seat_bitmap",
    "status_flags",
    "u32_words",
]

WordOrder = Literal["high_first", "low_first"]
# Which map's hand codes a profile speaks: 1 (codes 1-9) or 2 (also 10-15).
HandCodes = Literal[1, 2]

_U16_MAX: Final = 0xFFFF
_U32_LIMIT: Final = 1 << 32

# Register 2, the table's status bits.
STATUS_LOCKOUT: Final = 1 << 0  # no more bets
STATUS_DOOR_OPEN: Final = 1 << 1
STATUS_FAULT: Final = 1 << 2
STATUS_PROGRESSIVE_DISABLED: Final = 1 << 3

# Register 7, the seats with a side bet this round: bit n-1 is seat n, seats 1-7.
_BITMAP_SEATS: Final = 7
_SEATS_MASK: Final = (1 << _BITMAP_SEATS) - 1
# Every bitmap of the seats, decoded once: the bitmap is decoded at every poll.
_SEATS: Final = tuple(
    tuple(seat for seat in range(1, _BITMAP_SEATS + 1) if word & 1 << (seat - 1))
    for word in range(_SEATS_MASK + 1)
)

# Register 102, the controller's command bits.
COMMAND_DISABLE_PROGRESSIVE: Final = 1 << 0  # the table takes no progressive side bets
COMMAND_HIT_PENDING: Final = 1 << 1  # a hit at this table awaits a technician (indicator)

# Register 12, the head hit's hand: 1 royal flush ... 9 one pair.
HAND_CODES: Final[Mapping[HitHand, int]] = MappingProxyType(
    {
        HitHand.ROYAL_FLUSH: 1,
        HitHand.STRAIGHT_FLUSH: 2,
        HitHand.FOUR_OF_A_KIND: 3,
        HitHand.FULL_HOUSE: 4,
        HitHand.FLUSH: 5,
        HitHand.STRAIGHT: 6,
        HitHand.THREE_OF_A_KIND: 7,
        HitHand.TWO_PAIR: 8,
        HitHand.ONE_PAIR: 9,
    }
)
# Register 12 under map v2: the v1 codes unchanged, then the hands of the games v2 serves.
HAND_CODES_V2: Final[Mapping[HitHand, int]] = MappingProxyType(
    {
        **HAND_CODES,
        HitHand.FIVE_ACES: 10,  # four aces and the joker, above a royal flush (68 IAC 10-9-14)
        HitHand.SEVEN: 11,  # Super Sevens (68 IAC 10-12-3)
        HitHand.TWO_SEVENS: 12,
        HitHand.TWO_SUITED_SEVENS: 13,
        HitHand.THREE_SEVENS: 14,
        HitHand.THREE_SUITED_SEVENS: 15,
    }
)
HAND_CODE_TABLES: Final[Mapping[int, Mapping[HitHand, int]]] = MappingProxyType(
    {1: HAND_CODES, 2: HAND_CODES_V2}
)
_HAND_OF_CODE: Final = {
    version: {code: hand for hand, code in codes.items()}
    for version, codes in HAND_CODE_TABLES.items()
}
_CODE_OF_NAME: Final = {
    version: {hand.name: code for hand, code in codes.items()}
    for version, codes in HAND_CODE_TABLES.items()
}
# What register 12 holds for a hand the map names no code for (high card): no hand.
NO_HAND_CODE: Final = 0

# Card codes: rank = code // 4 (0 deuce .. 12 ace), suit = code % 4 (clubs, diamonds, hearts,
# spades); map v2 adds the joker of Pai Gow Poker's 53-card deck (68 IAC 10-9-3(b)).
JOKER_CODE: Final = 52
# The highest card code each map allows.
MAX_CARD_CODE: Final[Mapping[int, int]] = MappingProxyType({1: 51, 2: JOKER_CODE})

_STATUS_BITS: Final = STATUS_LOCKOUT | STATUS_DOOR_OPEN | STATUS_FAULT | STATUS_PROGRESSIVE_DISABLED
# Every combination of the status bits, decoded once: a status word is decoded at every poll.
_FLAGS: Final = tuple(
    TableFlags(
        lockout=bool(word & STATUS_LOCKOUT),
        door_open=bool(word & STATUS_DOOR_OPEN),
        fault=bool(word & STATUS_FAULT),
        progressive_disabled=bool(word & STATUS_PROGRESSIVE_DISABLED),
    )
    for word in range(_STATUS_BITS + 1)
)


def status_flags(word: int) -> TableFlags:
    """The status register, named; bits the map does not define are ignored."""
    return _FLAGS[word & _STATUS_BITS]


def bet_seats(word: int) -> tuple[int, ...]:
    """The seats the bet bitmap names, in seat order; bits above seat 7 are ignored."""
    return _SEATS[word & _SEATS_MASK]


def seat_bitmap(seats: Iterable[int]) -> int:
    """The bet bitmap of ``seats`` (seat numbers 1-7), as a table writes it."""
    return sum(1 << (seat - 1) for seat in seats)


def command_word(command: TableCommand) -> int:
    """The command register's value for ``command``."""
    return (COMMAND_DISABLE_PROGRESSIVE if command.disable_progressive else 0) | (
        COMMAND_HIT_PENDING if command.hit_pending else 0
    )


def hit_hand(code: int, version: HandCodes = 1) -> HitHand | None:
    """The hand a head hit's hand code names under map ``version``'s codes; None for a code
    that names none (under v1, codes 10-15 name none)."""
    return _HAND_OF_CODE[version].get(code)


def hand_code(hand: HitHand, version: HandCodes = 1) -> int:
    """The hand code of ``hand`` under map ``version``, as a table writes it; ValueError for a
    hand that map gives no code (five aces or the sevens under v1)."""
    code = HAND_CODE_TABLES[version].get(hand)
    if code is None:
        raise ValueError(f"register map v{version} has no hand code for {hand.name}")
    return code


def hand_code_named(name: str, version: HandCodes = 1) -> int:
    """The hand code of the hand named ``name`` (a ``HitHand`` name, as the controller's hand
    categories are named) under map ``version``; ``NO_HAND_CODE`` for a hand that map gives no
    code."""
    return _CODE_OF_NAME[version].get(name, NO_HAND_CODE)


def u32_words(value: int, word_order: WordOrder) -> list[int]:
    """Two registers carrying ``value`` in ``word_order``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < _U32_LIMIT:
        raise ValueError(f"{value!r} is not an unsigned 32-bit value")
    high, low = value >> 16, value & _U16_MAX
    return [high, low] if word_order == "high_first" else [low, high]


def acknowledgement_words(seq: int, word_order: WordOrder) -> list[int]:
    """The hit acknowledgement registers: the number of the head hit taken, a u32. A table pops
    its head hit when they equal the head's number."""
    return u32_words(seq, word_order)


def next_heartbeat(heartbeat: int) -> int:
    """The heartbeat register's next value: one more, wrapping at 16 bits."""
    return (heartbeat + 1) & _U16_MAX
