"""Submissions to the commission (68 IAC 10-1-1.1(e), 10-1-3, 10-1-4): what a change to a
link must carry, the notice it gives, who reviews it, and that nothing is used unapproved."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Protocol

from controller.access.roles import Role
from controller.core.games import Game, Paytable, PaytableError, make_paytable
from controller.core.games.paytables import meterless
from controller.core.law import Law
from controller.core.money import MoneyError, check_cents, format_bp
from controller.core.reducer import LinkState
from controller.core.reducer.levels import LevelConfig, check_levels, is_single_meter
from controller.rules.odds import DEFAULT_BOUND, OddsBound, check_jackpot_odds
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
    jackpot_odds_bound: OddsBound = DEFAULT_BOUND,
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
    state: LinkState, proposal: Proposal, *, jackpot_odds_bound: OddsBound = DEFAULT_BOUND
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
    state: LinkState, proposal: Proposal, *, jackpot_odds_bound: OddsBound = DEFAULT_BOUND
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
    jackpot_odds_bound: OddsBound = DEFAULT_BOUND,
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


class NoticeLaw(Protocol):
    """What of a jurisdiction the notice periods read: its numbers, clauses and waiver."""

    @property
    def numbers(self) -> Any: ...
    @property
    def clauses(self) -> Any: ...
    @property
    def waiver(self) -> Any: ...


def notice_days(kind: SubmissionKind, law: NoticeLaw) -> tuple[int, str]:
    """The notice a kind of submission needs under ``law``, and the clause that asks for it
    (Indiana: 60 and 30 days, 68 IAC 10-1-3(c)(1) and 10-1-4(1))."""
    if kind is SubmissionKind.NEW_LINK:
        return law.numbers.new_game_notice_days, law.clauses.new_game_notice
    return law.numbers.amendment_notice_days, law.clauses.amendment_notice


# PROGRESSIVE_NOTICE_OVERRIDE, refused when set (``controller.settings``): no setting lifts the
# notice periods of a whole installation. What is lawful instead, on one line.
NOTICE_OVERRIDE_REFUSED = (
    "PROGRESSIVE_NOTICE_OVERRIDE is refused: no setting lifts the notice periods "
    f"({NEW_GAME_NOTICE_CLAUSE}, {AMENDMENT_NOTICE_CLAUSE}); a demonstration or test lab runs "
    "in demonstration mode (PROGRESSIVE_DEMONSTRATION=1), and an amendment the executive "
    "director allows sooner is filed with that written direction as its waiver; unset it"
)
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
WAIVER_TEXT_MAX = 200


@dataclass(frozen=True, slots=True, kw_only=True)
class NoticeWaiver:
    """The executive director's written direction providing otherwise for one amendment
    (68 IAC 10-1-4(1) "unless otherwise provided by the executive director"): who gave it,
    its reference, the day it is dated, and the SHA-256 of the document that carries it."""

    given_by: str
    reference: str
    given_on: date
    document_sha256: str

    def to_dict(self) -> dict[str, str]:
        return {
            "given_by": self.given_by,
            "reference": self.reference,
            "given_on": self.given_on.isoformat(),
            "document_sha256": self.document_sha256,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> NoticeWaiver:
        return cls(
            given_by=str(d["given_by"]),
            reference=str(d["reference"]),
            given_on=date.fromisoformat(str(d["given_on"])),
            document_sha256=str(d["document_sha256"]),
        )

    def text(self) -> str:
        """The waiver as the packet, the pages and the refusals state it."""
        return (
            f"written direction {self.reference} of {self.given_on.isoformat()}, given by "
            f"{self.given_by} (document SHA-256 {self.document_sha256})"
        )


def check_waiver(
    *, kind: SubmissionKind, waiver: NoticeWaiver, filed_at_us: int, law: NoticeLaw
) -> NoticeWaiver:
    """A waiver of a notice period the jurisdiction lets its authority give, for this kind
    of filing, complete. 68 IAC 10-1-3(c)(1): the 60 days before a new game plays are never
    waived (``Waiver.new_link`` None); 10-1-4(1): the 30 days of an amendment "unless
    otherwise provided by the executive director" (``Waiver.amendment``), in writing, per
    amendment."""
    if kind is SubmissionKind.NEW_LINK:
        if law.waiver.new_link is None:
            days, clause = notice_days(kind, law)
            raise RuleViolation(
                clause,
                f"no one waives the {days} days' notice of a {kind.label}: it is filed at "
                f"least {days} days before it plays (demonstration mode alone plays one at "
                "once, and says so)",
            )
        by, clause = law.waiver.new_link, law.waiver.clause
    else:
        if law.waiver.amendment is None:
            raise RuleViolation(
                law.waiver.clause, f"no clause lets anyone waive the notice of a {kind.label}"
            )
        by, clause = law.waiver.amendment, law.waiver.clause
    for what, value in (("who gave it", waiver.given_by), ("its reference", waiver.reference)):
        if not value.strip() or len(value) > WAIVER_TEXT_MAX or "\n" in value:
            raise RuleViolation(
                clause,
                f"a waiver is {by}'s written direction: give {what} "
                f"(one line of at most {WAIVER_TEXT_MAX} characters)",
            )
    if not SHA256_HEX.fullmatch(waiver.document_sha256):
        raise RuleViolation(
            clause,
            f"a waiver is {by}'s direction in writing: give the SHA-256 of its document "
            "(64 lowercase hexadecimal digits)",
        )
    filed_on = datetime.fromtimestamp(filed_at_us // 1_000_000, UTC).date()
    if waiver.given_on > filed_on:
        raise RuleViolation(
            clause,
            f"the waiver is dated {waiver.given_on.isoformat()}, after the filing "
            f"({filed_on.isoformat()}): a filing carries a direction already given",
        )
    return waiver


def check_notice(
    *,
    kind: SubmissionKind,
    filed_at_us: int,
    effective_at_us: int,
    law: NoticeLaw,
    waiver: NoticeWaiver | None = None,
    demonstration: bool = False,
) -> int:
    """Refuse an effective date sooner than the notice period allows; return the days needed.

    A date in the past is always refused: nothing is used before it is filed.

    ``waiver``: the executive director's written direction for this amendment (68 IAC
    10-1-4(1)), checked by ``check_waiver``; with it an amendment's date may be sooner than
    its 30 days, never in the past. A new link's 60 days (10-1-3(c)(1)) are never waived.

    ``demonstration``: the installation runs in demonstration mode (``PROGRESSIVE_
    DEMONSTRATION``: the demo, a test lab, a check that must play a new link at once). No
    clause lets a link play before its notice period ends; a demonstration is no live floor,
    and its filing is accepted from now on, with ``notice_not_given`` recorded in the
    submission and printed in its packet. Nothing else lifts the notice of a new link.
    """
    days, clause = notice_days(kind, law)
    if waiver is not None:
        check_waiver(kind=kind, waiver=waiver, filed_at_us=filed_at_us, law=law)
    if effective_at_us < filed_at_us:
        raise RuleViolation(clause, "the effective date is in the past")
    if demonstration or waiver is not None:
        return days
    if effective_at_us - filed_at_us < days * DAY_US:
        earliest = date_text(filed_at_us + days * DAY_US)
        raise RuleViolation(
            clause,
            f"a {kind.label} is submitted at least {days} days before it is used; "
            f"the earliest effective date for one filed now is {earliest}",
        )
    return days


def check_waiver_confirmed(*, waiver: NoticeWaiver | None, confirmed: bool, clause: str) -> None:
    """68 IAC 10-1-4(1): an amendment filed short of its notice on the executive director's
    direction is approved only by an agent who confirmed that direction (its reference, date
    and document) at review; a rejection needs no confirmation."""
    if waiver is not None and not confirmed:
        raise RuleViolation(
            clause,
            f"this submission carries a waiver of its notice period ({waiver.text()}): "
            "confirm the executive director's direction (waiver_confirmed) before approving",
        )


def check_table_locations(tables: Sequence[tuple[str, str]], *, clause: str) -> None:
    """68 IAC 10-1-1.1(e)(2): the packet gives the location of the games that offer the
    progressive; a new link is filed with every table's location. ``tables``: (table id,
    location) each."""
    missing = [tid for tid, location in tables if not location.strip()]
    if missing:
        raise RuleViolation(
            clause,
            "the submission gives the location of every table of the progressive; none for "
            + ", ".join(missing),
        )


def notice_not_given(kind: SubmissionKind, law: NoticeLaw) -> str:
    """What a filing made in demonstration mode records of its notice period (``check_notice``
    with ``demonstration``): the period its kind needs, by its clause, was not given."""
    return f"demonstration mode: the notice period of {notice_days(kind, law)[1]} was not given"


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
