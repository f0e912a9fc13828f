"""Faults a simulated table controller can be built with, for measuring game protection.

Each fault shows only in what the table reports through its register map (counters, bet
sensor bitmap, status, hit FIFO), never through anything else a controller could read:

* ``rigged``: one hand category dealt at ``factor`` times its exact odds (the game's
  ``GameRules.probability``). The cards are real and judged by the game's module; see
  ``rigging_chances`` for how the chance stays exact with one shared deck.
* ``dead_sensor_seat``: that seat's bet sensor never lights (register 7 never shows it), while
  the chip acceptor still counts its bets in the seat's and the all-seats credits.
* ``stuck_sensor_seat``: that seat's bet sensor always shows a bet (register 7, every
  reading), while the credits count only real bets.
* ``false_claims_per_round``: with that chance a round, one seat with a side bet and no paying
  hand reports a hit of the paytable's top hand with the cards it was really dealt.
* ``late_bets_per_round``: with that chance a round, one more seat's side bet is taken after
  the lockout, before the deal (seen when the round is played in phases).
* ``unreported_hand``: hits of that category are dealt but never queued (the patrons are not
  paid; no hit number is spent on them).

What a fault did in a round is in ``RoundRecord.faults`` (``RoundFaults``), for tests and
benchmarks to count; the table's registers are its only output to a controller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from controller.core.games import Game, default_paytable
from controller.core.hands import HandCategory

__all__ = [
    "RIGGED_GAMES",
    "FaultError",
    "RiggedHand",
    "RoundFaults",
    "TableFaults",
    "paying_hands",
    "rigging_chances",
    "top_hand",
]

# The games whose rigged hands the simulator draws: five cards of one deck, any poker
# category (cards.random_hand). Super Sevens and Pai Gow Poker judge other hands.
RIGGED_GAMES: Final = (Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW, Game.LET_IT_RIDE_BONUS)
_SEATS: Final = 7


class FaultError(ValueError):
    """A fault a table cannot have; ``key`` names the setting as a simulate config file spells
    it (``rigged.factor``, ``dead_sensor_seat`` ...)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


def paying_hands(game: Game) -> frozenset[HandCategory]:
    """The categories that hit at a simulated table of ``game`` (its default paytable)."""
    return frozenset(
        line.hand for line in default_paytable(game).lines if line.hand >= game.lowest_paying_hand
    )


def top_hand(game: Game) -> HandCategory:
    """The best hand ``game``'s default paytable pays: what a false claim says."""
    return min(paying_hands(game), key=game.rules.place)


