"""Tests for controller.core.reducer: contributions, counters, anomalies, hits, corrections, display."""

from __future__ import annotations

import json
import time

import pytest

from controller.core.games import Game, default_paytable
from controller.core.hands import HandCategory, parse_cards
from controller.core.ledger import canonical_details
from controller.core.reducer import (
    EngineError,
    EntryKind,
    HitClaim,
    HitPolicy,
    LinkState,
    Outcome,
    TableConfig,
    TableReading,
    apply_correction,
    apply_reading,
    apply_readings,
    approve_anomaly,
    change_rate,
    change_reset_amount,
    display_frame,
    enter_hit,
    open_link,
    reject_anomaly,
    release_table,
    table_offline,
)
from controller.rules import RuleViolation
from controller.rules.jurisdictions import INDIANA

H = HandCategory
K = EntryKind
SEC = 1_000_000
T0 = 1_700_000_000 * SEC
U32 = 2**32
STUD = Game.CARIBBEAN_STUD

ROYAL_S = parse_cards("As Ks Qs Js Ts")
ROYAL_H = parse_cards("Ah Kh Qh Jh Th")
STRAIGHT_FLUSH_S = parse_cards("9s 8s 7s 6s 5s")
QUADS = parse_cards("9c 9d 9h 9s 2c")
STRAIGHT = parse_cards("9c 8d 7h 6s 5c")


# --- helpers -------------------------------------------------------------------------------


def table(tid="t1", *, denom=100, seats=7, max_credits=1, min_round_us=10 * SEC):
    return TableConfig(
        table_id=tid,
        denomination_cents=denom,
        seats=seats,
        max_credits_per_seat_round=max_credits,
        min_round_us=min_round_us,
    )


def new_link(
    *tables: TableConfig,
    rate=8000,
    reset_cents=1_000_00,
    policy=HitPolicy.SPLIT,
    game=STUD,
    paytable=None,
) -> LinkState:
    return open_link(
        law=INDIANA,
        link_id="L1",
        game=game,
        rate_bp=rate,
        reset_cents=reset_cents,
        paytable=paytable or default_paytable(game),
        tables=tables or (table(),),
        at_us=T0,
        hit_policy=policy,
    ).state


def fund(state: LinkState, units: int) -> LinkState:
    """Set the meter to exactly ``units`` by a correction (upwards needs no document)."""
    delta = units - state.meter_units
    if delta == 0:
        return state
    return apply_correction(
        state,
        correction_id="fund",
        delta_units=delta,
        reason="test funding",
        at_us=T0,
        document_sha256="0" * 64,
    ).state


def read(state, seq, credits, *, tid="t1", at=None, rounds=None, head=None, pending=None):
    if pending is None:
        pending = 1 if head is not None else 0
    return apply_reading(
        state,
        TableReading(
            table_id=tid,
            poll_seq=seq,
            at_us=T0 + seq * SEC if at is None else at,
            credits=credits,
            rounds=rounds,
            pending_hits=pending,
            head_hit=head,
        ),
    )


def claim(seq, hand, *, seat=1, rnd=1, cards=None):
    return HitClaim(table_seq=seq, seat=seat, hand=hand, round=rnd, cards=cards)


def kinds(outcome: Outcome) -> list[EntryKind]:
    return [e.kind for e in outcome.events]


def only(outcome: Outcome, kind: EntryKind):
    found = [e for e in outcome.events if e.kind is kind]
    assert len(found) == 1, kinds(outcome)
    return found[0]


def details(ev) -> dict:
    """An event's details as a mapping; a pre-rendered string must be the canonical JSON."""
    if isinstance(ev.details, str):
        parsed = json.loads(ev.details)
        assert canonical_details(parsed) == ev.details
        return parsed
    return dict(ev.details)


def units_of(credits, denom=100, rate=8000):
    return credits * denom * rate


def baseline(state, credits=0, *, tid="t1", seq=1):
    return read(state, seq, credits, tid=tid).state


# --- opening -------------------------------------------------------------------------------


def test_open_link_seeds_meter_with_reset_amount():
    out = open_link(
        law=INDIANA,
        link_id="L1",
        game=STUD,
        rate_bp=8000,
        reset_cents=1_000_00,
        paytable=default_paytable(STUD),
        tables=[table("t1"), table("t2")],
        at_us=T0,
    )
    ev = only(out, K.LINK_OPENED)
    assert ev.meter_before_units == 0
    assert ev.delta_units == 1_000_00 * 10_000
    assert out.state.meter_units == 1_000_00 * 10_000
    assert out.state.meter_cents == 1_000_00
    assert out.tables_touched == {"t1", "t2"}


@pytest.mark.parametrize("rate", [5999, 10_001])
def test_open_link_refuses_rate_outside_range(rate):
    with pytest.raises(RuleViolation) as info:
        new_link(rate=rate)
    assert info.value.clause == "68 IAC 10-1-1.1(c)"


