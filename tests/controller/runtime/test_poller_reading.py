"""The poller speaks to tables in named values: the command it gives and the reading it takes.

Bits and codes are the adapter's (``link_adapters.register_map``); here only names meet."""

from __future__ import annotations

from dataclasses import replace

import pytest
from pydantic import ValidationError

from controller.core.hands import HandCategory
from controller.core.reducer import TableState
from controller.rules.house import FIXED_PAY_TECHNICIAN_FROM_CENTS
from controller.runtime.table_values import CLAIMED_HANDS, table_command, to_reading
from controller.settings import Settings
from link_adapters.reading import HeadHit, HitHand, TableCommand, TableFlags, TableRegisters
from tests.controller.core.test_reducer import table

IDLE = TableFlags(lockout=False, door_open=False, fault=False, progressive_disabled=False)


def registers(head: HeadHit | None, *, pending: int = 1) -> TableRegisters:
    return TableRegisters(0x5450, 1, IDLE, 4, 40, (), pending, head, None)


def test_the_command_names_what_the_table_must_do() -> None:
    playing = TableState(config=table(), credits=0)
    assert table_command(playing, link_hold=None) == TableCommand(disable_progressive=False)
    held = replace(playing, hit_pending=True)
    assert table_command(held, link_hold=None) == TableCommand(
        disable_progressive=True, hit_pending=True
    )
    out = replace(playing, out_of_play=True)
    assert table_command(out, link_hold=None) == TableCommand(disable_progressive=True)
    assert table_command(playing, link_hold="inoperable") == TableCommand(disable_progressive=True)


V1_HAND_NAMES = frozenset(
    {"ROYAL_FLUSH", "STRAIGHT_FLUSH", "FOUR_OF_A_KIND", "FULL_HOUSE", "FLUSH", "STRAIGHT"}
    | {"THREE_OF_A_KIND", "TWO_PAIR", "ONE_PAIR"}
)


def test_every_hand_a_table_names_is_the_hand_category_of_its_name() -> None:
    """By name; a hand the categories do not name (yet) is left out, and claimed as none."""
    named = {hand for hand in HitHand if hand.name in HandCategory.__members__}
    assert {hand.name for hand in named} >= V1_HAND_NAMES  # every hand of map v1 is claimed
    assert {hand: CLAIMED_HANDS[hand].name for hand in named} == {hand: hand.name for hand in named}
    assert set(CLAIMED_HANDS) == named


def test_a_claimed_hand_reaches_the_engine_as_its_category() -> None:
    head = HeadHit(seq=7, seat=2, hand=HitHand.ROYAL_FLUSH, round=3, cards=(51, 47, 43, 39, 35))
    reading = to_reading(registers(head), table_id="t1", poll_seq=5, at_us=10, elapsed_us=2)
    claim = reading.head_hit
    assert claim is not None
    assert (claim.table_seq, claim.seat, claim.hand, claim.round, claim.cards) == (
        7,
        2,
        HandCategory.ROYAL_FLUSH,
        3,
        (51, 47, 43, 39, 35),
    )
    assert (reading.credits, reading.rounds, reading.pending_hits) == (40, 4, 1)


def test_a_hand_the_map_does_not_know_is_a_claim_of_no_paying_hand() -> None:
    head = HeadHit(seq=7, seat=2, hand=None, round=3, cards=None)
    claim = to_reading(registers(head), table_id="t1", poll_seq=5, at_us=10).head_hit
    assert claim is not None and claim.hand is HandCategory.HIGH_CARD
    for hand in HitHand:
        if hand.name not in HandCategory.__members__:  # a map v2 hand no category names yet
            head = HeadHit(seq=7, seat=2, hand=hand, round=3, cards=None)
            claim = to_reading(registers(head), table_id="t1", poll_seq=5, at_us=10).head_hit
            assert claim is not None and claim.hand is HandCategory.HIGH_CARD


def test_the_level_and_seven_cards_with_the_joker_reach_the_claim() -> None:
    cards = (51, 47, 43, 39, 52, 0, 5)  # A K Q J of spades, the joker, two deuces (map v2)
    head = HeadHit(seq=8, seat=4, hand=HitHand.ROYAL_FLUSH, round=3, cards=cards, level=2)
    claim = to_reading(registers(head), table_id="t1", poll_seq=5, at_us=10).head_hit
    assert claim is not None
    assert (claim.cards, claim.level, claim.hand) == (cards, 2, HandCategory.ROYAL_FLUSH)
    # A v1 table says no level: the claim has none.
    head = HeadHit(seq=8, seat=4, hand=HitHand.FLUSH, round=3, cards=None)
    claim = to_reading(registers(head), table_id="t1", poll_seq=5, at_us=10).head_hit
    assert claim is not None and claim.level is None


def test_no_claim_without_a_pending_hit() -> None:
    head = HeadHit(seq=7, seat=2, hand=HitHand.FLUSH, round=3, cards=None)
    assert (
        to_reading(registers(head, pending=0), table_id="t1", poll_seq=5, at_us=10).head_hit is None
    )


def test_each_seats_credits_are_told_from_its_counters_since_the_last_reading() -> None:
    """Cumulative u32 per-seat counters: the change since this process's previous reading,
    across a wrap; none without a previous reading or without per-seat counters."""
    before = (10, 2**32 - 3, 0)
    now = (15, 4, 0)
    regs = TableRegisters(0x5450, 2, IDLE, 4, 40, (1, 2), 0, None, now)
    first = to_reading(regs, table_id="t1", poll_seq=1, at_us=10)
    assert first.seat_credits is None and first.bet_seats == frozenset({1, 2})
    later = to_reading(regs, table_id="t1", poll_seq=2, at_us=20, previous_seat_credits=before)
    assert later.seat_credits == (5, 7, 0)
    assert to_reading(registers(None, pending=0), table_id="t1", poll_seq=3, at_us=30,
                      previous_seat_credits=before).seat_credits is None  # fmt: skip


def test_the_fixed_pay_technician_amount_is_written_as_an_amount() -> None:
    assert Settings().fixed_pay_technician_from == FIXED_PAY_TECHNICIAN_FROM_CENTS
    assert Settings(fixed_pay_technician_from="$2,500.00").fixed_pay_technician_from == 2_500_00
    with pytest.raises(ValidationError, match="PROGRESSIVE_FIXED_PAY_TECHNICIAN_FROM"):
        Settings(fixed_pay_technician_from="12.345")
    # 1200 alone could be dollars or the cents it is kept in: the "$" is required.
    with pytest.raises(ValidationError, match="'1200' needs its unit"):
        Settings(fixed_pay_technician_from="1200")
