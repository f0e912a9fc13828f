"""Verifying a link of levels meter by meter, and every mystery commitment, from its sealed
history: a history made by the real reducer, then rewritten by someone holding the key."""

from __future__ import annotations

import json
from typing import Any

import pytest

from controller.core.ledger import GENESIS, Anchor, ChainVerifier, SealedEntry, seal
from controller.core.meter_trail import TrailState, stitch
from controller.core.reducer import EntryKind, MeterEvent
from controller.core.reducer.levels import meters_of, mystery_commitment
from tests.controller.core.levels_history import LINK, played

KEY = b"k" * 32
K = EntryKind


def sealed(events: list[MeterEvent], link_id: str = LINK) -> list[SealedEntry]:
    return seal(KEY, link_id, events, last_seq=0, last_hash=GENESIS)


def walk(entries: list[SealedEntry], *, many: bool = False) -> ChainVerifier:
    v = ChainVerifier(KEY, entries[0].link_id)
    if many:
        v.feed_many([tuple(e) for e in entries])
    else:
        for e in entries:
            if v.feed(tuple(e)) is not None:
                break
    return v


def rewritten(events: list[MeterEvent], index: int, change: Any) -> list[MeterEvent]:
    """The history with entry ``index``'s details changed by ``change`` (every seal is then
    recomputed with the key, as its holder could)."""
    out = list(events)
    d = json.loads(json.dumps(out[index].details))
    change(d)
    out[index] = out[index]._replace(details=d)
    return out


def index_of(events: list[MeterEvent], kind: EntryKind, nth: int = 0) -> int:
    return [i for i, e in enumerate(events) if e.kind == kind][nth]


def mystery_award(events: list[MeterEvent]) -> int:
    return next(
        i
        for i, e in enumerate(events)
        if e.kind == K.AWARD and isinstance(e.details, dict) and "mystery" in e.details
    )


@pytest.mark.parametrize("many", [False, True])
def test_a_history_of_levels_made_by_the_reducer_verifies_meter_by_meter(many: bool) -> None:
    p = played()
    v = walk(sealed(p.events), many=many)
    assert v.problem is None and v.count == len(p.events)
    part = v.trail_part()
    # The running value of every meter is the state's.
    assert part.state.meters is not None
    assert {k: u for k, u in part.state.meters.items() if u} == {
        k: u for k, u in meters_of(p.state.levels).items() if u
    }
    # Two mystery hits: the second arming revealed too, and no draw was ready for a third.
    armed = part.state.armed["L4"]
    assert armed.revealed and p.state.levels[3].armed is None
    assert armed.commitment == mystery_commitment(LINK, "L4", 12_34, "cd" * 16)


def test_a_rewritten_trigger_is_caught_by_the_commitment_it_quotes() -> None:
    events = played().events
    i = mystery_award(events)
    forged = rewritten(events, i, lambda d: d["mystery"].update(trigger_cents=20_00))
    v = walk(sealed(forged))
    assert v.problem is not None and v.problem.seq == i + 1
    assert "gives commitment" in v.problem.what and "it quotes" in v.problem.what


def test_a_reveal_rewritten_with_its_own_commitment_is_caught_by_the_arming() -> None:
    events = played().events
    i = mystery_award(events)

    def forge(d: dict[str, Any]) -> None:
        m = d["mystery"]
        m["salt"] = "ee" * 16
        m["commitment"] = mystery_commitment(LINK, "L4", m["trigger_cents"], m["salt"])

    v = walk(sealed(rewritten(events, i, forge)))
    armed_at = index_of(events, K.MYSTERY_ARMED) + 1
    assert v.problem is not None and v.problem.seq == i + 1
    assert f"entry {armed_at} sealed" in v.problem.what


def test_a_rewritten_arming_is_caught_at_its_reveal() -> None:
    events = played().events
    a = index_of(events, K.MYSTERY_ARMED)
    forged = rewritten(events, a, lambda d: d.update(commitment="00" * 32))
    v = walk(sealed(forged))
    assert v.problem is not None and v.problem.seq == mystery_award(events) + 1
    assert "sealed 0000000000000000..." in v.problem.what


def test_a_trigger_outside_its_armings_range_is_caught() -> None:
    events = played().events
    a = index_of(events, K.MYSTERY_ARMED)
    v = walk(sealed(rewritten(events, a, lambda d: d.update(ceiling_cents=14_99))))
    assert v.problem is not None and "outside the floor 1001 and ceiling 1499" in v.problem.what


def test_a_reveal_repeated_is_caught() -> None:
    events = played().events
    i = mystery_award(events)
    second = next(
        j
        for j, e in enumerate(events)
        if j > i and e.kind == K.AWARD and isinstance(e.details, dict) and "mystery" in e.details
    )
    # The second arming removed (the entry kept, made an ordinary no-op): its reveal now
    # reveals the first arming again.
    a2 = index_of(events, K.MYSTERY_ARMED, 1)
    forged = list(events)
    forged[a2] = forged[a2]._replace(kind=K.TABLE_RELEASED, details={})
    forged[second] = events[second]._replace(details=events[i].details)
    v = walk(sealed(forged))
    assert v.problem is not None and v.problem.seq == second + 1


