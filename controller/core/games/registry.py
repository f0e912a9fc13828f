"""Every game the controller runs, by its ``Game``: ``rules_of(game)``."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from controller.core.games import caribbean, let_it_ride, pai_gow, super_sevens
from controller.core.games.module import Game, GameRules

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
