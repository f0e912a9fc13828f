"""The par sheet of a link of levels or of a fixed-pay link (a classic link's is
``odds.par_sheet_dict``): the return at every level's reset amount and meter, the part each
level pays, envy per other seat, the mystery levels' long-run return stated apart, and a
fixed-pay link's house edge. Exact: ``Fraction`` throughout, whole cents for amounts."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from controller.core.games import Paytable
from controller.core.money import BP_PER_WHOLE, format_bp, format_cents
from controller.core.odds import (
    ceil_cents,
    fraction_text,
    line_dict,
    line_odds,
    par_sheet,
    percent_text,
    return_dict,
    sheet_head,
)
from controller.core.reducer.levels import LevelConfig

__all__ = ["mystery_figures", "pool_par_sheet_dict", "signed_percent_text"]


def signed_percent_text(value: Fraction) -> str:
    return percent_text(value) if value >= 0 else "-" + percent_text(-value)


def pool_par_sheet_dict(
    paytable: Paytable,
    *,
    wagers_cents: Sequence[int],
    levels: Sequence[LevelConfig],
    meters_cents: Sequence[int],
) -> dict[str, Any]:
    """The par sheet of a link of ``levels`` (an empty sequence for a fixed-pay link) as the
    packet carries it: per wager, the return at every level's reset amount and at every
    level's meter (``meters_cents``), the part of it each level pays, the envy per other seat
    with a side bet, the mystery levels' long-run return stated apart (``mystery_figures``)
    and, for a fixed-pay link, the house edge."""
    resets = [cfg.reset_cents for cfg in levels]
    by_wager = []
    for sheet in (par_sheet(paytable, wager_cents=w) for w in sorted(set(wagers_cents))):
        at_reset = sheet.return_at_levels(resets)
        entry: dict[str, Any] = {
            "wager_cents": sheet.wager_cents,
            "wager": format_cents(sheet.wager_cents),
            "return_at_reset": return_dict(at_reset),
            "return_at_meter": return_dict(sheet.return_at_levels(meters_cents)),
            # Several meters: no one meter at which the side bet breaks even.
            "break_even_meter": None,
            "fixed_lines": return_dict(sheet.fixed_return),
            "by_level": [
                {
                    "level": i + 1,
                    "name": cfg.name,
                    "at_reset": return_dict(sheet.level_share(i + 1) * cfg.reset_cents),
                    "at_meter": return_dict(sheet.level_share(i + 1) * meters_cents[i]),
                }
                for i, cfg in enumerate(levels)
            ],
        }
        if any(o.line.envy_cents is not None for o in sheet.lines):
            entry["envy_per_other_seat"] = return_dict(sheet.envy_per_other_seat)
        if not levels:
            edge = 1 - at_reset
            entry["house_edge"] = {
                "exact": fraction_text(edge) if edge >= 0 else "-" + fraction_text(-edge),
                "percent": signed_percent_text(edge),
            }
        by_wager.append(entry)
    out = sheet_head(
        paytable,
        reset_cents=resets[0] if resets else 0,
        meter_cents=meters_cents[0] if meters_cents else 0,
    )
    out["levels"] = [
        {"level": i + 1, "name": cfg.name, "reset_cents": cfg.reset_cents, "meter_cents": m}
        for i, (cfg, m) in enumerate(zip(levels, meters_cents, strict=True))
    ]
    out["lines"] = [line_dict(o, levels) for o in line_odds(paytable)]
    out["by_wager"] = by_wager
    out["mystery"] = mystery_figures(levels)
    out["fixed_pay"] = not levels
    return out


def mystery_figures(levels: Sequence[LevelConfig]) -> list[dict[str, Any]]:
    """Each mystery level's long-run return, stated apart from the per-hand return.

    A mystery level is won by the wager that takes its meter to a trigger drawn uniformly
    from its floor to its ceiling, not by a hand, so no per-hand probability prices it. In the
    long run it pays the average trigger ``(floor + ceiling) / 2`` once per the wagers it takes
    to carry the meter from its reset amount to that average at its shown share ``s``:
    ``(average - reset) / s``. Its return per unit wagered is therefore
    ``average / ((average - reset) / s) = s x average / (average - reset)``: the shown share
    itself, plus the reset amount seeded each time (``s x reset / (average - reset)``).
    Exact, as a fraction; the rounding of each contribution to whole units is left out.
    """
    out = []
    for i, cfg in enumerate(levels):
        m = cfg.mystery
        if m is None:
            continue
        average = Fraction(m.floor_cents + m.ceiling_cents, 2)
        share = Fraction(cfg.rate_bp, BP_PER_WHOLE)
        wagered = (average - cfg.reset_cents) / share
        ret = average / wagered
        out.append(
            {
                "level": i + 1,
                "name": cfg.name,
                "floor_cents": m.floor_cents,
                "ceiling_cents": m.ceiling_cents,
                "average_trigger": {
                    "exact_cents": fraction_text(average),
                    "amount": format_cents(ceil_cents(average)),
                },
                "shown_share_bp": cfg.rate_bp,
                "wagered_per_hit": {
                    "exact_cents": fraction_text(wagered),
                    "amount": format_cents(ceil_cents(wagered)),
                },
                "return": return_dict(ret),
                "seeded_return": return_dict(ret - share),
                "explanation": (
                    f"won by the wager that takes the meter to a trigger drawn uniformly from "
                    f"{format_cents(m.floor_cents)} to {format_cents(m.ceiling_cents)}, not by a "
                    f"hand: left out of the per-hand return. It pays the average trigger "
                    f"{format_cents(ceil_cents(average))} once per "
                    f"{format_cents(ceil_cents(wagered))} wagered (what carries the meter from "
                    f"the reset amount {format_cents(cfg.reset_cents)} to that average at its "
                    f"shown share of {format_bp(cfg.rate_bp)}): {percent_text(ret)} of every "
                    f"wager, its shown share plus {percent_text(ret - share)} seeded by the "
                    "reset amount"
                ),
            }
        )
    return out
