"""Submissions to the commission (68 IAC 10-1-1.1(e), 10-1-3, 10-1-4): what a change to a
link must carry, the notice it gives, who reviews it, and that nothing is used unapproved."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from controller.access.users import Role
from controller.core.games import Game, Paytable, PaytableError, make_paytable
from controller.core.games.paytables import meterless
from controller.core.law import Law
from controller.core.money import MoneyError, check_cents, format_bp
from controller.core.reducer import LinkState
from controller.core.reducer.levels import LevelConfig, check_levels, is_single_meter
from controller.rules.odds import DEFAULT_JACKPOT_ODDS_BOUND, check_jackpot_odds
from controller.rules.pools import FIXED_PAY_CLAUSE
from controller.rules.progression import LEVEL_RATE_LOCK, RATE_LOCK_CLAUSE
from controller.rules.violation import RuleViolation

DAY_US = 86_400_000_000

# 68 IAC 10-1-1.1(e)(1)-(4): game types, locations, rate and reset amount of every game, filed
# when a progressive device is introduced or its rate of progression changes.
SUBMISSION_CLAUSE = "68 IAC 10-1-1.1(e)"
# 68 IAC 10-1-3(c)(1): rules of a new game are submitted at least 60 days before play.
NEW_GAME_NOTICE_CLAUSE = "68 IAC 10-1-3(c)(1)"
NEW_GAME_NOTICE_DAYS = 60
# 68 IAC 10-1-4(1): an amendment at least 30 days before it is used, "unless otherwise
# provided by the executive director".
AMENDMENT_NOTICE_CLAUSE = "68 IAC 10-1-4(1)"
AMENDMENT_NOTICE_DAYS = 30
# 68 IAC 10-1-3(c)(2) and 10-1-4(2): the commission (the executive director's agents) approves
# or disapproves, in writing; nobody else.
REVIEW_CLAUSE = "68 IAC 10-1-3(c)(2), 10-1-4(2)"
REVIEWER_ROLES = frozenset({Role.COMMISSION_AGENT})
# 68 IAC 10-1-3(c)(4) and 10-1-4(3): nothing is used before it is approved.
APPROVED_ONLY_CLAUSE = "68 IAC 10-1-3(c)(4), 10-1-4(3)"
# 68 IAC 10-1-1.1(d): a change of rate takes effect only after a patron wins the jackpot, so
# an approved change waits for the link's first jackpot reset on or after its effective date.
TAKES_EFFECT_CLAUSE = "68 IAC 10-1-1.1(d)"
# The rules-of-the-game sections whose table facts the packet carries, by game.
RULES_OF_GAME_CLAUSE = {
    Game.CARIBBEAN_STUD: "68 IAC 10-6-2(b)(2)-(4)",
    Game.LET_IT_RIDE_BONUS: "68 IAC 10-7-2(b)(2)-(4)",
    Game.CARIBBEAN_DRAW: "68 IAC 10-8-2(b)(2)-(4)",
    # Pai Gow Poker: the number of tables (b)(2) and their location (b)(5).
    Game.PAI_GOW_POKER: "68 IAC 10-9-2(b)(2), (5)",
    # Super Sevens: the number of tables (b)(1) and their location (b)(2).
    Game.SUPER_SEVENS: "68 IAC 10-12-2(b)(1)-(2)",
}


class SubmissionKind(enum.StrEnum):
    NEW_LINK = "new_link"
    RATE_CHANGE = "rate_change"
    RESET_CHANGE = "reset_change"
    PAYTABLE_CHANGE = "paytable_change"
    # A link of levels: its levels as a whole (shares, resets, limits, mystery ranges).
    LEVELS_CHANGE = "levels_change"

    @property
    def label(self) -> str:
        return {
            SubmissionKind.NEW_LINK: "new progressive link",
            SubmissionKind.RATE_CHANGE: "change of the rate of progression",
            SubmissionKind.RESET_CHANGE: "change of the reset amount",
            SubmissionKind.PAYTABLE_CHANGE: "change of the paytable",
            SubmissionKind.LEVELS_CHANGE: "change of the levels",
        }[self]


# What of a proposal a refusal of its kind is about: the field the kind changes.
SUBJECTS: dict[SubmissionKind, str] = {
    SubmissionKind.RATE_CHANGE: "rate_bp",
    SubmissionKind.RESET_CHANGE: "reset_cents",
    SubmissionKind.PAYTABLE_CHANGE: "paytable",
    SubmissionKind.LEVELS_CHANGE: "levels",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Proposal:
    """What a submission asks for; only the field of its kind is set (all of them for a new
    link).

    ``levels``: a link's levels as a whole (a levels change, or a new link of levels; an empty
    tuple is a new fixed-pay link, with no meter). ``game``: the game a paytable change is
    for, on a link whose tables deal several games. ``paytables``: a new mixed-game link's
    paytables of its other games. A classic link's proposal has none of the three.
    """

    kind: SubmissionKind
    rate_bp: int | None = None
    reset_cents: int | None = None
    paytable: Paytable | None = None
    levels: tuple[LevelConfig, ...] | None = None
    game: Game | None = None
    paytables: Mapping[Game, Paytable] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": str(self.kind)}
        if self.rate_bp is not None:
            out["rate_bp"] = self.rate_bp
        if self.reset_cents is not None:
            out["reset_cents"] = self.reset_cents
        if self.paytable is not None:
            out["paytable"] = self.paytable.to_dicts()
        if self.levels is not None:
            out["levels"] = [cfg.to_dict() for cfg in self.levels]
        if self.game is not None:
            out["game"] = str(self.game)
        if self.paytables:
            out["paytables"] = {str(g): pt.to_dicts() for g, pt in sorted(self.paytables.items())}
        return out


def check_reset_amount(reset_cents: int) -> int:
    """A reset amount is whole cents within the bound of every amount (``core.money``)."""
    try:
        return check_cents("reset amount", reset_cents)
    except MoneyError as exc:
        raise RuleViolation(SUBMISSION_CLAUSE, str(exc)) from None


def check_paytable(
    game: Game,
    lines: Sequence[Mapping[str, Any]] | Paytable,
    *,
    jackpot_odds_bound: int = DEFAULT_JACKPOT_ODDS_BOUND,
) -> Paytable:
    """A paytable the game allows (``games.make_paytable``), its fixed amounts within the bound
    of every amount (``controller.core.money``), its jackpot no rarer than the bound on a
    jackpot's odds (``odds.check_jackpot_odds``)."""
    try:
        paytable = lines if isinstance(lines, Paytable) else make_paytable(game, lines)
        for line in paytable.lines:
            if line.fixed_cents is not None:
                check_cents(f"the {line.hand.label} line's fixed amount", line.fixed_cents, low=1)
    except (PaytableError, MoneyError) as exc:
        raise RuleViolation(SUBMISSION_CLAUSE, str(exc)) from exc
    if paytable.game is not game:
        raise RuleViolation(
            SUBMISSION_CLAUSE,
            f"the paytable is for {paytable.game.label}, the link plays {game.label}",
        )
    return check_jackpot_odds(paytable, bound=jackpot_odds_bound)


