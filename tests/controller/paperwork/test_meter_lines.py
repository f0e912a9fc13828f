"""A link of levels reconciled meter by meter, from the entries the real reducer writes, and
each level's hits read back from its award entries."""

from __future__ import annotations

from controller.core.hands import HandCategory, parse_cards
from controller.core.ledger import canonical_details
from controller.core.reducer import HitClaim, LinkState, MeterEvent, open_link
from controller.core.reducer.levels import MysteryDraw, meters_of
from controller.paperwork.export import meters_text
from controller.paperwork.meter_lines import award_of, level_hits
from controller.paperwork.reconciliation import reconcile, summary
from tests.controller.core.test_levels import (
    GRAND,
    MAJOR,
    MINI,
    MINOR,
    QUADS,
    STUD,
    T0,
    paytable,
    read,
    table,
)
from tests.controller.history_entries import entries_of
from tests.controller.permissive_law import PERMISSIVE

H = HandCategory


def played() -> tuple[list[MeterEvent], LinkState]:
    """Open a pool of four levels, play, hit the Minor (its overflow moves in), the Major
    (its reserve funds the reset) and the Mini (its mystery trigger)."""
    out = open_link(
        law=PERMISSIVE,
        link_id="pool", game=STUD, rate_bp=0, reset_cents=0, paytable=paytable(),
        tables=(table(), table("t2")), at_us=T0, levels=(GRAND, MAJOR, MINOR, MINI),
        draws={3: [MysteryDraw(15_00, "ab" * 16)]},
    )  # fmt: skip
    events = list(out.events)
    s = out.state
    for step in (
        lambda s: read(s, "t1", 1, 0, rounds=0),
        lambda s: read(s, "t2", 1, 0, rounds=0),
        lambda s: read(s, "t1", 2, 1_000, rounds=1),
        lambda s: read(
            s, "t1", 3, 1_000, rounds=1, pending=1,
            head=HitClaim(table_seq=1, seat=3, hand=H.FOUR_OF_A_KIND, round=1, cards=QUADS),
        ),
        lambda s: read(
            s, "t2", 2, 0, rounds=2, pending=1,
            head=HitClaim(
                table_seq=1, seat=2, hand=H.STRAIGHT_FLUSH, round=2,
                cards=parse_cards("9s 8s 7s 6s 5s"),
            ),
        ),
        lambda s: read(s, "t2", 3, 300, rounds=5, seat_credits=(0, 100, 200, 0, 0, 0, 0)),
    ):  # fmt: skip
        o = step(s)
        events.extend(o.events)
        s = o.state
    return events, s


def test_every_meter_reconciles_exactly_from_its_entries() -> None:
    events, final = played()
    r = reconcile("pool", T0 - 1, T0 + 10**12, 0, entries_of(events))
    assert r.balanced, r.problems
    closing = {key: line.closing_units for key, line in r.lines.meters.items()}
    assert {k: v for k, v in closing.items() if v} == {
        k: v for k, v in meters_of(final.levels).items() if v
    }
    lines = r.lines.meters
    # What a reset moves between a level's meters adds up to nothing over the pool.
    assert sum(line.moved_units for line in lines.values()) == 0
    assert lines["L2.reserve"].moved_units < 0 < lines["L2"].moved_units
    assert lines["L3.overflow"].moved_units < 0
    # The pool's terms, meter by meter, add up to the link's.
    assert sum(line.seeded_units for line in lines.values()) == r.seeded_units
    assert sum(line.contributed_units for line in lines.values()) == r.contributions_units
    assert sum(line.awarded_units for line in lines.values()) == r.awards_units
    assert {m["meter"] for m in summary(r, {"L1": "Grand"})["meters"]} >= {"L1", "L1.reserve"}
    assert lines["L1.reserve"].opening_units == 0


def test_a_broken_split_is_named() -> None:
    events, _ = played()
    entries = entries_of(events)
    i = next(i for i, e in enumerate(entries) if e.kind == "contribution")
    bad = entries[i].details.replace('"L1":[', '"L1":[1', 1)
    entries[i] = entries[i]._replace(details=bad)
    r = reconcile("pool", T0 - 1, T0 + 10**12, 0, entries)
    assert not r.balanced
    assert any("meter L1" in p for p in r.problems)


def test_each_levels_hits_come_from_its_award_entries() -> None:
    events, _ = played()
    awards = [award_of(e) for e in reversed(entries_of(events)) if e.kind == "award"]
    by_level = level_hits(awards)
    assert set(by_level) == {"L2", "L3", "L4"}
    assert by_level["L4"].recent[0].kind == "mystery"
    assert by_level["L4"].won_cents == 15_00
    assert by_level["L3"].recent[0].seat == 3 and by_level["L3"].hits == 1


def test_the_history_export_carries_each_entrys_split() -> None:
    events, _ = played()
    contribution = next(e for e in events if e.kind == "contribution")
    text = meters_text(canonical_details(contribution.details))
    assert text.startswith('{"L1":[') and '"L1.reserve":[0,' in text
    assert meters_text("{}") == ""
