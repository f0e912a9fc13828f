"""A new link's levels and paytables as people write them (a levels file for ``links create``,
``[[link.level]]`` and ``[[link.paytable]]`` tables of a floor file), read exactly.

Every amount carries its ``$`` and every share its ``%``: a bare number is refused with the
form to use, so ``10`` is never taken for ten dollars when ten percent was meant. A problem
names the level or line it is in and, where a regulation is broken, its clause.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from controller.core.games import (
    Game,
    Paytable,
    PaytableError,
    PaytableLine,
    default_paytable,
    make_paytable,
)
from controller.core.hands import HandCategory
from controller.core.money import (
    AMOUNT_FORM,
    MissingUnit,
    MoneyError,
    check_cents,
    parse_cents,
    parse_rate_bp,
)
from controller.core.reducer.levels import (
    AboveLimit,
    LevelConfig,
    LevelError,
    Mystery,
    check_levels,
    pool_rate_bp,
)
from controller.refusal import Invalid
from controller.rules import RuleViolation
from controller.rules.filing import check_paytable
from controller.rules.jurisdictions import Jurisdiction
from controller.rules.pools import FIXED_PAY_CLAUSE, check_pool_lines, check_take, fixed_pay_only

__all__ = [
    "LEVEL_KEYS",
    "LINE_KEYS",
    "LinkPlan",
    "SpecError",
    "amount_with_unit",
    "check_under",
    "parse_levels",
    "parse_paytables",
    "plan_link",
    "rate_with_unit",
]

LEVEL_KEYS = frozenset(
    {"name", "reset", "share", "hidden", "limit", "above_limit", "mystery_floor",
     "mystery_ceiling"}
)  # fmt: skip
LINE_KEYS = frozenset({"hand", "pays", "level", "envy", "game"})


class SpecError(Invalid):
    """A level, a paytable line or a link the controller refuses; the message names it."""


SHARE_FORM = "a share like 2.5%"


def amount_with_unit(text: object, where: str, what: str) -> int:
    """``$1,234.56`` as whole cents; a bare number is refused with the form to use."""
    if not isinstance(text, str):
        raise SpecError(f"{where}: {what} {text!r} needs its unit: write {AMOUNT_FORM}")
    try:
        return check_cents(what, parse_cents(text, unit_required=True))
    except MissingUnit as exc:
        raise SpecError(f"{where}: {what} {exc}") from None
    except MoneyError as exc:
        raise SpecError(f"{where}: {what}: {exc}") from None


def rate_with_unit(text: object, where: str, what: str) -> int:
    """``2.5%`` as basis points; a bare number is refused with the form to use."""
    if not isinstance(text, str):
        raise SpecError(f"{where}: {what} {text!r} needs its unit: write {SHARE_FORM}")
    try:
        return parse_rate_bp(text, unit_required=True, form=SHARE_FORM)
    except MissingUnit as exc:
        raise SpecError(f"{where}: {what} {exc}") from None
    except MoneyError as exc:
        raise SpecError(f"{where}: {what}: {exc}") from None


def _level(number: int, raw: object) -> LevelConfig:
    if not isinstance(raw, Mapping):
        raise SpecError(f"level {number}: expected a table of settings, got {raw!r}")
    name = raw.get("name")
    where = f"level {number}" + (f" ({name})" if isinstance(name, str) else "")
    unknown = set(raw) - LEVEL_KEYS
    if unknown:
        raise SpecError(
            f"{where}: unknown setting(s) {sorted(unknown)}; known: {sorted(LEVEL_KEYS)}"
        )
    for key in ("name", "reset", "share"):
        if key not in raw:
            raise SpecError(f"{where}: {key!r} is required")
    if not isinstance(name, str):
        raise SpecError(f"{where}: the name must be text, got {name!r}")
    above = raw.get("above_limit", "overflow")
    if above not in tuple(AboveLimit):
        raise SpecError(f"{where}: above_limit must be 'overflow' or 'next_level', got {above!r}")
    if "above_limit" in raw and "limit" not in raw:
        raise SpecError(f"{where}: above_limit says what happens above a limit; give the limit")
    floor, ceiling = raw.get("mystery_floor"), raw.get("mystery_ceiling")
    if (floor is None) != (ceiling is None):
        raise SpecError(f"{where}: a mystery level gives both mystery_floor and mystery_ceiling")
    return LevelConfig(
        name=name,
        reset_cents=amount_with_unit(raw["reset"], where, "reset"),
        rate_bp=rate_with_unit(raw["share"], where, "share"),
        reserve_bp=rate_with_unit(raw["hidden"], where, "hidden") if "hidden" in raw else 0,
        limit_cents=None if "limit" not in raw else amount_with_unit(raw["limit"], where, "limit"),
        above_limit=AboveLimit(above),
        mystery=None
        if floor is None
        else Mystery(
            floor_cents=amount_with_unit(floor, where, "mystery_floor"),
            ceiling_cents=amount_with_unit(ceiling, where, "mystery_ceiling"),
        ),
    )


def parse_levels(raw: object) -> tuple[LevelConfig, ...]:
    """A list of levels (a levels file holds the list, or ``{"levels": [...]}``), each read
    with its units and the pool checked as a whole (``check_levels``)."""
    if isinstance(raw, Mapping) and set(raw) == {"levels"}:
        raw = raw["levels"]
    if not isinstance(raw, list) or not raw:
        raise SpecError("levels: give a list of levels, each with name, reset, share, ...")
    levels = tuple(_level(i, lv) for i, lv in enumerate(raw, start=1))
    try:
        check_levels(levels)
    except LevelError as exc:
        raise SpecError(str(exc)) from None
    return levels


def _line(number: int, raw: object, game: Game) -> PaytableLine:
    where = f"{game.label} paytable line {number}"
    if not isinstance(raw, Mapping):
        raise SpecError(f"{where}: expected a table of settings, got {raw!r}")
    unknown = set(raw) - LINE_KEYS
    if unknown:
        raise SpecError(
            f"{where}: unknown setting(s) {sorted(unknown)}; known: {sorted(LINE_KEYS)}"
        )
    hand_text = raw.get("hand")
    try:
        hand = HandCategory.parse(hand_text) if isinstance(hand_text, str) else None
    except ValueError as exc:
        raise SpecError(f"{where}: {exc}") from None
    if hand is None:
        raise SpecError(f"{where}: 'hand' is required, e.g. 'ROYAL_FLUSH'")
    where = f"{where} ({hand.label})"
    pays = raw.get("pays")
    if not isinstance(pays, str):
        raise SpecError(
            f"{where}: 'pays' is required: a share of a meter (100%) or an amount ($50)"
        )
    level = raw.get("level")
    if level is not None and (isinstance(level, bool) or not isinstance(level, int)):
        raise SpecError(f"{where}: level is a level's number from 1, got {level!r}")
    envy = None if "envy" not in raw else amount_with_unit(raw["envy"], where, "envy")
    if pays.strip().endswith("%"):
        return PaytableLine(
            hand=hand,
            percent_bp=rate_with_unit(pays, where, "pays"),
            level=level,
            envy_cents=envy,
        )
    if level is not None:
        raise SpecError(f"{where}: a level is named only for a share of its meter (pays N%)")
    return PaytableLine(
        hand=hand, fixed_cents=amount_with_unit(pays, where, "pays"), envy_cents=envy
    )


def parse_paytables(raw: object, game: Game) -> dict[Game, Paytable]:
    """Paytables by game: a list of lines (each may name its ``game``; the link's game by
    default) or a mapping of game to lines."""
    by_game: dict[Game, list[Any]] = {}
    if isinstance(raw, Mapping):
        items = list(raw.items())
    elif isinstance(raw, list):
        items = []
        for line in raw:
            named = line.get("game", str(game)) if isinstance(line, Mapping) else str(game)
            items.append((named, [line]))
    else:
        raise SpecError("paytable: give a list of lines or a table of lines by game")
    for named, lines in items:
        try:
            g = Game(named)
        except ValueError:
            raise SpecError(
                f"paytable: no game {named!r}; games: {[x.value for x in Game]}"
            ) from None
        by_game.setdefault(g, []).extend(lines if isinstance(lines, list) else [lines])
    out: dict[Game, Paytable] = {}
    for g, lines in by_game.items():
        built = [_line(i, line, g) for i, line in enumerate(lines, start=1)]
        try:
            out[g] = check_paytable(g, make_paytable(g, built))
        except (PaytableError, RuleViolation) as exc:
            raise SpecError(f"{g.label}: {exc}") from None
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkPlan:
    """What ``open_link`` is given for a new link: ``levels`` None for a classic link, empty
    for a fixed-pay link; ``paytables`` the other games'."""

    game: Game
    rate_bp: int
    reset_cents: int
    paytable: Paytable
    levels: tuple[LevelConfig, ...] | None
    paytables: Mapping[Game, Paytable]

    @property
    def fixed_pay(self) -> bool:
        return self.levels == ()


