"""The three games a link can carry and their paytables.

A paytable line is a hand and either a percentage of the meter (paid from the meter) or a
fixed amount (paid at the table by the house; the meter does not move). Paytables are
validated here once, with a message naming the line and what is wrong with it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from controller.core.hands import HandCategory
from controller.core.money import BP_PER_WHOLE, format_bp, format_cents
from controller.rules.wagers import LET_IT_RIDE_BONUS_BET_CENTS


class PaytableError(ValueError):
    """A paytable the controller refuses; the message names the line."""


class Game(enum.StrEnum):
    CARIBBEAN_STUD = "caribbean_stud"
    CARIBBEAN_DRAW = "caribbean_draw"
    LET_IT_RIDE_BONUS = "let_it_ride_bonus"

    @property
    def label(self) -> str:
        return _LABELS[self]

    @property
    def lowest_paying_hand(self) -> HandCategory:
        """The weakest hand a paytable of this game may pay."""
        # 68 IAC 10-7-5(d): the Let It Ride bonus pays nothing below two pair.
        if self is Game.LET_IT_RIDE_BONUS:
            return HandCategory.TWO_PAIR
        # The table controller's hit codes stop at one pair (register map v1, address 12).
        return HandCategory.ONE_PAIR

    @property
    def fixed_wager_cents(self) -> int | None:
        """A side bet of fixed size, where the rules fix one."""
        return LET_IT_RIDE_BONUS_BET_CENTS if self is Game.LET_IT_RIDE_BONUS else None


_LABELS = {
    Game.CARIBBEAN_STUD: "Caribbean Stud Poker",
    Game.CARIBBEAN_DRAW: "Caribbean Draw Poker",
    Game.LET_IT_RIDE_BONUS: "Let It Ride bonus",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class PaytableLine:
    hand: HandCategory
    percent_bp: int | None = None
    fixed_cents: int | None = None
    # The level of the pool a percentage is paid from, numbered from 1 (None: level 1).
    level: int | None = None
    # An envy bonus: a fixed amount to every other seat at the table with a side bet in the
    # round when this hand hits, paid at the table by the house.
    envy_cents: int | None = None

    @property
    def level_number(self) -> int:
        return 1 if self.level is None else self.level

    @property
    def from_meter(self) -> bool:
        return self.percent_bp is not None

    @property
    def resets_meter(self) -> bool:
        """A line that pays the whole meter is the jackpot: the link resets after it."""
        return self.percent_bp == BP_PER_WHOLE

    def describe(self) -> str:
        envy = (
            f" (envy {format_cents(self.envy_cents)} to each other seat)"
            if self.envy_cents is not None
            else ""
        )
        if self.percent_bp is not None:
            where = "the meter" if self.level is None else f"level {self.level}"
            return f"{self.hand.label}: {format_bp(self.percent_bp)} of {where}{envy}"
        assert self.fixed_cents is not None
        return f"{self.hand.label}: {format_cents(self.fixed_cents)}{envy}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"hand": self.hand.name}
        if self.percent_bp is not None:
            out["percent_bp"] = self.percent_bp
        else:
            out["fixed_cents"] = self.fixed_cents
        if self.level is not None:
            out["level"] = self.level
        if self.envy_cents is not None:
            out["envy_cents"] = self.envy_cents
        return out


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
    built: list[PaytableLine] = []
    seen: set[HandCategory] = set()
    for number, raw in enumerate(lines, start=1):
        line = raw if isinstance(raw, PaytableLine) else _line_from_mapping(number, raw)
        where = f"paytable line {number} ({line.hand.label})"
        if (line.percent_bp is None) == (line.fixed_cents is None):
            raise PaytableError(f"{where}: give either a percentage of the meter or a fixed amount")
        if line.hand is HandCategory.MYSTERY:
            raise PaytableError(
                f"{where}: a mystery level is won by reaching its trigger, not by a hand"
            )
        if line.hand < game.lowest_paying_hand:
            raise PaytableError(
                f"{where}: {game.label} cannot pay a {line.hand.label}; "
                f"its lowest paying hand is {game.lowest_paying_hand.label}"
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
    built.sort(key=lambda line: line.hand, reverse=True)
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


H = HandCategory

_PROGRESSIVE_DEFAULT: Sequence[PaytableLine] = (
    PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=10_000),
    PaytableLine(hand=H.STRAIGHT_FLUSH, percent_bp=1_000),
    PaytableLine(hand=H.FOUR_OF_A_KIND, fixed_cents=500_00),
    PaytableLine(hand=H.FULL_HOUSE, fixed_cents=100_00),
    PaytableLine(hand=H.FLUSH, fixed_cents=50_00),
)

# 68 IAC 10-7-5(e)(1)-(8).
_LET_IT_RIDE_BONUS: Sequence[PaytableLine] = (
    PaytableLine(hand=H.ROYAL_FLUSH, fixed_cents=10_000_00),
    PaytableLine(hand=H.STRAIGHT_FLUSH, fixed_cents=2_000_00),
    PaytableLine(hand=H.FOUR_OF_A_KIND, fixed_cents=100_00),
    PaytableLine(hand=H.FULL_HOUSE, fixed_cents=75_00),
    PaytableLine(hand=H.FLUSH, fixed_cents=50_00),
    PaytableLine(hand=H.STRAIGHT, fixed_cents=25_00),
    PaytableLine(hand=H.THREE_OF_A_KIND, fixed_cents=8_00),
    PaytableLine(hand=H.TWO_PAIR, fixed_cents=4_00),
)


def default_paytable(game: Game) -> Paytable:
    lines = _LET_IT_RIDE_BONUS if game is Game.LET_IT_RIDE_BONUS else _PROGRESSIVE_DEFAULT
    return make_paytable(game, lines)
