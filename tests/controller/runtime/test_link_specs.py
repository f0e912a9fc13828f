"""A new link's levels and paytable lines as people write them: units required, each problem
named by its level or line and the rule it breaks; mystery triggers drawn with secrets."""

from __future__ import annotations

import re

import pytest

from controller.core.games import Game
from controller.core.reducer.levels import AboveLimit, LevelConfig, Mystery
from controller.runtime.link_specs import SpecError, parse_levels, parse_paytables, plan_link
from controller.runtime.mystery_draws import draw, first_draws

STUD, DRAW, LIR = Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW, Game.LET_IT_RIDE_BONUS

LEVELS = [
    {"name": "Grand", "reset": "$10,000", "share": "40%", "hidden": "10%"},
    {"name": "Major", "reset": "$1,000", "share": "15%", "hidden": "5%", "limit": "$1,000.50",
     "above_limit": "next_level"},
    {"name": "Minor", "reset": "$100", "share": "8%", "limit": "$100.20"},
    {"name": "Mini", "reset": "$10", "share": "2%", "mystery_floor": "$10.01",
     "mystery_ceiling": "$20"},
]  # fmt: skip


def test_levels_are_read_with_their_units() -> None:
    grand, major, minor, mini = parse_levels(LEVELS)
    assert (grand.reset_cents, grand.rate_bp, grand.reserve_bp) == (10_000_00, 4_000, 1_000)
    assert (major.limit_cents, major.above_limit) == (1_000_50, AboveLimit.NEXT_LEVEL)
    assert minor.above_limit is AboveLimit.OVERFLOW
    assert mini.mystery == Mystery(floor_cents=10_01, ceiling_cents=20_00)
    assert parse_levels({"levels": LEVELS})[3] == mini


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "reset",
            "10",
            "level 4 (Mini): reset '10' needs its unit: write an amount like $1,234.56",
        ),
        ("share", "2", "level 4 (Mini): share '2' needs its unit: write a share like 2.5%"),
        ("mystery_ceiling", "20", "mystery_ceiling '20' needs its unit"),
        ("share", "2.001%", "finer than 0.01%"),
        ("reset", "$10.005", "fraction of a cent"),
        ("mystery_floor", "$9", "level 4 (Mini): a mystery trigger is drawn between a floor above"),
        ("colour", "red", "level 4 (Mini): unknown setting(s) ['colour']"),
    ],
)
def test_a_level_without_its_unit_or_that_breaks_a_rule_is_named(
    key: str, value: str, message: str
) -> None:
    bad = [*LEVELS[:3], {**LEVELS[3], key: value}]
    with pytest.raises(
        SpecError,
        match=re.escape(message),
    ):
        parse_levels(bad)


def test_paytable_lines_pay_a_share_of_a_level_or_an_amount_with_envy() -> None:
    lines = [
        {"hand": "ROYAL_FLUSH", "pays": "100%", "level": 1},
        {"hand": "FOUR_OF_A_KIND", "pays": "100%", "level": 3, "envy": "$25"},
        {"hand": "FLUSH", "pays": "$50", "envy": "$5"},
        {"game": "caribbean_draw", "hand": "ROYAL_FLUSH", "pays": "50%", "level": 2},
    ]
    tables = parse_paytables(lines, STUD)
    royal, quads, flush = tables[STUD].lines
    assert (royal.percent_bp, royal.level) == (10_000, 1)
    assert (quads.level, quads.envy_cents) == (3, 25_00)
    assert (flush.fixed_cents, flush.envy_cents) == (50_00, 5_00)
    assert tables[DRAW].lines[0].level == 2
    assert parse_paytables({"caribbean_draw": lines[3:]}, STUD)[DRAW] == tables[DRAW]
    for line, message in (
        (
            {"hand": "FLUSH", "pays": "50"},
            "Caribbean Stud Poker paytable line 1 (flush): pays '50'",
        ),
        ({"hand": "FLUSH", "pays": "$50", "envy": "5"}, "envy '5' needs its unit"),
        ({"hand": "FLUSH", "pays": "$50", "level": 2}, "a level is named only for a share"),
    ):
        with pytest.raises(SpecError, match=re.escape(message)):
            parse_paytables([line], STUD)


def test_a_link_plan_checks_its_levels_games_and_fixed_pay_together() -> None:
    levels = parse_levels(LEVELS)
    plan = plan_link(
        game=STUD, rate_bp=None, reset_cents=None, levels=levels, paytables=None,
        fixed_pay=False, table_games=[STUD, DRAW],
    )  # fmt: skip
    assert plan.rate_bp == 8_000 and plan.reset_cents == 10_000_00
    assert set(plan.paytables) == {DRAW}  # the Draw tables' default paytable
    lir = plan_link(
        game=LIR, rate_bp=None, reset_cents=None, levels=None, paytables=None,
        fixed_pay=False, table_games=[LIR],
    )  # fmt: skip
    assert lir.fixed_pay and lir.rate_bp == 0
    refusals = {
        "68 IAC 10-7-5(e)": dict(game=STUD, fixed_pay=True, rate_bp=None, reset_cents=None,
                                 levels=None),
        "68 IAC 10-1-1.1(c)": dict(game=STUD, fixed_pay=False, rate_bp=None, reset_cents=None,
                                   levels=(*levels[:3], levels[3].__class__(
                                       name="Mini", reset_cents=10_00, rate_bp=3_000))),
        "not both": dict(game=STUD, fixed_pay=False, rate_bp=8_000, reset_cents=None,
                         levels=levels),
    }  # fmt: skip
    for named, kw in refusals.items():
        with pytest.raises(SpecError, match=re.escape(named)):
            plan_link(paytables=None, table_games=[STUD], **kw)  # type: ignore[arg-type]


def test_mystery_triggers_are_drawn_within_the_range_with_a_fresh_salt() -> None:
    m = Mystery(floor_cents=10_01, ceiling_cents=10_03)
    level = LevelConfig(name="Mini", reset_cents=10_00, rate_bp=100, mystery=m)
    drawn = [draw(level) for _ in range(200)]
    assert {d.trigger_cents for d in drawn} == {10_01, 10_02, 10_03}
    assert len({d.salt for d in drawn}) == 200 and all(len(d.salt) == 64 for d in drawn)
    assert list(first_draws(parse_levels(LEVELS))) == [3]
