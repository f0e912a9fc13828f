"""Every game the controller runs (``Game``), and the rules of each: ``rules_of(game)``,
which ``game.rules`` reads."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

from controller.core.games import caribbean, let_it_ride, pai_gow, super_sevens
from controller.core.games.module import GameRules
from controller.core.hands import HandCategory


class Game(enum.StrEnum):
    CARIBBEAN_STUD = "caribbean_stud"
    CARIBBEAN_DRAW = "caribbean_draw"
    LET_IT_RIDE_BONUS = "let_it_ride_bonus"
    SUPER_SEVENS = "super_sevens"
    PAI_GOW_POKER = "pai_gow_poker"

    @property
    def rules(self) -> GameRules:
        return rules_of(self)

    @property
    def label(self) -> str:
        return self.rules.label

    @property
    def lowest_paying_hand(self) -> HandCategory:
        """The weakest hand a paytable of this game may pay (the last of its ranking)."""
        return self.rules.ranking[-1]

    @property
    def fixed_wager_cents(self) -> int | None:
        """A side bet of fixed size, where the rules fix one."""
        return self.rules.fixed_wager_cents

    @property
    def max_wager_cents(self) -> int | None:
        """The most a side bet may be, where the rules bound it (a fixed wager is its own)."""
        rules = self.rules
        return rules.fixed_wager_cents if rules.max_wager_cents is None else rules.max_wager_cents


RULES: Mapping[Game, GameRules] = MappingProxyType(
    {
        Game.CARIBBEAN_STUD: caribbean.STUD,
        Game.CARIBBEAN_DRAW: caribbean.DRAW,
        Game.LET_IT_RIDE_BONUS: let_it_ride.BONUS,
        Game.SUPER_SEVENS: super_sevens.rules(),
        Game.PAI_GOW_POKER: pai_gow.RULES,
    }
)


def rules_of(game: Game) -> GameRules:
    """The rules of ``game``'s side bet."""
    return RULES[game]
