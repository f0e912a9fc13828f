"""Tests for controller.core.ledger without a database: sealing and ChainVerifier on tampering."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from controller.core.games import Game, default_paytable
from controller.core.hands import HandCategory
from controller.core.ledger import (
    ENTRY_COLUMNS,
    GENESIS,
    Anchor,
    ChainHead,
    ChainVerifier,
    SealedEntry,
    key_fingerprint,
    seal,
)
from controller.core.reducer import (
    EntryKind,
    HitClaim,
    MeterEvent,
    TableConfig,
    TableReading,
    apply_correction,
    apply_reading,
    open_link,
)
from controller.rules.jurisdictions import INDIANA

KEY = b"k" * 32
OTHER_KEY = b"x" * 32
T0 = 1_700_000_000_000_000
SEC = 1_000_000


def history() -> list[MeterEvent]:
    """Seven events of one link: opened, baseline, contributions, a royal flush, a correction."""
    game = Game.CARIBBEAN_STUD
    out = open_link(
        law=INDIANA,
        link_id="L1",
        game=game,
        rate_bp=8000,
        reset_cents=1_000_00,
        paytable=default_paytable(game),
        tables=[TableConfig(table_id="t1", denomination_cents=100)],
        at_us=T0,
    )
    events = list(out.events)
    state = out.state
    for seq, credits, head in (
        (1, 100, None),
        (2, 105, None),
        (3, 107, HitClaim(table_seq=1, seat=2, hand=HandCategory.ROYAL_FLUSH, round=4)),
    ):
        out = apply_reading(
            state,
            TableReading(
                table_id="t1",
                poll_seq=seq,
                at_us=T0 + seq * SEC,
                credits=credits,
                pending_hits=1 if head else 0,
                head_hit=head,
            ),
        )
        events += out.events
        state = out.state
    out = apply_correction(
        state,
        correction_id="c1",
        delta_units=-12_345,
        reason="overstated by a glitch",
        at_us=T0 + 9 * SEC,
        document_sha256="ab" * 32,
    )
    events += out.events
    return events


EVENTS = history()


def sealed(key: bytes = KEY, events=None) -> list[SealedEntry]:
    return seal(key, "L1", EVENTS if events is None else events, last_seq=0, last_hash=GENESIS)


def row(entry: SealedEntry) -> list:
    return [getattr(entry, name) for name in ENTRY_COLUMNS]


def verify(entries, *, key: bytes = KEY, head: ChainHead | None = None, anchor=None):
    verifier = ChainVerifier(key, "L1", anchor)
    for entry in entries:
        problem = verifier.feed(row(entry) if isinstance(entry, SealedEntry) else entry)
        if problem is not None:
            return problem
    return verifier.finish(head)


def head_of(entries: list[SealedEntry]) -> ChainHead:
    return ChainHead(
        last_seq=entries[-1].seq,
        last_hash=entries[-1].hash,
        meter_units=entries[-1].meter_after_units,
    )


def edit(entry, **changes):
    """A copy of an entry (sealed or not) with some fields changed, as a tamperer would."""
    if hasattr(entry, "_replace"):  # a NamedTuple
        return entry._replace(**changes)
    return dataclasses.replace(entry, **changes)


# --- a whole chain -------------------------------------------------------------------------


def test_history_has_every_kind_this_test_needs():
    assert [e.kind for e in EVENTS] == [
        EntryKind.LINK_OPENED,
        EntryKind.TABLE_BASELINE,
        EntryKind.CONTRIBUTION,
        EntryKind.CONTRIBUTION,
        EntryKind.AWARD,
        EntryKind.JACKPOT_RESET,
        EntryKind.CORRECTION,
    ]


def test_sealed_chain_verifies_whole():
    entries = sealed()
    assert [e.seq for e in entries] == list(range(1, len(EVENTS) + 1))
    assert entries[0].prev_hash == GENESIS
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(entries))
    verifier = ChainVerifier(KEY, "L1")
    for entry in entries:
        assert verifier.feed(row(entry)) is None
    assert verifier.finish(head_of(entries)) is None
    assert verifier.count == len(entries)
    assert verifier.meter == EVENTS[-1].meter_after_units


def test_sealing_in_batches_gives_the_same_chain():
    whole = sealed()
    first = seal(KEY, "L1", EVENTS[:3], last_seq=0, last_hash=GENESIS)
    rest = seal(KEY, "L1", EVENTS[3:], last_seq=first[-1].seq, last_hash=first[-1].hash)
    assert first + rest == whole


def test_verifying_from_an_anchor_after_a_purge():
    entries = sealed()
    anchor = Anchor(
        seq=entries[2].seq, hash=entries[2].hash, meter_units=entries[2].meter_after_units
    )
    assert verify(entries[3:], anchor=anchor, head=head_of(entries)) is None
    # A wrong anchor meter is caught at the first entry after it.
    bad = Anchor(seq=anchor.seq, hash=anchor.hash, meter_units=anchor.meter_units + 1)
    problem = verify(entries[3:], anchor=bad)
    assert problem is not None and problem.seq == 4


def test_key_fingerprint_tells_keys_apart():
    assert key_fingerprint(KEY) == key_fingerprint(KEY)
    assert key_fingerprint(KEY) != key_fingerprint(OTHER_KEY)
    assert KEY.hex() not in key_fingerprint(KEY)


# --- tampering -----------------------------------------------------------------------------


def test_edited_amount_is_caught():
    entries = sealed()
    e = entries[2]
    # Consistent arithmetic, so only the seal can tell.
    entries[2] = edit(
        e, delta_units=e.delta_units + 10_000, meter_after_units=e.meter_after_units + 10_000
    )
    problem = verify(entries)
    assert problem is not None
    assert problem.seq == 3
    assert "edited" in problem.what
    assert "entry 3" in str(problem)


def test_edited_amount_that_does_not_add_up_is_caught():
    entries = sealed()
    entries[3] = edit(entries[3], delta_units=entries[3].delta_units + 1)
    problem = verify(entries)
    assert problem is not None and problem.seq == 4
    assert "do not add up" in problem.what


def test_edited_meter_before_is_caught_as_a_break_in_amounts():
    entries = sealed()
    e = entries[3]
    entries[3] = edit(e, meter_before_units=e.meter_before_units + 5, delta_units=e.delta_units - 5)
    problem = verify(entries)
    assert problem is not None and problem.seq == 4
    assert "previous entry ended at" in problem.what


def test_edited_explanation_is_caught():
    entries = sealed()
    entries[4] = edit(entries[4], explanation="hit: nobody in particular")
    problem = verify(entries)
    assert problem is not None and problem.seq == 5
    assert "edited" in problem.what


def test_edited_details_is_caught():
    entries = sealed()
    entries[2] = edit(entries[2], details=entries[2].details.replace("5", "6"))
    problem = verify(entries)
    assert problem is not None and problem.seq == 3


def test_deleted_middle_entry_is_caught():
    entries = sealed()
    del entries[2]
    problem = verify(entries)
    assert problem is not None
    assert problem.seq == 3
    assert "missing" in problem.what


def test_deleted_last_entry_is_caught_by_the_head():
    entries = sealed()
    head = head_of(entries)
    problem = verify(entries[:-1], head=head)
    assert problem is not None
    assert problem.seq == len(entries)
    assert "missing" in problem.what
    # Without the link's head, a truncated chain cannot be told from a short one.
    assert verify(entries[:-1]) is None


def test_head_disagreeing_with_the_chain_is_caught():
    entries = sealed()
    head = head_of(entries)
    problem = verify(entries, head=dataclasses.replace(head, meter_units=head.meter_units + 1))
    assert problem is not None and "history ends at" in problem.what
    problem = verify(entries, head=dataclasses.replace(head, last_hash="f" * 64))
    assert problem is not None and problem.seq == len(entries)
    problem = verify(entries, head=dataclasses.replace(head, last_seq=head.last_seq - 1))
    assert problem is not None and "beyond" in problem.what


def test_inserted_forged_entry_is_caught():
    entries = sealed()
    # A forger writes a new entry 3 pointing at entry 2, renumbers the rest, but lacks the key.
    forged_event = MeterEvent(
        kind=EntryKind.CONTRIBUTION,
        at_us=T0 + 2 * SEC,
        meter_before_units=entries[1].meter_after_units,
        delta_units=1_000_000,
        explanation="table t1: forged",
        table_id="t1",
    )
    (forged,) = seal(OTHER_KEY, "L1", [forged_event], last_seq=2, last_hash=entries[1].hash)
    tampered = [*entries[:2], forged, *(edit(e, seq=e.seq + 1) for e in entries[2:])]
    problem = verify(tampered)
    assert problem is not None
    assert problem.seq == 3
    assert "edited" in problem.what


def test_inserted_entry_with_a_duplicate_seq_is_caught():
    entries = sealed()
    tampered = [*entries[:3], entries[2], *entries[3:]]
    problem = verify(tampered)
    assert problem is not None and problem.seq == 3
    assert "out of order or duplicated" in problem.what


def test_swapped_entries_are_caught():
    entries = sealed()
    # Rows in storage order, numbers unchanged: entry 3 before entry 2.
    swapped = [entries[0], entries[2], entries[1], *entries[3:]]
    problem = verify(swapped)
    assert problem is not None and problem.seq == 2
    # Contents swapped but numbers kept in order.
    renumbered = [entries[0], edit(entries[2], seq=2), edit(entries[1], seq=3), *entries[3:]]
    problem = verify(renumbered)
    assert problem is not None and problem.seq == 2
    assert "previous entry's seal" in problem.what


def test_rechained_with_a_wrong_key_is_caught():
    # Everything resealed from entry 4 on with a key that is not the link's.
    good = sealed()
    edited = [
        *EVENTS[:3],
        edit(EVENTS[3], explanation="table t1: rewritten"),
        *EVENTS[4:],
    ]
    resealed_tail = seal(OTHER_KEY, "L1", edited[3:], last_seq=3, last_hash=good[2].hash)
    problem = verify([*good[:3], *resealed_tail], head=head_of(resealed_tail))
    assert problem is not None
    assert problem.seq == 4
    assert "edited" in problem.what
    # A whole chain under another key fails at its first entry.
    problem = verify(sealed(OTHER_KEY))
    assert problem is not None and problem.seq == 1


def test_entry_of_another_link_is_caught():
    entries = sealed()
    entries[1] = edit(entries[1], link_id="L2")
    problem = verify(entries)
    assert problem is not None and problem.seq == 2
    assert "'L2'" in problem.what


@pytest.mark.parametrize("resealed", [False, True])
def test_reduction_relabelled_as_contribution_is_caught(resealed):
    award_at = next(i for i, e in enumerate(EVENTS) if e.kind is EntryKind.AWARD)
    assert EVENTS[award_at].delta_units < 0
    if resealed:
        # Even someone holding the key cannot record a reduction without a reason.
        relabelled = [*EVENTS]
        relabelled[award_at] = edit(EVENTS[award_at], kind=EntryKind.CONTRIBUTION)
        entries = sealed(events=relabelled)
    else:
        entries = sealed()
        entries[award_at] = edit(entries[award_at], kind=str(EntryKind.CONTRIBUTION))
    problem = verify(entries)
    assert problem is not None
    assert problem.seq == award_at + 1
    assert "reduction" in problem.what and "'contribution'" in problem.what


def test_reduction_without_its_reference_is_caught():
    entries = sealed()
    correction_at = next(i for i, e in enumerate(entries) if e.kind == "correction")
    assert entries[correction_at].delta_units < 0
    events = [*EVENTS]
    events[correction_at] = edit(EVENTS[correction_at], correction_id=None)
    problem = verify(sealed(events=events))
    assert problem is not None and problem.seq == correction_at + 1
    assert "reduction" in problem.what


def test_verifier_stops_at_the_first_problem():
    entries = sealed()
    entries[1] = edit(entries[1], explanation="x")
    entries[4] = edit(entries[4], explanation="y")
    verifier = ChainVerifier(KEY, "L1")
    problems = [verifier.feed(row(e)) for e in entries]
    assert problems[0] is None
    assert all(p is not None and p.seq == 2 for p in problems[1:])
    assert verifier.finish(head_of(entries)).seq == 2
