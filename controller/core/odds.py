"""The par sheet of a side bet: the exact odds of each paytable line's hand, the side bet's
expected return at the reset amount and at a meter, and the meter at which it breaks even.

Every game's side bet is judged on five cards from one 52-card deck: Caribbean Stud on the
player's five dealt cards, the Let It Ride bonus on the player's three cards and the two
community cards, Caribbean Draw on the five cards dealt before the draw (see ``JUDGED_ON``).
Whatever else is dealt at the table, those five are a uniformly random five of the 52, so a
hand's probability is the number of five-card hands of its category over C(52, 5) =
2,598,960. The counts are derived here by combinatorics, never typed in.

Pure and exact: probabilities and returns are ``Fraction``; amounts are whole cents; text is
made with integer arithmetic. No float touches a figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from math import comb
from typing import Any

from controller.core.games import Game, Paytable, PaytableLine
from controller.core.hands import HandCategory
from controller.core.money import BP_PER_WHOLE, format_bp, format_cents
from controller.core.reducer.levels import LevelConfig

H = HandCategory

RANKS = 13
SUITS = 4
DECK = RANKS * SUITS
HAND = 5
# Five ranks in a row: ace-low (A-2-3-4-5) up to ace-high (10-J-Q-K-A).
RUNS = RANKS - HAND + 2
FIVE_CARD_HANDS = comb(DECK, HAND)

# The five cards a game's side bet is judged on, and what the figures assume about them.
JUDGED_ON: Mapping[Game, str] = {
    Game.CARIBBEAN_STUD: "the player's five dealt cards",
    Game.LET_IT_RIDE_BONUS: "the player's five cards: three dealt and the two community cards",
    Game.CARIBBEAN_DRAW: "the player's five cards dealt before the draw",
}
ASSUMPTION: Mapping[Game, str | None] = {
    Game.CARIBBEAN_STUD: None,
    Game.LET_IT_RIDE_BONUS: None,
    # The table judges the hand the player holds after the draw, and which cards a player
    # draws to is the player's choice: no strategy-free exact figure exists for it.
    Game.CARIBBEAN_DRAW: (
        "the table judges the side bet on the hand after the draw, which depends on what the "
        "player keeps; these figures are computed on the five cards dealt before the draw"
    ),
}


@cache
def category_counts() -> Mapping[HandCategory, int]:
    """How many of the C(52, 5) five-card hands fall in each category, by combinatorics."""
    # Rank patterns: five distinct ranks, of which RUNS run; suit patterns of five cards over
    # distinct ranks: 4**5, of which 4 are one suit.
    distinct_ranks = comb(RANKS, HAND)
    suitings = SUITS**HAND
    one_suit = SUITS
    counts = {
        H.ROYAL_FLUSH: 1 * one_suit,
        H.STRAIGHT_FLUSH: (RUNS - 1) * one_suit,
        H.FOUR_OF_A_KIND: RANKS * comb(SUITS, 4) * (RANKS - 1) * SUITS,
        H.FULL_HOUSE: RANKS * comb(SUITS, 3) * (RANKS - 1) * comb(SUITS, 2),
        H.FLUSH: (distinct_ranks - RUNS) * one_suit,
        H.STRAIGHT: RUNS * (suitings - one_suit),
        H.THREE_OF_A_KIND: RANKS * comb(SUITS, 3) * comb(RANKS - 1, 2) * SUITS**2,
        H.TWO_PAIR: comb(RANKS, 2) * comb(SUITS, 2) ** 2 * (RANKS - 2) * SUITS,
        H.ONE_PAIR: RANKS * comb(SUITS, 2) * comb(RANKS - 1, 3) * SUITS**3,
        H.HIGH_CARD: (distinct_ranks - RUNS) * (suitings - one_suit),
    }
    assert sum(counts.values()) == FIVE_CARD_HANDS
    return counts


def probability(hand: HandCategory) -> Fraction:
    """The exact probability that five cards from a 52-card deck make ``hand``."""
    return Fraction(category_counts()[hand], FIVE_CARD_HANDS)


def odds_against(hand: HandCategory) -> Fraction:
    """The odds against ``hand``, x to 1: hands that miss it per hand that makes it."""
    ways = category_counts()[hand]
    return Fraction(FIVE_CARD_HANDS - ways, ways)


def _round_half_up(value: Fraction, scale: int = 1) -> int:
    """``value x scale`` to the nearest whole number, halves up (``value`` >= 0)."""
    n, d = value.numerator * scale, value.denominator
    return (2 * n + d) // (2 * d)


def ceil_cents(value: Fraction) -> int:
    """A fraction of a cent rounded up to a whole cent."""
    return -((-value.numerator) // value.denominator)


def number_text(value: Fraction) -> str:
    """A positive figure to read: whole from 100 up (``649,740``), two decimals below
    (``47.33``, ``2.37``)."""
    if value >= 100:
        return f"{_round_half_up(value):,}"
    hundredths = _round_half_up(value, 100)
    return f"{hundredths // 100:,}.{hundredths % 100:02d}"


def one_in_text(p: Fraction) -> str:
    """``1/649740`` -> ``1 in 649,740``."""
    return f"1 in {number_text(1 / p)}"


def percent_text(value: Fraction) -> str:
    """A ratio (>= 0) as a percentage with two decimals, rounded half up: ``0.973456`` ->
    ``97.35%``."""
    basis_points = _round_half_up(value, 100 * 100)
    return f"{basis_points // 100:,}.{basis_points % 100:02d}%"


def fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


@dataclass(frozen=True, slots=True)
class LineOdds:
    """One paytable line and the exact chance of its hand."""

    line: PaytableLine
    ways: int  # of FIVE_CARD_HANDS

    @property
    def probability(self) -> Fraction:
        return Fraction(self.ways, FIVE_CARD_HANDS)

    @property
    def odds_against(self) -> Fraction:
        return Fraction(FIVE_CARD_HANDS - self.ways, self.ways)

    def pays_cents(self, meter_cents: Fraction | int) -> Fraction:
        """What the line pays with the meter at ``meter_cents``: its fixed amount, or its exact
        share of the meter (an award is paid in whole cents, rounded down: at most a cent
        below this, which the figures leave out)."""
        if self.line.percent_bp is not None:
            return Fraction(self.line.percent_bp, BP_PER_WHOLE) * meter_cents
        assert self.line.fixed_cents is not None
        return Fraction(self.line.fixed_cents)


@dataclass(frozen=True, slots=True)
class ParSheet:
    """A paytable's par sheet for one side bet of ``wager_cents``.

    A hand pays only its own category's line (``Paytable.line_for``), and the categories do
    not overlap, so the expected return is the sum over the lines of P(hand) x pay / wager.
    It is linear in the meter: ``fixed + share x meter``.
    """

    paytable: Paytable
    lines: tuple[LineOdds, ...]
    wager_cents: int

    @property
    def fixed_return(self) -> Fraction:
        """The expected return of the fixed lines, per unit wagered."""
        fixed = (o.probability * o.pays_cents(0) for o in self.lines if not o.line.from_meter)
        return sum(fixed, Fraction(0)) / self.wager_cents

    @property
    def meter_share(self) -> Fraction:
        """The expected return per unit wagered of each cent on the meter."""
        per_cent = (o.probability * o.pays_cents(1) for o in self.lines if o.line.from_meter)
        return sum(per_cent, Fraction(0)) / self.wager_cents

    def expected_return(self, meter_cents: int) -> Fraction:
        """The side bet's expected return (1 is 100 %) with the meter at ``meter_cents``."""
        return self.fixed_return + self.meter_share * meter_cents

    def level_share(self, level: int) -> Fraction:
        """The expected return per unit wagered of each cent on level ``level`` (from 1): the
        sum over the lines paying a percentage of that level's meter of P(hand) x percentage."""
        per_cent = (
            o.probability * o.pays_cents(1)
            for o in self.lines
            if o.line.from_meter and o.line.level_number == level
        )
        return sum(per_cent, Fraction(0)) / self.wager_cents

    def return_at_levels(self, meters_cents: Sequence[int]) -> Fraction:
        """The expected return with level ``i + 1``'s meter at ``meters_cents[i]``: the sum over
        the lines of P(hand) x pay, a line paying from a level paying its percentage of that
        level's meter."""
        return self.fixed_return + sum(
            (self.level_share(i + 1) * m for i, m in enumerate(meters_cents)), Fraction(0)
        )

    @property
    def envy_per_other_seat(self) -> Fraction:
        """The expected envy paid to this side bet per other seat at the table with a side
        bet, per unit wagered: each other seat's five cards are a uniform five of the deck
        whatever this seat holds, so by linearity of expectation it is the sum over the envy
        lines of P(hand) x envy amount, exactly, for each such seat."""
        envy = (
            o.probability * o.line.envy_cents for o in self.lines if o.line.envy_cents is not None
        )
        return sum(envy, Fraction(0)) / self.wager_cents

    @property
    def break_even_meter(self) -> Fraction | None:
        """The meter, in cents, at which the expected return reaches 100 %: the solution of
        ``fixed + share x meter = 1``; 0 when the fixed lines alone reach it; None when no
        line pays from the meter."""
        if self.meter_share == 0:
            return None
        return max(Fraction(0), (1 - self.fixed_return) / self.meter_share)


