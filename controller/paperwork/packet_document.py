"""A submission's packet as the document the commission reads: on its page and in its PDF.

Built from the packet JSON as kept, so a packet filed long ago reads the same way. Each
section has a heading and one body: facts (label and value), a table (whose rows may be
marked as changed: current and proposed side by side), or paragraphs. Every figure is in
words: rates "82.50 %", amounts "$10,000.00", hands by name, dates in the property's time
zone ("23 Nov 2026"); no stored name of a field or of a hand is shown.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import zip_longest
from typing import Any

from controller.core.odds import percent_text
from controller.paperwork.packet_figures import (
    NONE,
    NOT_PAID,
    days_text,
    hand_text,
    level_names,
    level_text,
    money_text,
    paytable_pays,
    rate_text,
)
from controller.paperwork.packet_particulars import particulars
from controller.paperwork.pdf import Letterhead
from controller.paperwork.pool_packet import Section
from controller.rules.filing import DAY_US

Doc = dict[str, Any]

MAIN = "main"
PARTICULARS = "particulars"
CHANGED = "changed"
TERMS = "terms"
PAYTABLE = "paytable"
DECISION = "decision"
DECISION_HEADING = "Decision of the commission"


@dataclass(frozen=True, slots=True, kw_only=True)
class Review:
    """Where a submission stands: ``status`` filed, approved or rejected."""

    status: str
    reviewed_by: str | None = None
    reviewed_at_us: int | None = None
    reason: str | None = None
    applied_at_us: int | None = None


def _facts(key: str, heading: str, facts: Sequence[tuple[str, str]]) -> Doc:
    return {
        "key": key,
        "heading": heading,
        "part": MAIN,
        "kind": "facts",
        "facts": [{"label": label, "value": value} for label, value in facts],
    }


def _compare(
    key: str, heading: str, columns: Sequence[str], rows: Sequence[Sequence[str]], *, new: bool
) -> Doc:
    """Current and proposed side by side (cells 1 and 2), the rows that differ marked; a new
    link has only the proposed column."""
    out = []
    for cells in rows:
        changed = not new and cells[1] != cells[2]
        out.append({"cells": [cells[0], *cells[2:]] if new else list(cells), "changed": changed})
    cols = [columns[0], *columns[2:]] if new else list(columns)
    return {
        "key": key,
        "heading": heading,
        "part": MAIN,
        "kind": "table",
        "compare": not new,
        "columns": cols,
        "rows": out,
    }


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


# --------------------------------------------------------------------------------------------
# The sections


def _submission(packet: Mapping[str, Any], lh: Letterhead) -> Doc:
    link = packet["link"]
    games = [g["label"] for g in packet.get("games", ())] or [packet["rules_of_the_game"]["game"]]
    return _facts(
        "submission",
        "Submission",
        [
            ("Submission", str(packet["submission_id"])),
            ("Kind", _capital(packet["kind_label"])),
            (
                "Link",
                link["link_id"]
                if link["name"] == link["link_id"]
                else f"{link['name']} ({link['link_id']})",
            ),
            ("Game" if len(games) == 1 else "Games", ", ".join(games)),
            ("Filed by", str(packet["filed_by"])),
            ("Filed at", lh.when(packet["filed_at_us"])),
        ],
    )


def notice_facts(packet: Mapping[str, Any], lh: Letterhead) -> list[tuple[str, str]]:
    """The notice period of 68 IAC 10-1-3 / 10-1-4: filed on, days required, the earliest
    effective date, the date asked for, the days of notice given, the executive director's
    waiver of an amendment's notice (or an override of a submission filed with one)."""
    notice = packet["notice"]
    filed, effective = packet["filed_at_us"], packet["effective_at_us"]
    days, override = notice["required_days"], notice["executive_director_override"]
    not_given = notice.get("demonstration")
    waiver = notice.get("waiver")
    earliest = filed if override or not_given or waiver else filed + days * DAY_US
    facts = [
        ("Filed on", lh.day(filed)),
        ("Notice required", f"{days_text(days)} ({notice['clause']})"),
    ]
    if waiver:
        by = waiver.get("authority") or "the executive director"
        facts += [
            (
                "Notice waived",
                f"{by} provided otherwise, in writing ({waiver['clause']})",
            ),
            ("Waiver given by", str(waiver["given_by"])),
            ("Waiver reference", str(waiver["reference"])),
            ("Waiver dated", str(waiver["given_on"])),
            ("Waiver document SHA-256", str(waiver["document_sha256"])),
        ]
    if override:
        facts.append(("Notice override", f"the executive director provided otherwise: {override}"))
    if not_given:
        facts.append(("Notice not given", _capital(not_given)))
    given = max(0, effective - filed) // DAY_US
    facts += [
        ("Earliest effective date", lh.day(earliest)),
        ("Requested effective date", lh.day(effective)),
        ("Notice given", days_text(given)),
        ("Takes effect", _capital(packet["takes_effect"])),
    ]
    return facts