def check_change(
    state: LinkState, proposal: Proposal, *, jackpot_odds_bound: int = DEFAULT_JACKPOT_ODDS_BOUND
) -> Proposal:
    """A change to a link that plays: each proposal checked against the rule it touches, under
    the law the link plays under (``state.law``)."""
    kind = proposal.kind
    if state.fixed_pay and kind in _METER_KINDS:
        # 68 IAC 10-7-5(e): a fixed-pay link has no meter, so no rate, reset amount or level.
        raise RuleViolation(
            FIXED_PAY_CLAUSE,
            f"link {state.link_id} is a fixed-pay link: its rate can never change: it has none "
            "(no meter, no reset amount, no levels); only its paytable of fixed amounts can",
        )
    if kind in (SubmissionKind.RATE_CHANGE, SubmissionKind.RESET_CHANGE) and not (
        is_single_meter(state.level_configs)
    ):
        raise RuleViolation(
            RATE_LOCK_CLAUSE,
            f"link {state.link_id} has {len(state.levels)} levels: its rate of progression and "
            "reset amounts change only by one submission of all its levels (a levels change), "
            f"applied at the link's next jackpot reset; {LEVEL_RATE_LOCK}",
        )
    if kind is SubmissionKind.RATE_CHANGE:
        if proposal.rate_bp is None:
            raise RuleViolation(SUBMISSION_CLAUSE, "a rate change names the new rate (rate_bp)")
        if proposal.rate_bp == state.rate_bp:
            raise RuleViolation(
                SUBMISSION_CLAUSE, f"the link already plays at {format_bp(state.rate_bp)}"
            )
        state.law.check_rate_change(
            current_bp=state.rate_bp,
            proposed_bp=proposal.rate_bp,
            jackpot_won_since_rate_set=state.jackpot_won_since_rate_set,
        )
    elif kind is SubmissionKind.RESET_CHANGE:
        if proposal.reset_cents is None:
            raise RuleViolation(
                SUBMISSION_CLAUSE, "a reset change names the new reset amount (reset_cents)"
            )
        check_reset_amount(proposal.reset_cents)
    elif kind is SubmissionKind.PAYTABLE_CHANGE:
        check_paytable_change(state, proposal, jackpot_odds_bound=jackpot_odds_bound)
    elif kind is SubmissionKind.LEVELS_CHANGE:
        check_levels_change(state, proposal)
    else:
        raise RuleViolation(SUBMISSION_CLAUSE, "a new link is proposed with its tables")
    if kind is not SubmissionKind.PAYTABLE_CHANGE and not _ever_resets(state):
        # Nothing resets this link, so a change waiting for a reset would never take effect.
        raise RuleViolation(
            TAKES_EFFECT_CLAUSE,
            "this link's paytable has no jackpot line, so no reset would ever apply the change",
        )
    return proposal


