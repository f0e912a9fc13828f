"""Paytables: validated once, with a message naming the line and what is wrong with it, and
kept in the game's ranking, best hand first."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from controller.core.games.lines import PaytableError, PaytableLine
from controller.core.games.registry import Game, rules_of
from controller.core.hands import HandCategory
from controller.core.money import BP_PER_WHOLE, format_bp, format_cents

# A paytable pays each hand at most once: it has at most one line per hand there is.
MAX_PAYTABLE_LINES = len(HandCategory)


@dataclass(frozen=True, slots=True)
class Paytable:
    game: Game
    lines: tuple[PaytableLine, ...]

    def line_for(self, hand: HandCategory) -> PaytableLine | None:
        for line in self.lines:
            if line.hand is hand:
                return line
        return None

    @property
    def has_jackpot(self) -> bool:
        return any(line.resets_meter for line in self.lines)

    def to_dicts(self) -> list[dict[str, Any]]:
        return [line.to_dict() for line in self.lines]


def make_paytable(game: Game, lines: Iterable[PaytableLine | Mapping[str, Any]]) -> Paytable:
    """Validate and build a paytable; refuse it naming the first bad line."""
    rules = rules_of(game)
    built: list[PaytableLine] = []
    seen: set[HandCategory] = set()
    for number, raw in enumerate(lines, start=1):
        line = raw if isinstance(raw, PaytableLine) else _line_from_mapping(number, raw)
        where = f"paytable line {number} ({line.hand.label})"
        if (line.percent_bp is None) == (line.fixed_cents is None):
            raise PaytableError(f"{where}: give either a percentage of the meter or a fixed amount")
        if not rules.pays(line.hand):
            paying = ", ".join(hand.label for hand in rules.ranking)
            raise PaytableError(
                f"{where}: {rules.label} cannot pay a {line.hand.label}; "
                f"its paying hands are {paying} (its lowest paying hand is "
                f"{rules.ranking[-1].label})"
            )
        if line.hand in seen:
            raise PaytableError(f"{where}: the hand appears twice")
        if line.level is not None and line.percent_bp is None:
            raise PaytableError(f"{where}: a level is named only for a percentage of a meter")
        if line.level is not None and (
            isinstance(line.level, bool) or not isinstance(line.level, int) or line.level < 1
        ):
            raise PaytableError(f"{where}: levels are numbered from 1, got {line.level!r}")
        if line.envy_cents is not None and (
            isinstance(line.envy_cents, bool)
            or not isinstance(line.envy_cents, int)
            or line.envy_cents <= 0
        ):
            raise PaytableError(f"{where}: an envy bonus is a positive whole number of cents")
        for value, name in ((line.percent_bp, "percentage"), (line.fixed_cents, "amount")):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise PaytableError(f"{where}: the {name} must be a whole number, got {value!r}")
        if line.percent_bp is not None and not 0 < line.percent_bp <= BP_PER_WHOLE:
            raise PaytableError(
                f"{where}: a percentage of the meter must be above 0% and at most 100%, "
                f"got {format_bp(line.percent_bp)}"
            )
        if line.fixed_cents is not None and line.fixed_cents <= 0:
            raise PaytableError(
                f"{where}: a fixed amount must be positive, got {format_cents(line.fixed_cents)}"
            )
        seen.add(line.hand)
        built.append(line)
    if not built:
        raise PaytableError("a paytable needs at least one line")
    built.sort(key=lambda line: rules.place(line.hand))
    return Paytable(game, tuple(built))


def _line_from_mapping(number: int, raw: Mapping[str, Any]) -> PaytableLine:
    hand_text = raw.get("hand")
    if not isinstance(hand_text, str):
        raise PaytableError(f"paytable line {number}: 'hand' is required, e.g. 'ROYAL_FLUSH'")
    try:
        hand = HandCategory.parse(hand_text)
    except ValueError as exc:
        raise PaytableError(f"paytable line {number}: {exc}") from exc
    unknown = set(raw) - {"hand", "percent_bp", "fixed_cents", "level", "envy_cents"}
    if unknown:
        raise PaytableError(
            f"paytable line {number} ({hand.label}): unknown field(s) {sorted(unknown)}; "
            "a line has 'hand' and either 'percent_bp' (with an optional 'level') or "
            "'fixed_cents', and an optional 'envy_cents'"
        )
    return PaytableLine(
        hand=hand,
        percent_bp=raw.get("percent_bp"),
        fixed_cents=raw.get("fixed_cents"),
        level=raw.get("level"),
        envy_cents=raw.get("envy_cents"),
    )


def meterless(paytables: Iterable[Paytable]) -> bool:
    """No line of any of the link's paytables pays from a meter: the link is fixed-pay."""
    return not any(line.from_meter for pt in paytables for line in pt.lines)


def default_paytable(game: Game) -> Paytable:
    return make_paytable(game, rules_of(game).default_lines)