def _pool_rate(levels: Sequence[Mapping[str, Any]]) -> int:
    return sum(int(lv["rate_bp"]) + int(lv.get("reserve_bp", 0)) for lv in levels)


def _terms(packet: Mapping[str, Any]) -> list[Doc]:
    """The rate of progression and the reset amount, or every level, current and proposed."""
    cur, prop = packet["current"], packet["proposed"]
    new = cur is None
    pool = packet.get("pool")
    if pool is not None and pool["fixed_pay"]:
        return [
            {
                "key": TERMS,
                "heading": "Rate of progression",
                "part": MAIN,
                "kind": "text",
                "paragraphs": [f"Fixed-pay link ({pool['clause']}): the {pool['explanation']}."],
            }
        ]
    c = cur or {}
    if pool is None:
        rows = [
            ["Rate of progression", rate_text(c.get("rate_bp")), rate_text(prop["rate_bp"])],
            ["Reset amount", money_text(c.get("reset_cents")), money_text(prop["reset_cents"])],
        ]
        heading = "Rate of progression and reset amount"
    else:
        cur_levels, prop_levels = c.get("levels") or [], prop["levels"]
        rows = [
            [
                "Rate of progression (every level's shown and hidden share)",
                rate_text(_pool_rate(cur_levels)) if cur_levels else rate_text(c.get("rate_bp")),
                rate_text(_pool_rate(prop_levels)),
            ]
        ]
        for i, (was, will) in enumerate(zip_longest(cur_levels, prop_levels)):
            name = (will or was)["name"]
            rows.append([f"Level {i + 1} ({name})", level_text(was), level_text(will)])
        heading = "Levels and rate of progression"
    return [_compare(TERMS, heading, ["", "Current", "Proposed"], rows, new=new)]


def _sheets(packet: Mapping[str, Any], which: str) -> dict[str, Mapping[str, Any]]:
    """The par sheets (current or proposed) by game, as stored (``caribbean_stud``)."""
    par = packet["par_sheet"]
    by_game = par.get("by_game")
    if by_game and by_game.get(which):
        return dict(by_game[which])
    sheet = par.get(which)
    return {} if sheet is None else {packet["link"]["game"]: sheet}


def _paytables(packet: Mapping[str, Any]) -> list[Doc]:
    """Each game's paytable line by line, hands by name, current and proposed, with the
    chance of each hand from the par sheet."""
    cur, prop = packet["current"], packet["proposed"]
    new = cur is None
    c = cur or {}
    link_game = packet["link"]["game"]
    if "games" in packet:
        games = [(g["game"], g["label"], g["paytable"]) for g in packet["games"]]
    else:
        games = [(link_game, packet["rules_of_the_game"]["game"], prop["paytable"])]
    cur_names, prop_names = level_names(c.get("levels")), level_names(prop.get("levels"))
    chances: dict[str, dict[str, str]] = {}
    for which in ("current", "proposed"):
        for game, sheet in _sheets(packet, which).items():
            for line in sheet["lines"]:
                chances.setdefault(game, {})[str(line["hand"])] = (
                    f"{line['one_in']} ({line['odds_against']} against)"
                )
    sections = []
    for game, label, lines in games:
        was_lines = c.get("paytable") if game == link_game else c.get("paytables", {}).get(game)
        was = paytable_pays(was_lines, cur_names)
        will = paytable_pays(lines, prop_names)
        hands = [*will, *(h for h in was if h not in will)]
        rows = [
            [
                hand_text(h),
                was.get(h, NOT_PAID),
                will.get(h, NOT_PAID),
                chances.get(game, {}).get(h, "-"),
            ]
            for h in hands
        ]
        sections.append(
            _compare(
                PAYTABLE,
                f"Paytable of {label}",
                ["Hand", "Current", "Proposed", "Chance of the hand"],
                rows,
                new=new,
            )
        )
    return sections