def test_open_link_refuses_bad_configuration():
    with pytest.raises(EngineError, match="twice"):
        new_link(table("t1"), table("t1"))
    with pytest.raises(EngineError, match="paytable is for"):
        new_link(paytable=default_paytable(Game.LET_IT_RIDE_BONUS))
    with pytest.raises(EngineError, match="negative"):
        new_link(reset_cents=-1)
    with pytest.raises(EngineError, match="seats"):
        table(seats=8)


def test_a_let_it_ride_bonus_table_bets_one_dollar():
    lir = Game.LET_IT_RIDE_BONUS
    link = new_link(table(denom=100), game=lir)
    assert link.tables["t1"].config.denomination_cents == 100
    # 68 IAC 10-7-5(e): fixed pays only, so the link is a fixed-pay link with no meter.
    assert link.fixed_pay and link.meter_units == 0 and link.rate_bp == 0
    with pytest.raises(RuleViolation) as info:
        new_link(table("t1", denom=100), table("t2", denom=500), game=lir)
    assert info.value.clause == "68 IAC 10-7-5(b)"
    assert "the Let It Ride bonus bet is $1.00" in str(info.value)
    # The progressive games fix no wager: any denomination plays.
    assert new_link(table(denom=500)).tables["t1"].config.denomination_cents == 500


# --- readings ------------------------------------------------------------------------------


def test_first_reading_only_sets_a_baseline():
    state = new_link()
    out = read(state, 1, 123_456)
    assert kinds(out) == [K.TABLE_BASELINE]
    assert out.events[0].delta_units == 0
    assert out.state.meter_units == state.meter_units
    assert out.state.tables["t1"].credits == 123_456
    assert out.tables_touched == {"t1"}


def test_contribution_is_credits_times_denomination_times_rate():
    state = baseline(new_link(table(denom=500), rate=6137), 1_000)
    before = state.meter_units
    out = read(state, 2, 1_005)
    ev = only(out, K.CONTRIBUTION)
    assert ev.delta_units == 5 * 500 * 6137
    assert ev.meter_before_units == before
    assert out.state.meter_units == before + 5 * 500 * 6137
    assert ev.table_id == "t1"
    assert details(ev) == {"credits": 5, "denomination_cents": 500, "rate_bp": 6137}
    assert "wrapped" not in ev.explanation


def test_no_change_in_counter_is_no_event():
    state = baseline(new_link(), 50)
    out = read(state, 2, 50)
    assert out.events == ()
    assert out.state.meter_units == state.meter_units
    assert out.state.tables["t1"].poll_seq == 2


def test_replay_of_same_or_older_poll_seq_changes_nothing():
    state = baseline(new_link(), 100)
    state = read(state, 5, 103).state
    for seq, credits in ((5, 103), (5, 106), (4, 107), (1, 100), (0, 105)):
        out = read(state, seq, credits)
        assert out.changed is False
        assert out.events == () and out.hits == () and out.anomalies == ()
        assert out.state is state


def test_counter_wrap_at_two_to_the_32():
    state = baseline(new_link(), U32 - 3)
    out = read(state, 2, 4)
    ev = only(out, K.CONTRIBUTION)
    assert details(ev)["credits"] == 7
    assert ev.delta_units == units_of(7)
    assert "wrap" in ev.explanation
    assert K.TABLE_COUNTER_RESET not in kinds(out)


def test_counter_restart_is_its_own_event_and_new_credits_count():
    state = baseline(new_link(), 1_000_000)
    before = state.meter_units
    out = read(state, 2, 3)
    assert kinds(out) == [K.TABLE_COUNTER_RESET, K.CONTRIBUTION]
    reset = out.events[0]
    assert reset.delta_units == 0
    assert details(reset) == {"credits_before": 1_000_000, "credits_after": 3}
    assert out.events[1].delta_units == units_of(3)
    assert out.state.meter_units == before + units_of(3)
    assert all(e.delta_units >= 0 for e in out.events)
    # The restarted counter is the new baseline.
    out2 = read(out.state, 3, 5)
    assert only(out2, K.CONTRIBUTION).delta_units == units_of(2)


def test_counter_restart_to_zero_contributes_nothing():
    state = baseline(new_link(), 1_000_000)
    out = read(state, 2, 0)
    assert kinds(out) == [K.TABLE_COUNTER_RESET]
    assert out.state.meter_units == state.meter_units


def test_small_backwards_step_is_held_as_an_anomaly():
    state = baseline(new_link(table(seats=1)), 1_000)
    before = state.meter_units
    out = read(state, 2, 990)
    assert kinds(out) == [K.ANOMALY_HELD]
    assert out.state.meter_units == before
    assert out.events[0].delta_units == 0
    (anomaly,) = out.anomalies
    assert anomaly.table_id == "t1" and anomaly.link_id == "L1"
    assert anomaly.counter_before == 1_000 and anomaly.counter_after == 990
    # Backwards by a little is no count of credits: nothing to credit, even if approved.
    assert anomaly.credits == 0 and anomaly.units == 0
    assert "went backwards from 1000 to 990" in anomaly.reason
    assert out.events[0].anomaly_id == anomaly.anomaly_id
    approved = approve_anomaly(out.state, anomaly, at_us=T0 + 9 * SEC, reviewer="Sam Supervisor")
    assert approved.state.meter_units == before

    rejected = reject_anomaly(
        out.state, anomaly, at_us=T0 + 9 * SEC, reviewer="Ann Auditor", reason="counter glitch"
    )
    ev = only(rejected, K.ANOMALY_REJECTED)
    assert ev.delta_units == 0
    assert rejected.state.meter_units == before
    assert "counter glitch" in ev.explanation and "Ann Auditor" in ev.explanation
    assert details(ev)["reason"] == "counter glitch"
    assert ev.anomaly_id == anomaly.anomaly_id


