"""Changes to a link go through the commission: the packet the commission reads.

Pure: no I/O, no clock. The rules a submission obeys are in ``controller.rules.filing``; the
filing desk (``controller.paperwork.submissions``) reads the database and calls both.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from controller.core.games import Game
from controller.core.money import format_bp, format_cents
from controller.paperwork.pdf import render_pdf
from controller.rules.filing import (
    APPROVED_ONLY_CLAUSE,
    RULES_OF_GAME_CLAUSE,
    SUBMISSION_CLAUSE,
    TAKES_EFFECT_CLAUSE,
    Proposal,
    SubmissionKind,
    date_text,
    notice_days,
)


class SubmissionStatus(enum.StrEnum):
    FILED = "filed"
    APPROVED = "approved"
    REJECTED = "rejected"


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
        "filed_at": date_text(f.filed_at_us),
        "effective_at_us": f.effective_at_us,
        "effective_at": date_text(f.effective_at_us),
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