def _percent(ratio: Mapping[str, str]) -> str:
    """A par sheet's figure (``{"exact": "n/d", "percent": "39.16%"}``) as a rate is
    written: "39.16 %"."""
    return ratio["percent"].replace("%", " %")


def _hold(exact: str) -> str:
    """What the house keeps of each unit wagered: 1 - the return."""
    keep = 1 - Fraction(exact)
    text = percent_text(keep) if keep >= 0 else f"-{percent_text(-keep)}"
    return text.replace("%", " %")


def _long_run(figure: Mapping[str, Any]) -> str:
    """``92.10 % at a rate of 82.50 %``."""
    return f"{_percent(figure)} at a rate of {rate_text(figure['rate_bp'])}"


def _returns(packet: Mapping[str, Any]) -> list[Doc]:
    """The return to players and the hold of the side bet, per game and side bet."""
    new = packet["current"] is None
    was, will = _sheets(packet, "current"), _sheets(packet, "proposed")
    sections = []
    for game, sheet in will.items():
        before = {w["wager_cents"]: w for w in (was.get(game) or {}).get("by_wager", ())}
        rows = []
        for w in sheet["by_wager"]:
            b = before.get(w["wager_cents"])
            at = f"{w['wager']} side bet"
            rows += [
                [
                    f"{at}: return to players at the reset amount",
                    _percent(b["return_at_reset"]) if b else NONE,
                    _percent(w["return_at_reset"]),
                ],
                [
                    f"{at}: hold at the reset amount",
                    _hold(b["return_at_reset"]["exact"]) if b else NONE,
                    _hold(w["return_at_reset"]["exact"]),
                ],
                [
                    f"{at}: return to players at the meter when filed",
                    _percent(b["return_at_meter"]) if b else NONE,
                    _percent(w["return_at_meter"]),
                ],
            ]
            # What the rate of progression returns in the long run (68 IAC 10-1-1.1(b)), at
            # each rate; a packet filed before it was computed has none.
            if "long_run_return" in w:
                was_long = b.get("long_run_return") if b else None
                rows.append(
                    [
                        f"{at}: long-run return to players at the rate of progression",
                        _long_run(was_long) if was_long else NONE,
                        _long_run(w["long_run_return"]),
                    ]
                )
        sections.append(
            _compare(
                "returns",
                f"Return and hold of the side bet ({sheet['game']})",
                ["", "Current", "Proposed"],
                rows,
                new=new,
            )
        )
    return sections


def _decision(packet: Mapping[str, Any], review: Review | None, lh: Letterhead) -> Doc:
    """The commission's decision; on the printed packet, filed before any decision, the
    space for it."""
    if review is None:
        return {
            "key": DECISION,
            "heading": DECISION_HEADING,
            "part": MAIN,
            "kind": "text",
            "paragraphs": [
                "Decision:   approved   /   rejected   (strike out one)",
                "Reason: ____________________________________________________________",
            ],
        }
    if review.status == "filed":
        return _facts(
            DECISION, DECISION_HEADING, [("Decision", "awaiting the commission's review")]
        )
    facts = [
        ("Decision", _capital(review.status)),
        ("By", review.reviewed_by or NONE),
        ("On", NONE if review.reviewed_at_us is None else lh.when(review.reviewed_at_us)),
        ("Reason", review.reason or "none given"),
    ]
    if review.status == "approved":
        if review.applied_at_us is not None:
            took = lh.when(review.applied_at_us)
        elif packet["kind"] == "new_link":
            took = f"play begins on or after {lh.day(packet['effective_at_us'])}"
        else:
            took = (
                "waits for the link's first jackpot reset on or after "
                f"{lh.day(packet['effective_at_us'])}"
            )
        facts.append(("Took effect" if review.applied_at_us is not None else "Takes effect", took))
    return _facts(DECISION, DECISION_HEADING, facts)


