"""What a packet adds for a link of levels, a mixed-game link or a fixed-pay link: its levels
(shares, resets, limits, above-limit, mystery ranges), its games and their paytables (with
the levels they pay from and their envy amounts), the par sheet of every game, and how the
rate of progression and its lock read on such a link. A classic link's packet has none of
this (``governance.build_packet`` leaves it exactly as before levels).

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from controller.core.games import Game, make_paytable
from controller.core.money import displayed_cents, format_bp, format_cents
from controller.core.pool_odds import pool_par_sheet_dict
from controller.core.reducer import LinkState
from controller.core.reducer.levels import (
    LevelConfig,
    is_single_meter,
    level_key,
    levels_from_dicts,
)
from controller.paperwork.packet_figures import above_limit_text, hand_text
from controller.rules.filing import RULES_OF_GAME_CLAUSE, Proposal, SubmissionKind
from controller.rules.jurisdictions import Jurisdiction
from controller.rules.pools import FIXED_PAY_CLAUSE, rate_of_progression_bp, rate_reading
from controller.rules.progression import LEVEL_RATE_LOCK

Section = tuple[str, Sequence[str] | Sequence[Sequence[str]]]

FIXED_PAY_TEXT = "fixed-pay link: no meter"


def proposed_pool(
    kind: SubmissionKind,
    game: Game,
    current: Mapping[str, Any] | None,
    proposal_dict: Mapping[str, Any],
    law: Jurisdiction,
) -> dict[str, Any]:
    """The pool as it would stand: levels, the link's own paytable and the other games', and
    its rate of progression as ``law`` reads it."""
    cur = current or {}
    levels = proposal_dict.get("levels", cur.get("levels", []))
    paytables = dict(cur.get("paytables", {}))
    paytables.update(proposal_dict.get("paytables", {}))
    paytable = cur.get("paytable")
    if "paytable" in proposal_dict:
        named = proposal_dict.get("game", str(game))
        if named == str(game):
            paytable = proposal_dict["paytable"]
        else:
            paytables[named] = proposal_dict["paytable"]
    configs = levels_from_dicts(levels)
    return {
        "rate_bp": rate_of_progression_bp(configs, counts_hidden=law.allows.hidden_share_in_rate),
        "reset_cents": configs[0].reset_cents if configs else 0,
        "paytable": paytable,
        "levels": levels,
        "paytables": paytables,
    }


def pool_section(
    levels: Sequence[Mapping[str, Any]],
    meters_cents: Sequence[int] | None,
    law: Jurisdiction,
) -> dict[str, Any]:
    """The pool the packet proposes: each level, its rate of progression as ``law`` reads it
    (under Indiana the shown shares), its lock."""
    configs = levels_from_dicts(levels)
    if not configs:
        return {
            "fixed_pay": True,
            "meter": FIXED_PAY_TEXT,
            "clause": FIXED_PAY_CLAUSE,
            "explanation": "the side bet pays only the fixed amounts of its paytable, at the "
            "table, by the house: no meter, no rate of progression, no reset amount; its rate "
            "can never change: it has none",
            "levels": [],
        }
    shown = sum(cfg.rate_bp for cfg in configs)
    hidden = sum(cfg.reserve_bp for cfg in configs)
    meters = list(meters_cents) if meters_cents else [cfg.reset_cents for cfg in configs]
    counted = law.allows.hidden_share_in_rate
    rate = shown + hidden if counted else shown
    note, clause = rate_reading(law)
    return {
        "fixed_pay": False,
        "rate_of_progression": {
            "rate_bp": rate,
            "rate": format_bp(rate),
            "shown_bp": shown,
            "hidden_bp": hidden,
            "hidden_counted": counted,
            "clause": clause,
            "note": note,
        },
        "rate_lock": {
            "clause": law.clauses.rate_lock,
            "note": LEVEL_RATE_LOCK,
        },
        "levels": [
            _level_row(i, cfg, meters[i] if i < len(meters) else cfg.reset_cents)
            for i, cfg in enumerate(configs)
        ],
    }


def _level_row(i: int, cfg: LevelConfig, meter_cents: int) -> dict[str, Any]:
    m = cfg.mystery
    return {
        "level": i + 1,
        "key": level_key(i),
        "name": cfg.name,
        "reset_cents": cfg.reset_cents,
        "reset": format_cents(cfg.reset_cents),
        "shown_share_bp": cfg.rate_bp,
        "shown_share": format_bp(cfg.rate_bp),
        "hidden_share_bp": cfg.reserve_bp,
        "hidden_share": format_bp(cfg.reserve_bp),
        "limit_cents": cfg.limit_cents,
        "limit": None if cfg.limit_cents is None else format_cents(cfg.limit_cents),
        "above_limit": None if cfg.limit_cents is None else str(cfg.above_limit),
        "mystery": None
        if m is None
        else {
            "floor_cents": m.floor_cents,
            "ceiling_cents": m.ceiling_cents,
            "range": f"{format_cents(m.floor_cents)} to {format_cents(m.ceiling_cents)}",
        },
        "meter_cents": meter_cents,
    }


def games_section(
    game: Game,
    pool: Mapping[str, Any],
    table_games: Mapping[str, Game],
) -> list[dict[str, Any]]:
    """Every game the link's tables deal, its paytable and its tables."""
    games = [game, *sorted((Game(g) for g in pool["paytables"]), key=str)]
    out = []
    for g in games:
        lines = pool["paytable"] if g is game else pool["paytables"][str(g)]
        out.append(
            {
                "game": str(g),
                "label": g.label,
                "rules_clause": RULES_OF_GAME_CLAUSE.get(g),
                "paytable": lines,
                "tables": sorted(t for t, tg in table_games.items() if tg is g),
            }
        )
    return out


