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
from zoneinfo import ZoneInfo

from controller.core.games import Game, make_paytable
from controller.core.odds import par_sheet_dict
from controller.paperwork.packet_document import packet_document, pdf_sections
from controller.paperwork.pdf import Letterhead, render_pdf
from controller.paperwork.pool_packet import (
    games_section,
    pool_par_sheets,
    pool_section,
    proposed_pool,
)
from controller.rules.filing import (
    APPROVED_ONLY_CLAUSE,
    RULES_OF_GAME_CLAUSE,
    SUBMISSION_CLAUSE,
    TAKES_EFFECT_CLAUSE,
    NoticeWaiver,
    Proposal,
    SubmissionKind,
    date_text,
    notice_days,
)
from controller.rules.jurisdictions import Jurisdiction
from controller.rules.odds import OddsBound


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
    # The link's meter when filed (the par sheet's "current meter"); None: the reset amount.
    meter_cents: int | None = None
    # The bound on a jackpot's odds the submission was checked against (x to 1).
    jackpot_odds_bound: OddsBound | None = None
    # A link of levels: each level's meter as shown when filed (the par sheet's meters).
    level_meters_cents: Sequence[int] | None = None
    # The game each table of the link deals (a mixed-game link); None: the link's game.
    table_games: Mapping[str, Game] | None = None
    # The property filing it: its name and licence head the printed packet, its times are
    # written in its zone; None: a packet as before the property was recorded.
    letterhead: Letterhead | None = None
    # The jurisdiction it is filed under: the regulator it goes to, every page of the packet
    # states it, and it says how the packet reads the rate of progression of a pool (under
    # Indiana, the shown shares).
    law: Jurisdiction
    # Filed in demonstration mode: what notice was not given (``filing.notice_not_given``).
    notice_not_given: str | None = None
    # 68 IAC 10-1-4(1): the executive director's written direction waiving this amendment's
    # notice period (``filing.NoticeWaiver``); None: filed with its notice.
    waiver: NoticeWaiver | None = None
    # Demonstration mode as the packet states it on every page (``rules.statement``): filed
    # by an installation in it, or of a link opened in it; None: neither.
    demonstration: str | None = None

    @property
    def pool(self) -> bool:
        """A link of levels, a mixed-game link or a fixed-pay link: the packet says so. A
        classic link's packet is exactly as before levels."""
        return self.proposal.levels is not None or (
            self.current is not None and "levels" in self.current
        )


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
    notice_clause = notice_days(f.kind, f.law)[1]
    if f.pool:
        proposed = proposed_pool(f.kind, f.game, current, f.proposal.to_dict(), f.law)
    packet: dict[str, Any] = {
        "document": f"Submission to the {f.law.regulator}: progressive live gaming device",
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
        "par_sheet": _par_sheets(f, current, proposed, on_link),
    }
    if f.notice_not_given is not None:
        packet["notice"]["demonstration"] = f.notice_not_given
    if f.waiver is not None:
        packet["notice"]["waiver"] = {
            **f.waiver.to_dict(),
            "authority": f.law.waiver.amendment,
            "clause": f.law.waiver.clause,
        }
    packet["jurisdiction"] = {
        "key": f.law.key,
        "name": f.law.name,
        "code": f.law.code,
        "title": f.law.title,
        "regulator": f.law.regulator,
    }
    if f.demonstration is not None:
        packet["demonstration"] = f.demonstration
    if f.letterhead is not None:
        packet["property"] = {
            "name": f.letterhead.property_name,
            "licence": f.letterhead.licence,
            "time_zone": f.letterhead.zone.key,
        }
    if f.pool:
        _add_pool(packet, f, current, proposed, on_link)
    return packet