def _as_document(section: Section) -> Doc:
    heading, body = section
    if body and not isinstance(body[0], str):
        rows = [list(r) for r in body]
        return {
            "key": PARTICULARS,
            "heading": heading,
            "part": PARTICULARS,
            "kind": "table",
            "compare": False,
            "columns": rows[0],
            "rows": [{"cells": r, "changed": False} for r in rows[1:]],
        }
    return {
        "key": PARTICULARS,
        "heading": heading,
        "part": PARTICULARS,
        "kind": "text",
        "paragraphs": list(body),
    }


# --------------------------------------------------------------------------------------------
# The document, its summary, its printed sections


def packet_document(
    packet: Mapping[str, Any], *, letterhead: Letterhead, review: Review | None = None
) -> Doc:
    """The packet as a document: its summary (submission, notice period, current and
    proposed, paytables, return and hold, the decision) then its particulars (tables, rules
    of the game, par sheets)."""
    lh = letterhead
    sections = [
        _submission(packet, lh),
        _facts("notice", "Notice period", notice_facts(packet, lh)),
        *_terms(packet),
        *_paytables(packet),
        *_returns(packet),
        _decision(packet, review, lh),
        *(_as_document(s) for s in particulars(packet)),
    ]
    law = packet.get("jurisdiction")
    return {
        "title": f"Progressive submission {packet['submission_id']}: {packet['kind_label']}",
        "letterhead": lh.line(),
        "time_zone": lh.zone.key,
        # As filed; a packet from before they were recorded: the letterhead's (the
        # installation's jurisdiction now) and none.
        "jurisdiction": law["title"] if law else lh.jurisdiction,
        "demonstration": packet.get("demonstration"),
        "notice_not_given": packet["notice"].get("demonstration"),
        "sections": sections,
    }


def change_summary(document: Mapping[str, Any]) -> list[dict[str, str | None]]:
    """What a submission changes, for a list: each changed line of its terms and paytables,
    current and proposed; for a new link, its terms as proposed (current None) and the size
    of each paytable."""
    out: list[dict[str, str | None]] = []
    for s in document["sections"]:
        if s["key"] not in (TERMS, PAYTABLE) or s["kind"] != "table":
            continue
        if s["compare"]:
            out += [
                {"label": r["cells"][0], "current": r["cells"][1], "proposed": r["cells"][2]}
                for r in s["rows"]
                if r["changed"]
            ]
        elif s["key"] == TERMS:
            out += [
                {"label": r["cells"][0], "current": None, "proposed": r["cells"][1]}
                for r in s["rows"]
            ]
        else:
            count = len(s["rows"])
            out.append({"label": s["heading"], "current": None, "proposed": f"{count} lines"})
    return out


def pdf_sections(document: Mapping[str, Any]) -> list[Section]:
    """The document as ``render_pdf`` prints it: facts as "label: value" lines, a changed
    row marked in its own column (a mark that survives a black-and-white copy), the decision
    last."""
    out: list[Section] = []
    # On paper the decision comes last, just above the lines where it is signed.
    last = [s for s in document["sections"] if s["key"] == DECISION]
    for s in [*(s for s in document["sections"] if s["key"] != DECISION), *last]:
        if s["kind"] == "facts":
            out.append((s["heading"], [f"{f['label']}: {f['value']}" for f in s["facts"]]))
        elif s["kind"] == "text":
            out.append((s["heading"], list(s["paragraphs"])))
        elif s["compare"]:
            rows = [[*s["columns"], ""]]
            rows += [[*r["cells"], CHANGED if r["changed"] else ""] for r in s["rows"]]
            out.append((s["heading"], rows))
        else:
            out.append((s["heading"], [s["columns"], *(r["cells"] for r in s["rows"])]))
    return out
