"""Which FIFO head is a new hit (register map v1: a hit number may be 0, and a table that
restarts may number its hits from 0 or 1 again), the table as a witness against a history
behind it, and the command bits a table is given."""

from __future__ import annotations

import json
from dataclasses import replace

from controller.core.hands import HandCategory
from controller.core.ledger import canonical_details
from controller.core.reducer import (
    EntryKind,
    TableReading,
    TableState,
    apply_reading,
    apply_readings,
    awaiting_acknowledgement,
)
from controller.runtime.table_values import command_bits
from link_adapters.register_map import COMMAND_DISABLE_PROGRESSIVE as OFF
from link_adapters.register_map import COMMAND_HIT_PENDING as PENDING
from tests.controller.core.test_reducer import (
    SEC,
    T0,
    baseline,
    claim,
    fund,
    kinds,
    new_link,
    read,
    table,
    units_of,
)

H = HandCategory
K = EntryKind


def test_a_first_hit_numbered_zero_is_a_hit() -> None:
    state = baseline(new_link())
    hit = claim(0, H.FLUSH)
    out = read(state, 2, 1, head=hit)
    assert [h.claim.table_seq for h in out.hits] == [0]
    ts = out.state.table("t1")
    assert ts.last_hit_seq == 0 and awaiting_acknowledgement(ts, hit)
    # Still at the head: the same hit, not taken again, and no talk of a restart.
    again = read(out.state, 3, 1, head=hit)
    assert again.hits == () and K.TABLE_COUNTER_RESET not in kinds(again)


def test_the_same_number_once_the_table_dropped_it_is_a_new_hit() -> None:
    state = baseline(new_link())
    first = claim(1, H.FLUSH, rnd=7)
    state = read(state, 2, 1, head=first).state
    state = read(state, 3, 1).state  # the FIFO is empty: our acknowledgement landed
    ts = state.table("t1")
    assert ts.last_hit_gone and not awaiting_acknowledgement(ts, first)
    # The table restarted and numbers from 1 again; even an identical report is a new hit.
    out = read(state, 4, 1, head=first)
    assert [h.claim.table_seq for h in out.hits] == [1]
    assert K.TABLE_COUNTER_RESET in kinds(out)
    assert out.hits[0].hit_id == "t1#1.1"  # a new epoch keeps hit ids unique


def test_a_hit_not_yet_dropped_is_not_taken_twice_even_between_other_readings() -> None:
    state = baseline(new_link())
    hit = claim(5, H.FOUR_OF_A_KIND)
    state = read(state, 2, 1, head=hit).state
    for seq in (3, 4, 5):
        out = read(state, seq, 1, head=hit)
        assert out.hits == ()
        state = out.state


def test_a_table_ahead_of_the_history_at_its_first_reading_is_held_for_review() -> None:
    state = baseline(new_link())
    state = read(state, 2, 1, head=claim(1, H.FLUSH)).state
    state = read(state, 3, 1).state
    ahead = claim(4, H.FLUSH, rnd=9)  # hits 2 and 3 were never recorded here
    out = read(state, 4, 1, head=ahead)  # elapsed_us is None: a start or a takeover
    assert K.TABLE_AHEAD in kinds(out)
    assert [h.claim.table_seq for h in out.hits] == [4]
    assert out.state.table("t1").hit_pending  # held, though a flush pays a fixed amount


def test_a_gap_seen_while_polling_steadily_is_not_an_alarm() -> None:
    state = baseline(new_link())
    state = read(state, 2, 1, head=claim(1, H.FLUSH)).state
    state = read(state, 3, 1).state
    out = apply_reading(
        state,
        TableReading(
            table_id="t1",
            poll_seq=4,
            at_us=T0 + 4 * SEC,
            credits=1,
            pending_hits=1,
            head_hit=claim(3, H.FLUSH, rnd=9),
            elapsed_us=SEC,
        ),
    )
    assert K.TABLE_AHEAD not in kinds(out) and not out.state.table("t1").hit_pending


def test_bit0_is_set_whenever_the_table_must_not_take_progressive_wagers() -> None:
    playing = TableState(config=table(), credits=0)
    assert command_bits(playing, link_hold=None) == 0
    # Held after a hit paid from a meter or a refused claim: the engine sets hit_pending.
    assert command_bits(replace(playing, hit_pending=True), link_hold=None) == OFF | PENDING
    assert command_bits(replace(playing, out_of_play=True), link_hold=None) == OFF
    for hold in ("awaiting the commission's approval", "inoperable: counters differ"):
        assert command_bits(playing, link_hold=hold) == OFF


# --- hits at several tables in one poll cycle -------------------------------------------------


def test_hits_at_two_tables_never_share_and_are_settled_in_the_order_seen() -> None:
    state = new_link(table("t1"), table("t2"), reset_cents=1_000_00)
    state = baseline(baseline(state, tid="t1"), tid="t2", seq=1)
    state = fund(state, 5_000_000 * 10_000)  # $50,000.00 on the meter
    royal_1 = claim(1, H.ROYAL_FLUSH, seat=2, rnd=40)
    royal_2 = claim(1, H.ROYAL_FLUSH, seat=6, rnd=12)

    def reading(tid: str, at: int, head: object) -> TableReading:
        return TableReading(
            table_id=tid, poll_seq=2, at_us=at, credits=0, pending_hits=1, head_hit=head
        )

    # Handed in out of order: t2's hit was read a millisecond after t1's.
    out = apply_readings(
        state, [reading("t2", T0 + 5 * SEC + 1_000, royal_2), reading("t1", T0 + 5 * SEC, royal_1)]
    )
    awards = [e for e in out.events if e.kind is K.AWARD]
    assert [e.table_id for e in awards] == ["t1", "t2"]
    assert [h.award_cents for h in out.hits] == [50_000_00, 1_000_00]  # the second: the reset
    first, second = (json_of(canonical_details(e.details)) for e in awards)
    assert first["seen_at_us"] < second["seen_at_us"]
    assert (first["seat"], first["round"], first["shared_by"]) == (2, 40, 1)
    assert out.state.meter_units == units_of(0) + 1_000_00 * 10_000

    # Seen at the same moment: the table id decides, so a replay settles the same way.
    tie = apply_readings(
        state, [reading("t2", T0 + 5 * SEC, royal_2), reading("t1", T0 + 5 * SEC, royal_1)]
    )
    assert [h.table_id for h in tie.hits] == ["t1", "t2"]


def json_of(text: str) -> dict[str, object]:
    return dict(json.loads(text))
