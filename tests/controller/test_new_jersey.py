"""New Jersey as the law a link plays under: every jackpot shape Indiana forbids (a level limit
with its overflow meter or the next level, a mystery level, a hidden share, envy lines) opens
and plays under it, and its figures are the ones N.J.A.C. sets or the house's where it sets
none."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.core.games import Game, PaytableLine, default_paytable, make_paytable
from controller.core.hands import HandCategory, parse_cards
from controller.core.reducer import (
    EntryKind,
    HitClaim,
    LinkState,
    Outcome,
    TableConfig,
    TableReading,
    apply_readings,
    open_link,
)
from controller.core.reducer.conservation import entry_meters
from controller.core.reducer.levels import (
    AboveLimit,
    MysteryDraw,
    meters_of,
    mystery_commitment,
)
from controller.rules import house, integrity, meter_records, odds
from controller.rules.jurisdictions import (
    INDIANA,
    JURISDICTIONS,
    NEW_JERSEY,
    Jurisdiction,
    jurisdiction,
)
from controller.settings import Settings
from tests.controller.core.levels_history import LEVELS

H = HandCategory
K = EntryKind
SEC = 1_000_000
T0 = 1_700_000_000 * SEC
U = 10_000  # units per cent
STUD = Game.CARIBBEAN_STUD
ROYAL = parse_cards("As Ks Qs Js Ts")
STRAIGHT_FLUSH = parse_cards("9s 8s 7s 6s 5s")
QUADS = parse_cards("9c 9d 9h 9s 2c")

# Every shape at once: a Grand with a hidden share, a Major whose excess passes to the next
# level at its limit, a Minor whose excess goes to its overflow meter, a mystery Mini. The
# shown shares make 65 %, 80 % with the hidden ones: the four levels of
# tests.controller.core.levels_history.
PAYTABLE = make_paytable(
    STUD,
    (
        PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=10_000, level=1, envy_cents=500_00),
        PaytableLine(hand=H.STRAIGHT_FLUSH, percent_bp=10_000, level=2),
        PaytableLine(hand=H.FOUR_OF_A_KIND, percent_bp=10_000, level=3, envy_cents=25_00),
        PaytableLine(hand=H.FLUSH, fixed_cents=50_00),
    ),
)


def table(tid: str) -> TableConfig:
    return TableConfig(table_id=tid, denomination_cents=100, max_credits_per_seat_round=100)


def opened(law: Jurisdiction = NEW_JERSEY) -> Outcome:
    return open_link(
        law=law,
        link_id="pool",
        game=STUD,
        rate_bp=0,
        reset_cents=0,
        paytable=PAYTABLE,
        tables=(table("t1"), table("t2")),
        at_us=T0,
        levels=LEVELS,
        draws={3: [MysteryDraw(15_00, "ab" * 16)]},
    )


def read(state: LinkState, tid: str, seq: int, credits: int, **kw: object) -> Outcome:
    reading = TableReading(
        table_id=tid,
        poll_seq=seq,
        at_us=T0 + seq * SEC,
        credits=credits,
        elapsed_us=60 * SEC,
        **kw,  # type: ignore[arg-type]
    )
    return apply_readings(state, [reading])


def started() -> LinkState:
    state = opened().state
    state = read(state, "t1", 1, 0, rounds=0).state
    return read(state, "t2", 1, 0, rounds=0).state


# ------------------------------------------------------------------------------ the profile


def test_new_jersey_is_known_by_its_key_and_as_people_write_it() -> None:
    assert JURISDICTIONS["new_jersey"] is NEW_JERSEY
    for spelled in ("new_jersey", "new-jersey", "New-Jersey", " NEW_JERSEY "):
        assert jurisdiction(spelled) is NEW_JERSEY
    assert (NEW_JERSEY.key, NEW_JERSEY.name, NEW_JERSEY.code, str(NEW_JERSEY)) == (
        "new_jersey",
        "New Jersey",
        "N.J.A.C. 13:69E",
        "New Jersey",
    )
    assert Settings(jurisdiction="new-jersey").law is NEW_JERSEY
    assert Settings().law is INDIANA  # the default stays Indiana


def test_new_jersey_allows_every_shape_indiana_forbids() -> None:
    allows = NEW_JERSEY.allows
    assert allows.level_limits and allows.mystery_levels and allows.hidden_shares
    assert allows.envy_lines and allows.links_across_properties
    forbidden = [
        name
        for name in ("level_limits", "mystery_levels", "envy_lines", "links_across_properties")
        if not getattr(INDIANA.allows, name)
    ]
    assert forbidden and all(getattr(allows, name) for name in forbidden)
    # 13:69E-1.39A(a)3 and (a)5: the rate of progression and the hidden rate are two
    # parameters; the hidden share funds the next reset and is not counted in the rate.
    assert not allows.hidden_share_in_rate
    assert NEW_JERSEY.clauses.rate_definition == "N.J.A.C. 13:69E-1.39A(a)3, (a)5"
    assert NEW_JERSEY.clauses.shapes == {}  # nothing is refused for its shape


def test_new_jerseys_numbers_are_its_own_or_the_houses() -> None:
    n = NEW_JERSEY.numbers
    # 13:69D-1.52(e)4: "shall not exceed 100 million to one".
    assert n.jackpot_odds_bound == 100_000_000 == odds.DEFAULT_JACKPOT_ODDS_BOUND
    assert NEW_JERSEY.clauses.jackpot_odds == "N.J.A.C. 13:69D-1.52(e)4"
    # 13:69D-1.52(e): submitted before the floor, and a rate changed on notice: no days.
    assert (n.new_game_notice_days, n.amendment_notice_days) == (0, 0)
    assert NEW_JERSEY.waiver.new_link is None and NEW_JERSEY.waiver.amendment is None
    # No bound on the rate in the text: the house's 60 % to 100 %, said to be the house's.
    assert (n.min_rate_bp, n.max_rate_bp) == (6_000, 10_000)
    assert NEW_JERSEY.clauses.rate.startswith("house policy: ")
    assert n.meter_retention_years == meter_records.METER_RETENTION_YEARS == 5
    assert n.integrity_retention_years == integrity.INTEGRITY_RETENTION_YEARS
    assert n.tax_form_from_cents == house.TAX_REPORTING_FROM_CENTS
    assert n.comm_loss_disable_s is None  # 13:69E-1.39B(d)3 names no time
    assert NEW_JERSEY.fixed_pays == {}


def test_every_clause_is_new_jerseys_or_says_house_policy() -> None:
    c = NEW_JERSEY.clauses
    by_name = [getattr(c, name) for name in c.__slots__]  # type: ignore[attr-defined]
    cited = [v for v in by_name if isinstance(v, str)]
    cited += [v for m in by_name if not isinstance(m, str) for v in m.values()]
    cited += [clause for _, clause in NEW_JERSEY.records]
    for clause in cited:
        assert clause.startswith(("N.J.A.C. 13:69D-", "N.J.A.C. 13:69E-", "house policy: ")), clause
        assert "68 IAC" not in clause
    meters = {clause for _, clause in NEW_JERSEY.records}
    assert {f"N.J.A.C. 13:69E-1.39A(b){n}" for n in range(1, 7)} <= meters
    assert "N.J.A.C. 13:69E-1.39A(a)6" in meters  # the unreasonable contribution
    assert all(t.startswith("https://") for t in NEW_JERSEY.texts)


# ------------------------------------------------------------- every shape opens and plays


def test_a_pool_of_every_shape_opens_under_new_jersey() -> None:
    out = opened()
    s = out.state
    assert s.law is NEW_JERSEY
    configs = s.level_configs
    assert configs[1].above_limit is AboveLimit.NEXT_LEVEL and configs[1].limit_cents
    assert configs[2].above_limit is AboveLimit.OVERFLOW and configs[2].limit_cents
    assert configs[3].mystery is not None and configs[0].reserve_bp
    assert [lv.meter_units for lv in s.levels] == [
        10_000_00 * U,
        1_000_00 * U,
        100_00 * U,
        10_00 * U,
    ]
    assert [e.kind for e in out.events] == [K.LINK_OPENED, K.MYSTERY_ARMED]
    armed = out.events[1].details
    assert isinstance(armed, dict)
    assert armed["commitment"] == mystery_commitment("pool", "L4", 15_00, "ab" * 16)


def test_above_its_limit_a_level_passes_on_or_overflows_under_new_jersey() -> None:
    # $10 wagered: the Major +$1.50 with $0.50 of room passes $1.00 on to the Minor; the
    # Minor +$0.80 +$1.00 with $0.20 of room sends $1.60 to its overflow meter.
    out = read(started(), "t1", 2, 10, rounds=1)
    (e,) = [e for e in out.events if e.kind == K.CONTRIBUTION]
    split = entry_meters(e.details)
    assert split is not None
    assert split["L2"][1] == 50 * U and split["L3"][1] == 20 * U
    assert split["L3.overflow"][1] == 1_60 * U and split["L1.reserve"][1] == 10_00 * 1_000
    lv = out.state.levels
    assert lv[2].overflow_units == 1_60 * U
    assert out.state.meter_units == sum(meters_of(lv).values())


def test_the_hidden_share_funds_the_reset_and_the_overflow_moves_in_under_new_jersey() -> None:
    s = read(started(), "t1", 2, 1_000, rounds=1).state  # $1,000: the Major's reserve $50
    assert s.levels[1].reserve_units == 50_00 * U
    claim = HitClaim(table_seq=1, seat=3, hand=H.STRAIGHT_FLUSH, round=1, cards=STRAIGHT_FLUSH)
    out = read(s, "t1", 3, 1_000, rounds=1, head_hit=claim, pending_hits=1)
    reset = next(e for e in out.events if e.kind == K.JACKPOT_RESET)
    split = entry_meters(reset.details)
    assert split is not None and split["L2.reserve"] == [50_00 * U, -50_00 * U]
    assert reset.delta_units == (1_000_00 - 50_00) * U  # the house seeds the rest

    s = read(started(), "t1", 2, 10, rounds=1).state  # the Minor at its limit, $1.60 over
    claim = HitClaim(table_seq=1, seat=3, hand=H.FOUR_OF_A_KIND, round=1, cards=QUADS)
    out = read(s, "t1", 3, 10, rounds=1, head_hit=claim, pending_hits=1)
    (h,) = [h for h in out.hits if h.kind == "hand"]
    assert (h.award_cents, h.level) == (100_20, "L3")
    assert out.state.levels[2].overflow_units == 1_40 * U


def test_the_mystery_level_hits_by_its_trigger_under_new_jersey() -> None:
    out = read(started(), "t2", 2, 300, rounds=5, seat_credits=(0, 100, 200, 0, 0, 0, 0))
    (h,) = [h for h in out.hits if h.kind == "mystery"]
    assert h.claim.seat == 3 and h.award_cents == 15_00 and h.claim.hand is H.MYSTERY
    award = next(e for e in out.events if e.hit_id == h.hit_id)
    reveal = award.details["mystery"]  # type: ignore[index]
    assert reveal["commitment"] == mystery_commitment(
        "pool", "L4", reveal["trigger_cents"], reveal["salt"]
    )


def test_envy_pays_the_other_seats_under_new_jersey() -> None:
    claim = HitClaim(table_seq=1, seat=2, hand=H.FOUR_OF_A_KIND, round=7, cards=QUADS)
    out = read(
        started(), "t1", 2, 0, rounds=7, head_hit=claim, pending_hits=1,
        bet_seats=frozenset({1, 2, 5}),
    )  # fmt: skip
    envy = [(h.claim.seat, h.award_cents, h.paid_from) for h in out.hits if h.kind == "envy"]
    assert envy == [(1, 25_00, "table"), (5, 25_00, "table")]


@pytest.mark.parametrize("game", [Game.LET_IT_RIDE_BONUS, Game.SUPER_SEVENS])
def test_fixed_pay_links_open_under_new_jersey_with_no_meter(game: Game) -> None:
    state = open_link(
        law=NEW_JERSEY,
        link_id="bonus",
        game=game,
        rate_bp=0,
        reset_cents=0,
        paytable=default_paytable(game),
        tables=(TableConfig(table_id="b1", denomination_cents=100),),
        at_us=T0,
    ).state
    assert state.fixed_pay and state.levels == () and state.law is NEW_JERSEY


def test_a_classic_link_opens_under_new_jersey() -> None:
    state = open_link(
        law=NEW_JERSEY,
        link_id="classic",
        game=STUD,
        rate_bp=7_000,
        reset_cents=5_000_00,
        paytable=default_paytable(STUD),
        tables=(table("c1"),),
        at_us=T0,
    ).state
    assert state.rate_bp == 7_000 and state.meter_cents == 5_000_00


def test_a_paytable_rarer_than_new_jerseys_bound_is_refused() -> None:
    from controller.rules import RuleViolation

    # Five aces on a five-card game cannot be asked for; a bound of 100,000 to 1 refuses the
    # royal flush (649,739 to 1) and New Jersey's 100,000,000 to 1 accepts it.
    pt = default_paytable(STUD)
    bound = NEW_JERSEY.odds_bound(100_000_000)
    assert bound == odds.OddsBound(100_000_000, "N.J.A.C. 13:69D-1.52(e)4")
    assert odds.check_jackpot_odds(pt, bound=bound) is pt
    # A stricter bound set by the installation still cites the clause it serves.
    with pytest.raises(RuleViolation, match="worse than the bound of 100,000 to 1") as refused:
        odds.check_jackpot_odds(pt, bound=NEW_JERSEY.odds_bound(100_000))
    assert refused.value.clause == "N.J.A.C. 13:69D-1.52(e)4"
    # Looser than the clause is refused where the bound is set, in the settings.
    with pytest.raises(RuleViolation, match="100,000,000 to 1 at the worst") as refused:
        NEW_JERSEY.odds_bound(100_000_001)
    assert refused.value.clause == "N.J.A.C. 13:69D-1.52(e)4"
    with pytest.raises(ValueError, match=r"PROGRESSIVE_JACKPOT_ODDS_BOUND: .*at the worst"):
        Settings(jurisdiction="new-jersey", jackpot_odds_bound=10**9)
    # Indiana's text sets no bound: the setting is the house's, and says so.
    house_bound = Settings(jackpot_odds_bound=10**9).odds_bound
    assert house_bound == odds.OddsBound(10**9, odds.JACKPOT_ODDS_CLAUSE)
    assert house_bound.clause.startswith("house policy")


def test_no_code_outside_the_rulebook_cites_new_jersey_in_a_value() -> None:
    """Only the rulebook states a New Jersey clause in a value; elsewhere comments and
    docstrings may name where a rule comes from."""
    import ast

    root = Path(__file__).resolve().parents[2]
    rulebook = root / "controller" / "rules"
    found = []
    for top in ("app", "controller", "link_adapters", "bench"):
        for path in sorted((root / top).rglob("*.py")):
            text = path.read_text()
            if rulebook in path.parents or "N.J.A.C." not in text:
                continue
            tree = ast.parse(text)
            docs = {
                id(node.body[0].value)
                for node in ast.walk(tree)
                if isinstance(
                    node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
                )
                and node.body
                and isinstance(node.body[0], ast.Expr)
                and isinstance(node.body[0].value, ast.Constant)
            }
            found += [
                f"{path.relative_to(root)}:{node.lineno}"
                for node in ast.walk(tree)
                if isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
                and "N.J.A.C." in node.value
            ]
    assert found == []


def test_retention_settings_are_held_to_the_jurisdictions_own_minimums() -> None:
    """The settings' retention periods are checked against the jurisdiction in force, citing
    its clauses: a jurisdiction keeping meter records seven years refuses five."""
    from dataclasses import replace

    from controller.rules import RuleViolation

    longer = replace(NEW_JERSEY, numbers=replace(NEW_JERSEY.numbers, meter_retention_years=7))
    longer.check_retention_years(meter_years=7, integrity_years=1)
    with pytest.raises(RuleViolation, match="kept at least 7 years, not 5") as refused:
        longer.check_retention_years(meter_years=5, integrity_years=1)
    assert refused.value.clause == NEW_JERSEY.clauses.retention
