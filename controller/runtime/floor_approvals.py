"""A floor file's terms against the database's: what the commission approved wins.

A floor file gives each link its starting terms (rate, reset amount, levels, paytables). Once
the link exists they change only through a submission a commission agent approved, applied at
a jackpot reset (68 IAC 10-1-1.1(d)-(e)), never by editing the file. So at a restart the
database's approved terms are kept and each way the file differs from them is reported with
the filing that made it so; a file asking for a value that no approved filing ever gave the
link is refused, as a change no one approved.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from controller.core.games import Game, Paytable, PaytableError, make_paytable
from controller.core.money import format_bp, format_cents
from controller.core.reducer import LinkState
from controller.core.reducer.levels import LevelConfig, levels_from_dicts
from controller.paperwork.governance import SubmissionStatus
from controller.refusal import Conflict
from controller.rules.filing import SubmissionKind, date_text
from controller.rules.progression import RATE_GOVERNED_CLAUSE
from controller.runtime.config_entries import LinkEntry
from controller.storage.handles import Database
from controller.storage.papers.submissions import list_submissions
from controller.storage.unit_of_work import connected

__all__ = [
    "Approval",
    "FloorMismatch",
    "approvals_by_link",
    "changes_in_force",
    "reconcile",
]

# A term's name: "rate", "reset", "levels", or "paytable:<game>".
Term = str


class FloorMismatch(Conflict):
    """The configuration file and the database disagree about a link."""


@dataclass(frozen=True, slots=True)
class Approval:
    """An approved filing of a link and the terms it gave: the new link's own, or a change."""

    submission_id: str
    kind: SubmissionKind
    reviewed_by: str
    reviewed_at_us: int
    applied_at_us: int | None  # None: armed, waiting for the link's next jackpot reset
    terms: Mapping[Term, Any]

    def cited(self) -> str:
        return (
            f"approved on {date_text(self.reviewed_at_us)} by {self.reviewed_by} "
            f"(submission {self.submission_id})"
        )


async def approvals_by_link(engine: Database) -> dict[str, list[Approval]]:
    """Every approved filing, by link, oldest first."""
    async with connected(engine) as conn:
        rows = await list_submissions(conn, status=str(SubmissionStatus.APPROVED))
    out: dict[str, list[Approval]] = {}
    for row in reversed(rows):  # listed newest first
        if row.reviewed_by is None or row.reviewed_at_us is None:
            continue
        out.setdefault(row.link_id, []).append(
            Approval(
                submission_id=row.submission_id,
                kind=SubmissionKind(row.kind),
                reviewed_by=row.reviewed_by,
                reviewed_at_us=row.reviewed_at_us,
                applied_at_us=row.applied_at_us,
                terms=_proposal_terms(json.loads(row.proposal)),
            )
        )
    return out


def _proposal_terms(proposal: Mapping[str, Any]) -> dict[Term, Any]:
    """The terms a filed proposal gives; a paytable without its game is the link's own."""
    out: dict[Term, Any] = {}
    if "rate_bp" in proposal:
        out["rate"] = proposal["rate_bp"]
    if "reset_cents" in proposal:
        out["reset"] = proposal["reset_cents"]
    if "levels" in proposal:
        out["levels"] = levels_from_dicts(proposal["levels"])
    tables: dict[str, Any] = dict(proposal.get("paytables") or {})
    if "paytable" in proposal:
        tables[proposal.get("game", "")] = proposal["paytable"]
    for game, lines in tables.items():
        try:
            g = Game(game) if game else None
            out[_paytable_term(g)] = make_paytable(g, lines) if g is not None else lines
        except (ValueError, PaytableError):
            continue  # a paytable the rules of today refuse is no value a file can ask for
    return out


def _paytable_term(game: Game | None) -> Term:
    return f"paytable:{game or ''}"


def _of_link(approvals: Sequence[Approval], game: Game) -> list[Approval]:
    """The approvals with a paytable filed without its game read as the link's own game's."""
    out = []
    for a in approvals:
        terms = dict(a.terms)
        lines = terms.pop(_paytable_term(None), None)
        if lines is not None and _paytable_term(game) not in terms:
            with contextlib.suppress(PaytableError):  # one the rules of today refuse
                terms[_paytable_term(game)] = make_paytable(game, lines)
        out.append(replace(a, terms=terms))
    return out


