"""What a jurisdiction says, in the shapes the rulebook reads: what it allows (``Allows``),
its figures (``Numbers``), the clause of each rule (``Clauses``) and who may waive a notice
period (``Waiver``); and ``Terms``, what a rule that weighs several of them is handed of the
jurisdiction in force (``controller.rules.jurisdictions.base.Jurisdiction`` is one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from controller.core.games import Game, Paytable


@dataclass(frozen=True, slots=True, kw_only=True)
class Allows:
    """The shapes of a progressive the jurisdiction allows. Each ``False`` is a refusal that
    cites ``Clauses.shapes``' entry of the same name."""

    # A level limit (a capped meter), with its excess to an overflow meter or the next level.
    level_limits: bool
    # A mystery (must-hit-by) level: its ceiling limits the jackpot it can reach.
    mystery_levels: bool
    # A hidden (reserve) share that funds the next reset.
    hidden_shares: bool
    # Whether a hidden share counts in the rate of progression the bounds apply to.
    hidden_share_in_rate: bool
    # Envy lines (fixed amounts to the other seats when a hand hits) on a game whose bonus
    # amounts the jurisdiction fixes (``Jurisdiction.fixed_pays``); on any other game an envy
    # amount is part of the paytable filed and approved with the rules of the game.
    envy_lines: bool
    # A link whose tables stand in more than one property.
    links_across_properties: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Numbers:
    """The jurisdiction's figures. A figure no clause sets is the house's default, and the
    clause that cites it (``Clauses``) says house policy."""

    min_rate_bp: int
    max_rate_bp: int
    new_game_notice_days: int
    amendment_notice_days: int
    meter_retention_years: int
    integrity_retention_years: int
    # The odds a jackpot may not be rarer than (N to 1), set by a clause; None: the text sets
    # none (the installation's setting is then house policy, ``odds.JACKPOT_ODDS_CLAUSE``).
    jackpot_odds_bound: int | None
    tax_form_from_cents: int
    # Seconds without an answer from a table after which its progressive stops; None: no
    # clause sets it (the floor's own setting applies).
    comm_loss_disable_s: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Clauses:
    """The citation of each rule, as refusals, packets and reports print it."""

    rate: str
    rate_definition: str
    rate_lock: str
    submission: str
    location: str
    new_game_notice: str
    amendment_notice: str
    review: str
    approved_only: str
    reduction: str
    retention: str
    integrity_retention: str
    fixed_pay: str
    jackpot_odds: str
    # Why each shape is refused where ``Allows`` says no, by the field's name.
    shapes: Mapping[str, str] = field(default_factory=dict)
    # The clause setting the amounts of each game ``Jurisdiction.fixed_pays`` names, and the
    # clause saying whom it pays (no envy line, no mystery level), by game.
    fixed_amounts: Mapping[Game, str] = field(default_factory=dict)
    fixed_winners: Mapping[Game, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Waiver:
    """Who may waive a notice period, for which kind of filing, and under which clause.

    ``by`` is the authority named in the text (the executive director); ``None`` for a kind
    whose notice the text never waives.
    """

    new_link: str | None
    amendment: str | None
    clause: str


class Terms(Protocol):
    """What a rule reads of the jurisdiction it applies under."""

    @property
    def name(self) -> str: ...

    @property
    def allows(self) -> Allows: ...

    @property
    def numbers(self) -> Numbers: ...

    @property
    def clauses(self) -> Clauses: ...

    @property
    def fixed_pays(self) -> Mapping[Game, Paytable]:
        """The amounts a fixed-pay side bet must pay, by game (``Jurisdiction.fixed_pays``)."""
        ...