def _seat(key: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _SEATS:
        raise FaultError(key, f"must be a seat 1-{_SEATS}, got {value!r}")
    return value


def _chance(key: str, value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        raise FaultError(key, f"must be a probability from 0 to 1, got {value!r}")
    return float(value)


def _hand(key: str, value: object) -> HandCategory:
    if not isinstance(value, HandCategory) or value is HandCategory.MYSTERY:
        raise FaultError(key, f"must be a hand (a HandCategory), got {value!r}")
    return value


@dataclass(frozen=True, kw_only=True, slots=True)
class RiggedHand:
    """``hand`` dealt at ``factor`` times the game's exact probability of it (``factor`` above
    1, e.g. 20 for a royal flush twenty times as often as the odds say).

    In Caribbean Draw a seat's hand is the one after the simulated player's draw, whose
    chance the par sheet (the five cards as dealt) does not give: there the rigging adds
    about (factor - 1) x p to the chance after the draw, a rigged hand standing pat.
    """

    hand: HandCategory
    factor: float

    def __post_init__(self) -> None:
        _hand("rigged.hand", self.hand)
        factor = self.factor
        if (
            isinstance(factor, bool)
            or not isinstance(factor, int | float)
            or not math.isfinite(factor)
            or not factor > 1
        ):
            raise FaultError("rigged.factor", f"must be a number above 1, got {factor!r}")


@dataclass(frozen=True, kw_only=True, slots=True)
class TableFaults:
    """What is wrong with one simulated table controller (nothing, by default).

    Checked here for what any table allows; ``check_for`` checks it against a table's game
    and seats (``SimTableConfig`` calls it).
    """

    rigged: RiggedHand | None = None
    dead_sensor_seat: int | None = None
    stuck_sensor_seat: int | None = None
    false_claims_per_round: float = 0.0
    late_bets_per_round: float = 0.0
    unreported_hand: HandCategory | None = None

    def __post_init__(self) -> None:
        if self.rigged is not None and not isinstance(self.rigged, RiggedHand):
            raise FaultError("rigged", f"must be a RiggedHand or None, got {self.rigged!r}")
        dead = _seat("dead_sensor_seat", self.dead_sensor_seat)
        stuck = _seat("stuck_sensor_seat", self.stuck_sensor_seat)
        if dead is not None and dead == stuck:
            raise FaultError(
                "stuck_sensor_seat", f"seat {dead}'s bet sensor cannot be both dead and stuck"
            )
        object.__setattr__(
            self,
            "false_claims_per_round",
            _chance("false_claims_per_round", self.false_claims_per_round),
        )
        object.__setattr__(
            self, "late_bets_per_round", _chance("late_bets_per_round", self.late_bets_per_round)
        )
        if self.unreported_hand is not None:
            _hand("unreported_hand", self.unreported_hand)

    def check_for(self, game: Game, seats: int) -> None:
        """Refuse (FaultError) what a table of ``game`` with ``seats`` seats cannot do."""
        for key, seat in (
            ("dead_sensor_seat", self.dead_sensor_seat),
            ("stuck_sensor_seat", self.stuck_sensor_seat),
        ):
            if seat is not None and seat > seats:
                raise FaultError(key, f"must be a seat of the table, 1-{seats}, got {seat}")
        paid = paying_hands(game)
        if self.unreported_hand is not None and self.unreported_hand not in paid:
            raise FaultError(
                "unreported_hand",
                f"a {game.label} table pays no {self.unreported_hand.label}, so there is no "
                f"such hit to leave unreported; it pays {_labels(game, paid)}",
            )
        if self.rigged is not None:
            rigging_chances(game, self.rigged, seats)  # refuses what cannot be dealt

    @property
    def sensor_keep_mask(self) -> int:
        """The bet bitmap bits the sensors can show (a dead sensor's bit never)."""
        dead = self.dead_sensor_seat
        return 0x7F if dead is None else 0x7F & ~(1 << (dead - 1))

    @property
    def sensor_stuck_mask(self) -> int:
        """The bet bitmap bits shown whatever is bet (a stuck sensor's bit always)."""
        stuck = self.stuck_sensor_seat
        return 0 if stuck is None else 1 << (stuck - 1)


def _labels(game: Game, hands: frozenset[HandCategory]) -> str:
    return ", ".join(h.label for h in sorted(hands, key=game.rules.place))


def rigging_chances(game: Game, rigged: RiggedHand, seats: int) -> tuple[Fraction, ...]:
    """The exact chance that a round is rigged, indexed by the seats dealt in it (0 to
    ``seats``), so that every seat is dealt ``rigged.hand`` with probability
    ``factor x p`` (p the game's exact probability of the hand).

    A rigged round with n seats dealt gives one of them, chosen uniformly, a hand of the
    category and deals the others from what is left until none of them makes it; any other
    round is dealt as it falls. A seat then holds the hand with probability
    ``(1 - w) p + w / n``, which is ``factor x p`` for ``w = n (factor - 1) p / (1 - n p)``.
    Forcing each seat alone with its own chance would not be exact: the cards one seat is
    forced take from the deck (in the Let It Ride bonus, the community cards it fixes, and one
    seat's hand at most) change the others' chances; three of a kind there at five times its
    odds would come about 4.2 times as often. Refused where w would pass 1 (``seats x factor
    x p`` above 1) or the game is not one whose hands the simulator can draw to order.
    """
    if game not in RIGGED_GAMES:
        raise FaultError(
            "rigged",
            f"the simulator rigs only the five-card games "
            f"({', '.join(g.value for g in RIGGED_GAMES)}), not {game.value}",
        )
    rules = game.rules
    if rigged.hand not in paying_hands(game):
        raise FaultError(
            "rigged.hand",
            f"a {game.label} table pays no {rigged.hand.label}; rig one of "
            f"{_labels(game, paying_hands(game))}",
        )
    p = rules.probability(rigged.hand)
    factor = Fraction(rigged.factor)
    if seats * factor * p > 1:
        raise FaultError(
            "rigged.factor",
            f"{rigged.hand.label} at {rigged.factor:g} times its odds cannot be dealt at "
            f"{seats} seats (seats x factor x probability {float(seats * factor * p):.3g} is "
            "above 1)",
        )
    return tuple(n * (factor - 1) * p / (1 - n * p) for n in range(seats + 1))


@dataclass(frozen=True, slots=True)
class RoundFaults:
    """What a faulty table's faults did in one round (the round is in ``RoundRecord``).

    ``sensor_bitmap``: register 7 as shown after the deal (the real bets are
    ``RoundRecord.bet_seats``). ``rigged_seat``: the seat dealt the rigged hand.
    ``late_bet_seat``: the seat whose side bet was taken after the lockout (in ``bet_seats``
    and the credits). ``false_claim_seat``: the seat that reported a hand it was not dealt
    (its hit is in ``RoundRecord.hits``). ``unreported_seats``: the seats whose hits were
    dealt but not queued (their hands are in ``RoundRecord.hands``).
    """

    sensor_bitmap: int
    rigged_seat: int | None = None
    late_bet_seat: int | None = None
    false_claim_seat: int | None = None
    unreported_seats: tuple[int, ...] = ()