def test_after_an_anomaly_the_new_counter_is_the_baseline():
    state = baseline(new_link(table(seats=1)), 1_000)
    state = read(state, 2, 990).state
    out = read(state, 3, 991)
    assert only(out, K.CONTRIBUTION).delta_units == units_of(1)


def test_approve_anomaly_credits_exactly_its_units_in_the_reviewers_name():
    state = baseline(new_link(table(seats=2, max_credits=3)), 1_000)
    out = read(state, 2, 1_500, at=T0 + 5 * SEC)  # 500 credits in 4 s; at most 6 possible
    (anomaly,) = out.anomalies
    assert anomaly.credits == 500
    assert anomaly.units == units_of(500)
    assert out.state.meter_units == state.meter_units
    approved = approve_anomaly(out.state, anomaly, at_us=T0 + 60 * SEC, reviewer="Ann Auditor")
    ev = only(approved, K.ANOMALY_APPROVED)
    assert ev.delta_units == anomaly.units
    assert approved.state.meter_units == out.state.meter_units + anomaly.units
    assert "Ann Auditor" in ev.explanation
    assert ev.anomaly_id == anomaly.anomaly_id
    with pytest.raises(EngineError):
        approve_anomaly(out.state, anomaly, at_us=T0, reviewer="  ")
    with pytest.raises(EngineError):
        reject_anomaly(out.state, anomaly, at_us=T0, reviewer="Ann", reason=" ")


def test_approved_anomaly_keeps_the_rate_it_was_detected_under():
    state = fund(baseline(new_link(table(seats=1), rate=6000), 0), METER)
    state = read(state, 2, 0, head=claim(1, H.ROYAL_FLUSH)).state  # unlocks the rate
    out = read(state, 3, 100)  # 100 credits in 1 s at a 1-seat table: held
    (anomaly,) = out.anomalies
    assert anomaly.units == 100 * 100 * 6000
    state = change_rate(out.state, rate_bp=9000, at_us=T0 + 4 * SEC, by="Ann").state
    approved = approve_anomaly(state, anomaly, at_us=T0 + 5 * SEC, reviewer="Ann Auditor")
    assert approved.events[0].delta_units == 100 * 100 * 6000


def test_approving_an_anomaly_of_another_link_is_refused():
    state = baseline(new_link(table(seats=1)), 0)
    (anomaly,) = read(state, 2, 100).anomalies
    other = open_link(
        law=INDIANA,
        link_id="L2",
        game=STUD,
        rate_bp=8000,
        reset_cents=1_000_00,
        paytable=default_paytable(STUD),
        tables=[table("t9")],
        at_us=T0,
    ).state
    with pytest.raises(EngineError):
        approve_anomaly(other, anomaly, at_us=T0, reviewer="Ann Auditor")


def test_plausibility_limit_by_elapsed_time():
    # 7 seats x 1 credit x (25 s // 10 s + 1 = 3 rounds) = 21 credits at most.
    def after_25s(delta):
        state = baseline(new_link(), 1_000)
        return read(state, 2, 1_000 + delta, at=T0 + SEC + 25 * SEC)

    at_limit = after_25s(21)
    assert only(at_limit, K.CONTRIBUTION).delta_units == units_of(21)
    assert at_limit.anomalies == ()
    over = after_25s(22)
    assert kinds(over) == [K.ANOMALY_HELD]
    assert over.anomalies[0].credits == 22
    assert over.state.meter_units == over.events[0].meter_before_units


def test_plausibility_limit_uses_seats_and_credits_per_round():
    cfg = table(seats=3, max_credits=5, min_round_us=20 * SEC)
    state = baseline(new_link(cfg), 0)
    # 3 seats x 5 credits x (45 s // 20 s + 1 = 3 rounds) = 45.
    assert kinds(read(state, 2, 45, at=T0 + SEC + 45 * SEC)) == [K.CONTRIBUTION]
    assert kinds(read(state, 2, 46, at=T0 + SEC + 45 * SEC)) == [K.ANOMALY_HELD]


def test_plausibility_limit_tightened_by_the_round_counter():
    state = read(new_link(), 1, 1_000, rounds=100).state
    # 25 s would allow 3 rounds, but the table dealt one: that round and the next = 14.
    assert kinds(read(state, 2, 1_014, at=T0 + 26 * SEC, rounds=101)) == [K.CONTRIBUTION]
    assert kinds(read(state, 2, 1_015, at=T0 + 26 * SEC, rounds=101)) == [K.ANOMALY_HELD]


