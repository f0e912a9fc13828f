"""What a table's readings say of its side bets for game protection: the seats credited, late
bets after the dealer's lockout, seats sensed without a credit, recorded in the contribution
that the reading makes (``table_values.BetWatch``, ``reducer.readings.bets_record``)."""

from __future__ import annotations

import json

from controller.core.ledger import canonical_details
from controller.core.reducer.readings import bets_record
from controller.runtime.table_values import BetWatch, to_reading
from link_adapters.reading import TableFlags, TableRegisters

OPEN = TableFlags(lockout=False, door_open=False, fault=False, progressive_disabled=False)
LOCKED = OPEN._replace(lockout=True)


def regs(
    rounds: int, seats: tuple[int, ...], per_seat: tuple[int, ...], *, locked: bool = False
) -> TableRegisters:
    return TableRegisters(
        0x5450, 1, LOCKED if locked else OPEN, rounds, sum(per_seat), seats, 0, None, per_seat
    )


class Table:
    """A table read in turn, as the poller reads it."""

    def __init__(self) -> None:
        self.watch = BetWatch()
        self.seat_credits: tuple[int, ...] | None = None
        self.seq = 0
        self.last: TableRegisters | None = None

    def read(self, r: TableRegisters) -> dict[str, int] | None:
        self.seq += 1
        reading = to_reading(
            r, table_id="t", poll_seq=self.seq, at_us=self.seq,
            previous_seat_credits=self.seat_credits, bets=self.watch,
        )  # fmt: skip
        self.seat_credits = r.per_seat_credits
        before, self.last = self.last, r
        if before is None or r.credits == before.credits:
            return None
        return bets_record(r.credits - before.credits, 100, reading, r.rounds - before.rounds)


def test_an_honest_round_records_the_seats_that_bet() -> None:
    t = Table()
    t.read(regs(1, (), (0, 0, 0, 0, 0, 0, 0)))
    record = t.read(regs(2, (1, 3), (1, 0, 1, 0, 0, 0, 0)))
    assert record == {"credits": 2, "denomination_cents": 100, "seats": 0b101, "rounds": 1}


def test_credits_with_the_sensor_dark_are_named() -> None:
    t = Table()
    t.read(regs(1, (), (0,) * 7))
    record = t.read(regs(2, (1,), (1, 0, 1, 0, 0, 0, 0)))  # seat 3 credited, its sensor dark
    assert record is not None and record["unsensed"] == 0b100 and record["seats"] == 0b101


def test_a_sensor_lit_without_a_credit_is_told_with_the_next_credits() -> None:
    t = Table()
    t.read(regs(1, (), (0,) * 7))
    record = t.read(regs(2, (1, 5), (1, 0, 0, 0, 0, 0, 0)))  # seat 5 lit, never credited
    assert record is not None and record["uncredited"] == 0b10000
    # Phased: bets first, the deal later, with nothing credited at the deal.
    t = Table()
    t.read(regs(1, (), (0,) * 7))
    assert t.read(regs(1, (1,), (1, 0, 0, 0, 0, 0, 0))) == {
        "credits": 1, "denomination_cents": 100, "seats": 1, "rounds": 0,
    }  # fmt: skip
    assert t.read(regs(2, (1, 2), (1, 0, 0, 0, 0, 0, 0))) is None  # dealt: seat 2 lit, no credit
    record = t.read(regs(2, (1,), (2, 0, 0, 0, 0, 0, 0)))
    assert record is not None and record["uncredited"] == 0b10


def test_credits_after_lockout_in_the_same_round_are_late() -> None:
    t = Table()
    t.read(regs(1, (), (0,) * 7))
    t.read(regs(1, (1,), (1, 0, 0, 0, 0, 0, 0)))
    t.read(regs(1, (1,), (1, 0, 0, 0, 0, 0, 0), locked=True))  # the dealer locks out
    record = t.read(regs(1, (1, 2), (1, 1, 0, 0, 0, 0, 0), locked=True))
    assert record is not None and record["late"] == 1
    # The lockout comes on at the reading that takes the last bets: not late.
    t = Table()
    t.read(regs(1, (), (0,) * 7))
    record = t.read(regs(1, (1,), (1, 0, 0, 0, 0, 0, 0), locked=True))
    assert record is not None and "late" not in record


def test_the_record_is_canonical_json() -> None:
    t = Table()
    t.read(regs(1, (), (0,) * 7))
    record = t.read(regs(2, (1,), (1, 0, 1, 0, 0, 0, 0)))
    assert record is not None
    record["rate_bp"] = 8000
    text = canonical_details(record)
    assert json.loads(text) == record
    from controller.core.reducer.readings import _text

    assert _text(record) == text
