"""Submissions on links of levels, mixed-game and fixed-pay links: what each may ask, the
clause each refusal names, and a levels change armed and applied at a jackpot reset."""

from __future__ import annotations

from dataclasses import replace

import pytest

from controller.core.games import Game, default_paytable, make_paytable
from controller.core.hands import HandCategory, parse_cards
from controller.core.reducer import (
    ArmedChange,
    EntryKind,
    HitClaim,
    LinkState,
    TableConfig,
    arm_change,
    open_link,
)
from controller.core.reducer.levels import LevelConfig, Mystery
from controller.rules import RuleViolation
from controller.rules.filing import Proposal, SubmissionKind, check_change
from controller.rules.jurisdictions import INDIANA, NEW_JERSEY, Jurisdiction
from tests.controller.core.test_levels import GRAND, MAJOR, MINI, MINOR, link, read, started
from tests.controller.permissive_law import PERMISSIVE

K = SubmissionKind
LOCK = "68 IAC 10-1-1.1(d)"
FIXED = "68 IAC 10-7-5(e)"
LIR = Game.LET_IT_RIDE_BONUS
T0 = 1_700_000_000_000_000


ALL = (0, 1, 2, 3)


def won(state: LinkState, *levels: int) -> LinkState:
    """``state`` with the jackpots of ``levels`` (0-based) won since their shares were set."""
    return replace(
        state,
        jackpot_won_since_rate_set=bool(levels),
        levels=tuple(
            replace(lv, won_since_share_set=i in levels) for i, lv in enumerate(state.levels)
        ),
    )


def pool(*, levels_won: tuple[int, ...] = ALL) -> LinkState:
    return won(link(), *levels_won)


def lir(law: Jurisdiction = INDIANA) -> LinkState:
    return open_link(
        law=law,
        link_id="lir",
        game=LIR,
        rate_bp=0,
        reset_cents=0,
        paytable=default_paytable(LIR),
        tables=[TableConfig(table_id="l1", denomination_cents=100)],
        at_us=T0,
    ).state


def refused(state: LinkState, proposal: Proposal) -> RuleViolation:
    with pytest.raises(RuleViolation) as caught:
        check_change(state, proposal)
    return caught.value


@pytest.mark.parametrize(
    "proposal",
    [Proposal(kind=K.RATE_CHANGE, rate_bp=9000), Proposal(kind=K.RESET_CHANGE, reset_cents=5)],
)
def test_a_rate_or_reset_submission_on_a_link_of_levels_is_refused(proposal: Proposal) -> None:
    caught = refused(pool(), proposal)
    assert caught.clause == LOCK
    assert "each level's share is locked until its own jackpot is won" in caught.message
    assert "a levels change" in caught.message


@pytest.mark.parametrize(
    "proposal",
    [
        Proposal(kind=K.RATE_CHANGE, rate_bp=9000),
        Proposal(kind=K.RESET_CHANGE, reset_cents=5),
        Proposal(kind=K.LEVELS_CHANGE, levels=(GRAND,)),
    ],
)
def test_a_fixed_pay_link_has_no_rate_to_change(proposal: Proposal) -> None:
    caught = refused(lir(), proposal)
    assert caught.clause == FIXED and "its rate can never change: it has none" in caught.message


def test_a_fixed_pay_link_changes_its_paytable_of_fixed_amounts_only() -> None:
    """Where the law sets no amounts (New Jersey, the permissive law of the tests), a fixed-pay
    link's paytable may pay other fixed amounts, never from a meter."""
    fixed = make_paytable(LIR, [{"hand": "ROYAL_FLUSH", "fixed_cents": 20_000_00}])
    for law in (NEW_JERSEY, PERMISSIVE):
        check_change(lir(law), Proposal(kind=K.PAYTABLE_CHANGE, paytable=fixed))
    from_a_meter = make_paytable(LIR, [{"hand": "ROYAL_FLUSH", "percent_bp": 10_000}])
    caught = refused(lir(PERMISSIVE), Proposal(kind=K.PAYTABLE_CHANGE, paytable=from_a_meter))
    assert caught.clause == FIXED and "royal flush line" in caught.message


