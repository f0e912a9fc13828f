"""What ``links list`` and ``links show`` print of a link of levels, a mixed-game link and a
fixed-pay link, and that a link awaiting approval says so."""

from __future__ import annotations

from app.cli.link_options import list_line, show_lines, status_of
from controller.core.games import Game, default_paytable, make_paytable
from controller.core.reducer import TableConfig, open_link
from controller.rules.jurisdictions import INDIANA
from tests.controller.core.test_levels import link

T0 = 1_700_000_000_000_000


def test_a_link_of_levels_shows_its_levels_games_and_status() -> None:
    draw = Game.CARIBBEAN_DRAW
    pt = make_paytable(draw, [{"hand": "ROYAL_FLUSH", "percent_bp": 5_000, "level": 1}])
    state = link(paytables={draw: pt})
    status = status_of("pool", {"pool": None}, {})
    assert status == "AWAITING APPROVAL"
    line = list_line(state, status)
    assert line == (
        "pool\tAWAITING APPROVAL\tCaribbean Stud Poker, Caribbean Draw Poker\t$10,000.00\t80%\t"
        "$10,000.00\t2\t4 levels\t-\tyes"
    )
    shown = "\n".join(show_lines(state, "The pool", status))
    assert "L2 Major: reset $1,000.00, 15% + 5% hidden limit $1,000.50 then next_level" in shown
    assert "L4 Mini: reset $10.00, 2% must hit between $10.01 and $20.00; meter $10.00" in shown
    assert "paytable of Caribbean Draw Poker:" in shown and "50% of level 1" in shown


def test_a_fixed_pay_link_says_it_has_no_meter() -> None:
    lir = Game.LET_IT_RIDE_BONUS
    state = open_link(
        law=INDIANA,
        link_id="lir", game=lir, rate_bp=0, reset_cents=0, paytable=default_paytable(lir),
        tables=[TableConfig(table_id="l1", denomination_cents=100)], at_us=T0,
    ).state  # fmt: skip
    line = list_line(state, status_of("lir", {"lir": T0}, {}))
    assert line == "lir\tapproved\tLet It Ride bonus\tno meter\t-\t-\t1\tfixed-pay\t-\tyes"
    assert "its rate can never change: it has none" in "\n".join(
        show_lines(state, "LIR", "approved")
    )


def test_the_state_says_whether_a_link_may_play() -> None:
    """A link is approved, awaiting the commission (68 IAC 10-1-3(c)(4)), approved with its
    start ahead, or inoperable; one with no new-link filing (older links) is approved."""
    assert status_of("a", {"a": None}, {}, T0) == "AWAITING APPROVAL"
    assert status_of("a", {"a": T0 + 1}, {}, T0) == "approved, plays from 2023-11-14 22:13 UTC"
    assert status_of("a", {"a": T0}, {}, T0) == "approved"
    assert status_of("a", {}, {}, T0) == "approved"
    assert (
        status_of("a", {"a": None}, {"a": "table t2 counters"}) == "INOPERABLE: table t2 counters"
    )
