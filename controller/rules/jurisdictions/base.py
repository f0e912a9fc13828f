"""What a jurisdiction is to the controller: its clauses, what it allows, its numbers (their
shapes: ``controller.rules.terms``) and the records it asks for. One value per jurisdiction
(``indiana``, ``new_jersey``), handed to the pure core as its ``Law``
(``controller.core.law``) and consulted by the paperwork and the runtime wherever a rule
applies. A rule's logic lives once, in the rulebook's modules; a jurisdiction only says which
rules apply, with which numbers, citing which of its clauses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from controller.core.games import Game, Paytable
from controller.rules import (
    fixed_pays,
    house,
    integrity,
    meter_records,
    odds,
    pools,
    progression,
    wagers,
)
from controller.rules.odds import OddsBound
from controller.rules.terms import Allows, Clauses, Numbers, Waiver
from controller.rules.violation import RuleViolation

if TYPE_CHECKING:
    from controller.core.reducer.levels import LevelConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class Jurisdiction:
    """A jurisdiction's rules as the controller applies them; also the core's ``Law``."""

    key: str
    name: str
    # The code the clauses are in ("68 IAC 10"), as headings print it.
    code: str
    # The body a submission is made to and reviewed by ("Indiana Gaming Commission").
    regulator: str
    allows: Allows
    numbers: Numbers
    clauses: Clauses
    waiver: Waiver
    # The amounts a fixed-pay side bet must pay, by game: the lines a paytable for it must
    # have, exactly, with no envy line and no mystery level unless ``allows`` says so
    # (``controller.rules.fixed_pays``). A game not named pays what its filed paytable says.
    fixed_pays: Mapping[Game, Paytable] = field(default_factory=dict)
    # The records the jurisdiction asks the controller to keep, each with its clause.
    records: Sequence[tuple[str, str]] = ()
    # The regulation texts the clauses are quoted from: files of the shared seeds, or the
    # addresses of the published text where the seeds have none.
    texts: Sequence[str] = ()

    def __str__(self) -> str:
        return self.name

    @property
    def title(self) -> str:
        """The jurisdiction as every link, filing, packet, refusal, report and display states
        it: its name and the code its clauses are in ("Indiana (68 IAC 10)")."""
        return f"{self.name} ({self.code})"

    # -- the core's Law ---------------------------------------------------------------------

    @property
    def out_of_play(self) -> str:
        return integrity.OUT_OF_PLAY

    def check_retention_years(self, *, meter_years: int, integrity_years: int) -> None:
        """Retention periods set for the installation: never shorter than this jurisdiction's."""
        meter_records.check_retention_years(
            meter_years=meter_years,
            integrity_years=integrity_years,
            meter_minimum=self.numbers.meter_retention_years,
            integrity_minimum=self.numbers.integrity_retention_years,
            meter_clause=self.clauses.retention,
            integrity_clause=self.clauses.integrity_retention,
        )

    def odds_bound(self, setting: int) -> OddsBound:
        """The bound on a jackpot's odds in force with the installation's ``setting``: within
        the jurisdiction's own bound where it sets one (cited), else the house's."""
        return odds.odds_bound(
            setting, law_bound=self.numbers.jackpot_odds_bound, clause=self.clauses.jackpot_odds
        )

    def check_rate_of_progression(self, rate_bp: int) -> int:
        return progression.check_rate_of_progression(
            rate_bp,
            low=self.numbers.min_rate_bp,
            high=self.numbers.max_rate_bp,
            clause=self.clauses.rate,
        )

    def check_rate_change(
        self, *, current_bp: int, proposed_bp: int, jackpot_won_since_rate_set: bool
    ) -> int:
        return progression.check_rate_change(
            current_bp=current_bp,
            proposed_bp=proposed_bp,
            jackpot_won_since_rate_set=jackpot_won_since_rate_set,
            low=self.numbers.min_rate_bp,
            high=self.numbers.max_rate_bp,
            clause=self.clauses.rate,
            lock_clause=self.clauses.rate_lock,
        )

    def check_shares_change(
        self,
        *,
        link_id: str,
        current: Sequence[LevelConfig],
        proposed: Sequence[LevelConfig],
        won_since_set: Sequence[bool],
    ) -> None:
        progression.check_shares_change(
            link_id=link_id,
            current=current,
            proposed=proposed,
            won_since_set=won_since_set,
            clause=self.clauses.rate_lock,
        )

    def rate_of_progression_bp(self, levels: Sequence[LevelConfig]) -> int:
        return pools.rate_of_progression_bp(levels, counts_hidden=self.allows.hidden_share_in_rate)

    def check_pool(self, game: Game, levels: Sequence[LevelConfig], paytable: Paytable) -> int:
        return pools.check_pool(game, levels, paytable, law=self)

    def fixed_pay_problems(
        self, game: Game, levels: Sequence[LevelConfig], paytable: Paytable
    ) -> list[RuleViolation]:
        """What this jurisdiction finds wrong with a paytable of a game whose pays it fixes
        (the amounts, the lines, envy lines, mystery levels); empty for any other game."""
        return fixed_pays.fixed_pay_problems(game, levels, paytable, law=self)

    def standing_problems(
        self, levels: Sequence[LevelConfig], paytables: Sequence[Paytable] = ()
    ) -> list[RuleViolation]:
        """What this jurisdiction finds wrong with a link's levels and paytables as they stand
        (a link made before, or under another jurisdiction): each with its clause and how to
        bring the link into line. Nothing is changed."""
        return pools.standing_problems(levels, law=self, paytables=paytables)

    def check_levels_won(
        self, levels: Sequence[LevelConfig], paytables: Sequence[Paytable]
    ) -> None:
        pools.check_levels_won(levels, paytables)

    def check_one_meter_change(
        self, *, link_id: str, fixed_pay: bool, one_meter: bool, levels: int, what: str
    ) -> None:
        pools.check_one_meter_change(
            link_id=link_id, fixed_pay=fixed_pay, one_meter=one_meter, levels=levels, what=what
        )

    def fixed_pay_only(self, game: Game) -> bool:
        return pools.fixed_pay_only(game)

    def check_denomination(self, game: Game, denomination_cents: int) -> int:
        return wagers.check_denomination(game, denomination_cents)

    def check_reduction_explained(self, *, delta_units: int, reason: str | None) -> None:
        meter_records.check_reduction_explained(delta_units=delta_units, reason=reason)

    def check_reduction_documented(self, *, delta_units: int, document_sha256: str | None) -> None:
        meter_records.check_reduction_documented(
            delta_units=delta_units, document_sha256=document_sha256
        )

    def most_credits(self, *, seats: int, max_credits_per_seat_round: int, rounds: int) -> int:
        return house.most_credits(
            seats=seats, max_credits_per_seat_round=max_credits_per_seat_round, rounds=rounds
        )

    def fixed_pay_needs_technician(self, *, amount_cents: int, from_cents: int) -> bool:
        return house.fixed_pay_needs_technician(amount_cents=amount_cents, from_cents=from_cents)
