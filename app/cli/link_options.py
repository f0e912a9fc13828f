"""What ``progressive links create`` reads beyond a rate and a reset amount (a levels file, a
paytable file, ``--fixed-pay``, a table's game), and how ``links list`` and ``links show``
print a link's levels, games and whether it awaits approval."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from controller.core.games import Game, Paytable
from controller.core.money import displayed_cents, format_bp, format_cents
from controller.core.reducer import LinkState
from controller.core.reducer.levels import LevelConfig, describe
from controller.rules.filing import date_text
from controller.runtime.lawful import standing_problems
from controller.runtime.link_specs import SpecError, parse_levels, parse_paytables

LEVELS_HELP = (
    "A JSON file of the link's levels: a list of {name, reset ($), share (%), hidden (%), "
    "limit ($), above_limit (overflow|next_level), mystery_floor ($), mystery_ceiling ($)}."
)
PAYTABLE_HELP = (
    "A JSON file of paytable lines: a list of {hand, pays (N% of a level's meter or $N), "
    "level (from 1), envy ($), game (on a link of several games)}, or {game: [lines]}."
)


def _json_file(path: str, option: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"{path}: cannot be read: {exc}", param_hint=option) from None
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"{path}: not valid JSON: {exc}", param_hint=option) from None


def read_levels(path: str | None) -> tuple[LevelConfig, ...] | None:
    if path is None:
        return None
    try:
        return parse_levels(_json_file(path, "--levels"))
    except SpecError as exc:
        raise click.BadParameter(f"{path}: {exc}", param_hint="--levels") from None


def read_paytables(path: str | None, game: Game) -> dict[Game, Paytable] | None:
    if path is None:
        return None
    try:
        return parse_paytables(_json_file(path, "--paytable"), game)
    except SpecError as exc:
        raise click.BadParameter(f"{path}: {exc}", param_hint="--paytable") from None


def table_game(text: str, table_id: str) -> Game | None:
    """The game part of ``--table ID:DENOMINATION:GAME``."""
    if not text:
        return None
    try:
        return Game(text)
    except ValueError:
        raise click.BadParameter(
            f"table {table_id}: no game {text!r}; games: {[g.value for g in Game]}",
            param_hint="--table",
        ) from None


# --------------------------------------------------------------------------------------------
# Printing


def kind_of(state: LinkState) -> str:
    if state.fixed_pay:
        return "fixed-pay (no meter)"
    if len(state.levels) > 1:
        return f"{len(state.levels)} levels"
    return "classic"


AWAITING_APPROVAL = "AWAITING APPROVAL"
LIST_HEADER = "\t".join(
    (
        "LINK", "STATE", "GAMES", "METER", "RATE", "RESET", "TABLES", "KIND", "APPROVED CHANGES",
        "LAWFUL",
    )
)  # fmt: skip


def status_of(
    link_id: str,
    go_live: dict[str, int | None],
    inoperable: dict[str, str],
    now_us: int | None = None,
) -> str:
    """Whether the link may play: ``approved``; ``AWAITING APPROVAL`` while its new-link
    submission is not approved (68 IAC 10-1-3(c)(4): not played until then); approved with a
    start still ahead; or ``INOPERABLE`` with what differs."""
    if link_id in inoperable:
        return f"INOPERABLE: {inoperable[link_id]}"
    start = go_live.get(link_id, 0)
    if start is None:
        return AWAITING_APPROVAL
    if now_us is not None and start > now_us:
        return f"approved, plays from {date_text(start)}"
    return "approved"


def list_line(state: LinkState, status: str, changes: Sequence[str] = ()) -> str:
    """One link of ``links list``, in the columns of ``LIST_HEADER``: its state second, so a
    link the commission has not approved never reads like one that plays; last, each term it
    plays by an approved change rather than as opened (``floor_approvals.changes_in_force``),
    which is where the database's terms and a floor file's starting ones part; then whether
    it keeps the law the installation runs under (``NO:`` each problem, its clause and how to
    bring it into line). RATE is the rate of progression as the link's law reads it."""
    games = ", ".join(g.label for g in state.games)
    if state.fixed_pay:
        amounts = ["no meter", "-", "-"]
    else:
        amounts = [
            format_cents(state.meter_cents),
            format_bp(state.rate_of_progression_bp),
            format_cents(state.reset_cents),
        ]
    kind = "fixed-pay" if state.fixed_pay else kind_of(state)
    changed = "; ".join(changes) or "-"
    problems = standing_problems(state)
    lawful = "yes" if not problems else "NO: " + "; ".join(str(p) for p in problems)
    return "\t".join(
        [state.link_id, status, games, *amounts, str(len(state.tables)), kind, changed, lawful]
    )


def rate_line(state: LinkState) -> str:
    """The rate of progression as the link's law reads it, and what the hidden shares are."""
    rate = format_bp(state.rate_of_progression_bp)
    hidden = state.rate_bp - sum(cfg.rate_bp for cfg in state.level_configs)
    if not hidden:
        return f"rate of progression {rate}"
    if state.rate_of_progression_bp == state.rate_bp:
        return f"rate of progression {rate} (every level's shown and hidden share together)"
    return (
        f"rate of progression {rate} (the shown shares; the hidden shares, "
        f"{format_bp(hidden)} of every wager, fund the resets and are not part of it under "
        f"{state.law.name})"
    )


def show_lines(state: LinkState, name: str, status: str, changes: Sequence[str] = ()) -> list[str]:
    """Everything ``links show`` prints about one link; ``changes``, the terms it plays by an
    approved change (a floor file still giving the starting ones is overruled by these)."""
    out = [
        f"link {state.link_id} ({name}): {kind_of(state)}; {status}",
        "games: " + ", ".join(g.label for g in state.games),
    ]
    if state.fixed_pay:
        out.append("fixed-pay link: no meter; its rate can never change: it has none")
    else:
        out.append(rate_line(state))
        for i, lv in enumerate(state.levels):
            out.append(
                f"  L{i + 1} {describe(lv.config)}; meter "
                f"{format_cents(displayed_cents(lv.meter_units))}"
            )
    for g in state.games:
        out.append(f"paytable of {g.label}:")
        out += [f"  {line.describe()}" for line in state.paytable_for(g).lines]
    out.append("tables:")
    for tid, ts in sorted(state.tables.items()):
        out.append(
            f"  {tid}: {state.game_of(tid).label}, "
            f"{format_cents(ts.config.denomination_cents)}, {ts.config.seats} seats"
        )
    out += [f"approved change in force: {change}" for change in changes]
    out += [f"NOT LAWFUL under {state.law.name}: {p}" for p in standing_problems(state)]
    if state.armed is not None:
        out.append(
            f"approved change waiting for the next jackpot reset: {state.armed.submission_id}"
        )
    return out