def _add_pool(
    packet: dict[str, Any],
    f: PacketFacts,
    current: Mapping[str, Any] | None,
    proposed: Mapping[str, Any],
    on_link: Sequence[TableFacts],
) -> None:
    """A link of levels, a mixed-game link or a fixed-pay link: its pool, its games and every
    game's par sheet (``pool_packet``)."""
    games_of = {t.table_id: t.game for t in on_link}
    games_of.update(f.table_games or {})
    wagers: dict[Game, list[int]] = {}
    for tid, g in games_of.items():
        denomination = next(t.denomination_cents for t in on_link if t.table_id == tid)
        wagers.setdefault(g, []).append(g.fixed_wager_cents or denomination)
    for g in (f.game, *(Game(x) for x in proposed["paytables"])):
        if g.fixed_wager_cents is not None:
            wagers[g] = [g.fixed_wager_cents]
    packet["pool"] = pool_section(proposed["levels"], f.level_meters_cents, f.law)
    packet["games"] = games_section(f.game, proposed, games_of)
    for g in packet["progressive_games"]["games"]:
        g["game_type"] = games_of.get(g["table_id"], f.game).label
    cur, prop, by_game = pool_par_sheets(
        f.game, current, proposed, wagers=wagers, meters_cents=f.level_meters_cents
    )
    packet["par_sheet"]["current"] = cur
    packet["par_sheet"]["proposed"] = prop
    if by_game is not None:
        packet["par_sheet"]["by_game"] = by_game


def _par_sheets(
    f: PacketFacts,
    current: Mapping[str, Any] | None,
    proposed: Mapping[str, Any],
    on_link: Sequence[TableFacts],
) -> dict[str, Any]:
    """The par sheet of the current and of the proposed paytable (``controller.core.odds``),
    for a side bet of each denomination the link's tables take ($1 when it has none yet)."""
    fixed = f.game.fixed_wager_cents
    wagers = [fixed] if fixed is not None else [t.denomination_cents for t in on_link] or [100]

    def sheet(tables: Mapping[str, Any]) -> dict[str, Any]:
        reset = tables["reset_cents"]
        return par_sheet_dict(
            make_paytable(f.game, tables["paytable"]),
            wagers_cents=wagers,
            reset_cents=reset,
            meter_cents=reset if f.meter_cents is None else f.meter_cents,
            rate_bp=tables.get("rate_bp"),
        )

    bound = f.jackpot_odds_bound
    return {
        "jackpot_odds_bound": None
        if bound is None
        else {"odds": bound.text, "to_one": bound.to_one, "clause": bound.clause},
        "current": None if current is None else sheet(current),
        "proposed": sheet(proposed),
    }


def packet_json(packet: Mapping[str, Any]) -> bytes:
    """The packet as it is kept: stable key order, so the same packet has the same SHA-256."""
    return (json.dumps(packet, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def packet_letterhead(packet: Mapping[str, Any]) -> Letterhead:
    """The letterhead a packet was filed under (its ``property``, its ``jurisdiction`` and
    its ``demonstration``); a packet filed before they were recorded: no name, no licence,
    no jurisdiction line, times in UTC, as it printed then."""
    prop = packet.get("property")
    law = (packet.get("jurisdiction") or {}).get("title")
    demonstration = packet.get("demonstration")
    if not prop:
        return Letterhead(jurisdiction=law, demonstration=demonstration)
    return Letterhead(
        property_name=prop.get("name"),
        licence=prop.get("licence"),
        zone=ZoneInfo(prop.get("time_zone") or "UTC"),
        jurisdiction=law,
        demonstration=demonstration,
    )


# The signatures the printed packet asks for: the one who filed it and the one who reviews it
# (68 IAC 10-1-3(c)(2), 10-1-4(2)).
PACKET_SIGNATURES = ("Filed by", "Reviewed by (commission agent)")


def packet_pdf(packet: Mapping[str, Any]) -> bytes:
    """The packet as a printed document (``packet_document``), from the same mapping as the
    JSON, under the letterhead it records: the same packet always prints the same bytes."""
    letterhead = packet_letterhead(packet)
    document = packet_document(packet, letterhead=letterhead)
    return render_pdf(
        document["title"],
        pdf_sections(document),
        letterhead=letterhead,
        signatures=PACKET_SIGNATURES,
    )
