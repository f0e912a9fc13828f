"""Game protection's tallies and judgements, from what a table reports as the history records
it (``controller.core.protection``)."""

from __future__ import annotations

import json
import random
from datetime import UTC, time
from fractions import Fraction

import pytest

from controller.core.games import Game, default_paytable, rules_of
from controller.core.hands import HandCategory
from controller.core.luck import Direction
from controller.core.protection import (
    DAY_US,
    LOOK_US,
    WINDOWS,
    Scope,
    Seen,
    TableFacts,
    Tallies,
    Watch,
    odds_of,
)
from controller.periods import FloorCalendar

CALENDAR = FloorCalendar(time(6), (time(6), time(14), time(22)), UTC)
GAME = Game.CARIBBEAN_STUD
HANDS = tuple(line.hand for line in default_paytable(GAME).lines)
T0 = 1_780_000_000_000_000 // DAY_US * DAY_US + 7 * 3_600_000_000  # 07:00 UTC: shift 1


def watch(tables: int = 1, dealer_of=None) -> Watch:  # type: ignore[no-untyped-def]
    facts = {f"t{i}": TableFacts(f"t{i}", GAME, HANDS) for i in range(1, tables + 1)}
    if dealer_of is None:
        return Watch(Tallies(CALENDAR, facts))
    return Watch(Tallies(CALENDAR, facts, dealer_of))


class Stream:
    """Entries of one link as the history would give them, numbered."""

    def __init__(self) -> None:
        self.seq = 0
        self.hits = 0

    def bets(self, at_us: int, table: str = "t1", **record: int) -> Seen:
        self.seq += 1
        body = {"credits": 3, "denomination_cents": 100, "rate_bp": 500, "seats": 0b111}
        body.update(record)
        return Seen("L", self.seq, at_us, table, details=json.dumps(body))

    def hit(
        self,
        at_us: int,
        hand: HandCategory,
        *,
        table: str = "t1",
        seat: int = 1,
        cards: tuple[int, ...] | None = None,
        source: str = "table",
    ) -> Seen:
        self.seq += 1
        self.hits += 1
        return Seen(
            "L",
            self.seq,
            at_us,
            table,
            hit_id=f"h{self.hits}",
            seat=seat,
            hand=hand.name,
            cards=cards,
            hit_source=source,
            hit_kind="hand",
        )


def honest_day(w: Watch, stream: Stream, rounds: int, rng: random.Random, table: str = "t1") -> int:
    """``rounds`` rounds of three seats with a side bet each, hands drawn at their exact odds."""
    odds = odds_of(GAME)
    at = T0
    for _ in range(rounds):
        at += 60_000_000
        w.tallies.add(stream.bets(at, table, rounds=1))
        for seat in (1, 2, 3):
            draw = Fraction(rng.random())
            for hand in HANDS:
                p = odds[hand]
                if draw < p:
                    w.tallies.add(stream.hit(at, hand, table=table, seat=seat))
                    break
                draw -= p
    return at


def test_an_honest_table_raises_nothing() -> None:
    w = watch()
    end = honest_day(w, Stream(), 900, random.Random(5))
    assert w.alarms(end) == []
    # ... and it was judged: its flushes are there, as their odds give them.
    found = {(f.line, f.window) for f in w.judge(end) if f.scope is Scope.TABLE}
    assert ("FLUSH", "gaming_day") in found or ("FLUSH", "shift") in found


def test_too_many_royal_flushes_alarm_with_how_unlikely_they_are() -> None:
    w = watch()
    stream = Stream()
    at = honest_day(w, stream, 300, random.Random(1))
    for seat in (1, 2, 3):
        w.tallies.add(stream.hit(at, HandCategory.ROYAL_FLUSH, seat=seat))
    alarms = [f for f in w.alarms(at) if f.scope is Scope.TABLE and f.line == "ROYAL_FLUSH"]
    assert {f.window for f in alarms} == {"shift", "gaming_day", "7_days", "30_days"}
    royal = alarms[0]
    assert royal.direction is Direction.TOO_MANY and royal.observed == 3
    assert royal.expected == 900 * odds_of(GAME)[HandCategory.ROYAL_FLUSH]
    assert (royal.p_value < 1e-9 and "billion" in royal.text) or "trillion" in royal.text
    assert royal.table_id == "t1"


def test_one_royal_flush_is_luck_not_an_alarm() -> None:
    w = watch()
    stream = Stream()
    at = honest_day(w, stream, 300, random.Random(1))
    w.tallies.add(stream.hit(at, HandCategory.ROYAL_FLUSH))
    assert not [f for f in w.alarms(at) if f.line == "ROYAL_FLUSH"]


def test_a_table_that_stops_reporting_flushes_is_flagged_too_few() -> None:
    w = watch()
    stream = Stream()
    at = T0
    for _ in range(5_000):  # 15,000 hands: 29 flushes expected, none reported
        at += 5_000_000
        w.tallies.add(stream.bets(at, rounds=1))
    flush = [f for f in w.alarms(at) if f.line == "FLUSH" and f.scope is Scope.TABLE]
    assert flush and all(f.direction is Direction.TOO_FEW and f.observed == 0 for f in flush)


def test_the_seat_that_hits_is_named() -> None:
    w = watch()
    stream = Stream()
    at = honest_day(w, stream, 300, random.Random(2))
    for _ in range(3):
        w.tallies.add(stream.hit(at, HandCategory.STRAIGHT_FLUSH, seat=3))
        w.tallies.add(stream.hit(at, HandCategory.ROYAL_FLUSH, seat=3))
    seats = {f.subject for f in w.alarms(at) if f.scope is Scope.SEAT}
    assert seats == {"t1 seat 3"}


