"""A paytable line of a table over the kept gaming days as SVG, drawn by the server: the
hands seen (summed from the first day), the hands the odds expect, and the band outside which
a look raises an alert. No script, no library: a picture any page or report can hold."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from controller.core.protection import DayPoint

WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 28, 36


def line_chart_svg(days: Sequence[DayPoint], *, title: str) -> str:
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    top: float = max([1, *(d.band_high for d in days), *(d.observed for d in days)])
    top = max(top, max((float(d.expected) for d in days), default=1.0))
    n = max(1, len(days) - 1)

    def x(i: int) -> float:
        return LEFT + plot_w * i / n

    def y(value: float) -> float:
        return TOP + plot_h * (1 - value / top)

    band = [f"{x(i):.1f},{y(d.band_high):.1f}" for i, d in enumerate(days)]
    band += [f"{x(i):.1f},{y(d.band_low):.1f}" for i, d in reversed(list(enumerate(days)))]
    expected = " ".join(f"{x(i):.1f},{y(float(d.expected)):.1f}" for i, d in enumerate(days))
    observed = " ".join(f"{x(i):.1f},{y(d.observed):.1f}" for i, d in enumerate(days))
    outside = [
        f'<circle cx="{x(i):.1f}" cy="{y(d.observed):.1f}" r="4" class="out"/>'
        for i, d in enumerate(days)
        if d.hands and not d.band_low <= d.observed <= d.band_high
    ]
    ticks = []
    for i, d in enumerate(days):
        if i % 7 == len(days) % 7 or i == len(days) - 1:
            ticks.append(
                f'<text x="{x(i):.1f}" y="{HEIGHT - 14}" text-anchor="middle">'
                f"{d.day.strftime('%m-%d')}</text>"
            )
    last = days[-1] if days else None
    summary = (
        ""
        if last is None
        else f"{last.observed} seen, {float(last.expected):.3g} expected in {last.hands:,} hands"
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="{escape(title)}: {escape(summary)}">'
        "<style>text{font:11px sans-serif;fill:#444}.band{fill:#cfe3d6}"
        ".exp{fill:none;stroke:#2a6f4b;stroke-dasharray:5 4;stroke-width:1.5}"
        ".obs{fill:none;stroke:#b3261e;stroke-width:2.5}.out{fill:#b3261e}"
        ".axis{stroke:#999}</style>"
        f'<text x="{LEFT}" y="16" style="font-weight:bold">{escape(title)}</text>'
        f'<text x="{WIDTH - RIGHT}" y="16" text-anchor="end">{escape(summary)}</text>'
        f'<polygon class="band" points="{" ".join(band)}"/>'
        f'<polyline class="exp" points="{expected}"/>'
        f'<polyline class="obs" points="{observed}"/>'
        + "".join(outside)
        + f'<line class="axis" x1="{LEFT}" y1="{TOP + plot_h}" x2="{WIDTH - RIGHT}" '
        f'y2="{TOP + plot_h}"/>'
        f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}"/>'
        f'<text x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end">{top:,.0f}</text>'
        f'<text x="{LEFT - 6}" y="{TOP + plot_h}" text-anchor="end">0</text>'
        + "".join(ticks)
        + f'<text x="{LEFT}" y="{HEIGHT - 2}">seen (red), expected (dashed), '
        "band: no alert inside</text>"
        "</svg>"
    )
