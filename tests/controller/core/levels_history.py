"""A link of levels' history made by the real reducer, for the tests of its verification,
recovery and purge: opened with a mystery level, played until the mystery hits, a royal
flush paid from the Grand, a fresh draw armed."""

from __future__ import annotations

from dataclasses import replace

from controller.core.games import Game, PaytableLine, make_paytable
from controller.core.hands import HandCategory, parse_cards
from controller.core.reducer import (
    HitClaim,
    MeterEvent,
    Outcome,
    TableConfig,
    TableReading,
    apply_readings,
    open_link,
    release_table,
)
from controller.core.reducer.levels import AboveLimit, LevelConfig, Mystery, MysteryDraw
from tests.controller.permissive_law import PERMISSIVE

H = HandCategory
SEC = 1_000_000
T0 = 1_700_000_000 * SEC
STUD = Game.CARIBBEAN_STUD
ROYAL = parse_cards("As Ks Qs Js Ts")
LINK = "pool"

GRAND = LevelConfig(name="Grand", reset_cents=10_000_00, rate_bp=4_000, reserve_bp=1_000)
MAJOR = LevelConfig(
    name="Major",
    reset_cents=1_000_00,
    rate_bp=1_500,
    limit_cents=1_000_50,
    reserve_bp=500,
    above_limit=AboveLimit.NEXT_LEVEL,
)
MINOR = LevelConfig(name="Minor", reset_cents=100_00, rate_bp=800, limit_cents=100_20)
MINI = LevelConfig(
    name="Mini",
    reset_cents=10_00,
    rate_bp=200,
    mystery=Mystery(floor_cents=10_01, ceiling_cents=20_00),
)
LEVELS = (GRAND, MAJOR, MINOR, MINI)
FIRST_DRAW = MysteryDraw(15_00, "ab" * 16)
NEXT_DRAW = MysteryDraw(12_34, "cd" * 16)


def paytable() -> object:
    return make_paytable(
        STUD,
        (
            PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=10_000, level=1),
            PaytableLine(hand=H.STRAIGHT_FLUSH, percent_bp=10_000, level=2),
            PaytableLine(hand=H.FOUR_OF_A_KIND, percent_bp=10_000, level=3),
        ),
    )


def table(tid: str) -> TableConfig:
    return TableConfig(table_id=tid, denomination_cents=100, max_credits_per_seat_round=100)


def opening(link_id: str = LINK, t0: int = T0) -> Outcome:
    return open_link(
        law=PERMISSIVE,
        link_id=link_id,
        game=STUD,
        rate_bp=0,
        reset_cents=0,
        paytable=paytable(),  # type: ignore[arg-type]
        tables=(table("t1"), table("t2")),
        at_us=t0,
        levels=LEVELS,
        draws={3: [FIRST_DRAW]},
    )


class Play:
    """Drives a link through the reducer, keeping every entry it makes."""

    def __init__(self, opened: Outcome) -> None:
        self.state = opened.state
        self.outcomes: list[Outcome] = [opened]  # each step, as a store would commit it
        self.events: list[MeterEvent] = list(opened.events)
        self.seq = {"t1": 0, "t2": 0}
        self.at = opened.events[0].at_us

    def read(self, tid: str, credits: int, **kw: object) -> None:
        self.seq[tid] += 1
        self.at += SEC
        out = apply_readings(
            self.state,
            [
                TableReading(
                    table_id=tid,
                    poll_seq=self.seq[tid],
                    at_us=self.at,
                    credits=credits,
                    elapsed_us=SEC * 60,
                    **kw,  # type: ignore[arg-type]
                )
            ],
        )
        self.step(out)
        if self.state.tables[tid].hit_pending:
            self.at += SEC
            self.step(release_table(self.state, table_id=tid, at_us=self.at, by="tech"))

    def step(self, out: Outcome) -> None:
        self.outcomes.append(out)
        self.events.extend(out.events)
        self.state = out.state

    def add_draw(self, index: int, draw: MysteryDraw) -> None:
        levels = list(self.state.levels)
        levels[index] = replace(levels[index], draws=(*levels[index].draws, draw))
        self.state = replace(self.state, levels=tuple(levels))


def played(link_id: str = LINK) -> Play:
    """Opened, the mystery hit at $15.00, re-armed at $12.34, a royal flush from the Grand."""
    p = Play(opening(link_id))
    p.read("t1", 0, rounds=0)
    p.read("t2", 0, rounds=0)
    p.read("t2", 300, rounds=5, seat_credits=(0, 100, 200, 0, 0, 0, 0))
    assert any(e.details != "{}" and "mystery" in str(e.details) for e in p.events)
    p.add_draw(3, NEXT_DRAW)
    p.read("t1", 50, rounds=6)
    claim = HitClaim(table_seq=1, seat=2, hand=H.ROYAL_FLUSH, round=7, cards=ROYAL)
    p.read("t1", 80, rounds=7, head_hit=claim, pending_hits=1)
    p.read("t2", 400, rounds=8)
    return p