_METER_KINDS = frozenset(
    {SubmissionKind.RATE_CHANGE, SubmissionKind.RESET_CHANGE, SubmissionKind.LEVELS_CHANGE}
)


def _ever_resets(state: LinkState) -> bool:
    """A jackpot line in any of the link's paytables, or a mystery level, resets it."""
    if any(cfg.mystery is not None for cfg in state.level_configs):
        return True
    return any(state.paytable_for(g).has_jackpot for g in state.games)


def _pool_refusal(exc: ValueError) -> RuleViolation:
    """A level or paytable the pool cannot have, as the refusal of a submission."""
    if isinstance(exc, RuleViolation):
        return exc
    return RuleViolation(SUBMISSION_CLAUSE, str(exc))


def check_paytable_change(
    state: LinkState, proposal: Proposal, *, jackpot_odds_bound: int = DEFAULT_JACKPOT_ODDS_BOUND
) -> Paytable:
    """A new paytable for one of the link's games (named, on a link that deals several), its
    lines paying from levels the link has (a fixed-pay link: fixed amounts only). Envy
    amounts are part of the paytable: a change of one is a paytable change."""
    if proposal.paytable is None:
        raise RuleViolation(SUBMISSION_CLAUSE, "a paytable change gives the new paytable")
    game = proposal.game
    if game is None:
        if state.paytables:
            raise RuleViolation(
                SUBMISSION_CLAUSE,
                f"link {state.link_id} deals "
                + ", ".join(g.label for g in state.games)
                + ": a paytable submission names its game",
            )
        game = state.game
    if game not in state.games:
        raise RuleViolation(
            SUBMISSION_CLAUSE,
            f"link {state.link_id} does not deal {game.label}; it deals "
            + ", ".join(g.label for g in state.games),
        )
    paytable = check_paytable(game, proposal.paytable, jackpot_odds_bound=jackpot_odds_bound)
    try:
        state.law.check_pool(game, state.level_configs, paytable)
    except ValueError as exc:
        raise _pool_refusal(exc) from None
    return paytable


def check_levels_change(state: LinkState, proposal: Proposal) -> tuple[LevelConfig, ...]:
    """All the levels of a link of levels at once: a pool that works (``check_levels``), of
    shapes and a rate of progression the link's law allows (``check_pool``), as many levels
    as the link has, and a level's new share only once that level's jackpot was won since its
    share was set (68 IAC 10-1-1.1(d), level by level: a Mini's win unlocks the Mini's share,
    never the Grand's)."""
    levels = proposal.levels
    if not levels:
        raise RuleViolation(SUBMISSION_CLAUSE, "a levels change gives every level of the link")
    if len(levels) != len(state.levels):
        raise RuleViolation(
            SUBMISSION_CLAUSE,
            f"link {state.link_id} has {len(state.levels)} levels; a levels change gives each "
            f"of them, got {len(levels)}",
        )
    if tuple(levels) == state.level_configs:
        raise RuleViolation(SUBMISSION_CLAUSE, f"link {state.link_id} already has these levels")
    try:
        check_levels(levels)
        for g in state.games:
            state.law.check_pool(g, levels, state.paytable_for(g))
    except ValueError as exc:
        raise _pool_refusal(exc) from None
    state.law.check_shares_change(
        link_id=state.link_id,
        current=state.level_configs,
        proposed=levels,
        won_since_set=state.won_since_share_set(),
    )
    return tuple(levels)


def check_new_link(
    *,
    game: Game,
    rate_bp: int,
    reset_cents: int,
    paytable: Paytable,
    law: Law,
    jackpot_odds_bound: int = DEFAULT_JACKPOT_ODDS_BOUND,
    levels: Sequence[LevelConfig] | None = None,
    paytables: Mapping[Game, Paytable] | None = None,
) -> None:
    """A new link: its rate and reset amount (a classic link), or its levels (a link of
    levels; none for a fixed-pay link), and each of its games' paytables, under ``law``
    (the installation's jurisdiction: its shapes, its reading and bounds of the rate)."""
    if levels is None:
        law.check_rate_of_progression(rate_bp)
        check_reset_amount(reset_cents)
    else:
        for cfg in levels:
            check_reset_amount(cfg.reset_cents)
    check_paytable(game, paytable, jackpot_odds_bound=jackpot_odds_bound)
    for other, pt in (paytables or {}).items():
        check_paytable(other, pt, jackpot_odds_bound=jackpot_odds_bound)
    games = ((game, paytable), *(paytables or {}).items())
    pool: Sequence[LevelConfig]
    if levels is not None:
        pool = levels
    elif law.fixed_pay_only(game) or meterless(pt for _, pt in games):
        # A fixed-pay link (``reducer.open_link``): no meter, its paytables still the law's.
        pool = ()
    else:
        pool = (LevelConfig(name="Jackpot", reset_cents=reset_cents, rate_bp=rate_bp),)
    try:
        if levels is not None:
            check_levels(levels)
        for g, pt in games:
            law.check_pool(g, pool, pt)
    except ValueError as exc:
        raise _pool_refusal(exc) from None


