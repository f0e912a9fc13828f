"""The par sheet of a side bet: the exact odds of each paytable line's hand, the side bet's
expected return at the reset amount and at a meter, and the meter at which it breaks even.

The odds are the game's own (``GameRules.count``: a count of equally likely deals over their
total, exact): five cards of one deck for Caribbean Stud, Caribbean Draw and the Let It Ride
bonus, the first three cards of a blackjack shoe for Super Sevens, seven cards of 52 and a
joker for Pai Gow Poker. What each is judged on, and what the figures assume, is the game's
``judged_on`` and ``assumption``.

Pure and exact: probabilities and returns are ``Fraction``; amounts are whole cents; text is
made with integer arithmetic. No float touches a figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from controller.core.games import Game, Paytable, PaytableLine, five_card, rules_of
from controller.core.games.five_card import FIVE_CARD_HANDS, category_counts
from controller.core.hands import HandCategory
from controller.core.money import BP_PER_WHOLE, format_bp, format_cents
from controller.core.reducer.levels import LevelConfig

__all__ = [
    "ASSUMPTION",
    "FIVE_CARD_HANDS",
    "JUDGED_ON",
    "LineOdds",
    "ParSheet",
    "category_counts",
    "ceil_cents",
    "fraction_text",
    "line_odds",
    "number_text",
    "odds_against",
    "one_in_text",
    "par_sheet",
    "par_sheet_dict",
    "percent_text",
    "probability",
]

# What each game's side bet is judged on, and what the figures assume about it.
JUDGED_ON: Mapping[Game, str] = {game: rules_of(game).judged_on for game in Game}
ASSUMPTION: Mapping[Game, str | None] = {game: rules_of(game).assumption for game in Game}


def probability(hand: HandCategory) -> Fraction:
    """The exact probability that five cards from a 52-card deck make ``hand``."""
    return Fraction(category_counts()[hand], FIVE_CARD_HANDS)


def odds_against(hand: HandCategory) -> Fraction:
    """The odds against five cards making ``hand``, x to 1: hands that miss it per hand that
    makes it."""
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
    """One paytable line and the exact chance of its hand: ``ways`` of ``total`` deals."""

    line: PaytableLine
    ways: int
    total: int = FIVE_CARD_HANDS

    @property
    def probability(self) -> Fraction:
        return Fraction(self.ways, self.total)

    @property
    def odds_against(self) -> Fraction:
        """Deals that miss the hand per deal that makes it; a hand no deal makes (two suited
        sevens from one deck) has no odds: ``ZeroDivisionError``."""
        return Fraction(self.total - self.ways, self.ways)

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

    def long_run_return(self, *, rate_bp: int, reset_cents: int) -> Fraction:
        """The side bet's return in the long run (1 is 100 %) on a link of one meter that
        grows by ``rate_bp`` of every wager and is reset to ``reset_cents`` after each
        jackpot: what the rate of progression returns to patrons (68 IAC 10-1-1.1(b)).

        The meter neither grows nor shrinks without bound in the long run, so what it pays
        equals what goes into it: the rate's share of each wager, and the reset amount the
        house seeds each time a line paying the whole meter resets it (the chance of such a
        hand per side bet x the reset amount, per unit wagered). With the fixed lines on
        top: ``fixed + rate + P(jackpot) x reset / wager``. A paytable with no line paying
        from the meter never pays it out: its return is the fixed lines'. Exact (the cent
        each award rounds down stays on the meter and is paid with a later one).
        """
        if self.meter_share == 0:
            return self.fixed_return
        resets = sum((o.probability for o in self.lines if o.line.resets_meter), Fraction(0))
        seeded = resets * reset_cents / self.wager_cents
        return self.fixed_return + Fraction(rate_bp, BP_PER_WHOLE) + seeded

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
    """Each line of ``paytable`` with the number of its game's deals that make its hand."""
    counts = rules_of(paytable.game).count()
    return tuple(LineOdds(line, counts.ways[line.hand], counts.total) for line in paytable.lines)


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
    rate_bp: int | None = None,
) -> dict[str, Any]:
    """A classic link's par sheet as the packet carries it: JSON-ready, exact figures as
    ``n/d`` text (a link of levels or a fixed-pay link has its own,
    ``pool_odds.pool_par_sheet_dict``).

    With ``rate_bp`` the sheet also gives, per wager, the long-run return at that rate of
    progression (``ParSheet.long_run_return``).
    """
    game = paytable.game
    by_wager = []
    for sheet in (par_sheet(paytable, wager_cents=w) for w in sorted(set(wagers_cents))):
        even = sheet.break_even_meter
        entry: dict[str, Any] = {
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
        if rate_bp is not None:
            entry["long_run_return"] = {
                "rate_bp": rate_bp,
                **return_dict(sheet.long_run_return(rate_bp=rate_bp, reset_cents=reset_cents)),
            }
        by_wager.append(entry)
    out = sheet_head(paytable, reset_cents=reset_cents, meter_cents=meter_cents)
    out["lines"] = [line_dict(o) for o in line_odds(paytable)]
    out["by_wager"] = by_wager
    assert out["game"] == game.label
    return out


def sheet_head(paytable: Paytable, *, reset_cents: int, meter_cents: int) -> dict[str, Any]:
    game = paytable.game
    rules = rules_of(game)
    total = rules.count().total
    return {
        "game": game.label,
        "judged_on": JUDGED_ON[game],
        "assumption": ASSUMPTION[game],
        # Kept for the five-card games, as packets have always carried it.
        "five_card_hands": total if rules.hand == five_card.SHAPE else None,
        "deals": total,
        "deals_are": rules.deals_are,
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
