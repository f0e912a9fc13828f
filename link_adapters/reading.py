"""What a table reports and what it is told, in the controller's words: no address, bit or code.

The adapter decodes a block read into a ``TableRegisters`` (named counters, named status
flags, the seats with a side bet by number, the head hit with its hand named by ``HitHand``)
and encodes a ``TableCommand`` (named orders) into the table's registers; how each is laid
out in registers is ``link_adapters.register_map``'s business and the profile's, never the
controller's.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final, NamedTuple

__all__ = [
    "METER_MAX_CENTS",
    "HeadHit",
    "HitHand",
    "TableCommand",
    "TableFlags",
    "TableRegisters",
]

# The most a table's own meter can show, in cents (the map gives it an unsigned 32-bit value).
METER_MAX_CENTS: Final = (1 << 32) - 1


class HitHand(enum.Enum):
    """The hands a table may claim a hit for, named as the controller's hand categories are.

    The controller maps them by name; their codes on the wire are the register map's.
    """

    ROYAL_FLUSH = enum.auto()
    STRAIGHT_FLUSH = enum.auto()
    FOUR_OF_A_KIND = enum.auto()
    FULL_HOUSE = enum.auto()
    FLUSH = enum.auto()
    STRAIGHT = enum.auto()
    THREE_OF_A_KIND = enum.auto()
    TWO_PAIR = enum.auto()
    ONE_PAIR = enum.auto()
    # Named by register map v2 only (a v1 table has no code for them): Pai Gow Poker's five
    # aces, four aces and the joker, above a royal flush (68 IAC 10-9-1(d)(5), 10-9-14), and
    # the Super Sevens hands of sevens (68 IAC 10-12-3).
    FIVE_ACES = enum.auto()
    SEVEN = enum.auto()
    TWO_SEVENS = enum.auto()
    TWO_SUITED_SEVENS = enum.auto()
    THREE_SEVENS = enum.auto()
    THREE_SUITED_SEVENS = enum.auto()


class TableFlags(NamedTuple):
    """What a table reports of its own state (its switches and its progressive)."""

    lockout: bool  # the dealer's lockout switch: no more bets
    door_open: bool
    fault: bool
    progressive_disabled: bool  # the table takes no progressive side bets now


@dataclass(frozen=True, slots=True)
class HeadHit:
    """The oldest hit in the table's FIFO, as the table claims it.

    ``hand`` is None when the table sends a code that names no hand of the map: such a claim
    must still reach the controller, to be refused and recorded, not stop the table being
    read. ``cards`` is None when the model reports no cards or any card is not reported; map
    v2 reports up to seven, the joker as 52 (68 IAC 10-9-3). ``level`` is the level of the
    link's pool the table says the hit is for (map v2; 1 is the first), None when not said.
    """

    seq: int
    seat: int
    hand: HitHand | None
    round: int
    cards: tuple[int, ...] | None
    level: int | None = None


class TableRegisters(NamedTuple):
    """One block read of a table, decoded. Counters are cumulative u32 and may wrap.

    A named tuple: one is built at every poll of every table, and it is immutable.
    """

    profile_id: int
    version: int
    flags: TableFlags
    rounds: int
    credits: int
    bet_seats: tuple[int, ...]  # the seats with a side bet this round, in seat order
    pending_hits: int
    head: HeadHit | None
    per_seat_credits: tuple[int, ...] | None

    @property
    def lockout(self) -> bool:
        return self.flags.lockout

    @property
    def door_open(self) -> bool:
        return self.flags.door_open

    @property
    def fault(self) -> bool:
        return self.flags.fault

    @property
    def progressive_disabled(self) -> bool:
        return self.flags.progressive_disabled


@dataclass(frozen=True, slots=True)
class TableCommand:
    """What the controller tells a table at every poll.

    ``disable_progressive``: take no progressive side bets (held after a hit, out of play, a
    link that may not play). ``hit_pending``: a hit at this table awaits a technician (an
    indicator only). A table not yet told anything is told to take no progressive bets.
    """

    disable_progressive: bool = True
    hit_pending: bool = False
