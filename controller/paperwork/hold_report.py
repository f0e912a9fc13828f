"""The hold report: theoretical against actual hold of the side bet, per table, per game and
for the floor, over a period, with the variance (as Mississippi Gaming Commission regulation
13-8-4.14 asks of table games: theoretical and actual hold side by side, with the statistical
variance that says whether a difference is luck).

Per table: the side bets it took in the period (credits x denomination, from its recorded bets)
and the hands behind them; what was paid for them (the awards of its hits: meters, fixed pays
and envy); the actual hold ``1 - paid / wagered``; the theoretical hold ``1 - return``, where
the return is the par sheet's in the long run (``controller.core.odds``: the fixed lines'
return, the rate of progression that the meters pay back, and the reset amounts the house seeds
after each jackpot); and the standard deviation of the hold over that many hands, from the
variance of one hand's pay at the meters as they stand. Amounts are whole cents; holds,
returns and variances are exact fractions until printed (a square root is taken only to
print a standard deviation).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from controller.core.games import Game
from controller.core.money import BP_PER_WHOLE, format_cents
from controller.core.odds import par_sheet
from controller.core.protection import seats_of
from controller.core.reducer import LinkState
from controller.paperwork.export import CsvWriter
from controller.paperwork.pdf import Letterhead, Table, render_pdf

__all__ = ["HoldReport", "HoldRow", "hold_csv", "hold_pdf", "hold_report", "theory_of"]

CLAUSE = "Mississippi Gaming Commission regulation 13-8-4.14"


@dataclass(frozen=True, slots=True)
class Theory:
    """One hand's side bet at a table: its expected return and the variance of its pay, per
    unit wagered."""

    return_: Fraction
    variance: Fraction


def theory_of(state: LinkState, game: Game, denomination_cents: int) -> Theory:
    """The long-run return of a side bet of ``denomination_cents`` at a table of ``game`` on
    the link ``state``, and the variance of one hand's pay (meter lines at the meters now)."""
    paytable = state.paytable_for(game)
    sheet = par_sheet(paytable, wager_cents=denomination_cents)
    levels = state.levels
    value = sheet.fixed_return
    if sheet.meter_share:
        value += Fraction(state.rate_bp, BP_PER_WHOLE)
        for o in sheet.lines:
            if o.line.resets_meter:
                n = o.line.level_number
                reset = levels[n - 1].config.reset_cents if len(levels) >= n else state.reset_cents
                value += o.probability * reset / denomination_cents
    meters = [lv.meter_units // 10_000 for lv in levels] or [state.meter_cents]
    mean = Fraction(0)
    square = Fraction(0)
    for o in sheet.lines:
        n = o.line.level_number
        meter = meters[n - 1] if len(meters) >= n else meters[0]
        pay = o.pays_cents(meter) / denomination_cents
        mean += o.probability * pay
        square += o.probability * pay * pay
    return Theory(value, square - mean * mean)


@dataclass(frozen=True, slots=True)
class HoldRow:
    """A table, a game or the floor over the period."""

    name: str
    game: str
    hands: int
    credits: int
    wagered_cents: int
    paid_cents: int
    theoretical_hold: Fraction | None
    variance_cents2: Fraction  # of the total paid, in cents squared

    @property
    def actual_hold(self) -> Fraction | None:
        if not self.wagered_cents:
            return None
        return 1 - Fraction(self.paid_cents, self.wagered_cents)

    @property
    def sd_hold(self) -> float | None:
        """The standard deviation of the hold over these hands (a fraction of one)."""
        if not self.wagered_cents:
            return None
        return math.sqrt(self.variance_cents2) / self.wagered_cents

    @property
    def deviations(self) -> float | None:
        """How many standard deviations the actual hold is from the theoretical."""
        actual, sd, theory = self.actual_hold, self.sd_hold, self.theoretical_hold
        if actual is None or theory is None or not sd:
            return None
        return float(actual - theory) / sd


@dataclass(frozen=True, slots=True)
class HoldReport:
    since_us: int
    until_us: int
    tables: tuple[HoldRow, ...]
    games: tuple[HoldRow, ...]
    floor: HoldRow


def hold_report(
    states: Mapping[str, LinkState],
    bets: Iterable[tuple[str, str]],
    paid: Iterable[tuple[str, int]],
    *,
    since_us: int,
    until_us: int,
) -> HoldReport:
    """``bets``: (table id, recorded bets' details) of every entry of side bets in the period;
    ``paid``: (table id, cents) of every award paid in it."""
    tables: dict[str, tuple[LinkState, Game, int]] = {}
    for state in states.values():
        for table_id, ts in state.tables.items():
            tables[table_id] = (state, ts.config.game or state.game, ts.config.denomination_cents)
    hands: dict[str, int] = dict.fromkeys(tables, 0)
    credits: dict[str, int] = dict.fromkeys(tables, 0)
    wagered: dict[str, int] = dict.fromkeys(tables, 0)
    for table_id, details in bets:
        if table_id not in tables:
            continue
        record = json.loads(details)
        hands[table_id] += len(seats_of(int(record.get("seats", 0))))
        credits[table_id] += int(record["credits"])
        wagered[table_id] += int(record["credits"]) * int(record["denomination_cents"])
    paid_by: dict[str, int] = dict.fromkeys(tables, 0)
    for table_id, cents in paid:
        if table_id in paid_by:
            paid_by[table_id] += cents
    rows: list[HoldRow] = []
    for table_id in sorted(tables):
        state, game, denomination = tables[table_id]
        theory = theory_of(state, game, denomination)
        # The pay's variance over its hands, in cents squared: each hand's, scaled to cents.
        variance = hands[table_id] * theory.variance * denomination * denomination
        rows.append(
            HoldRow(
                table_id,
                game.value,
                hands[table_id],
                credits[table_id],
                wagered[table_id],
                paid_by[table_id],
                1 - theory.return_,
                variance,
            )
        )
    games = tuple(
        _sum(game.label, game.value, [r for r in rows if r.game == game.value])
        for game in Game
        if any(r.game == game.value for r in rows)
    )
    return HoldReport(since_us, until_us, tuple(rows), games, _sum("Floor", "", rows))


def _sum(name: str, game: str, rows: Sequence[HoldRow]) -> HoldRow:
    wagered = sum(r.wagered_cents for r in rows)
    theory: Fraction | None = None
    if wagered:
        weighted = (r.theoretical_hold * r.wagered_cents for r in rows if r.theoretical_hold)
        theory = sum(weighted, Fraction(0)) / wagered
    return HoldRow(
        name,
        game,
        sum(r.hands for r in rows),
        sum(r.credits for r in rows),
        wagered,
        sum(r.paid_cents for r in rows),
        theory,
        sum((r.variance_cents2 for r in rows), Fraction(0)),
    )


def _percent(value: Fraction | None) -> str:
    if value is None:
        return "-"
    tenths = round(value * 1000)  # tenths of a percent, rounded half even (printing only)
    return f"{tenths / 10:.1f} %"


def _cells(r: HoldRow) -> list[str]:
    sd = r.sd_hold
    z = r.deviations
    return [
        r.name,
        r.game,
        f"{r.hands:,}",
        format_cents(r.wagered_cents),
        format_cents(r.paid_cents),
        _percent(r.theoretical_hold),
        _percent(r.actual_hold),
        "-" if sd is None else f"{sd * 100:.1f} %",
        "-" if z is None else f"{z:+.1f}",
    ]


HEAD = [
    "Table", "Game", "Hands", "Wagered", "Paid", "Theoretical hold", "Actual hold",
    "SD of hold", "SDs off",
]  # fmt: skip


def hold_csv(report: HoldReport, letterhead: Letterhead) -> str:
    out = io.StringIO()
    w = CsvWriter(out)
    w.row(["Hold report", CLAUSE])
    w.row(["From", letterhead.when(report.since_us), "To", letterhead.when(report.until_us)])
    w.row(["row", *[h.lower() for h in HEAD], "wagered_cents", "paid_cents"])
    for kind, rows in (
        ("table", report.tables),
        ("game", report.games),
        ("floor", (report.floor,)),
    ):
        for r in rows:
            w.row([kind, *_cells(r), r.wagered_cents, r.paid_cents])
    return out.getvalue()


def hold_pdf(report: HoldReport, letterhead: Letterhead) -> bytes:
    widths = (16, 14, 9, 12, 12, 10, 9, 9, 9)
    return render_pdf(
        "Hold report: theoretical against actual",
        [
            (
                "Period",
                [
                    f"From {letterhead.when(report.since_us)} "
                    f"to {letterhead.when(report.until_us)}.",
                    f"Theoretical and actual hold of the progressive side bet with the variance "
                    f"({CLAUSE}). Actual hold: 1 - paid / wagered. Theoretical: 1 - the par "
                    "sheet's long-run return (fixed lines, the rate of progression the meters pay "
                    "back, and the reset amounts seeded after each jackpot). SD: the standard "
                    "deviation of the hold over the hands, from the variance of one hand's pay "
                    "at the meters now. SDs off: (actual - theoretical) / SD; beyond 3 either "
                    "way is seldom luck.",
                ],
            ),
            ("By table", Table([HEAD, *[_cells(r) for r in report.tables]], widths)),
            ("By game", Table([HEAD, *[_cells(r) for r in report.games]], widths)),
            ("Floor", Table([HEAD, _cells(report.floor)], widths)),
        ],
        letterhead=letterhead,
        signatures=("Prepared by", "Reviewed by"),
    )
