"""A paytable line: a hand and either a percentage of the meter (paid from the meter) or a
fixed amount (paid at the table by the house; the meter does not move)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controller.core.hands import HandCategory
from controller.core.money import BP_PER_WHOLE, format_bp, format_cents
from controller.refusal import Invalid


class PaytableError(Invalid):
    """A paytable the controller refuses; the message names the line."""


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