def test_time_going_backwards_allows_one_round():
    state = baseline(new_link(), 0)
    assert kinds(read(state, 2, 7, at=T0 - 100 * SEC)) == [K.CONTRIBUTION]
    assert kinds(read(state, 2, 8, at=T0 - 100 * SEC)) == [K.ANOMALY_HELD]


def test_counters_must_be_unsigned_32_bit_and_tables_known():
    state = baseline(new_link(), 0)
    with pytest.raises(EngineError):
        read(state, 2, U32)
    with pytest.raises(EngineError):
        read(state, 2, -1)
    with pytest.raises(EngineError, match="not on link"):
        read(state, 2, 1, tid="nope")


def test_offline_then_online():
    state = baseline(new_link(), 0)
    off = table_offline(state, table_id="t1", at_us=T0 + 2 * SEC, reason="no answer")
    assert kinds(off) == [K.TABLE_OFFLINE]
    assert off.state.tables["t1"].online is False
    assert table_offline(off.state, table_id="t1", at_us=T0, reason="again").changed is False
    back = read(off.state, 3, 2)
    assert kinds(back) == [K.TABLE_ONLINE, K.CONTRIBUTION]
    assert back.state.tables["t1"].online is True


def test_a_batch_of_readings_is_the_same_as_one_at_a_time():
    state = fund(new_link(table("t1"), table("t2", denom=25), table("t3", seats=1)), METER)
    polls = [
        [
            TableReading(table_id="t1", poll_seq=1, at_us=T0 + SEC, credits=U32 - 2),
            TableReading(table_id="t2", poll_seq=1, at_us=T0 + SEC, credits=50),
            TableReading(table_id="t3", poll_seq=1, at_us=T0 + SEC, credits=9),
        ],
        [
            TableReading(table_id="t1", poll_seq=2, at_us=T0 + 2 * SEC, credits=3),  # wrap
            TableReading(table_id="t2", poll_seq=2, at_us=T0 + 2 * SEC, credits=4),  # restart
            TableReading(table_id="t3", poll_seq=2, at_us=T0 + 2 * SEC, credits=500),  # held
            TableReading(table_id="t2", poll_seq=2, at_us=T0 + 2 * SEC, credits=9),  # replay
        ],
        [
            TableReading(
                table_id="t1",
                poll_seq=3,
                at_us=T0 + 3 * SEC,
                credits=5,
                head_hit=claim(1, H.ROYAL_FLUSH, rnd=2),
                pending_hits=2,
            ),
            TableReading(
                table_id="t2",
                poll_seq=3,
                at_us=T0 + 3 * SEC,
                credits=6,
                head_hit=claim(1, H.STRAIGHT_FLUSH, rnd=8),
                pending_hits=1,
            ),
            TableReading(
                table_id="t1",
                poll_seq=4,
                at_us=T0 + 4 * SEC,
                credits=6,
                head_hit=claim(2, H.ROYAL_FLUSH, seat=2, rnd=2),
                pending_hits=1,
            ),
        ],
    ]
    one_by_one = batched = state
    for poll in polls:
        events, hits, anomalies = [], [], []
        for reading in poll:
            out = apply_reading(one_by_one, reading)
            events += out.events
            hits += out.hits
            anomalies += out.anomalies
            one_by_one = out.state
        together = apply_readings(batched, poll)
        batched = together.state
        assert list(together.events) == events
        assert list(together.hits) == hits
        assert list(together.anomalies) == anomalies
        assert batched.meter_units == one_by_one.meter_units
        assert batched.tables == one_by_one.tables
        assert batched.last_win == one_by_one.last_win
    assert apply_readings(batched, polls[0]).changed is False  # all replays


# --- hits: one at a time -------------------------------------------------------------------

METER = 12_345_67 * 10_000 + 4_321  # $12,345.67 and 0.4321 of a cent


def hit_ready(**link_kw) -> LinkState:
    state = baseline(new_link(**link_kw), 0)
    return fund(state, METER)


def test_royal_flush_pays_displayed_whole_cents_and_resets():
    state = hit_ready()
    out = read(state, 2, 0, head=claim(5, H.ROYAL_FLUSH, seat=3, cards=ROYAL_S))
    assert kinds(out) == [K.AWARD, K.JACKPOT_RESET]
    award, reset = out.events
    assert award.delta_units == -12_345_67 * 10_000
    assert award.hit_id == "t1#5"
    assert award.meter_after_units == 4_321  # the sub-cent remainder stays
    assert reset.delta_units == 1_000_00 * 10_000
    assert out.state.meter_units == 1_000_00 * 10_000 + 4_321
    (hit,) = out.hits
    assert hit.hit_id == "t1#5"
    assert hit.status == "awarded"
    assert hit.award_cents == 12_345_67
    assert hit.paid_from == "meter"
    assert hit.source == "table"
    assert out.state.jackpot_won_since_rate_set is True
    assert out.state.tables["t1"].hit_pending is True
    assert out.state.last_win is not None and out.state.last_win.won_cents == 12_345_67