@pytest.mark.parametrize(
    ("record", "line"),
    [
        ({"late": 1}, "late_bets"),
        ({"unsensed": 0b100}, "credits_without_bets"),
        ({"uncredited": 0b1000}, "bets_without_credits"),
    ],
)
def test_a_fault_on_every_round_is_flagged_within_a_few_rounds(
    record: dict[str, int], line: str
) -> None:
    w = watch()
    stream = Stream()
    at = honest_day(w, stream, 60, random.Random(3))
    flagged_after = None
    for n in range(1, 30):
        at += 60_000_000
        w.tallies.add(stream.bets(at, rounds=1, **record))
        if any(f.line == line for f in w.alarms(at)):
            flagged_after = n
            break
    assert flagged_after is not None and flagged_after <= 6
    # A single one is an honest glitch.
    w = watch()
    stream = Stream()
    at = honest_day(w, stream, 60, random.Random(3))
    w.tallies.add(stream.bets(at + 1, rounds=1, **record))
    assert not any(f.line == line for f in w.alarms(at + 1))


def test_hits_whose_cards_do_not_make_the_hand_are_flagged() -> None:
    w = watch()
    stream = Stream()
    at = honest_day(w, stream, 60, random.Random(4))
    royal = (48, 44, 40, 36, 32)  # ace, king, queen, jack, ten of clubs
    assert rules_of(GAME).judge(royal) is HandCategory.ROYAL_FLUSH
    w.tallies.add(stream.hit(at, HandCategory.ROYAL_FLUSH, cards=royal))
    assert not any(f.line == "cards_not_matching" for f in w.alarms(at))
    junk = (0, 5, 10, 15, 20)  # not a royal flush
    for _ in range(3):
        w.tallies.add(stream.hit(at, HandCategory.ROYAL_FLUSH, cards=junk))
    assert any(f.line == "cards_not_matching" and f.observed == 3 for f in w.alarms(at))


def test_a_technician_s_entry_and_an_envy_pay_are_no_report_of_the_table() -> None:
    w = watch()
    stream = Stream()
    at = honest_day(w, stream, 100, random.Random(6))
    for _ in range(5):
        w.tallies.add(stream.hit(at, HandCategory.ROYAL_FLUSH, source="technician"))
    s = stream.hit(at, HandCategory.ROYAL_FLUSH)
    for _ in range(5):
        w.tallies.add(s._replace(hit_kind="envy", hit_id=s.hit_id + "e"))
    w.tallies.add(s)
    w.tallies.add(s)  # the same hit twice (an award entry and a reset's) counts once
    royal = [f for f in w.judge(at) if f.line == "ROYAL_FLUSH" and f.window == "shift"]
    assert [f.observed for f in royal if f.scope is Scope.TABLE] == [1]


def test_windows_keep_their_days() -> None:
    w = watch()
    stream = Stream()
    two_days_ago = T0 - 2 * DAY_US
    w.tallies.add(stream.bets(two_days_ago, rounds=1))
    w.tallies.add(stream.bets(T0, rounds=1))
    subject = w.tallies.subjects[(Scope.TABLE, "t1", GAME)]
    windows = {wn.name: wn for wn in WINDOWS}
    assert w.tallies.window_sums(subject, windows["gaming_day"], T0)[1][0] == 3
    assert w.tallies.window_sums(subject, windows["7_days"], T0)[1][0] == 6
    since, _ = w.tallies.window_sums(subject, windows["shift"], T0)
    assert since == T0 - 3_600_000_000  # the shift began at 06:00
    # A month on, the old days are let go.
    w.tallies.add(stream.bets(T0 + 40 * DAY_US, rounds=1))
    assert w.tallies.window_sums(subject, windows["30_days"], T0 + 40 * DAY_US)[1][0] == 3


def test_dealers_are_judged_as_their_tables_are() -> None:
    w = watch(dealer_of=lambda table, at: "dee")
    stream = Stream()
    at = honest_day(w, stream, 300, random.Random(7))
    for _ in range(3):
        w.tallies.add(stream.hit(at, HandCategory.ROYAL_FLUSH))
    assert any(f.scope is Scope.DEALER and f.dealer == "dee" for f in w.alarms(at))


def test_the_threshold_falls_as_the_floor_grows() -> None:
    one, many = watch(1).threshold(), watch(300).threshold()
    assert many < one
    assert many < one / 250  # each table's tests share the same floor's false alarms
    assert LOOK_US == 15 * 60_000_000


def test_a_game_whose_odds_are_not_exact_is_judged_on_its_faults_only() -> None:
    # Caribbean Draw's hand is the one after the draw, which the player chooses: its par
    # sheet counts the cards as dealt, which is no law of what a table reports.
    draw = Game.CARIBBEAN_DRAW
    hands = tuple(line.hand for line in default_paytable(draw).lines)
    w = Watch(Tallies(CALENDAR, {"d1": TableFacts("d1", draw, hands)}))
    stream = Stream()
    at = T0
    for _ in range(300):
        at += 60_000_000
        w.tallies.add(stream.bets(at, "d1", rounds=1, late=1))
        w.tallies.add(stream.hit(at, HandCategory.FULL_HOUSE, table="d1"))
    found = {f.line for f in w.alarms(at)}
    assert found == {"late_bets"}
    assert odds_of(draw) == {} and odds_of(GAME)
