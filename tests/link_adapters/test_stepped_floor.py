"""The stepped floor: simulated tables dealt on a simulated clock and read as the controller
decodes a poll, every hit acknowledged through the table's register writes, no network."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest

from controller.core.games import Game
from controller.core.hands import HandCategory
from link_adapters.reading import TableRegisters
from link_adapters.register_map import COMMAND_DISABLE_PROGRESSIVE
from link_adapters.simulator.faults import TableFaults
from link_adapters.simulator.stepped_floor import (
    DEFAULT_START_US,
    FloorReading,
    SteppedFloor,
)
from link_adapters.simulator.table_types import RoundRecord, SimTableConfig

STUD, DRAW, LIR = Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW, Game.LET_IT_RIDE_BONUS
SECOND = 1_000_000


def floor_of(*games: Game, seed: int = 3, **options: Any) -> SteppedFloor:
    tables = [(f"{game.value}-{n}", SimTableConfig(game=game)) for n, game in enumerate(games)]
    return SteppedFloor(tables, seed, **options)


def cards_of(records: list[RoundRecord]) -> list[tuple[Any, ...]]:
    """What a table dealt, without when."""
    return [(r.round, r.bet_seats, dict(r.hands), r.hits) for r in records]


@pytest.mark.parametrize("phases_only", [False, True])
def test_every_hit_is_read_as_the_head_once_and_popped_by_its_acknowledgement(
    phases_only: bool,
) -> None:
    floor = floor_of(STUD, LIR, DRAW, keep_records=True, phases_only=phases_only)
    for table_id in floor.table_ids:
        for seat in (2, 4) if table_id.startswith("caribbean") else (2,):
            floor.table(table_id).force_hand(seat, HandCategory.FOUR_OF_A_KIND)
    readings = list(floor.polls(150))
    for table_id in floor.table_ids:
        table = floor.table(table_id)
        dealt = [(h.seq, h.seat, h.hand.name, h.round, h.cards) for h in table.all_hits()]
        heads = [
            (head.seq, head.seat, head.hand.name, head.round, head.cards)
            for r in readings
            if r.table_id == table_id and (head := r.registers.head) is not None and head.hand
        ]
        assert len(dealt) >= 2 and heads == dealt  # each once, in order, as dealt
        assert not table.hit_fifo and floor.tally(table_id).hits == len(dealt)


def test_a_round_with_several_hits_is_read_poll_after_poll_while_its_round_still_shows() -> None:
    floor = floor_of(STUD, keep_records=True, phases_only=True)
    table = floor.table(floor.table_ids[0])
    for seat in (1, 3, 6):
        table.force_hand(seat, HandCategory.FOUR_OF_A_KIND)
    readings = list(floor.polls(1))
    with_heads = [r for r in readings if r.registers.head is not None]
    assert [r.registers.head.seat for r in with_heads if r.registers.head] == [1, 3, 6]
    assert [r.registers.pending_hits for r in with_heads] == [3, 2, 1]
    times = [r.at_us for r in with_heads]
    assert times == [times[0], times[0] + SECOND, times[0] + 2 * SECOND]
    for reading in with_heads:
        # The head's round is the one the counter names, and its bets still show.
        assert reading.registers.rounds == 1 and reading.registers.head is not None
        assert reading.registers.head.round == 1
        assert {1, 3, 6} <= set(reading.registers.bet_seats)


def test_readings_come_in_time_order_polled_every_second_through_every_phase() -> None:
    floor = floor_of(STUD, DRAW, keep_records=True)
    readings = list(floor.polls(3))
    times = [r.at_us for r in readings]
    assert times == sorted(times)
    for table_id in floor.table_ids:
        mine = [r for r in readings if r.table_id == table_id]
        assert [b.at_us - a.at_us for a, b in itertools.pairwise(mine)] == [SECOND] * (
            len(mine) - 1
        )
        regs = [r.registers for r in mine]
        # The first reading comes before any round: the counters a controller takes as its
        # baseline.
        assert (regs[0].rounds, regs[0].credits, regs[0].lockout) == (0, 0, False)
        # Each round is seen with its bets taken and unlocked, then locked out with the
        # round counter unchanged, then dealt.
        states = [(r.rounds, r.lockout) for r in regs]
        runs = [key for key, _ in itertools.groupby(states)]
        assert runs == [(0, False), (0, True), (1, False), (1, True), (2, False), (2, True),
                        (3, False)]  # fmt: skip
        locked = Counter(r.rounds for r in regs if r.lockout)
        assert set(locked.values()) == {10}  # locked 5 s after the bets, dealt 10 s later
        assert not any(r.progressive_disabled for r in regs)
        assert floor.table(table_id).command_bits & COMMAND_DISABLE_PROGRESSIVE == 0


def test_both_ways_of_polling_deal_the_same_rounds_and_see_the_same_phases() -> None:
    def run(phases_only: bool) -> tuple[SteppedFloor, list[FloorReading]]:
        floor = floor_of(STUD, LIR, DRAW, seed=9, keep_records=True, phases_only=phases_only)
        return floor, list(floor.polls(40))

    every, every_readings = run(False)
    phases, phase_readings = run(True)

    def changes(readings: list[FloorReading], table_id: str) -> list[TableRegisters]:
        """The table's readings where anything but its FIFO moved (the heads read are held
        by the test above)."""
        mine = [
            r.registers._replace(pending_hits=0, head=None)
            for r in readings
            if r.table_id == table_id
        ]
        return [b for a, b in itertools.pairwise(mine) if a != b]

    for table_id in every.table_ids:
        assert every.table(table_id).records == phases.table(table_id).records
        assert every.tally(table_id) == phases.tally(table_id)
        # A reading between two phases repeats the one before it: the changes are the same.
        assert changes(every_readings, table_id) == changes(phase_readings, table_id)
    assert len(phase_readings) < len(every_readings) / 10


def test_a_table_deals_the_same_rounds_whatever_else_is_on_the_floor() -> None:
    alone = floor_of(LIR, keep_records=True)
    list(alone.polls(30))
    crowded = SteppedFloor(
        [
            ("caribbean_stud-0", SimTableConfig(game=STUD)),
            ("let_it_ride_bonus-0", SimTableConfig(game=LIR)),
            ("caribbean_draw-2", SimTableConfig(game=DRAW)),
        ],
        3,
        keep_records=True,
        phases_only=True,
    )
    list(crowded.polls(30))
    assert cards_of(list(alone.table("let_it_ride_bonus-0").records)) == cards_of(
        list(crowded.table("let_it_ride_bonus-0").records)
    )


@pytest.mark.parametrize("phases_only", [False, True])
def test_polls_deal_on_from_where_the_last_run_stopped(phases_only: bool) -> None:
    whole = floor_of(STUD, LIR, keep_records=True, phases_only=phases_only)
    whole_readings = list(whole.polls(12))
    parts = floor_of(STUD, LIR, keep_records=True, phases_only=phases_only)
    first = list(parts.polls(5))
    second = list(parts.polls(7))
    assert first[-1].at_us < second[0].at_us and parts.now_us == second[-1].at_us
    for table_id in whole.table_ids:
        assert cards_of(list(whole.table(table_id).records)) == cards_of(
            list(parts.table(table_id).records)
        )
        assert parts.tally(table_id).rounds == 12
    assert whole_readings[0].at_us == DEFAULT_START_US
    assert list(parts.polls(0)) == []


def test_records_are_dropped_unless_kept_and_counted_either_way() -> None:
    faults = TableFaults(late_bets_per_round=0.5, false_claims_per_round=0.5)
    config = SimTableConfig(game=STUD, faults=faults)
    kept = SteppedFloor([("t", config)], 4, keep_records=True, phases_only=True)
    dropped = SteppedFloor([("t", config)], 4, phases_only=True)
    list(kept.polls(50))
    list(dropped.polls(50))
    records = list(kept.table("t").records)
    assert len(records) == 50 and not dropped.table("t").records
    tally = dropped.tally("t")
    assert tally == kept.tally("t")
    assert tally.rounds == 50
    assert tally.side_bets == sum(len(r.bet_seats) for r in records)
    assert tally.late_bets == sum(bool(r.faults and r.faults.late_bet_seat) for r in records) > 0
    assert tally.false_claims == sum(bool(r.faults and r.faults.false_claim_seat) for r in records)


def test_a_map_v2_table_is_read_with_the_v2_profile() -> None:
    floor = SteppedFloor(
        [
            ("paigow", SimTableConfig(game=Game.PAI_GOW_POKER)),
            ("stud-v2", SimTableConfig(game=STUD, register_map=2)),
            ("stud-v1", SimTableConfig(game=STUD)),
        ],
        2,
        phases_only=True,
    )
    floor.table("paigow").force_hand(1, HandCategory.FIVE_ACES)
    readings = list(floor.polls(5))
    versions = {r.table_id: r.registers.version for r in readings}
    assert versions == {"paigow": 2, "stud-v2": 2, "stud-v1": 1}
    aces = [r.registers.head for r in readings if r.table_id == "paigow" and r.registers.head]
    assert aces[0] is not None and aces[0].cards is not None and len(aces[0].cards) == 7


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tables": []}, "at least one table"),
        ({"seed": "7"}, "seed must be an int"),
        ({"round_us": 0}, "round_us must be a positive int"),
        ({"poll_us": 700_000}, "multiples of poll_us"),
        ({"phase_us": 20 * SECOND}, "at most a quarter of round_us"),
        ({"tables": [("a", SimTableConfig(game=STUD))] * 2}, "table id 'a' is given twice"),
        ({"tables": [("", SimTableConfig(game=STUD))]}, "non-empty string"),
        ({"tables": [("a", "stud")]}, "must be a SimTableConfig"),
        ({"phases_only": 1}, "must be bools"),
    ],
)
def test_a_floor_that_cannot_be_stepped_is_refused(kwargs: dict[str, Any], message: str) -> None:
    options: dict[str, Any] = {"tables": [("a", SimTableConfig(game=STUD))], "seed": 1, **kwargs}
    tables, seed = options.pop("tables"), options.pop("seed")
    with pytest.raises(ValueError, match=message):
        SteppedFloor(tables, seed, **options)
    with pytest.raises(ValueError, match="rounds must be an int"):
        SteppedFloor([("a", SimTableConfig(game=STUD))], 1).polls(-1)
