"""The fixed-pay side bets under Indiana: the Let It Ride bonus pays exactly 68 IAC 10-7-5(e)'s
amounts and nothing below two pair (d); Super Sevens exactly 10-12-3(f)'s, only to a patron
whose first card is a seven (e). Where the law sets no amounts (New Jersey, the permissive law
of the tests) a paytable pays what was filed."""

from __future__ import annotations

from typing import Any

import pytest

from controller.core.games import Game, Paytable, default_paytable, make_paytable
from controller.core.reducer import TableConfig, open_link
from controller.core.reducer.levels import LevelConfig, Mystery
from controller.rules import RuleViolation
from controller.rules.filing import check_new_link
from controller.rules.jurisdictions import INDIANA, NEW_JERSEY, Jurisdiction
from controller.rules.pools import standing_problems
from tests.controller.permissive_law import PERMISSIVE

LIR, SEVENS = Game.LET_IT_RIDE_BONUS, Game.SUPER_SEVENS
T0 = 1_700_000_000_000_000
MYSTERY = LevelConfig(
    name="Mini",
    reset_cents=10_00,
    rate_bp=7_000,
    mystery=Mystery(floor_cents=12_00, ceiling_cents=25_00),
)


def lines(game: Game, **changed: dict[str, Any]) -> list[dict[str, Any]]:
    """The default lines of ``game``, each hand named in ``changed`` with those fields."""
    out = []
    for line in default_paytable(game).lines:
        d = line.to_dict()
        out.append({**d, **changed.get(d["hand"], {})})
    return out


def paytable(game: Game, **changed: dict[str, Any]) -> Paytable:
    return make_paytable(game, lines(game, **changed))


def opened(game: Game, pt: Paytable, law: Jurisdiction = INDIANA, **kw: Any) -> object:
    return open_link(
        law=law,
        link_id="fixed",
        game=game,
        rate_bp=0,
        reset_cents=0,
        paytable=pt,
        tables=[TableConfig(table_id="t1", denomination_cents=100)],
        at_us=T0,
        **kw,
    )


def refused(game: Game, pt: Paytable, **kw: Any) -> RuleViolation:
    with pytest.raises(RuleViolation) as caught:
        opened(game, pt, **kw)
    return caught.value


TWENTY_THOUSAND_ROYAL = {"ROYAL_FLUSH": {"fixed_cents": 20_000_00}}


def test_a_let_it_ride_bonus_royal_of_twenty_thousand_dollars_is_refused_under_indiana() -> None:
    """10-7-5(e)(1): "A royal flush bonus hand shall receive ten thousand dollars"."""
    caught = refused(LIR, paytable(LIR, **TWENTY_THOUSAND_ROYAL))
    assert caught.clause == "68 IAC 10-7-5(e)"
    assert "pays a royal flush $20,000.00: under Indiana it is paid $10,000.00" in caught.message
    assert "royal flush $10,000.00, straight flush $2,000.00" in caught.message
    assert "two pair $4.00" in caught.message
    # Only the amounts of the text: a subset of its lines is refused too.
    subset = make_paytable(LIR, [{"hand": "ROYAL_FLUSH", "fixed_cents": 10_000_00}])
    caught = refused(LIR, subset)
    assert caught.clause == "68 IAC 10-7-5(e)"
    assert "has no line for straight flush ($2,000.00)" in caught.message
    # Exactly the text's paytable opens.
    assert opened(LIR, default_paytable(LIR))


@pytest.mark.parametrize("law", [NEW_JERSEY, PERMISSIVE], ids=["new_jersey", "permissive"])
def test_other_amounts_stay_accepted_where_the_law_sets_none(law: Jurisdiction) -> None:
    assert law.fixed_pays == {}
    opened(LIR, paytable(LIR, **TWENTY_THOUSAND_ROYAL), law=law)
    opened(LIR, make_paytable(LIR, [{"hand": "ROYAL_FLUSH", "fixed_cents": 500_00}]), law=law)
    envy = paytable(SEVENS, THREE_SUITED_SEVENS={"envy_cents": 5_00})
    opened(SEVENS, envy, law=law)
    assert law.fixed_pay_problems(SEVENS, (MYSTERY,), envy) == []