def test_table_held_until_released():
    state = read(hit_ready(), 2, 0, head=claim(1, H.ROYAL_FLUSH, cards=ROYAL_S)).state
    # Held, but the link keeps playing: another reading of the table is still applied.
    assert state.tables["t1"].hit_pending is True
    out = release_table(state, table_id="t1", at_us=T0 + 30 * SEC, by="Tom Tech")
    assert kinds(out) == [K.TABLE_RELEASED]
    assert "Tom Tech" in out.events[0].explanation
    assert out.state.tables["t1"].hit_pending is False
    assert out.state.meter_units == state.meter_units
    with pytest.raises(EngineError, match="no hit pending"):
        release_table(out.state, table_id="t1", at_us=T0 + 31 * SEC, by="Tom Tech")


def test_straight_flush_pays_ten_percent_of_displayed_cents_rounded_down():
    state = hit_ready()
    out = read(state, 2, 0, head=claim(1, H.STRAIGHT_FLUSH, cards=STRAIGHT_FLUSH_S))
    assert kinds(out) == [K.AWARD]
    expected = 12_345_67 * 1000 // 10_000  # $1,234.567 -> $1,234.56
    assert expected == 123_456
    assert out.hits[0].award_cents == expected
    assert out.events[0].delta_units == -expected * 10_000
    assert out.state.meter_units == METER - expected * 10_000
    assert out.state.jackpot_won_since_rate_set is False
    assert out.state.tables["t1"].hit_pending is True


def test_fixed_line_is_paid_at_the_table_and_meter_unchanged():
    state = hit_ready()
    out = read(state, 2, 0, head=claim(1, H.FOUR_OF_A_KIND, cards=QUADS))
    assert kinds(out) == [K.PAID_AT_TABLE]
    assert out.events[0].delta_units == 0
    assert out.events[0].hit_id == "t1#1"
    assert out.state.meter_units == METER
    (hit,) = out.hits
    assert hit.award_cents == 500_00
    assert hit.paid_from == "table"
    assert hit.status == "awarded"
    assert out.state.last_win is None
    # The dealer pays a fixed amount and play goes on: no technician hold.
    assert not out.state.table("t1").hit_pending


def test_meter_paid_and_refused_hits_hold_the_table_for_a_technician():
    sf = read(hit_ready(), 2, 0, head=claim(1, H.STRAIGHT_FLUSH, cards=None))
    assert sf.hits[0].paid_from == "meter" and sf.state.table("t1").hit_pending
    refused = read(
        hit_ready(), 2, 0, head=claim(1, H.FOUR_OF_A_KIND, cards=parse_cards("2c 3d 5h 9s Kc"))
    )
    assert refused.hits[0].status == "refused" and refused.state.table("t1").hit_pending


def test_hit_without_cards_is_taken_on_the_claim():
    out = read(hit_ready(), 2, 0, head=claim(1, H.ROYAL_FLUSH, cards=None))
    assert out.hits[0].status == "awarded"
    assert out.hits[0].award_cents == 12_345_67


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (claim(1, H.ROYAL_FLUSH, cards=STRAIGHT_FLUSH_S), "straight flush, not the claimed royal"),
        (claim(1, H.STRAIGHT_FLUSH, cards=QUADS), "four of a kind"),
        (claim(1, H.STRAIGHT, cards=STRAIGHT), "no line for straight"),
        (claim(1, H.ROYAL_FLUSH, seat=8, cards=ROYAL_S), "seat 8"),
        (claim(1, H.ROYAL_FLUSH, seat=0), "seat 0"),
        (claim(1, H.ROYAL_FLUSH, cards=(51, 51, 47, 43, 39)), "not a hand"),
    ],
)
def test_refused_hits(bad, why):
    state = hit_ready()
    out = read(state, 2, 0, head=bad)
    assert kinds(out) == [K.HIT_REFUSED]
    assert why in out.events[0].explanation
    assert out.events[0].delta_units == 0
    assert out.state.meter_units == METER
    (hit,) = out.hits
    assert hit.status == "refused"
    assert hit.award_cents == 0
    assert why in (hit.refusal or "")
    assert out.state.jackpot_won_since_rate_set is False
    assert out.state.last_win is None


def test_seat_beyond_a_smaller_table_refused():
    state = fund(baseline(new_link(table(seats=5)), 0), METER)
    out = read(state, 2, 0, head=claim(1, H.ROYAL_FLUSH, seat=6, cards=ROYAL_S))
    assert out.hits[0].status == "refused"
    assert out.state.meter_units == METER


def test_technician_entered_hit():
    out = enter_hit(
        hit_ready(),
        hit_id="manual-7",
        table_id="t1",
        claim=HitClaim(table_seq=None, seat=2, hand=H.ROYAL_FLUSH, round=9, cards=ROYAL_H),
        at_us=T0 + 50 * SEC,
        entered_by="Tom Tech",
    )
    (hit,) = out.hits
    assert hit.hit_id == "manual-7"
    assert hit.source == "technician"
    assert hit.entered_by == "Tom Tech"
    assert hit.award_cents == 12_345_67
    assert out.events[0].hit_id == "manual-7"
    assert out.state.tables["t1"].hit_pending is True


# --- hits: several in one round --------------------------------------------------------------