def plan_link(
    *,
    game: Game,
    rate_bp: int | None,
    reset_cents: int | None,
    levels: Sequence[LevelConfig] | None,
    paytables: Mapping[Game, Paytable] | None,
    fixed_pay: bool,
    table_games: Sequence[Game],
    law: Jurisdiction | None = None,
) -> LinkPlan:
    """A new link's terms checked together: a classic link's rate and reset amount, or its
    levels, or a fixed-pay link (no meter: the Let It Ride bonus always, 68 IAC 10-7-5(e));
    a paytable for every game its tables deal (the game's default where none is given).

    ``law``: the jurisdiction the link will play under, whose shapes and rate of progression
    it must keep (``check_under``); None: what makes the terms consistent, and what every
    pool takes of a wager within 60 % to 100 % (``pools.check_take``): a floor file is read
    before the database says which of its links are new, and ``new_links.open_floor`` holds
    each new one to the law before anything is written."""
    fixed = fixed_pay or fixed_pay_only(game)
    if fixed and (levels is not None or rate_bp is not None or reset_cents is not None):
        raise SpecError(
            f"a fixed-pay link has no meter: no rate, reset amount or levels ({FIXED_PAY_CLAUSE})"
        )
    if levels is not None and (rate_bp is not None or reset_cents is not None):
        raise SpecError(
            "a link of levels takes its rate of progression from its levels' shares and its "
            "reset amounts from each level: give levels, or a rate and a reset, not both"
        )
    if not fixed and levels is None and (rate_bp is None or reset_cents is None):
        raise SpecError("a link needs a rate and a reset amount, or its levels")
    given = dict(paytables or {})
    for g in {game, *table_games}:
        if g not in given:
            given[g] = default_paytable(g)
    extra = sorted(set(given) - {game, *table_games}, key=str)
    if extra:
        raise SpecError(
            f"a paytable is given for {extra[0].label}, which no table of the link deals"
        )
    pool: tuple[LevelConfig, ...] | None = None
    if fixed:
        pool = ()
    elif levels is not None:
        pool = tuple(levels)
    classic = LevelConfig(name="Jackpot", reset_cents=reset_cents or 0, rate_bp=rate_bp or 0)
    checked = pool if pool is not None else (classic,)
    for g, pt in sorted(given.items(), key=lambda kv: str(kv[0])):
        try:
            check_pool_lines(g, checked, pt)
            if checked and law is None and not fixed_pay_only(g):
                check_take(checked)
        except LevelError as exc:
            raise SpecError(f"{g.label} paytable: {exc}") from None
        except RuleViolation as exc:
            raise SpecError(f"{g.label}: {exc}") from None
    if law is not None:
        check_under(law, game=game, levels=pool, rate_bp=rate_bp, paytables=given)
    return LinkPlan(
        game=game,
        rate_bp=pool_rate_bp(checked),
        reset_cents=checked[0].reset_cents if checked else 0,
        paytable=given.pop(game),
        levels=pool,
        paytables=given,
    )


def check_under(
    law: Jurisdiction,
    *,
    game: Game,
    levels: Sequence[LevelConfig] | None,
    rate_bp: int | None,
    paytables: Mapping[Game, Paytable],
) -> None:
    """A new link's terms under ``law``: a classic link's rate of progression within its
    bounds; a link of levels of shapes it allows (Indiana, 68 IAC 10-1-5(d): no limit, no
    mystery level) and a rate of progression, as it reads it, within them. A refusal names
    the clause and what to change."""
    try:
        if levels is None:
            law.check_rate_of_progression(rate_bp or 0)
            levels = (LevelConfig(name="Jackpot", reset_cents=0, rate_bp=rate_bp or 0),)
        for g in sorted({game, *paytables}, key=str):
            law.check_pool(g, levels, paytables[g])
    except RuleViolation as exc:
        raise SpecError(f"under {law.name}: {exc}") from None
    except LevelError as exc:
        raise SpecError(str(exc)) from None