def test_a_let_it_ride_bonus_envy_line_is_refused_under_indiana() -> None:
    """10-7-5(d): no bonus hand is paid below two pair; an envy line pays every other seat
    whatever its hand."""
    caught = refused(LIR, paytable(LIR, ROYAL_FLUSH={"envy_cents": 100_00}))
    assert caught.clause == "68 IAC 10-7-5(d)"
    assert "royal flush line pays $100.00 envy to every other seat" in caught.message
    assert "take the envy amount off the line" in caught.message


def test_super_sevens_envy_lines_and_mystery_levels_are_refused_under_indiana() -> None:
    """10-12-3(e): a patron must receive a seven as the first card to win any payout; an envy
    line and a mystery level pay patrons whatever their first card."""
    envy = paytable(SEVENS, THREE_SUITED_SEVENS={"envy_cents": 5_00})
    caught = refused(SEVENS, envy)
    assert caught.clause == "68 IAC 10-12-3(e)"
    assert "three suited sevens line pays $5.00 envy" in caught.message
    found = INDIANA.fixed_pay_problems(SEVENS, (MYSTERY,), default_paytable(SEVENS))
    assert [p.clause for p in found] == ["68 IAC 10-12-3(e)"]
    assert "level 1 (Mini) is a mystery level" in found[0].message
    with pytest.raises(RuleViolation) as caught_pool:
        INDIANA.check_pool(SEVENS, (MYSTERY,), default_paytable(SEVENS))
    assert caught_pool.value.clause == "68 IAC 10-12-3(e)"


def test_super_sevens_pays_68_iac_10_12_3_f_exactly_under_indiana() -> None:
    caught = refused(SEVENS, paytable(SEVENS, SEVEN={"fixed_cents": 5_00}))
    assert caught.clause == "68 IAC 10-12-3(f)"
    assert "pays a seven $5.00: under Indiana it is paid $3.00" in caught.message
    metered = paytable(SEVENS, THREE_SUITED_SEVENS={"fixed_cents": None, "percent_bp": 10_000})
    found = INDIANA.fixed_pay_problems(SEVENS, (), metered)
    assert [p.clause for p in found] == ["68 IAC 10-12-3(f)"]
    assert "pays a three suited sevens 100% of the meter" in found[0].message


def test_a_new_link_filed_is_held_to_the_amounts_whatever_its_shape() -> None:
    """``check_new_link`` (filing, approval): a fixed-pay link is held to them."""
    with pytest.raises(RuleViolation) as caught:
        check_new_link(
            game=LIR,
            rate_bp=0,
            reset_cents=0,
            paytable=paytable(LIR, **TWENTY_THOUSAND_ROYAL),
            law=INDIANA,
            levels=(),
        )
    assert caught.value.clause == "68 IAC 10-7-5(e)"
    check_new_link(
        game=LIR, rate_bp=0, reset_cents=0, paytable=default_paytable(LIR), law=INDIANA, levels=()
    )
    check_new_link(
        game=LIR,
        rate_bp=0,
        reset_cents=0,
        paytable=paytable(LIR, **TWENTY_THOUSAND_ROYAL),
        law=NEW_JERSEY,
        levels=(),
    )


def test_a_fixed_pay_link_standing_is_reported_with_the_way_into_line() -> None:
    """A link stored with other amounts or an envy line (made where the law set none): each
    problem with its clause and how to bring it into line; nothing is changed."""
    twenty = paytable(LIR, **TWENTY_THOUSAND_ROYAL)
    state = opened(LIR, twenty, law=PERMISSIVE).state  # type: ignore[attr-defined]
    assert standing_problems((), law=INDIANA) == []
    found = INDIANA.standing_problems(state.level_configs, [state.paytable])
    assert [p.clause for p in found] == ["68 IAC 10-7-5(e)"]
    assert "file a paytable change" in found[0].message
    envy = paytable(SEVENS, SEVEN={"envy_cents": 1_00})
    found = INDIANA.standing_problems((), [envy, default_paytable(LIR)])
    assert [p.clause for p in found] == ["68 IAC 10-12-3(e)"]
    assert NEW_JERSEY.standing_problems((), [twenty, envy]) == []


def test_a_paytable_of_other_games_is_not_the_fixed_pay_rules_business() -> None:
    stud = default_paytable(Game.CARIBBEAN_STUD)
    assert INDIANA.fixed_pay_problems(Game.CARIBBEAN_STUD, (), stud) == []
