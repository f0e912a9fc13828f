"""The law a link plays under, as the pure core sees it: a value handed in, never imported.

The core does the arithmetic of a link (meters, hits, the history) and knows no regulation.
Whether a rate of progression, a pool of levels or a table's wager is allowed, and what a
refusal cites, is the jurisdiction's: ``controller.rules.jurisdictions`` builds the value
(Indiana by default, the installation's ``PROGRESSIVE_JURISDICTION``) and the runtime hands it
to each link when the link is opened or loaded (``LinkState.law``). It is never stored: the
history records what was done, and the law in force judges what may be done next.

A method that checks raises the rulebook's refusal (a ``ValueError``) naming its clause, or
returns the value it accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from controller.core.games import Game, Paytable
    from controller.core.reducer.levels import LevelConfig


class Law(Protocol):
    """What the core asks of the law in force."""

    @property
    def key(self) -> str:
        """The jurisdiction's short name (``indiana``), as records and settings spell it."""
        ...

    @property
    def name(self) -> str:
        """The jurisdiction as people read it (``Indiana``)."""
        ...

    @property
    def out_of_play(self) -> str:
        """Why a claim of a table removed from play is refused, with its clause."""
        ...

    def check_rate_of_progression(self, rate_bp: int) -> int: ...

    def check_rate_change(
        self, *, current_bp: int, proposed_bp: int, jackpot_won_since_rate_set: bool
    ) -> int: ...

    def check_shares_change(
        self,
        *,
        link_id: str,
        current: Sequence[LevelConfig],
        proposed: Sequence[LevelConfig],
        won_since_set: Sequence[bool],
    ) -> None:
        """New shares for a link of levels, each level's checked against its own lock
        (``won_since_set``: has each level been won since its share was set)."""
        ...

    def rate_of_progression_bp(self, levels: Sequence[LevelConfig]) -> int:
        """A pool's rate of progression as the law reads it (its shown shares, with the hidden
        ones where the law counts them)."""
        ...

    def check_pool(self, game: Game, levels: Sequence[LevelConfig], paytable: Paytable) -> int:
        """A pool its game, paytable and the law may have; returns its rate of progression as
        the law reads it."""
        ...

    def check_levels_won(
        self, levels: Sequence[LevelConfig], paytables: Sequence[Paytable]
    ) -> None: ...

    def check_one_meter_change(
        self, *, link_id: str, fixed_pay: bool, one_meter: bool, levels: int, what: str
    ) -> None: ...

    def fixed_pay_only(self, game: Game) -> bool:
        """A game whose side bet pays only fixed amounts, so its link has no meter."""
        ...

    def check_denomination(self, game: Game, denomination_cents: int) -> int: ...

    def check_reduction_explained(self, *, delta_units: int, reason: str | None) -> None: ...

    def check_reduction_documented(
        self, *, delta_units: int, document_sha256: str | None
    ) -> None: ...

    def most_credits(self, *, seats: int, max_credits_per_seat_round: int, rounds: int) -> int:
        """The most credits a table can take in ``rounds`` rounds (beyond: held for review)."""
        ...

    def fixed_pay_needs_technician(self, *, amount_cents: int, from_cents: int) -> bool: ...
