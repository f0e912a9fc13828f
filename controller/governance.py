"""Changes to a link go through the commission: proposals, notice periods, review, packets.

Pure: no I/O, no clock. Every rule a submission obeys is here once, with its clause; the
filing desk (``controller.submissions``) reads the database and calls these.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from controller.engine import LinkState
from controller.games import Game, Paytable, PaytableError, make_paytable
from controller.money import MoneyError, check_cents, format_bp, format_cents
from controller.pdf import render_pdf
from controller.regulations import (
    RuleViolation,
    check_rate_change,
    check_rate_of_progression,
)
from controller.users import Role

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
}


class SubmissionKind(enum.StrEnum):
    NEW_LINK = "new_link"
    RATE_CHANGE = "rate_change"
    RESET_CHANGE = "reset_change"
    PAYTABLE_CHANGE = "paytable_change"

    @property
    def label(self) -> str:
        return {
            SubmissionKind.NEW_LINK: "new progressive link",
            SubmissionKind.RATE_CHANGE: "change of the rate of progression",
            SubmissionKind.RESET_CHANGE: "change of the reset amount",
            SubmissionKind.PAYTABLE_CHANGE: "change of the paytable",
        }[self]


class SubmissionStatus(enum.StrEnum):
    FILED = "filed"
    APPROVED = "approved"
    REJECTED = "rejected"


@dataclass(frozen=True, slots=True, kw_only=True)
class Proposal:
    """What a submission asks for; only the field of its kind is set (all three for a new link)."""

    kind: SubmissionKind
    rate_bp: int | None = None
    reset_cents: int | None = None
    paytable: Paytable | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": str(self.kind)}
        if self.rate_bp is not None:
            out["rate_bp"] = self.rate_bp
        if self.reset_cents is not None:
            out["reset_cents"] = self.reset_cents
        if self.paytable is not None:
            out["paytable"] = self.paytable.to_dicts()
        return out


def check_reset_amount(reset_cents: int) -> int:
    """A reset amount is whole cents within the bound of every amount (``controller.money``)."""
    try:
        return check_cents("reset amount", reset_cents)
    except MoneyError as exc:
        raise RuleViolation(SUBMISSION_CLAUSE, str(exc)) from None


def check_paytable(game: Game, lines: Sequence[Mapping[str, Any]] | Paytable) -> Paytable:
    """A paytable the game allows (``games.make_paytable``), its fixed amounts within the bound
    of every amount (``controller.money``)."""
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
    return paytable


def check_change(state: LinkState, proposal: Proposal) -> Proposal:
    """A change to a link that plays: each proposal checked against the rule it touches."""
    if proposal.kind is SubmissionKind.RATE_CHANGE:
        if proposal.rate_bp is None:
            raise RuleViolation(SUBMISSION_CLAUSE, "a rate change names the new rate (rate_bp)")
        if proposal.rate_bp == state.rate_bp:
            raise RuleViolation(
                SUBMISSION_CLAUSE, f"the link already plays at {format_bp(state.rate_bp)}"
            )
        check_rate_change(
            current_bp=state.rate_bp,
            proposed_bp=proposal.rate_bp,
            jackpot_won_since_rate_set=state.jackpot_won_since_rate_set,
        )
    elif proposal.kind is SubmissionKind.RESET_CHANGE:
        if proposal.reset_cents is None:
            raise RuleViolation(
                SUBMISSION_CLAUSE, "a reset change names the new reset amount (reset_cents)"
            )
        check_reset_amount(proposal.reset_cents)
    elif proposal.kind is SubmissionKind.PAYTABLE_CHANGE:
        if proposal.paytable is None:
            raise RuleViolation(SUBMISSION_CLAUSE, "a paytable change gives the new paytable")
        check_paytable(state.game, proposal.paytable)
    else:
        raise RuleViolation(SUBMISSION_CLAUSE, "a new link is proposed with its tables")
    if proposal.kind is not SubmissionKind.PAYTABLE_CHANGE and not state.paytable.has_jackpot:
        # Nothing resets this link, so a change waiting for a reset would never take effect.
        raise RuleViolation(
            TAKES_EFFECT_CLAUSE,
            "this link's paytable has no jackpot line, so no reset would ever apply the change",
        )
    return proposal


def check_new_link(*, game: Game, rate_bp: int, reset_cents: int, paytable: Paytable) -> None:
    check_rate_of_progression(rate_bp)
    check_reset_amount(reset_cents)
    check_paytable(game, paytable)


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
) -> int:
    """Refuse an effective date sooner than the notice period allows; return the days needed.

    ``override`` is the executive director's written direction providing otherwise (its
    reference and reason); with it the date is not checked, and the direction is kept with
    the submission and printed in its packet.
    """
    days, clause = notice_days(kind)
    if effective_at_us < filed_at_us and not override:
        raise RuleViolation(clause, "the effective date is in the past")
    if override is not None and not override.strip():
        raise RuleViolation(clause, "an override names the executive director's direction")
    if not override and effective_at_us - filed_at_us < days * DAY_US:
        earliest = _date(filed_at_us + days * DAY_US)
        raise RuleViolation(
            clause,
            f"a {kind.label} is submitted at least {days} days before it is used; "
            f"the earliest effective date for one filed now is {earliest}",
        )
    return days


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


# --------------------------------------------------------------------------------------------
# The packet


@dataclass(frozen=True, slots=True, kw_only=True)
class TableFacts:
    table_id: str
    name: str
    location: str
    link_id: str
    game: Game
    denomination_cents: int
    seats: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PacketFacts:
    submission_id: str
    kind: SubmissionKind
    link_id: str
    link_name: str
    game: Game
    current: Mapping[str, Any] | None  # rate_bp, reset_cents, paytable; None for a new link
    proposal: Proposal
    effective_at_us: int
    notice_days: int
    notice_override: str | None
    filed_by: str
    filed_at_us: int
    floor_tables: Sequence[TableFacts]  # every table of the floor (all games)


def _date(at_us: int) -> str:
    return datetime.fromtimestamp(at_us // 1_000_000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def build_packet(f: PacketFacts) -> dict[str, Any]:
    """Everything the commission reads, as one JSON-ready mapping."""
    current = dict(f.current) if f.current is not None else None
    proposed = {
        "rate_bp": f.proposal.rate_bp
        if f.proposal.rate_bp is not None
        else (current or {}).get("rate_bp"),
        "reset_cents": f.proposal.reset_cents
        if f.proposal.reset_cents is not None
        else (current or {}).get("reset_cents"),
        "paytable": f.proposal.paytable.to_dicts()
        if f.proposal.paytable is not None
        else (current or {}).get("paytable"),
    }
    on_link = [t for t in f.floor_tables if t.link_id == f.link_id]
    of_game = [t for t in f.floor_tables if t.game is f.game]
    notice_clause = notice_days(f.kind)[1]
    return {
        "document": "Submission to the Indiana Gaming Commission: progressive live gaming device",
        "submission_id": f.submission_id,
        "kind": str(f.kind),
        "kind_label": f.kind.label,
        "filed_by": f.filed_by,
        "filed_at_us": f.filed_at_us,
        "filed_at": _date(f.filed_at_us),
        "effective_at_us": f.effective_at_us,
        "effective_at": _date(f.effective_at_us),
        "takes_effect": "at the link's first jackpot reset on or after the effective date "
        f"({TAKES_EFFECT_CLAUSE})"
        if f.kind is not SubmissionKind.NEW_LINK
        else f"play begins once approved, on or after the effective date ({APPROVED_ONLY_CLAUSE})",
        "notice": {
            "required_days": f.notice_days,
            "clause": notice_clause,
            "executive_director_override": f.notice_override,
        },
        "link": {"link_id": f.link_id, "name": f.link_name, "game": str(f.game)},
        "current": current,
        "proposed": proposed,
        # 68 IAC 10-1-1.1(e)(1)-(4), for every game (table) on the link.
        "progressive_games": {
            "clause": SUBMISSION_CLAUSE,
            "games": [
                {
                    "game_type": t.game.label,
                    "table_id": t.table_id,
                    "table_name": t.name,
                    "location": t.location,
                    "rate_bp": proposed["rate_bp"],
                    "reset_cents": proposed["reset_cents"],
                    "denomination_cents": t.denomination_cents,
                    "seats": t.seats,
                }
                for t in on_link
            ],
        },
        # 68 IAC 10-6-2(b)(2)-(4), 10-7-2(b)(2)-(4), 10-8-2(b)(2)-(4): what the system knows.
        "rules_of_the_game": {
            "clause": RULES_OF_GAME_CLAUSE[f.game],
            "game": f.game.label,
            "number_of_tables": len(of_game),
            "tables": [
                {
                    "table_id": t.table_id,
                    "name": t.name,
                    "location": t.location,
                    "link_id": t.link_id,
                    "uses_this_progressive": t.link_id == f.link_id,
                }
                for t in of_game
            ],
            "tables_using_the_progressive": [t.table_id for t in on_link],
        },
    }


def packet_json(packet: Mapping[str, Any]) -> bytes:
    """The packet as it is kept: stable key order, so the same packet has the same SHA-256."""
    return (json.dumps(packet, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def _paytable_rows(lines: Sequence[Mapping[str, Any]] | None) -> list[list[str]]:
    rows = [["hand", "pays"]]
    for line in lines or ():
        if "percent_bp" in line:
            rows.append([str(line["hand"]), f"{format_bp(line['percent_bp'])} of the meter"])
        else:
            rows.append([str(line["hand"]), format_cents(line["fixed_cents"])])
    return rows


def packet_pdf(packet: Mapping[str, Any]) -> bytes:
    """The packet as a printed document, from the same mapping as the JSON."""

    def money(v: Any) -> str:
        return "-" if v is None else format_cents(v)

    def rate(v: Any) -> str:
        return "-" if v is None else format_bp(v)

    current = packet["current"] or {}
    proposed = packet["proposed"]
    notice = packet["notice"]
    games = packet["progressive_games"]
    rules = packet["rules_of_the_game"]
    sections: list[tuple[str, Sequence[str] | Sequence[Sequence[str]]]] = [
        (
            "Submission",
            [
                f"Submission {packet['submission_id']}: {packet['kind_label']}",
                f"Link {packet['link']['link_id']} ({packet['link']['name']}), "
                f"game {rules['game']}",
                f"Filed by {packet['filed_by']} at {packet['filed_at']}",
                f"Requested effective date: {packet['effective_at']}",
                f"Takes effect {packet['takes_effect']}",
                f"Notice: {notice['required_days']} days ({notice['clause']})"
                + (
                    f"; the executive director provided otherwise: "
                    f"{notice['executive_director_override']}"
                    if notice["executive_director_override"]
                    else ""
                ),
            ],
        ),
        (
            "Rate of progression and reset amount",
            [
                ["", "current", "proposed"],
                ["rate of progression", rate(current.get("rate_bp")), rate(proposed["rate_bp"])],
                [
                    "reset amount",
                    money(current.get("reset_cents")),
                    money(proposed["reset_cents"]),
                ],
            ],
        ),
        ("Paytable (proposed)", _paytable_rows(proposed["paytable"])),
        (
            f"Progressive games on the link ({games['clause']}(1)-(4))",
            [
                ["game type", "table", "location", "rate", "reset amount", "denomination"],
                *[
                    [
                        g["game_type"],
                        f"{g['table_id']} ({g['table_name']})",
                        g["location"] or "-",
                        rate(g["rate_bp"]),
                        money(g["reset_cents"]),
                        format_cents(g["denomination_cents"]),
                    ]
                    for g in games["games"]
                ],
            ],
        ),
        (
            f"Tables of {rules['game']} ({rules['clause']})",
            [
                ["table", "location", "link", "uses this progressive"],
                *[
                    [
                        f"{t['table_id']} ({t['name']})",
                        t["location"] or "-",
                        t["link_id"],
                        "yes" if t["uses_this_progressive"] else "no",
                    ]
                    for t in rules["tables"]
                ],
            ],
        ),
        (
            "Summary",
            [
                f"Number of {rules['game']} tables: {rules['number_of_tables']}",
                "Tables using this progressive: "
                + (", ".join(rules["tables_using_the_progressive"]) or "none"),
            ],
        ),
    ]
    return render_pdf(f"Progressive submission {packet['submission_id']}", sections)