def test_fifo_collects_claims_until_the_last_and_split_shares_the_meter():
    odd = 1_000_001 * 10_000 + 77  # $10,000.01 and a bit: odd cents
    state = fund(baseline(new_link(), 0), odd)
    first = claim(1, H.ROYAL_FLUSH, seat=2, rnd=40, cards=ROYAL_S)
    second = claim(2, H.ROYAL_FLUSH, seat=5, rnd=40, cards=ROYAL_H)

    out = read(state, 2, 0, head=first, pending=2)
    assert out.hits == () and kinds(out) == []
    assert out.state.meter_units == odd
    assert out.state.tables["t1"].open_claims == (first,)
    # The same head again (our ack has not landed yet): still nothing, nothing twice.
    out = read(out.state, 3, 0, head=first, pending=2)
    assert out.hits == () and out.state.tables["t1"].open_claims == (first,)
    # The last one: both settle together.
    out = read(out.state, 4, 0, head=second, pending=1)
    assert kinds(out) == [K.AWARD, K.AWARD, K.JACKPOT_RESET]
    by_id = {h.hit_id: h for h in out.hits}
    assert set(by_id) == {"t1#1", "t1#2"}
    assert by_id["t1#1"].award_cents == 500_001  # the odd cent to the first in order
    assert by_id["t1#2"].award_cents == 500_000
    assert by_id["t1#1"].settlement_order == 0 and by_id["t1#2"].settlement_order == 1
    assert by_id["t1#1"].settlement_group == by_id["t1#2"].settlement_group
    assert out.state.meter_units == 1_000_00 * 10_000 + 77
    assert out.state.tables["t1"].open_claims == ()
    assert out.state.last_win.won_cents == 1_000_001
    assert out.state.last_win.seats == (2, 5)

    # The last head shown again after settling is not paid again.
    again = read(out.state, 5, 0, head=second, pending=1)
    assert again.hits == () and again.events == ()
    assert again.state.meter_units == out.state.meter_units


def test_sequential_second_winner_gets_the_reset_meter():
    state = fund(baseline(new_link(policy=HitPolicy.SEQUENTIAL), 0), METER)
    state = read(state, 2, 0, head=claim(1, H.ROYAL_FLUSH, seat=2, rnd=7), pending=2).state
    out = read(state, 3, 0, head=claim(2, H.ROYAL_FLUSH, seat=4, rnd=7), pending=1)
    assert kinds(out) == [K.AWARD, K.JACKPOT_RESET, K.AWARD, K.JACKPOT_RESET]
    first, second = out.hits
    assert (first.hit_id, first.award_cents) == ("t1#1", 12_345_67)
    assert (second.hit_id, second.award_cents) == ("t1#2", 1_000_00)
    assert first.settlement_order < second.settlement_order
    assert out.state.meter_units == 1_000_00 * 10_000 + 4_321


def test_split_settles_royal_before_straight_flush():
    state = fund(baseline(new_link(), 0), METER)
    sf = claim(1, H.STRAIGHT_FLUSH, seat=1, rnd=3, cards=STRAIGHT_FLUSH_S)
    royal = claim(2, H.ROYAL_FLUSH, seat=6, rnd=3, cards=ROYAL_S)
    state = read(state, 2, 0, head=sf, pending=2).state
    out = read(state, 3, 0, head=royal, pending=1)
    assert kinds(out) == [K.AWARD, K.JACKPOT_RESET, K.AWARD]
    by_id = {h.hit_id: h for h in out.hits}
    assert by_id["t1#2"].settlement_order == 0
    assert by_id["t1#1"].settlement_order == 1
    assert by_id["t1#2"].award_cents == 12_345_67
    after_reset = 1_000_00 * 10_000 + 4_321
    assert by_id["t1#1"].award_cents == 1_000_00 * 1000 // 10_000
    assert out.state.meter_units == after_reset - 10_000 * 10_000


def test_split_two_straight_flushes_share_ten_percent():
    state = fund(baseline(new_link(), 0), 1_000_03 * 10_000)  # 10% = $100.00 (100.003 down)
    state = read(state, 2, 0, head=claim(1, H.STRAIGHT_FLUSH, rnd=3), pending=2).state
    out = read(state, 3, 0, head=claim(2, H.STRAIGHT_FLUSH, seat=2, rnd=3), pending=1)
    assert [h.award_cents for h in out.hits] == [50_00, 50_00]
    assert out.state.meter_units == (1_000_03 - 100_00) * 10_000


def test_a_new_round_settles_the_previous_one():
    state = fund(baseline(new_link(), 0), METER)
    state = read(state, 2, 0, head=claim(1, H.FOUR_OF_A_KIND, rnd=3), pending=2).state
    out = read(state, 3, 0, head=claim(2, H.FLUSH, seat=2, rnd=4), pending=1)
    groups = {h.hit_id: h.settlement_group for h in out.hits}
    assert set(groups) == {"t1#1", "t1#2"}
    assert groups["t1#1"] != groups["t1#2"]