@pytest.mark.parametrize("many", [False, True])  # entry by entry, and a batch's fast path
def test_a_split_that_does_not_add_up_is_caught(many: bool) -> None:
    events = played().events
    c = index_of(events, K.CONTRIBUTION)
    forged = rewritten(
        events, c, lambda d: d["meters"]["L2"].__setitem__(1, d["meters"]["L2"][1] + 1)
    )
    v = walk(sealed(forged), many=many)
    assert v.problem is not None and v.problem.seq == c + 1
    assert "move by" in v.problem.what and "its delta is" in v.problem.what


@pytest.mark.parametrize("many", [False, True])  # entry by entry, and a batch's fast path
def test_a_meter_that_does_not_continue_is_caught_naming_it(many: bool) -> None:
    events = played().events
    c = index_of(events, K.CONTRIBUTION, 1)

    def shift(d: dict[str, Any]) -> None:  # L1's before raised: its moves still add up
        d["meters"]["L1"][0] += 7

    v = walk(sealed(rewritten(events, c, shift)), many=many)
    assert v.problem is not None and v.problem.seq == c + 1
    assert v.problem.what.startswith("meter L1 starts from")


@pytest.mark.parametrize("many", [False, True])  # entry by entry, and a batch's fast path
def test_a_meter_below_zero_is_caught(many: bool) -> None:
    events = played().events
    c = index_of(events, K.CONTRIBUTION)

    def drain(d: dict[str, Any]) -> None:
        d["meters"]["L1.reserve"] = [0, -5]
        d["meters"]["L1"][1] += 5

    v = walk(sealed(rewritten(events, c, drain)), many=many)
    assert v.problem is not None and "L1.reserve goes below zero" in v.problem.what


def test_segments_stitched_find_what_one_walk_finds() -> None:
    events = played().events
    entries = sealed(events)
    whole = walk(entries).trail_part().state
    for cut in range(1, len(entries)):
        first = walk(entries[:cut])
        prev = entries[cut - 1]
        second = ChainVerifier(KEY, LINK, Anchor(prev.seq, prev.hash, prev.meter_after_units))
        for e in entries[cut:]:
            assert second.feed(tuple(e)) is None
        state = stitch(None, first.trail_part())[2]
        problem, notes, state = stitch(state, second.trail_part())
        assert problem is None and notes == [], cut
        assert state.meters == whole.meters and state.armed == whole.armed, cut


def test_a_break_at_a_segments_edge_is_found_by_the_stitch() -> None:
    events = played().events
    c = index_of(events, K.CONTRIBUTION, 1)
    forged = rewritten(
        events, c, lambda d: d["meters"]["L1"].__setitem__(0, d["meters"]["L1"][0] + 7)
    )
    entries = sealed(forged)
    first = walk(entries[:c])
    prev = entries[c - 1]
    second = ChainVerifier(KEY, LINK, Anchor(prev.seq, prev.hash, prev.meter_after_units))
    for e in entries[c:]:
        second.feed(tuple(e))
    # On its own the segment takes L1 where its first entry has it, and finds the entry after
    # it does not continue; the stitch finds the edited entry itself, the first broken.
    assert second.problem is not None and second.problem.seq == c + 2
    problem, _, _ = stitch(stitch(None, first.trail_part())[2], second.trail_part())
    assert problem is not None and problem[0] == c + 1 and "meter L1" in problem[1]


def test_after_a_purge_the_manifest_carries_the_meters_and_the_next_reveal_is_checked() -> None:
    events = played().events
    entries = sealed(events)
    cut = index_of(events, K.CONTRIBUTION)  # purged up to the entry before the first hit
    head = walk(entries[:cut])
    manifest = head.trail_part().state.manifest()
    assert manifest["mystery_at_anchor"]["L4"]["revealed"] is False
    at = TrailState.from_manifest(json.loads(json.dumps(manifest)))
    prev = entries[cut - 1]
    anchor = Anchor(prev.seq, prev.hash, prev.meter_after_units)
    v = ChainVerifier(KEY, LINK, anchor, at)
    for e in entries[cut:]:
        assert v.feed(tuple(e)) is None
    # The reveal after the purge is checked against the manifest's commitment.
    forged = sealed(rewritten(events, mystery_award(events), _resalt))
    v = ChainVerifier(
        KEY, LINK, Anchor(forged[cut - 1].seq, forged[cut - 1].hash, prev.meter_after_units), at
    )
    problems = [v.feed(tuple(e)) for e in forged[cut:]]
    assert problems[-1] is not None and "sealed 5e61f72c04c2ef17" in problems[-1].what


def _resalt(d: dict[str, Any]) -> None:
    m = d["mystery"]
    m["salt"] = "ee" * 16
    m["commitment"] = mystery_commitment(LINK, "L4", m["trigger_cents"], m["salt"])


def test_after_a_purge_that_kept_no_meters_a_reveal_is_unverifiable_not_broken() -> None:
    events = played().events
    entries = sealed(events)
    cut = index_of(events, K.CONTRIBUTION)
    prev = entries[cut - 1]
    v = ChainVerifier(KEY, LINK, Anchor(prev.seq, prev.hash, prev.meter_after_units))
    for e in entries[cut:]:
        assert v.feed(tuple(e)) is None
    problem, notes, _ = stitch(None, v.trail_part())
    assert problem is None
    assert [seq for seq, _ in notes] == [mystery_award(events) + 1]
    assert "cannot be checked" in notes[0][1]