def _state_terms(state: LinkState, *, shape: bool = False) -> dict[Term, Any]:
    """What the link plays now, by term; with ``shape`` only the terms of its kind (a link
    of levels' levels, a classic link's rate and reset amount)."""
    out: dict[Term, Any] = {}
    if not state.fixed_pay:
        if not shape or len(state.levels) > 1:
            out["levels"] = state.level_configs
        if not shape or len(state.levels) == 1:
            out["rate"], out["reset"] = state.rate_bp, state.reset_cents
    for g in state.games:
        out[_paytable_term(g)] = state.paytable_for(g)
    return out


def _file_terms(link: LinkEntry, state: LinkState) -> dict[Term, Any]:
    """What the file asks of a link the database has: the terms it writes out."""
    out: dict[Term, Any] = {}
    if link.levels:
        out["levels"] = link.levels
    elif link.levels is None and not state.fixed_pay:
        out["rate"], out["reset"] = link.rate_bp, link.reset_cents
    if link.paytable_given:
        # The file's paytable lines; a game it gives none for plays its default, unasked.
        for g, pt in {link.game: link.paytable, **link.paytables}.items():
            if pt is not None:
                out[_paytable_term(g)] = pt
    return out


def _value(term: Term, value: Any) -> str:
    """A rate or reset amount as a floor file writes it."""
    return format_bp(value) if term == "rate" else format_cents(value)


def _shown(term: Term, value: Any) -> str:
    if term == "rate":
        return f"rate {_value(term, value)}"
    if term == "reset":
        return f"reset amount {_value(term, value)}"
    if term == "levels":
        levels: Sequence[LevelConfig] = value
        return "levels " + ", ".join(f"{lv.name} {format_bp(lv.rate_bp)}" for lv in levels)
    game: Paytable = value
    return f"paytable of {game.game.label}"


def _where_in_file(term: Term) -> str:
    return "[[link.level]]" if term == "levels" else "[[link.paytable]]"


def _source(term: Term, value: Any, approvals: Sequence[Approval]) -> Approval | None:
    """The approved filing that gave the link this value of the term, latest applied first."""
    applied = [a for a in approvals if a.applied_at_us is not None]
    for a in sorted(applied, key=lambda a: a.applied_at_us or 0, reverse=True):
        if a.terms.get(term) == value:
            return a
    return None


def reconcile(link: LinkEntry, state: LinkState, approvals: Sequence[Approval]) -> list[str]:
    """How the file's terms differ from the database's, the database's kept: one line each,
    citing the approval behind the database's value. A value of the file that no approved
    filing ever gave the link is refused (``FloorMismatch``) with what to do."""
    approvals = _of_link(approvals, state.game)
    now = _state_terms(state)
    notes: list[str] = []
    for term, asked in _file_terms(link, state).items():
        current = now.get(term)
        if asked == current:
            continue
        where = f"link {link.link_id}"
        source = _source(term, current, approvals)
        behind = source.cited() if source is not None else "as the database holds it"
        if current is None or not any(a.terms.get(term) == asked for a in approvals):
            fix = (
                f"set the file's {term} back to {_value(term, current)}"
                if term in ("rate", "reset") and current is not None
                else f"set the file's {_where_in_file(term)} back to the approved terms"
            )
            raise FloorMismatch(
                f"{where}: the file's {_shown(term, asked)} was never approved; the link plays "
                f"{_shown(term, current) if current is not None else 'otherwise'} ({behind}). "
                f"File the change on /supervisor for a commission agent's approval, or {fix} "
                f"(`progressive links show {link.link_id}`; {RATE_GOVERNED_CLAUSE})"
            )
        armed = next(
            (
                a
                for a in approvals
                if a.applied_at_us is None
                and a.kind is not SubmissionKind.NEW_LINK
                and state.armed is not None
                and state.armed.submission_id == a.submission_id
                and a.terms.get(term) == asked
            ),
            None,
        )
        if armed is not None:
            notes.append(
                f"{where}: the file's {_shown(term, asked)} was {armed.cited()} and takes effect "
                f"at the link's next jackpot reset; until then {_shown(term, current)} "
                f"({behind})"
            )
        else:
            notes.append(
                f"{where}: {_shown(term, current)} from the database, not the file's "
                f"{_shown(term, asked)}: {behind}"
            )
    return notes


def changes_in_force(state: LinkState, approvals: Sequence[Approval]) -> list[str]:
    """Each term the link plays by an approved change rather than as it was opened, with the
    approval: what ``links list`` and ``links show`` say of it."""
    approvals = _of_link(approvals, state.game)
    out: list[str] = []
    for term, value in _state_terms(state, shape=True).items():
        source = _source(term, value, approvals)
        if source is not None and source.kind is not SubmissionKind.NEW_LINK:
            out.append(f"{_shown(term, value)} {source.cited()}")
    return out