def test_under_indiana_a_let_it_ride_bonus_royal_is_paid_ten_thousand_dollars() -> None:
    """68 IAC 10-7-5(e): "A royal flush bonus hand shall receive ten thousand dollars": a
    paytable change paying $20,000 is refused, citing the clause and the paytable to file."""
    lines = [line.to_dict() for line in default_paytable(LIR).lines]
    twenty = make_paytable(LIR, [{"hand": "ROYAL_FLUSH", "fixed_cents": 20_000_00}, *lines[1:]])
    caught = refused(lir(), Proposal(kind=K.PAYTABLE_CHANGE, paytable=twenty))
    assert caught.clause == FIXED
    assert "pays a royal flush $20,000.00: under Indiana it is paid $10,000.00" in caught.message
    assert "file the Let It Ride bonus paytable Indiana sets" in caught.message


def test_a_mini_win_unlocks_the_minis_share_and_never_the_grands() -> None:
    """68 IAC 10-1-1.1(d): each level is a jackpot with its own rate; only its own win lets
    its share change. The Mini won (a mystery win), the Grand not: lowering the Grand from 40%
    to 39% is refused, naming the Grand and what to file instead; the Mini's share alone may
    change; once the Grand is won too, both may. New resets wait for no win."""
    more = replace(MINI, rate_bp=300)
    lower_grand = replace(GRAND, rate_bp=3_900)
    shares = Proposal(kind=K.LEVELS_CHANGE, levels=(lower_grand, MAJOR, MINOR, more))
    caught = refused(pool(levels_won=()), shares)
    assert caught.clause == LOCK and "until a patron wins the Grand" in caught.message
    mini_won = pool(levels_won=(3,))
    caught = refused(mini_won, shares)
    assert caught.clause == LOCK
    assert "level 1 (Grand)'s share 40% + 10% hidden cannot change to 39% + 10% hidden" in (
        caught.message
    )
    assert "file the change with the Grand's share as it is" in caught.message
    check_change(mini_won, Proposal(kind=K.LEVELS_CHANGE, levels=(GRAND, MAJOR, MINOR, more)))
    check_change(pool(levels_won=(0, 3)), shares)
    resets = (
        GRAND,
        MAJOR,
        MINOR,
        replace(MINI, reset_cents=10_00, mystery=Mystery(floor_cents=12_00, ceiling_cents=25_00)),
    )
    check_change(pool(levels_won=()), Proposal(kind=K.LEVELS_CHANGE, levels=resets))


def test_a_win_in_play_unlocks_only_the_level_won() -> None:
    """Four of a kind wins the Minor through the reducer: the Minor's share may change, the
    Grand's may not; the link's own flag (any level won) is no key to the Grand's."""
    s = started()
    quads = parse_cards("9c 9d 9h 9s 2c")
    claim = HitClaim(table_seq=1, seat=2, hand=HandCategory.FOUR_OF_A_KIND, round=1, cards=quads)
    after = read(s, "t1", 2, 0, rounds=1, head=claim, pending=1).state
    assert after.won_since_share_set() == (False, False, True, False)
    assert after.jackpot_won_since_rate_set
    lower_grand = replace(GRAND, rate_bp=3_900)
    caught = refused(
        after, Proposal(kind=K.LEVELS_CHANGE, levels=(lower_grand, MAJOR, MINOR, MINI))
    )
    assert caught.clause == LOCK and "until a patron wins the Grand" in caught.message
    change = ArmedChange(
        submission_id="S2", effective_at_us=T0, levels=(lower_grand, MAJOR, MINOR, MINI)
    )
    with pytest.raises(RuleViolation, match="until a patron wins the Grand"):
        arm_change(after, change=change, at_us=T0, by="agent")  # the reducer refuses it too
    check_change(
        after,
        Proposal(kind=K.LEVELS_CHANGE, levels=(GRAND, MAJOR, replace(MINOR, rate_bp=900), MINI)),
    )


