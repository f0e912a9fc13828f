"""The hold report's arithmetic: theoretical hold from the par sheet's long-run return, actual
hold from what was wagered and paid, the standard deviation from one hand's variance."""

from __future__ import annotations

import json
import math
from fractions import Fraction

from controller.core.games import Game, default_paytable
from controller.core.odds import par_sheet
from controller.core.reducer import TableConfig, open_link
from controller.paperwork.hold_report import hold_report, theory_of
from controller.rules.jurisdictions import INDIANA


def stud_link():  # type: ignore[no-untyped-def]
    tables = [
        TableConfig(table_id=t, denomination_cents=100, max_credits_per_seat_round=10)
        for t in ("t1", "t2")
    ]
    return open_link(
        law=INDIANA, link_id="L1", game=Game.CARIBBEAN_STUD, rate_bp=8000,
        reset_cents=1_000_00, paytable=default_paytable(Game.CARIBBEAN_STUD), tables=tables,
        at_us=1,
    ).state  # fmt: skip


def test_theory_is_the_par_sheet_s_long_run_return() -> None:
    state = stud_link()
    theory = theory_of(state, Game.CARIBBEAN_STUD, 100)
    sheet = par_sheet(default_paytable(Game.CARIBBEAN_STUD), wager_cents=100)
    assert theory.return_ == sheet.long_run_return(rate_bp=8000, reset_cents=1_000_00)
    assert theory.return_ > 0 and theory.variance > 0


def test_actual_hold_and_its_deviation() -> None:
    state = stud_link()
    bets = [("t1", json.dumps({"credits": 3, "denomination_cents": 100, "seats": 7}))] * 1000
    report = hold_report({"L1": state}, bets, [("t1", 50_000), ("t2", 0)], since_us=0, until_us=10)
    t1 = report.tables[0]
    assert (t1.name, t1.hands, t1.credits, t1.wagered_cents, t1.paid_cents) == (
        "t1", 3000, 3000, 300_000, 50_000,
    )  # fmt: skip
    assert t1.actual_hold == 1 - Fraction(50_000, 300_000)
    theory = theory_of(state, Game.CARIBBEAN_STUD, 100)
    assert t1.theoretical_hold == 1 - theory.return_
    assert t1.sd_hold == math.sqrt(3000 * theory.variance * 100 * 100) / 300_000
    assert report.tables[1].actual_hold is None  # nothing wagered at t2
    assert (
        report.floor.wagered_cents == 300_000
        and report.floor.theoretical_hold == t1.theoretical_hold
    )
    assert [g.name for g in report.games] == ["Caribbean Stud Poker"]
