"""Between a table's named values and the engine's: a block read into a ``TableReading``, and a
table's state into the ``TableCommand`` it is given.

The adapter names what a table reports and is told (``link_adapters.reading``) and owns how
that is laid out in registers; this module decides what it means for the meter and the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from controller.core.hands import HandCategory
from controller.core.reducer import HitClaim, TableReading, TableState
from link_adapters.reading import HitHand, TableCommand, TableRegisters
from link_adapters.register_map import command_word

__all__ = [
    "CLAIMED_HANDS",
    "COUNTER_MODULUS",
    "BetWatch",
    "command_bits",
    "seat_deltas",
    "table_command",
    "to_reading",
]

# A table's counters are cumulative u32 and wrap (link_adapters.reading.TableRegisters).
COUNTER_MODULUS = 2**32


# Every command there is (a table is told one at every poll): made once, handed out as they are.
_COMMANDS = {
    (disable, pending): TableCommand(disable_progressive=disable, hit_pending=pending)
    for disable in (False, True)
    for pending in (False, True)
}


def table_command(ts: TableState, *, link_hold: str | None) -> TableCommand:
    """What a table is told: take no progressive wagers whenever it must not, and whether a
    hit there waits for a technician.

    Not taking wagers: held after a hit paid from a meter or a refused claim (the technician
    verifies and resets it first), removed from play (68 IAC 10-1-6.2: a side bet taken there
    would be credited nowhere), or on a link that may not play (``link_hold``: awaiting the
    commission's approval, 68 IAC 10-1-3(c)(4), or inoperable).
    """
    pending = bool(ts.hit_pending)
    return _COMMANDS[pending or bool(ts.out_of_play) or link_hold is not None, pending]


def command_bits(ts: TableState, *, link_hold: str | None) -> int:
    """``table_command`` as the table's command register holds it (encoded by the adapter)."""
    return command_word(table_command(ts, link_hold=link_hold))


# The hand categories the tables' claims name (the adapter names them as the categories are).
# A hand the categories do not name is left out: its claim is taken as one of no paying hand.
CLAIMED_HANDS: Mapping[HitHand, HandCategory] = {
    hand: HandCategory[hand.name] for hand in HitHand if hand.name in HandCategory.__members__
}


class _Zeros(dict[int, tuple[int, ...]]):
    """Nothing wagered at any seat, by the number of seats: each tuple made once."""

    def __missing__(self, length: int) -> tuple[int, ...]:
        zeros = self[length] = (0,) * length
        return zeros


_NO_CREDITS = _Zeros()


def seat_deltas(
    now: tuple[int, ...] | None, before: tuple[int, ...] | None
) -> tuple[int, ...] | None:
    """The credits each seat wagered between two readings of its cumulative per-seat
    counters, each wrapping at 2**32; None without both readings (the table has no per-seat
    counters, or this process has not read it before)."""
    if now is None or before is None or len(now) != len(before):
        return None
    if now == before:  # most polls: nobody wagered since
        return _NO_CREDITS[len(now)]
    return tuple([(n - b) % COUNTER_MODULUS for n, b in zip(now, before, strict=True)])


@dataclass(slots=True)
class BetWatch:
    """What a table's previous readings by this process tell of its side bets: whether credits
    came after the dealer's lockout, and seats its sensors showed in a dealt round that no
    credit came from (game protection, ``controller.core.protection``).

    A late bet: credits rose between two readings that both show the lockout on and the same
    round counter (the round was closed to bets and not yet dealt). An uncredited seat: at a
    reading where the round counter moved (a round dealt), a seat the bet sensors show that no
    per-seat credit came from since the round before; told with the table's next credits, as
    only credits make an entry. Nothing is told from a first reading: a restart forgets.
    """

    rounds: int | None = None
    credits: int | None = None
    locked: bool = False
    credited: int = 0  # seats credited since the last round dealt (a bitmap)
    uncredited: int = 0  # seats sensed in a dealt round without a credit, not yet told

    def watch(self, regs: TableRegisters, seat_credits: tuple[int, ...] | None) -> tuple[bool, int]:
        """``(late, uncredited)`` for this reading; remembers it for the next."""
        took = self.credits is not None and regs.credits != self.credits
        late = took and regs.lockout and self.locked and regs.rounds == self.rounds
        if seat_credits is not None:
            for seat, credits in enumerate(seat_credits):
                if credits:
                    self.credited |= 1 << seat
            if self.rounds is not None and regs.rounds != self.rounds:
                sensed = 0
                for seat in regs.bet_seats:
                    sensed |= 1 << (seat - 1)
                self.uncredited |= sensed & ~self.credited
                self.credited = 0
        uncredited = 0
        if took and self.uncredited:
            uncredited, self.uncredited = self.uncredited, 0
        self.rounds, self.credits, self.locked = regs.rounds, regs.credits, regs.lockout
        return late, uncredited


def to_reading(
    regs: TableRegisters,
    *,
    table_id: str,
    poll_seq: int,
    at_us: int,
    elapsed_us: int | None = None,
    previous_seat_credits: tuple[int, ...] | None = None,
    bets: BetWatch | None = None,
) -> TableReading:
    """What the engine needs from one block read. ``previous_seat_credits``: the per-seat
    counters of the table's previous reading taken by this process, if any (the seats'
    credits since then are told from them); ``bets``: what this process saw of the table's
    bets before, updated by this reading."""
    claim = None
    if regs.head is not None and regs.pending_hits > 0:
        h = regs.head
        # A code that names no hand (or a hand the categories do not name) is taken as a
        # claim of no paying hand, which the engine refuses and holds the table for a
        # technician, rather than blocking the FIFO.
        no_hand = HandCategory.HIGH_CARD
        claim = HitClaim(
            table_seq=h.seq,
            seat=h.seat,
            hand=no_hand if h.hand is None else CLAIMED_HANDS.get(h.hand, no_hand),
            round=h.round,
            cards=h.cards,  # map v2: up to seven, the joker as 52
            level=h.level,
        )
    seat_credits = seat_deltas(regs.per_seat_credits, previous_seat_credits)
    late, uncredited = (False, 0) if bets is None else bets.watch(regs, seat_credits)
    return TableReading(
        table_id=table_id,
        poll_seq=poll_seq,
        at_us=at_us,
        credits=regs.credits,
        rounds=regs.rounds,
        pending_hits=regs.pending_hits,
        head_hit=claim,
        elapsed_us=elapsed_us,
        bet_seats=frozenset(regs.bet_seats),
        seat_credits=seat_credits,
        late=late,
        uncredited=uncredited,
    )