@pytest.mark.parametrize(
    ("levels", "clause", "named"),
    [
        ((GRAND, MAJOR, MINOR), "68 IAC 10-1-1.1(e)", "has 4 levels"),
        (
            (GRAND, MAJOR, replace(MINOR, limit_cents=50_00), MINI),
            "68 IAC 10-1-1.1(e)",
            "level 3 (Minor): the limit $50.00 must be above the reset amount $100.00",
        ),
        (
            (replace(GRAND, rate_bp=8_000), MAJOR, MINOR, MINI),
            "68 IAC 10-1-1.1(c)",
            "Grand 80% + 10% hidden",
        ),
        (
            (
                GRAND,
                MAJOR,
                MINOR,
                replace(MINI, mystery=Mystery(floor_cents=5_00, ceiling_cents=9_00)),
            ),
            "68 IAC 10-1-1.1(e)",
            "level 4 (Mini): a mystery trigger is drawn between a floor above the reset",
        ),
    ],
)
def test_a_levels_change_the_pool_cannot_have_is_refused_naming_the_level(
    levels: tuple[LevelConfig, ...], clause: str, named: str
) -> None:
    caught = refused(pool(), Proposal(kind=K.LEVELS_CHANGE, levels=levels))
    assert caught.clause == clause and named in caught.message


def test_a_paytable_submission_on_a_mixed_link_names_its_game_and_envy_is_part_of_it() -> None:
    draw = Game.CARIBBEAN_DRAW
    draw_table = make_paytable(draw, [{"hand": "ROYAL_FLUSH", "percent_bp": 5_000, "level": 1}])
    state = link(paytables={draw: draw_table})
    lines = [{"hand": "ROYAL_FLUSH", "percent_bp": 5_000, "level": 1, "envy_cents": 10_00}]
    new = make_paytable(draw, lines)
    caught = refused(state, Proposal(kind=K.PAYTABLE_CHANGE, paytable=new))
    assert "a paytable submission names its game" in caught.message
    assert check_change(state, Proposal(kind=K.PAYTABLE_CHANGE, paytable=new, game=draw))
    beyond = make_paytable(draw, [{"hand": "ROYAL_FLUSH", "percent_bp": 5_000, "level": 5}])
    caught = refused(state, Proposal(kind=K.PAYTABLE_CHANGE, paytable=beyond, game=draw))
    assert "pays from level 5, the link has 4" in caught.message


def test_a_levels_submission_is_armed_and_applied_at_the_next_jackpot_reset() -> None:
    s = won(started(), 1, 3)
    new = (GRAND, replace(MAJOR, rate_bp=1_400), MINOR, replace(MINI, rate_bp=300))
    proposal = check_change(s, Proposal(kind=K.LEVELS_CHANGE, levels=new))
    assert proposal.to_dict()["levels"][1]["rate_bp"] == 1_400
    change = ArmedChange(submission_id="S1", effective_at_us=T0, levels=proposal.levels)
    s = arm_change(s, change=change, at_us=T0, by="agent").state
    assert s.armed is not None and s.levels[1].config.rate_bp == 1_500  # not yet
    royal = parse_cards("As Ks Qs Js Ts")
    claim = HitClaim(table_seq=1, seat=3, hand=HandCategory.ROYAL_FLUSH, round=1, cards=royal)
    out = read(s, "t1", 2, 0, rounds=1, head=claim, pending=1)
    kinds = [e.kind for e in out.events]
    assert kinds.index(EntryKind.LEVELS_CHANGED) < kinds.index(EntryKind.JACKPOT_RESET)
    after = out.state
    assert after.armed is None and after.level_configs == new and after.rate_bp == 8_000
    # The new shares are the link's rate from here: each changed level locked again until
    # its own jackpot is won; the Grand, won at this reset with its share unchanged, is free.
    assert not after.jackpot_won_since_rate_set
    assert after.won_since_share_set() == (True, False, False, False)
    caught = refused(after, Proposal(kind=K.LEVELS_CHANGE, levels=(GRAND, MAJOR, MINOR, MINI)))
    assert caught.clause == LOCK
