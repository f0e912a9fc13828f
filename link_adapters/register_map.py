"""The reference register map's encodings (shared/DESIGN.md, "Reference table-controller
register map, v1"): status bits, the seats' bet bitmap, command bits, hit hand codes, 32-bit
words and the hit acknowledgement. The one place that knows them; the controller sees
``link_adapters.reading``.

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
    "NO_HAND_CODE",
    "STATUS_DOOR_OPEN",
    "STATUS_FAULT",
    "STATUS_LOCKOUT",
    "STATUS_PROGRESSIVE_DISABLED",
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
_HAND_OF_CODE: Final = {code: hand for hand, code in HAND_CODES.items()}
_CODE_OF_NAME: Final = {hand.name: code for hand, code in HAND_CODES.items()}
# What register 12 holds for a hand the map names no code for (high card): no hand.
NO_HAND_CODE: Final = 0

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


def hit_hand(code: int) -> HitHand | None:
    """The hand a head hit's hand code names; None for a code that names none."""
    return _HAND_OF_CODE.get(code)


def hand_code(hand: HitHand) -> int:
    """The hand code of ``hand``, as a table writes it."""
    return HAND_CODES[hand]


def hand_code_named(name: str) -> int:
    """The hand code of the hand named ``name`` (a ``HitHand`` name, as the controller's hand
    categories are named); ``NO_HAND_CODE`` for a hand the map gives no code."""
    return _CODE_OF_NAME.get(name, NO_HAND_CODE)


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