def notice_days(kind: SubmissionKind) -> tuple[int, str]:
    """The notice a kind of submission needs, and the clause that asks for it."""
    if kind is SubmissionKind.NEW_LINK:
        return NEW_GAME_NOTICE_DAYS, NEW_GAME_NOTICE_CLAUSE
    return AMENDMENT_NOTICE_DAYS, AMENDMENT_NOTICE_CLAUSE


def check_notice(
    *,
    kind: SubmissionKind,
    filed_at_us: int,
    effective_at_us: int,
    override: str | None,
    demonstration: bool = False,
) -> int:
    """Refuse an effective date sooner than the notice period allows; return the days needed.

    ``override`` is the executive director's written direction providing otherwise (its
    reference and reason); with it the date is not checked, and the direction is kept with
    the submission and printed in its packet.

    ``demonstration``: the installation runs in demonstration mode (``PROGRESSIVE_
    DEMONSTRATION``: the demo, a test lab, a check that must play a new link at once). No
    clause lets a link play before its notice period ends; a demonstration is no live floor,
    and its filing is accepted from now on, with ``notice_not_given`` recorded in the
    submission and printed in its packet. Nothing else lifts the notice of a new link.
    """
    days, clause = notice_days(kind)
    if effective_at_us < filed_at_us and not override:
        raise RuleViolation(clause, "the effective date is in the past")
    if override is not None and not override.strip():
        raise RuleViolation(clause, "an override names the executive director's direction")
    if demonstration:
        return days
    if not override and effective_at_us - filed_at_us < days * DAY_US:
        earliest = date_text(filed_at_us + days * DAY_US)
        raise RuleViolation(
            clause,
            f"a {kind.label} is submitted at least {days} days before it is used; "
            f"the earliest effective date for one filed now is {earliest}",
        )
    return days


def notice_not_given(kind: SubmissionKind) -> str:
    """What a filing made in demonstration mode records of its notice period (``check_notice``
    with ``demonstration``): the period its kind needs, by its clause, was not given."""
    return f"demonstration mode: the notice period of {notice_days(kind)[1]} was not given"


def check_reviewer(*, role: Role, reviewer: str, filed_by: str) -> None:
    """Only a commission agent reviews, and never one who filed the submission."""
    if role not in REVIEWER_ROLES:
        raise RuleViolation(REVIEW_CLAUSE, "only a commission agent approves or rejects")
    if reviewer == filed_by:
        raise RuleViolation(REVIEW_CLAUSE, "a submission is not reviewed by the one who filed it")


def check_rejection_reason(reason: str) -> str:
    if not reason.strip():
        raise RuleViolation(REVIEW_CLAUSE, "a rejection states its reason")
    return reason.strip()


def date_text(at_us: int) -> str:
    """A time as the packet and the notice refusals print it."""
    return datetime.fromtimestamp(at_us // 1_000_000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def check_live(link_id: str, *, live: bool) -> None:
    """68 IAC 10-1-3(c)(4): a link not yet approved to play has nothing to amend."""
    if not live:
        raise RuleViolation(APPROVED_ONLY_CLAUSE, f"link {link_id} is not yet approved to play")


def check_nothing_armed(link_id: str, *, armed_submission_id: str | None) -> None:
    """One approved change waits for its reset at a time: the next is filed after it applies."""
    if armed_submission_id is not None:
        raise RuleViolation(
            APPROVED_ONLY_CLAUSE,
            f"link {link_id} waits to apply submission {armed_submission_id}; "
            "file the next change once that one took effect",
        )


def check_not_yet_approved(link_id: str, *, approved: bool) -> None:
    """A link already approved to play is not filed as new again."""
    if approved:
        raise RuleViolation(APPROVED_ONLY_CLAUSE, f"link {link_id} is already approved")


def check_none_awaiting_review(link_id: str, *, awaiting: bool) -> None:
    """One submission of a link awaits review at a time."""
    if awaiting:
        raise RuleViolation(
            APPROVED_ONLY_CLAUSE,
            f"link {link_id} has a submission awaiting review; one at a time",
        )