def line_odds(paytable: Paytable) -> tuple[LineOdds, ...]:
    """Each line of ``paytable`` with the number of five-card hands that make its hand."""
    counts = category_counts()
    return tuple(LineOdds(line, counts[line.hand]) for line in paytable.lines)


def par_sheet(paytable: Paytable, *, wager_cents: int) -> ParSheet:
    if wager_cents <= 0:
        raise ValueError(f"a side bet is a positive amount, got {wager_cents} cents")
    return ParSheet(paytable, line_odds(paytable), wager_cents)


def _pays_text(line: PaytableLine, levels: Sequence[LevelConfig] | None = None) -> str:
    if line.percent_bp is not None:
        if levels is None:
            return f"{format_bp(line.percent_bp)} of the meter"
        n = line.level_number
        name = levels[n - 1].name if n <= len(levels) else "?"
        return f"{format_bp(line.percent_bp)} of level {n} ({name})"
    assert line.fixed_cents is not None
    return format_cents(line.fixed_cents)


def return_dict(value: Fraction) -> dict[str, str]:
    return {"exact": fraction_text(value), "percent": percent_text(value)}


def par_sheet_dict(
    paytable: Paytable,
    *,
    wagers_cents: Sequence[int],
    reset_cents: int,
    meter_cents: int,
    levels: Sequence[LevelConfig] | None = None,
    level_meters_cents: Sequence[int] | None = None,
) -> dict[str, Any]:
    """The par sheet as the packet carries it: JSON-ready, exact figures as ``n/d`` text.

    ``levels`` (a link of levels, or an empty sequence for a fixed-pay link) adds, per wager,
    the return at every level's reset amount and at every level's meter
    (``level_meters_cents``, by default their resets), the part of it each level pays, the
    envy per other seat with a side bet, the mystery levels' long-run return stated apart
    (``mystery_figures``) and, for a fixed-pay link, the house edge. Without ``levels`` the
    sheet is a classic link's, exactly as before levels.
    """
    if levels is not None:
        from controller.core.pool_odds import pool_par_sheet_dict

        return pool_par_sheet_dict(
            paytable,
            wagers_cents=wagers_cents,
            levels=levels,
            meters_cents=level_meters_cents
            if level_meters_cents is not None
            else [cfg.reset_cents for cfg in levels],
        )
    game = paytable.game
    by_wager = []
    for sheet in (par_sheet(paytable, wager_cents=w) for w in sorted(set(wagers_cents))):
        even = sheet.break_even_meter
        by_wager.append(
            {
                "wager_cents": sheet.wager_cents,
                "wager": format_cents(sheet.wager_cents),
                "return_at_reset": return_dict(sheet.expected_return(reset_cents)),
                "return_at_meter": return_dict(sheet.expected_return(meter_cents)),
                "break_even_meter": None
                if even is None
                else {
                    "exact_cents": fraction_text(even),
                    "cents": ceil_cents(even),
                    "amount": format_cents(ceil_cents(even)),
                },
            }
        )
    out = sheet_head(paytable, reset_cents=reset_cents, meter_cents=meter_cents)
    out["lines"] = [line_dict(o) for o in line_odds(paytable)]
    out["by_wager"] = by_wager
    assert out["game"] == game.label
    return out


def sheet_head(paytable: Paytable, *, reset_cents: int, meter_cents: int) -> dict[str, Any]:
    game = paytable.game
    return {
        "game": game.label,
        "judged_on": JUDGED_ON[game],
        "assumption": ASSUMPTION[game],
        "five_card_hands": FIVE_CARD_HANDS,
        "reset_cents": reset_cents,
        "meter_cents": meter_cents,
    }


def line_dict(o: LineOdds, levels: Sequence[LevelConfig] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "hand": o.line.hand.name,
        "pays": _pays_text(o.line, levels),
        "ways": o.ways,
        "probability": fraction_text(o.probability),
        "one_in": one_in_text(o.probability),
        "odds_against": f"{number_text(o.odds_against)} to 1",
    }
    if levels is not None and o.line.from_meter:
        out["level"] = o.line.level_number
    if o.line.envy_cents is not None:
        out["envy_cents"] = o.line.envy_cents
        out["envy"] = f"{format_cents(o.line.envy_cents)} to each other seat with a side bet"
    return out
