"""The games a link can carry, each a module (``GameRules``: its hand, ranking, default
paytable, exact odds, judge of reported cards and register fields), and their paytables.

Modules: ``module`` (``GameRules`` and what it is made of), ``registry`` (``Game`` and
``rules_of``), ``lines`` and ``paytables`` (lines, validation, defaults), ``five_card``
(the odds and judge shared by the five-card games), one module per game: ``caribbean``
(stud and draw), ``let_it_ride``, ``super_sevens``, ``pai_gow`` (with ``pai_gow_counts``).
"""

from controller.core.games.lines import PaytableError, PaytableLine
from controller.core.games.module import (
    Deck,
    GameRules,
    HandCounts,
    HandShape,
    Judge,
    RegisterFields,
)
from controller.core.games.paytables import Paytable, default_paytable, make_paytable
from controller.core.games.registry import Game, rules_of

__all__ = [
    "Deck",
    "Game",
    "GameRules",
    "HandCounts",
    "HandShape",
    "Judge",
    "Paytable",
    "PaytableError",
    "PaytableLine",
    "RegisterFields",
    "default_paytable",
    "make_paytable",
    "rules_of",
]