def test_hit_ids_are_unique_across_rounds_and_a_numbering_restart():
    state = fund(baseline(new_link(), 0), METER)
    ids = []
    seq = 2
    for hit_seq in (1, 2, 3):
        out = read(state, seq, 0, head=claim(hit_seq, H.FLUSH, rnd=hit_seq))
        ids += [h.hit_id for h in out.hits]
        state = out.state
        seq += 1
    assert ids == ["t1#1", "t1#2", "t1#3"]
    # The table's numbering restarted (lower than the last one taken): a new hit.
    out = read(state, seq, 0, head=claim(1, H.FLUSH, rnd=1))
    assert K.TABLE_COUNTER_RESET in kinds(out)
    (hit,) = out.hits
    assert hit.status == "awarded"
    assert hit.hit_id not in ids
    ids.append(hit.hit_id)
    state = out.state
    for hit_seq in (2, 3):
        seq += 1
        out = read(state, seq, 0, head=claim(hit_seq, H.FLUSH, rnd=10 + hit_seq))
        ids += [h.hit_id for h in out.hits]
        state = out.state
    assert len(ids) == len(set(ids)) == 6


def test_hit_ids_stay_unique_when_numbering_restarts_while_collecting():
    state = fund(baseline(new_link(), 0), METER)
    ids = []
    state = read(state, 2, 0, head=claim(4, H.FLUSH, rnd=9)).state  # t1#4, settled
    # Seq 5 opens a two-hit round; then the table restarts and numbers from 2.
    state = read(state, 3, 0, head=claim(5, H.FLUSH, rnd=10), pending=2).state
    out = read(state, 4, 0, head=claim(2, H.FLUSH, seat=2, rnd=1))
    ids += [h.hit_id for h in out.hits]
    state = out.state
    for n, hit_seq in enumerate((3, 4, 5), start=5):
        out = read(state, n, 0, head=claim(hit_seq, H.FLUSH, seat=3, rnd=n))
        ids += [h.hit_id for h in out.hits]
        state = out.state
    assert len(ids) == 5
    assert len(set(ids)) == len(ids), ids


def test_technician_hit_does_not_drop_claims_being_collected():
    state = fund(baseline(new_link(), 0), METER)
    state = read(state, 2, 0, head=claim(1, H.FLUSH, seat=1, rnd=9), pending=2).state
    manual = enter_hit(
        state,
        hit_id="manual-1",
        table_id="t1",
        claim=HitClaim(table_seq=None, seat=3, hand=H.FULL_HOUSE, round=9),
        at_us=T0 + 3 * SEC,
        entered_by="Tom Tech",
    )
    out = read(manual.state, 4, 0, head=claim(2, H.FLUSH, seat=2, rnd=9), pending=1)
    settled = {h.hit_id for h in (*manual.hits, *out.hits)}
    assert {"manual-1", "t1#1", "t1#2"} <= settled


def test_hits_at_two_tables_keep_their_own_ids():
    state = new_link(table("t1"), table("t2"))
    state = read(state, 1, 0, tid="t1").state
    state = read(state, 1, 0, tid="t2").state
    state = fund(state, METER)
    a = read(state, 2, 0, tid="t1", head=claim(1, H.FLUSH))
    b = read(a.state, 2, 0, tid="t2", head=claim(1, H.FLUSH))
    assert a.hits[0].hit_id == "t1#1"
    assert b.hits[0].hit_id == "t2#1"


# --- rate and reset changes ----------------------------------------------------------------


def test_rate_change_locked_until_a_jackpot_then_locked_again():
    state = hit_ready()
    with pytest.raises(RuleViolation) as info:
        change_rate(state, rate_bp=9000, at_us=T0, by="Ann")
    assert info.value.clause == "68 IAC 10-1-1.1(d)"

    # A straight flush is not the jackpot: still locked.
    state = read(state, 2, 0, head=claim(1, H.STRAIGHT_FLUSH, rnd=1)).state
    with pytest.raises(RuleViolation):
        change_rate(state, rate_bp=9000, at_us=T0, by="Ann")

    state = read(state, 3, 0, head=claim(2, H.ROYAL_FLUSH, rnd=2)).state
    out = change_rate(state, rate_bp=9000, at_us=T0 + 5 * SEC, by="Ann")
    ev = only(out, K.RATE_CHANGED)
    assert ev.delta_units == 0
    assert details(ev) == {"from_bp": 8000, "to_bp": 9000, "by": "Ann"}
    assert out.state.rate_bp == 9000
    assert out.state.jackpot_won_since_rate_set is False
    assert out.state.meter_units == state.meter_units
    with pytest.raises(RuleViolation) as info:
        change_rate(out.state, rate_bp=8000, at_us=T0 + 6 * SEC, by="Ann")
    assert info.value.clause == "68 IAC 10-1-1.1(d)"
    # The new rate applies to what comes next.
    more = read(out.state, 4, 3)
    assert only(more, K.CONTRIBUTION).delta_units == 3 * 100 * 9000


def test_rate_change_out_of_range_refused_even_after_a_jackpot():
    state = read(hit_ready(), 2, 0, head=claim(1, H.ROYAL_FLUSH)).state
    with pytest.raises(RuleViolation) as info:
        change_rate(state, rate_bp=5999, at_us=T0, by="Ann")
    assert info.value.clause == "68 IAC 10-1-1.1(c)"