def pool_par_sheets(
    game: Game,
    current: Mapping[str, Any] | None,
    proposed: Mapping[str, Any],
    *,
    wagers: Mapping[Game, Sequence[int]],
    meters_cents: Sequence[int] | None,
) -> tuple[dict[str, Any] | None, dict[str, Any], dict[str, Any] | None]:
    """The current and proposed par sheets of the link's game and, on a mixed link, every
    game's (``by_game``)."""

    def sheets(pool: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        levels = levels_from_dicts(pool["levels"])
        meters = list(meters_cents) if meters_cents and len(meters_cents) == len(levels) else None
        out = {}
        for g in (game, *sorted((Game(x) for x in pool["paytables"]), key=str)):
            lines = pool["paytable"] if g is game else pool["paytables"][str(g)]
            out[str(g)] = pool_par_sheet_dict(
                make_paytable(g, lines),
                wagers_cents=wagers.get(g) or [100],
                levels=levels,
                meters_cents=meters if meters is not None else [c.reset_cents for c in levels],
            )
        return out

    cur = None if current is None else sheets(current)
    prop = sheets(proposed)
    by_game = None
    if len(prop) > 1:
        by_game = {"current": cur, "proposed": prop}
    return (None if cur is None else cur[str(game)]), prop[str(game)], by_game


# --------------------------------------------------------------------------------------------
# The printed packet


def paytable_rows(
    lines: Sequence[Mapping[str, Any]] | None, levels: Sequence[Any]
) -> list[list[str]]:
    names = {i + 1: lv["name"] for i, lv in enumerate(levels)}
    rows = [["hand", "pays", "envy (each other seat with a side bet)"]]
    for line in lines or ():
        if "percent_bp" in line:
            n = line.get("level", 1)
            pays = f"{format_bp(line['percent_bp'])} of level {n} ({names.get(n, '?')})"
        else:
            pays = format_cents(line["fixed_cents"])
        envy = "-" if line.get("envy_cents") is None else format_cents(line["envy_cents"])
        rows.append([hand_text(str(line["hand"])), pays, envy])
    return rows


def pool_pdf_sections(packet: Mapping[str, Any]) -> list[Section]:
    pool = packet["pool"]
    sections: list[Section] = []
    if pool["fixed_pay"]:
        sections.append(
            (
                f"Fixed-pay link ({pool['clause']})",
                [f"{FIXED_PAY_TEXT.capitalize()}.", f"The {pool['explanation']}."],
            )
        )
    else:
        rate = pool["rate_of_progression"]
        sections.append(
            (
                "Levels (proposed)",
                [
                    [
                        "level",
                        "reset",
                        "shown share",
                        "hidden share",
                        "limit",
                        "above limit",
                        "mystery range",
                        "meter",
                    ],
                    *[
                        [
                            f"{lv['key']} {lv['name']}",
                            lv["reset"],
                            lv["shown_share"],
                            lv["hidden_share"],
                            lv["limit"] or "-",
                            above_limit_text(lv["above_limit"]),
                            "-" if lv["mystery"] is None else lv["mystery"]["range"],
                            format_cents(lv["meter_cents"]),
                        ]
                        for lv in pool["levels"]
                    ],
                ],
            )
        )
        sections.append(
            (
                "Rate of progression of the link",
                [
                    f"Rate of progression {rate['rate']}: {format_bp(rate['shown_bp'])} shown "
                    f"and {format_bp(rate['hidden_bp'])} hidden ({rate['clause']}); "
                    f"{rate['note']}.",
                    f"Rate lock ({pool['rate_lock']['clause']}): {pool['rate_lock']['note']}; "
                    "an approved levels change applies at the link's next jackpot reset.",
                ],
            )
        )
    levels = pool["levels"]
    for g in packet["games"]:
        sections.append(
            (
                f"Paytable of {g['label']} (proposed)"
                + (f"; tables {', '.join(g['tables'])}" if g["tables"] else ""),
                paytable_rows(g["paytable"], levels),
            )
        )
    par = packet["par_sheet"]
    by_game = par.get("by_game")
    for name in ("current", "proposed"):
        sheets = by_game[name] if by_game else {"": par[name]}
        for sheet in (sheets or {}).values():
            if sheet is not None:
                sections += _pool_sheet_sections(name, sheet)
        for m in (par[name] or {}).get("mystery", ()):
            sections.append(
                (
                    f"Mystery level {m['level']} {m['name']} ({name})",
                    [f"{m['name']}: {m['explanation']}."],
                )
            )
    return sections


def _pool_sheet_sections(name: str, sheet: Mapping[str, Any]) -> list[Section]:
    game = sheet["game"]
    about = [
        # Packets made before every game counted its own deals carry only five_card_hands.
        f"{game}: judged on {sheet['judged_on']}: each hand's ways of the "
        f"{sheet.get('deals', sheet['five_card_hands']):,} "
        f"{sheet.get('deals_are', 'five-card hands of one deck')}. A line paying from a level "
        "pays its percentage of that level's meter; the return is the sum over the lines of "
        "probability x pay, per unit wagered.",
    ]
    if sheet["assumption"]:
        about.append(f"Assumption: {sheet['assumption']}.")
    if sheet["levels"]:
        about.append(
            "Levels: "
            + "; ".join(
                f"{lv['level']} {lv['name']} reset {format_cents(lv['reset_cents'])}, meter "
                f"{format_cents(lv['meter_cents'])}"
                for lv in sheet["levels"]
            )
            + "."
        )
    out: list[Section] = [
        (f"Par sheet ({name}, {game})", about),
        (
            f"Odds of each line ({name}, {game})",
            [
                ["hand", "pays", "envy", "ways", "probability", "1 in N", "odds against"],
                *[
                    [
                        hand_text(str(line["hand"])),
                        line["pays"],
                        line.get("envy", "-"),
                        f"{line['ways']:,}",
                        line["probability"],
                        line["one_in"],
                        line["odds_against"],
                    ]
                    for line in sheet["lines"]
                ],
            ],
        ),
    ]
    head = ["side bet", "at the resets", "at the meters", "fixed lines"]
    fixed = sheet["fixed_pay"]
    envy = any("envy_per_other_seat" in w for w in sheet["by_wager"])
    rows = [head + (["house edge"] if fixed else []) + (["envy per other seat"] if envy else [])]
    for w in sheet["by_wager"]:
        row = [
            w["wager"],
            w["return_at_reset"]["percent"],
            w["return_at_meter"]["percent"],
            w["fixed_lines"]["percent"],
        ]
        if fixed:
            row.append(w["house_edge"]["percent"])
        if envy:
            row.append(w.get("envy_per_other_seat", {}).get("percent", "-"))
        rows.append(row)
    out.append((f"Expected return of the side bet ({name}, {game})", rows))
    if sheet["levels"]:
        by_level = [["side bet", "level", "part of the return at its reset", "at its meter"]]
        for w in sheet["by_wager"]:
            for lv in w["by_level"]:
                by_level.append(
                    [
                        w["wager"],
                        f"{lv['level']} {lv['name']}",
                        lv["at_reset"]["percent"],
                        lv["at_meter"]["percent"],
                    ]
                )
        out.append((f"Return by level ({name}, {game})", by_level))
    if envy:
        out.append(
            (
                f"Envy ({name}, {game})",
                [
                    "Envy is paid at the table by the house to every other seat with a side bet "
                    "when a line with an envy amount hits; per other seat with a side bet, its "
                    "expected value per unit wagered is the sum over the envy lines of "
                    "probability x envy (exact for each seat, by linearity of expectation), "
                    "left out of the return above."
                ],
            )
        )
    return out


# --------------------------------------------------------------------------------------------
# A link's terms, as the filing desk hands them to the packet


def is_classic(state: LinkState) -> bool:
    """One level with one meter and one game: a link as links were before levels."""
    return not state.fixed_pay and is_single_meter(state.level_configs) and not state.paytables


def current_terms(state: LinkState) -> dict[str, Any]:
    """What a link plays now, as a packet's ``current``: a classic link's exactly as before
    levels; a link of levels, a mixed-game or a fixed-pay link with its levels and other
    games' paytables too."""
    out: dict[str, Any] = {
        # The rate of progression as the link's law reads it (a classic link: its one rate).
        "rate_bp": state.rate_of_progression_bp,
        "reset_cents": state.reset_cents,
        "paytable": state.paytable.to_dicts(),
        "jackpot_won_since_rate_set": state.jackpot_won_since_rate_set,
    }
    if not is_classic(state):
        out["levels"] = [cfg.to_dict() for cfg in state.level_configs]
        # 68 IAC 10-1-1.1(d), level by level: which levels' shares a win has unlocked.
        out["levels_won_since_share_set"] = list(state.won_since_share_set())
        out["paytables"] = {str(g): pt.to_dicts() for g, pt in sorted(state.paytables.items())}
    return out


def new_link_proposal(state: LinkState) -> Proposal:
    """The new-link submission of a link just created, from what it was opened with."""
    classic = is_classic(state)
    return Proposal(
        kind=SubmissionKind.NEW_LINK,
        rate_bp=state.rate_bp,
        reset_cents=state.reset_cents,
        paytable=state.paytable,
        levels=None if classic else state.level_configs,
        paytables=None if classic else dict(state.paytables),
    )


def level_meters_cents(state: LinkState) -> list[int] | None:
    """Each level's meter as shown, for a packet's par sheet (None on a classic link)."""
    if is_classic(state):
        return None
    return [displayed_cents(lv.meter_units) for lv in state.levels]


def table_games(state: LinkState) -> dict[str, Game] | None:
    if is_classic(state):
        return None
    return {tid: state.game_of(tid) for tid in state.tables}
