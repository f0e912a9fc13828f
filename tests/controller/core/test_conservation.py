"""Conservation of the meter (controller.core.reducer.conservation): the ordinary paths pass it,
and an outcome that does not add up is refused, by the check and by the reducer itself."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from controller.core.games import Game, default_paytable
from controller.core.hands import HandCategory, parse_cards
from controller.core.reducer import (
    ConservationBroken,
    EngineError,
    EntryKind,
    HitClaim,
    LinkState,
    MeterEvent,
    MeterTerms,
    Outcome,
    TableConfig,
    TableReading,
    apply_correction,
    apply_readings,
    approve_anomaly,
    check_conservation,
    check_outcome,
    open_link,
)
from controller.core.reducer.builder import Builder
from controller.rules.jurisdictions import INDIANA

K = EntryKind
SEC = 1_000_000
T0 = 1_700_000_000 * SEC
UNITS_PER_CENT = 10_000


def opened() -> Outcome:
    return open_link(
        law=INDIANA,
        link_id="L1",
        game=Game.CARIBBEAN_STUD,
        rate_bp=8000,
        reset_cents=1_000_00,
        paytable=default_paytable(Game.CARIBBEAN_STUD),
        tables=[TableConfig(table_id="t1", denomination_cents=100)],
        at_us=T0,
    )


def read(state: LinkState, seq: int, credits: int, *, head: HitClaim | None = None) -> Outcome:
    reading = TableReading(
        table_id="t1",
        poll_seq=seq,
        at_us=T0 + seq * 60 * SEC,
        credits=credits,
        pending_hits=1 if head is not None else 0,
        head_hit=head,
    )
    return apply_readings(state, [reading])


def test_the_ordinary_paths_add_up_term_by_term() -> None:
    o = opened()
    assert check_conservation("L1", 0, o.events, o.state.meter_units) == MeterTerms(
        seeded=1_000_00 * UNITS_PER_CENT
    )
    run = [o]
    run.append(read(run[-1].state, 1, 100))  # the baseline
    run.append(read(run[-1].state, 2, 105))  # 5 credits x 100c x 80%
    royal = HitClaim(
        table_seq=1, seat=1, hand=HandCategory.ROYAL_FLUSH, round=1,
        cards=parse_cards("As Ks Qs Js Ts"),
    )  # fmt: skip
    run.append(read(run[-1].state, 3, 105, head=royal))  # award, then the reset
    run.append(
        apply_correction(
            run[-1].state,
            correction_id="c1",
            delta_units=-7,
            reason="audit",
            at_us=T0 + 300 * SEC,
            document_sha256="ab" * 32,
        )
    )
    terms = MeterTerms()
    for before, after in itertools.pairwise(run):
        terms = terms.plus(check_outcome(before.state, after))
    terms = MeterTerms(seeded=1_000_00 * UNITS_PER_CENT).plus(terms)
    assert terms.contributed == 5 * 100 * 8000
    assert terms.awarded > 0 and terms.corrected == -7
    assert terms.seeded == 2 * 1_000_00 * UNITS_PER_CENT
    assert run[-1].state.meter_units == terms.net_units
    assert [e.kind for e in run[3].events] == [K.AWARD, K.JACKPOT_RESET]


def test_an_approved_anomaly_is_a_contribution() -> None:
    s = read(opened().state, 1, 0).state
    held = read(s, 2, 10_000)  # far more than a table can take in a minute
    (anomaly,) = held.anomalies
    approved = approve_anomaly(held.state, anomaly, at_us=T0 + 200 * SEC, reviewer="Ann")
    assert check_outcome(held.state, approved) == MeterTerms(contributed=anomaly.units)


def broken(o: Outcome, **changes: object) -> Outcome:
    return replace(o, state=replace(o.state, **changes))


def test_a_meter_that_does_not_follow_from_its_entries_is_refused() -> None:
    before = read(opened().state, 1, 100).state
    step = read(before, 2, 105)
    check_outcome(before, step)
    forged = broken(step, meter_units=step.state.meter_units + 1)
    with pytest.raises(ConservationBroken) as caught:
        check_outcome(before, forged)
    e = caught.value
    assert isinstance(e, AssertionError) and not isinstance(e, EngineError)
    assert e.link_id == "L1" and e.difference_units == 1
    assert e.before_units == before.meter_units
    assert e.terms == MeterTerms(contributed=5 * 100 * 8000)
    assert e.after_units == step.state.meter_units + 1
    text = str(e)
    assert "link L1" in text and "difference +1 units" in text
    assert f"meter before {before.meter_units}" in text


def entry(kind: EntryKind, before: int, delta: int) -> MeterEvent:
    return MeterEvent(kind, T0, before, delta, "forged", table_id="t1")


@pytest.mark.parametrize(
    ("events", "after", "problem"),
    [
        # A kind that never moves the meter moves it.
        ([entry(K.TABLE_ONLINE, 100, 5)], 105, "its kind never does"),
        # An award that adds, a contribution and a seed that take.
        ([entry(K.AWARD, 100, 5)], 105, "the wrong way"),
        ([entry(K.CONTRIBUTION, 100, -5)], 95, "the wrong way"),
        ([entry(K.JACKPOT_RESET, 100, -5)], 95, "the wrong way"),
        # An entry that does not start where the meter stood.
        ([entry(K.CONTRIBUTION, 100, 5), entry(K.CONTRIBUTION, 106, 5)], 111, "entry 1"),
        ([entry(K.CONTRIBUTION, 99, 5)], 104, "entry 0"),
        # Entries in order, a meter after that is not where they end.
        ([entry(K.CONTRIBUTION, 100, 5), entry(K.AWARD, 105, -3)], 103, "meter after"),
        ([], 101, "meter after"),
    ],
)
def test_each_way_of_breaking_it_is_refused(
    events: list[MeterEvent], after: int, problem: str
) -> None:
    with pytest.raises(ConservationBroken, match=problem):
        check_conservation("L1", 100, events, after)


def test_an_outcome_of_another_link_is_refused() -> None:
    a = opened()
    b = replace(a.state, link_id="L2")
    with pytest.raises(ConservationBroken, match="the outcome is link L1's"):
        check_outcome(b, broken(a))


def test_the_reducer_refuses_to_hand_back_a_step_that_does_not_add_up() -> None:
    state = read(opened().state, 1, 100).state
    b = Builder(state)
    b.emit(K.CONTRIBUTION, T0 + 120 * SEC, 40_000, "table t1: 1 credit", table_id="t1")
    # An entry slipped in beside the builder's bookkeeping: the meter it keeps no longer
    # follows from the entries.
    b.events.append(MeterEvent(K.CONTRIBUTION, T0 + 120 * SEC, b.meter, 1, "forged"))
    with pytest.raises(ConservationBroken, match="link L1"):
        b.done()


def test_which_kind_is_which_term_is_said_once_and_every_reader_follows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reconciliation and the law's own check sum a history by the one table of terms:
    a correction taken out of it counts nowhere but "other" in the report, and the check
    refuses it as a kind that never moves the meter."""
    from controller.core.reducer import EntryKind, MeterEvent, check_conservation, conservation
    from controller.paperwork.reconciliation import reconcile
    from tests.controller.history_entries import entry

    entries = [
        entry(1, 10, str(EntryKind.JACKPOT_RESET), 0, 100, 100, None, "{}"),
        entry(2, 20, str(EntryKind.CORRECTION), 100, -7, 93, None, "{}"),
    ]
    kept = reconcile("stud", 0, 100, 0, entries)
    assert (kept.seeded_units, kept.corrections_units, kept.other_units) == (100, -7, 0)
    event = MeterEvent(EntryKind.CORRECTION, 20, 100, -7, "a correction")
    assert check_conservation("stud", 100, [event], 93).corrected == -7

    monkeypatch.delitem(conservation.TERMS, EntryKind.CORRECTION)  # type: ignore[arg-type]
    moved = reconcile("stud", 0, 100, 0, entries)
    assert (moved.seeded_units, moved.corrections_units, moved.other_units) == (100, 0, -7)
    with pytest.raises(conservation.ConservationBroken, match="its kind never does"):
        check_conservation("stud", 100, [event], 93)
