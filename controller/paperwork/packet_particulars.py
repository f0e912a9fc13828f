"""The particulars of a packet the commission reads after its summary: the progressive games
on the link (68 IAC 10-1-1.1(e)), the tables of the game (the rules of the game), the bound
on a jackpot's odds and the par sheets, as printed sections.

Pure: no I/O, no clock. Hands are written by name ("Royal flush"), never as stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from controller.core.money import format_cents
from controller.paperwork.packet_figures import hand_text, rate_text
from controller.paperwork.pool_packet import Section, pool_pdf_sections


def _money(v: Any) -> str:
    return "-" if v is None else format_cents(v)


def particulars(packet: Mapping[str, Any]) -> list[Section]:
    """Everything after the summary: tables, games, the par sheets."""
    games = packet["progressive_games"]
    rules = packet["rules_of_the_game"]
    sections: list[Section] = [
        (
            f"Progressive games on the link ({games['clause']}(1)-(4))",
            [
                ["game type", "table", "location", "rate", "reset amount", "denomination"],
                *[
                    [
                        g["game_type"],
                        f"{g['table_id']} ({g['table_name']})",
                        g["location"] or "-",
                        rate_text(g["rate_bp"]),
                        _money(g["reset_cents"]),
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
    par = packet["par_sheet"]
    bound = par["jackpot_odds_bound"]
    if bound is not None:
        sections.append(
            (
                "Odds of the jackpot",
                [
                    f"A jackpot line is refused when won at odds worse than {bound['odds']} "
                    f"({bound['clause']})."
                ],
            )
        )
    if "pool" in packet:
        sections += pool_pdf_sections(packet)
    else:
        sections += par_sheet_sections("current", par["current"])
        sections += par_sheet_sections("proposed", par["proposed"])
    return sections


def par_sheet_sections(name: str, sheet: Mapping[str, Any] | None) -> list[Section]:
    """A classic link's par sheet: what it is judged on, each line's odds, the return."""
    if sheet is None:
        return []
    about = [
        # Packets made before every game counted its own deals carry only five_card_hands.
        f"Judged on {sheet['judged_on']}: each hand's ways of the "
        f"{sheet.get('deals', sheet['five_card_hands']):,} "
        f"{sheet.get('deals_are', 'five-card hands of one deck')}.",
        f"Reset amount {format_cents(sheet['reset_cents'])}; meter "
        f"{format_cents(sheet['meter_cents'])}.",
    ]
    if sheet["assumption"]:
        about.append(f"Assumption: {sheet['assumption']}.")
    return [
        (f"Par sheet ({name} paytable)", about),
        (
            f"Odds of each line ({name})",
            [
                ["hand", "pays", "ways", "probability", "1 in N", "odds against"],
                *[
                    [
                        hand_text(str(line["hand"])),
                        line["pays"],
                        f"{line['ways']:,}",
                        line["probability"],
                        line["one_in"],
                        line["odds_against"],
                    ]
                    for line in sheet["lines"]
                ],
            ],
        ),
        (
            f"Expected return of the side bet ({name})",
            _return_rows(sheet["by_wager"]),
        ),
    ]


def _return_rows(by_wager: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    return [
        ["side bet", "at the reset amount", "at the meter", "break-even meter"],
        *[
            [
                w["wager"],
                w["return_at_reset"]["percent"],
                w["return_at_meter"]["percent"],
                "none (no line pays from the meter)"
                if w["break_even_meter"] is None
                else w["break_even_meter"]["amount"],
            ]
            for w in by_wager
        ],
    ]
