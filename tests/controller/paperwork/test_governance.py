"""The rules a submission obeys, each tested so that breaking the rule fails a test."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from controller.core.games import Game, PaytableLine, default_paytable, make_paytable
from controller.core.hands import HandCategory
from controller.core.money import MAX_AMOUNT_CENTS
from controller.core.reducer import LinkState, TableConfig, open_link
from controller.roles import Role
from controller.rules import RuleViolation
from controller.rules.filing import (
    DAY_US,
    NoticeWaiver,
    Proposal,
    SubmissionKind,
    check_change,
    check_notice,
    check_paytable,
    check_rejection_reason,
    check_reviewer,
    check_table_locations,
    check_waiver_confirmed,
)
from controller.rules.jurisdictions import INDIANA

T0 = 1_767_225_600_000_000
K = SubmissionKind


def link(*, jackpot_won: bool = True, game: Game = Game.CARIBBEAN_STUD) -> LinkState:
    state = open_link(
        law=INDIANA,
        link_id="stud",
        game=game,
        rate_bp=8000,
        reset_cents=1_000_00,
        paytable=default_paytable(game),
        tables=[TableConfig(table_id="t1", denomination_cents=100)],
        at_us=T0,
    ).state
    return replace(state, jackpot_won_since_rate_set=jackpot_won)


@pytest.mark.parametrize("rate_bp", [5_999, 10_001, 0, -8000])
def test_a_rate_outside_60_to_100_percent_is_refused(rate_bp: int) -> None:
    with pytest.raises(RuleViolation) as caught:
        check_change(link(), Proposal(kind=K.RATE_CHANGE, rate_bp=rate_bp))
    assert caught.value.clause == "68 IAC 10-1-1.1(c)"


@pytest.mark.parametrize("rate_bp", [6_000, 10_000, 8_250])
def test_a_rate_from_60_to_100_percent_is_allowed_after_a_jackpot(rate_bp: int) -> None:
    check_change(link(), Proposal(kind=K.RATE_CHANGE, rate_bp=rate_bp))


def test_a_rate_change_before_any_jackpot_is_refused() -> None:
    with pytest.raises(RuleViolation) as caught:
        check_change(link(jackpot_won=False), Proposal(kind=K.RATE_CHANGE, rate_bp=8500))
    assert caught.value.clause == "68 IAC 10-1-1.1(d)"


def test_a_change_gives_what_it_changes() -> None:
    # 68 IAC 10-1-1.1(e)(3)-(4): a change files the new rate or reset amount itself; a new
    # link is filed with its tables (their games and locations), not as a change.
    for proposal, why in (
        (Proposal(kind=K.RATE_CHANGE), "names the new rate"),
        (Proposal(kind=K.RATE_CHANGE, rate_bp=8000), "already plays at 80"),
        (Proposal(kind=K.RESET_CHANGE), "names the new reset amount"),
        (Proposal(kind=K.NEW_LINK, rate_bp=8000, reset_cents=1_000_00), "with its tables"),
    ):
        with pytest.raises(RuleViolation, match=why) as caught:
            check_change(link(), proposal)
        assert caught.value.clause == "68 IAC 10-1-1.1(e)"


def test_a_reset_change_and_a_paytable_change_do_not_wait_for_a_jackpot() -> None:
    state = link(jackpot_won=False)
    check_change(state, Proposal(kind=K.RESET_CHANGE, reset_cents=2_000_00))
    pt = make_paytable(Game.CARIBBEAN_STUD, [{"hand": "ROYAL_FLUSH", "percent_bp": 10_000}])
    check_change(state, Proposal(kind=K.PAYTABLE_CHANGE, paytable=pt))


@pytest.mark.parametrize("reset_cents", [-1, MAX_AMOUNT_CENTS + 1, 2**63])
def test_a_reset_amount_the_table_cannot_show_is_refused(reset_cents: int) -> None:
    with pytest.raises(RuleViolation, match="reset amount"):
        check_change(link(), Proposal(kind=K.RESET_CHANGE, reset_cents=reset_cents))


@pytest.mark.parametrize("fixed_cents", [MAX_AMOUNT_CENTS + 1, 2**63])
def test_a_fixed_pay_beyond_the_bound_of_every_amount_is_refused(fixed_cents: int) -> None:
    lines = [{"hand": "ROYAL_FLUSH", "percent_bp": 10_000}, {"hand": "FLUSH", "fixed_cents": 1}]
    check_paytable(Game.CARIBBEAN_STUD, lines)
    lines[1]["fixed_cents"] = fixed_cents
    with pytest.raises(RuleViolation, match=r"flush line's fixed amount .* is outside \$0\.01"):
        check_paytable(Game.CARIBBEAN_STUD, lines)


def test_a_paytable_the_game_does_not_allow_is_refused() -> None:
    # 68 IAC 10-7-5(d): the Let It Ride bonus pays nothing below two pair.
    with pytest.raises(RuleViolation, match="lowest paying hand"):
        check_paytable(Game.LET_IT_RIDE_BONUS, [{"hand": "ONE_PAIR", "fixed_cents": 100}])
    stud = make_paytable(
        Game.CARIBBEAN_STUD, [PaytableLine(hand=HandCategory.FLUSH, fixed_cents=5)]
    )
    with pytest.raises(RuleViolation, match="the link plays"):
        check_paytable(Game.CARIBBEAN_DRAW, stud)


def test_a_change_to_a_link_that_never_resets_is_refused() -> None:
    no_jackpot = make_paytable(
        Game.CARIBBEAN_STUD,
        [{"hand": "ROYAL_FLUSH", "percent_bp": 5_000}, {"hand": "FLUSH", "fixed_cents": 50_00}],
    )
    with pytest.raises(RuleViolation, match="no jackpot line"):
        check_change(
            replace(link(), paytable=no_jackpot), Proposal(kind=K.RESET_CHANGE, reset_cents=5)
        )
    # The Let It Ride bonus is a fixed-pay link: it has no reset amount to change at all.
    with pytest.raises(RuleViolation, match="it has none") as caught:
        check_change(
            link(game=Game.LET_IT_RIDE_BONUS), Proposal(kind=K.RESET_CHANGE, reset_cents=5)
        )
    assert caught.value.clause == "68 IAC 10-7-5(e)"


@pytest.mark.parametrize(
    ("kind", "days", "clause"),
    [(K.NEW_LINK, 60, "68 IAC 10-1-3(c)(1)"), (K.RATE_CHANGE, 30, "68 IAC 10-1-4(1)")],
)
def test_a_notice_period_short_of_its_days_is_refused(
    kind: SubmissionKind, days: int, clause: str
) -> None:
    short = T0 + days * DAY_US - 1
    with pytest.raises(RuleViolation) as caught:
        check_notice(kind=kind, filed_at_us=T0, effective_at_us=short, law=INDIANA)
    assert caught.value.clause == clause
    assert (
        check_notice(kind=kind, filed_at_us=T0, effective_at_us=T0 + days * DAY_US, law=INDIANA)
        == days
    )


# The executive director's written direction for one amendment (68 IAC 10-1-4(1)).
WAIVER = NoticeWaiver(
    given_by="J. Doe, Executive Director",
    reference="IGC letter 2026-114",
    given_on=date(2025, 12, 30),
    document_sha256="ab" * 32,
)


@pytest.mark.parametrize(
    "kind", [K.RATE_CHANGE, K.RESET_CHANGE, K.PAYTABLE_CHANGE, K.LEVELS_CHANGE]
)
def test_the_executive_directors_waiver_lets_an_amendment_take_effect_sooner(
    kind: SubmissionKind,
) -> None:
    assert (
        check_notice(kind=kind, filed_at_us=T0, effective_at_us=T0, waiver=WAIVER, law=INDIANA)
        == 30
    )
    # Never in the past, waiver or not.
    with pytest.raises(RuleViolation, match="in the past") as caught:
        check_notice(kind=kind, filed_at_us=T0, effective_at_us=T0 - 1, waiver=WAIVER, law=INDIANA)
    assert caught.value.clause == "68 IAC 10-1-4(1)"


@pytest.mark.parametrize(
    ("waiver", "says"),
    [
        (replace(WAIVER, given_by="  "), "who gave it"),
        (replace(WAIVER, reference=""), "its reference"),
        (replace(WAIVER, document_sha256="not a digest"), "SHA-256 of its document"),
        (replace(WAIVER, given_on=date(2026, 1, 2)), "after the filing"),
    ],
)
def test_a_waiver_names_who_gave_it_its_reference_date_and_document(
    waiver: NoticeWaiver, says: str
) -> None:
    with pytest.raises(RuleViolation, match=says) as caught:
        check_notice(
            kind=K.RATE_CHANGE, filed_at_us=T0, effective_at_us=T0, waiver=waiver, law=INDIANA
        )
    assert caught.value.clause == "68 IAC 10-1-4(1)"


def test_no_waiver_lifts_a_new_links_sixty_days() -> None:
    assert INDIANA.waiver.new_link is None
    for effective in (T0, T0 + 60 * DAY_US):
        with pytest.raises(RuleViolation, match="no one waives the 60 days") as caught:
            check_notice(
                kind=K.NEW_LINK, filed_at_us=T0, effective_at_us=effective, waiver=WAIVER,
                law=INDIANA,
            )  # fmt: skip
        assert caught.value.clause == "68 IAC 10-1-3(c)(1)"


def test_demonstration_mode_alone_plays_a_new_link_at_once_never_in_the_past() -> None:
    check_notice(
        kind=K.NEW_LINK, filed_at_us=T0, effective_at_us=T0, demonstration=True, law=INDIANA
    )
    with pytest.raises(RuleViolation, match="in the past"):
        check_notice(
            kind=K.NEW_LINK, filed_at_us=T0, effective_at_us=T0 - 1, demonstration=True,
            law=INDIANA,
        )  # fmt: skip


def test_a_submission_with_a_waiver_is_approved_only_once_the_agent_confirms_it() -> None:
    with pytest.raises(RuleViolation, match="confirm the executive director") as caught:
        check_waiver_confirmed(waiver=WAIVER, confirmed=False, clause=INDIANA.waiver.clause)
    assert caught.value.clause == "68 IAC 10-1-4(1)"
    check_waiver_confirmed(waiver=WAIVER, confirmed=True, clause=INDIANA.waiver.clause)
    check_waiver_confirmed(waiver=None, confirmed=False, clause=INDIANA.waiver.clause)


def test_a_new_link_is_filed_with_every_tables_location() -> None:
    with pytest.raises(RuleViolation, match="none for t2") as caught:
        check_table_locations([("t1", "pit 3"), ("t2", " ")], clause=INDIANA.clauses.location)
    assert caught.value.clause == "68 IAC 10-1-1.1(e)(2)"
    check_table_locations([("t1", "pit 3"), ("t2", "pit 3")], clause=INDIANA.clauses.location)


@pytest.mark.parametrize("role", [r for r in Role if r is not Role.COMMISSION_AGENT])
def test_only_a_commission_agent_reviews(role: Role) -> None:
    with pytest.raises(RuleViolation, match="only a commission agent"):
        check_reviewer(role=role, reviewer="someone", filed_by="sup")
    check_reviewer(role=Role.COMMISSION_AGENT, reviewer="agent", filed_by="sup")


def test_nobody_reviews_their_own_submission_and_a_rejection_has_a_reason() -> None:
    with pytest.raises(RuleViolation, match="filed it"):
        check_reviewer(role=Role.COMMISSION_AGENT, reviewer="agent", filed_by="agent")
    with pytest.raises(RuleViolation, match="reason"):
        check_rejection_reason("  ")
