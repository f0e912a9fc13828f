"""Who deals at each table, read from the dealers' sign-ins and sign-outs: one table per
dealer, one dealer per table, the sign-outs a sign-in makes, who dealt at an instant, and a
period cut into who dealt when; and, for any record at all, that the readings agree."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.core.dealers import (
    DealerEvent,
    DealerMove,
    DealerSpan,
    DealerTurn,
    dealer_at,
    dealer_spans,
    dealing,
    sign_in,
    sign_out,
    spans_by_table,
    turns,
)
from controller.refusal import Conflict

IN, OUT = DealerMove.SIGN_IN, DealerMove.SIGN_OUT


def ev(kind: DealerMove, table: str, dealer: str, at: int, by: str | None = None) -> DealerEvent:
    return DealerEvent(table_id=table, dealer=dealer, kind=kind, at_us=at, recorded_by=by or dealer)


def record(*steps: tuple[str, str, str | None, int, str]) -> list[DealerEvent]:
    """The events of a floor that took each step in turn through ``sign_in``/``sign_out``:
    ("in", table, dealer, at, by) or ("out", table, dealer or None, at, by)."""
    events: list[DealerEvent] = []
    for kind, table, dealer, at, by in steps:
        now = dealing(events).values()
        if kind == "in":
            assert dealer is not None
            events += sign_in(now, table_id=table, dealer=dealer, at_us=at, recorded_by=by)
        else:
            events.append(sign_out(now, table_id=table, dealer=dealer, at_us=at, recorded_by=by))
    return events


def test_a_dealer_signs_in_deals_and_signs_out() -> None:
    events = record(("in", "t1", "ann", 100, "ann"), ("out", "t1", "ann", 400, "ann"))
    assert events == [ev(IN, "t1", "ann", 100), ev(OUT, "t1", "ann", 400)]
    assert [dealer_at(events, "t1", t) for t in (99, 100, 399, 400)] == [None, "ann", "ann", None]
    assert dealing(events) == {}
    assert turns(events) == [
        DealerTurn(
            table_id="t1",
            dealer="ann",
            from_us=100,
            until_us=400,
            signed_in_by="ann",
            signed_out_by="ann",
        )
    ]


def test_a_dealer_signing_in_at_a_second_table_is_signed_out_of_the_first() -> None:
    events = record(("in", "t1", "ann", 100, "ann"), ("in", "t2", "ann", 200, "ann"))
    # The sign-out is an event of its own, before the sign-in, at the same moment.
    assert events == [ev(IN, "t1", "ann", 100), ev(OUT, "t1", "ann", 200), ev(IN, "t2", "ann", 200)]
    assert dealer_at(events, "t1", 199) == "ann"
    assert dealer_at(events, "t1", 200) is None
    assert dealer_at(events, "t2", 200) == "ann"
    assert {t: turn.dealer for t, turn in dealing(events).items()} == {"t2": "ann"}


def test_a_dealer_signing_in_where_another_deals_takes_the_table_over() -> None:
    events = record(("in", "t1", "ann", 100, "ann"), ("in", "t1", "bob", 300, "bob"))
    assert events[1:] == [ev(OUT, "t1", "ann", 300, "bob"), ev(IN, "t1", "bob", 300)]
    # At the instant of the handover the new dealer deals.
    assert [dealer_at(events, "t1", t) for t in (299, 300)] == ["ann", "bob"]
    first, second = turns(events)
    assert (first.dealer, first.until_us, first.signed_out_by) == ("ann", 300, "bob")
    assert (second.dealer, second.until_us) == ("bob", None)


def test_both_rules_at_once_end_two_turns() -> None:
    """Bob deals at t2 and Ann at t1; Bob signs in at t1: he leaves t2 and Ann leaves t1."""
    events = record(
        ("in", "t1", "ann", 100, "ann"),
        ("in", "t2", "bob", 110, "bob"),
        ("in", "t1", "bob", 200, "bob"),
    )
    outs = [e for e in events if e.at_us == 200 and e.kind is OUT]
    assert {(e.table_id, e.dealer) for e in outs} == {("t1", "ann"), ("t2", "bob")}
    assert events[-1] == ev(IN, "t1", "bob", 200)
    assert {t: turn.dealer for t, turn in dealing(events).items()} == {"t1": "bob"}


def test_signing_in_where_one_deals_already_records_nothing() -> None:
    events = record(("in", "t1", "ann", 100, "ann"))
    again = sign_in(
        dealing(events).values(), table_id="t1", dealer="ann", at_us=500, recorded_by="sue"
    )
    assert again == ()


def test_a_supervisor_signs_out_whoever_deals_or_only_the_dealer_named() -> None:
    events = record(("in", "t1", "ann", 100, "ann"))
    now = dealing(events).values()
    out = sign_out(now, table_id="t1", dealer=None, at_us=900, recorded_by="sue")
    assert out == ev(OUT, "t1", "ann", 900, "sue")
    with pytest.raises(Conflict, match="bob does not deal at table t1: ann does"):
        sign_out(now, table_id="t1", dealer="bob", at_us=900, recorded_by="sue")
    with pytest.raises(Conflict, match="no dealer is signed in at table t2"):
        sign_out(now, table_id="t2", dealer=None, at_us=900, recorded_by="sue")
    assert turns([*events, out])[0].signed_out_by == "sue"


def test_a_sign_out_of_a_dealer_not_dealing_there_changes_nothing_when_read() -> None:
    # Only ever written by hand: reading still says one thing.
    events = [ev(IN, "t1", "ann", 100), ev(OUT, "t1", "bob", 200), ev(OUT, "t2", "ann", 250)]
    assert dealer_at(events, "t1", 300) == "ann"


def test_a_record_without_its_sign_outs_reads_by_the_same_rules() -> None:
    events = [ev(IN, "t1", "ann", 100), ev(IN, "t2", "ann", 200), ev(IN, "t2", "bob", 300)]
    assert [dealer_at(events, "t1", 150), dealer_at(events, "t1", 250)] == ["ann", None]
    assert dealer_at(events, "t2", 250) == "ann"
    assert dealer_at(events, "t2", 300) == "bob"


def test_events_are_read_by_time_and_the_same_time_in_the_order_given() -> None:
    events = record(("in", "t1", "ann", 100, "ann"), ("in", "t1", "bob", 300, "bob"))
    shuffled = [events[2], events[0], events[1]]  # bob's sign-out of ann, then his sign-in
    assert dealer_at(shuffled, "t1", 300) == "bob"
    assert turns(shuffled) == turns(events)


def test_a_period_is_cut_into_who_dealt_when() -> None:
    events = record(
        ("in", "t1", "ann", 100, "ann"),
        ("in", "t1", "bob", 300, "bob"),
        ("out", "t1", "bob", 500, "bob"),
        ("in", "t1", "cat", 700, "cat"),
        ("in", "t2", "dan", 50, "dan"),
    )
    assert dealer_spans(events, "t1", 0, 1000) == [
        DealerSpan("ann", 100, 300),
        DealerSpan("bob", 300, 500),
        DealerSpan("cat", 700, 1000),  # still dealing when the period ends
    ]
    # Cut at both ends; the gap from 500 to 700, when no one was signed in, is no one's.
    assert dealer_spans(events, "t1", 200, 750) == [
        DealerSpan("ann", 200, 300),
        DealerSpan("bob", 300, 500),
        DealerSpan("cat", 700, 750),
    ]
    assert dealer_spans(events, "t1", 500, 700) == []
    assert dealer_spans(events, "t9", 0, 1000) == []
    assert spans_by_table(events, 0, 1000)["t2"] == [DealerSpan("dan", 50, 1000)]
    assert spans_by_table(events, 600, 600) == {}
    with pytest.raises(ValueError, match="ends after it begins"):
        spans_by_table(events, 10, 9)


# ------------------------------------------------------------------------- any record at all

TABLES = ("t1", "t2", "t3")
DEALERS = ("ann", "bob", "cat", "dan")
step = st.tuples(
    st.sampled_from(["in", "in", "out"]),
    st.sampled_from(TABLES),
    st.sampled_from([*DEALERS, None]),
    st.integers(0, 3),  # time since the step before: often the same moment
)


@settings(max_examples=300, deadline=None)
@given(st.lists(step, max_size=30), st.lists(st.integers(-5, 120), min_size=1, max_size=10))
def test_any_floor_keeps_both_rules_and_its_readings_agree(
    steps: list[tuple[str, str, str | None, int]], probes: list[int]
) -> None:
    events: list[DealerEvent] = []
    at = 0
    for kind, table, dealer, gap in steps:
        at += gap
        now = list(dealing(events).values())
        if kind == "in":
            events += sign_in(
                now, table_id=table, dealer=dealer or "sue", at_us=at, recorded_by="x"
            )
            continue
        try:
            events.append(sign_out(now, table_id=table, dealer=dealer, at_us=at, recorded_by="x"))
        except Conflict:
            here = next((t for t in now if t.table_id == table), None)
            assert here is None or (dealer is not None and here.dealer != dealer)
    end = at + 10
    spans = spans_by_table(events, -5, end)
    for t in (p for p in probes if p < end):
        at_t = {table: dealer_at(events, table, t) for table in TABLES}
        seated = [d for d in at_t.values() if d is not None]
        assert len(seated) == len(set(seated)), f"a dealer at two tables at {t}: {at_t}"
        for table in TABLES:
            covering = [s.dealer for s in spans.get(table, []) if s.from_us <= t < s.until_us]
            assert covering == ([] if at_t[table] is None else [at_t[table]])
    for table, cut in spans.items():
        assert all(a.until_us <= b.from_us for a, b in itertools.pairwise(cut)), cut
        assert cut == dealer_spans(events, table, -5, end)
    assert {t: turn.dealer for t, turn in dealing(events).items()} == {
        table: d for table in TABLES if (d := dealer_at(events, table, end)) is not None
    }