def test_reset_amount_change_applies_at_the_next_jackpot():
    state = hit_ready()
    out = change_reset_amount(state, reset_cents=2_500_00, at_us=T0, by="Ann")
    assert only(out, K.RESET_AMOUNT_CHANGED).delta_units == 0
    assert out.state.meter_units == METER
    won = read(out.state, 2, 0, head=claim(1, H.ROYAL_FLUSH))
    assert only(won, K.JACKPOT_RESET).delta_units == 2_500_00 * 10_000
    assert won.state.meter_units == 2_500_00 * 10_000 + 4_321
    with pytest.raises(EngineError):
        change_reset_amount(state, reset_cents=-1, at_us=T0, by="Ann")


# --- corrections ---------------------------------------------------------------------------


def test_reduction_needs_a_document():
    state = hit_ready()
    for doc in (None, ""):
        with pytest.raises(RuleViolation) as info:
            apply_correction(
                state,
                correction_id="c1",
                delta_units=-10_000,
                reason="overstated",
                at_us=T0,
                document_sha256=doc,
            )
        assert info.value.clause == "68 IAC 10-6-5(c)"


def test_correction_with_a_document():
    state = hit_ready()
    out = apply_correction(
        state,
        correction_id="c1",
        delta_units=-1_000_000,
        reason="meter overstated by $1.00",
        at_us=T0,
        document_sha256="ab" * 32,
    )
    ev = only(out, K.CORRECTION)
    assert ev.delta_units == -1_000_000
    assert ev.correction_id == "c1"
    assert ev.explanation == "meter overstated by $1.00"
    assert details(ev) == {"document_sha256": "ab" * 32}
    assert out.state.meter_units == METER - 1_000_000
    up = apply_correction(
        out.state,
        correction_id="c2",
        delta_units=5,
        reason="understated",
        at_us=T0,
        document_sha256=None,
    )
    assert up.state.meter_units == METER - 1_000_000 + 5


def test_meter_never_below_zero():
    state = hit_ready()
    with pytest.raises(EngineError, match="below zero"):
        apply_correction(
            state,
            correction_id="c1",
            delta_units=-(METER + 1),
            reason="too much",
            at_us=T0,
            document_sha256="ab" * 32,
        )
    to_zero = apply_correction(
        state,
        correction_id="c1",
        delta_units=-METER,
        reason="all of it",
        at_us=T0,
        document_sha256="ab" * 32,
    )
    assert to_zero.state.meter_units == 0
    with pytest.raises(EngineError):
        apply_correction(
            state,
            correction_id="c0",
            delta_units=0,
            reason="nothing",
            at_us=T0,
            document_sha256=None,
        )


# --- display -------------------------------------------------------------------------------


def test_display_is_live_without_a_win():
    state = hit_ready()
    frame = display_frame(state, now_us=T0)
    assert (frame.amount_cents, frame.mode, frame.win) == (12_345_67, "live", None)


def test_display_after_a_meter_paid_hit(monkeypatch):
    won_at = T0 + 2 * SEC
    state = read(hit_ready(), 2, 0, head=claim(1, H.ROYAL_FLUSH)).state
    reset_cents = state.meter_cents
    assert reset_cents == 1_000_00

    def no_clock(*_args):
        raise AssertionError("display_frame read the clock")

    def frame(offset_us):
        with monkeypatch.context() as patched:
            for name in ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter"):
                patched.setattr(time, name, no_clock)
            f = display_frame(
                state,
                now_us=won_at + offset_us,
                won_first_us=10 * SEC,
                alternate_us=4 * SEC,
                hit_phase_us=120 * SEC,
            )
        return f.mode, f.amount_cents

    won = ("won", 12_345_67)
    reset = ("reset", reset_cents)
    live = ("live", reset_cents)
    assert frame(0) == won
    assert frame(10 * SEC - 1) == won
    assert frame(10 * SEC) == reset
    assert frame(14 * SEC - 1) == reset
    assert frame(14 * SEC) == won
    assert frame(18 * SEC) == reset
    assert frame(22 * SEC) == won
    assert frame(120 * SEC - 1) == won  # (110 s - 1) // 4 s = 27: odd, won
    assert frame(120 * SEC) == live
    assert frame(-1) == live  # a frame asked for before the win: nothing to show yet
    assert display_frame(state, now_us=won_at).win == state.last_win


def test_display_reset_phase_shows_the_current_meter():
    state = read(hit_ready(), 2, 0, head=claim(1, H.ROYAL_FLUSH)).state
    won_at = T0 + 2 * SEC
    state = read(state, 3, 7).state  # play goes on: the meter grows again
    f = display_frame(state, now_us=won_at + 11 * SEC)
    assert f.mode == "reset"
    assert f.amount_cents == state.meter_cents == 1_000_00 + 7 * 100 * 8000 // 10_000


def test_display_stays_live_after_a_fixed_payout():
    state = read(hit_ready(), 2, 0, head=claim(1, H.FULL_HOUSE)).state
    assert display_frame(state, now_us=T0 + 2 * SEC).mode == "live"
