"""A paytable line of a table over the kept gaming days as SVG, drawn by the server: the
hands seen (summed from the first day), the hands the odds expect, and the band outside which
a look raises an alert. No script, no library: a picture any page or report can hold."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from controller.core.luck import count_text
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
        f'<circle cx="{x(i):.1f}" cy="{y(d.observed):.1f}" r="4" class="out" fill="#b3261e"/>'
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
        else f"{last.observed} seen, {count_text(float(last.expected))} expected in "
        f"{last.hands:,} hands"
    )
    # Presentation attributes, never a <style> element: a page's Content-Security-Policy
    # (style-src 'self') drops inline styles, and a chart inlined into a page must look the
    # same as one opened on its own.
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="{escape(title)}: {escape(summary)}">'
        f'<polygon class="band" fill="#cfe3d6" points="{" ".join(band)}"/>'
        '<polyline class="exp" fill="none" stroke="#2a6f4b" stroke-dasharray="5 4" '
        f'stroke-width="1.5" points="{expected}"/>'
        '<polyline class="obs" fill="none" stroke="#b3261e" stroke-width="2.5" '
        f'points="{observed}"/>' + "".join(outside) + '<g class="axis" stroke="#999">'
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{WIDTH - RIGHT}" y2="{TOP + plot_h}"/>'
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}"/></g>'
        '<g font-family="sans-serif" font-size="11" fill="#444">'
        f'<text x="{LEFT}" y="16" font-weight="bold">{escape(title)}</text>'
        f'<text x="{WIDTH - RIGHT}" y="16" text-anchor="end">{escape(summary)}</text>'
        f'<text x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end">{top:,.0f}</text>'
        f'<text x="{LEFT - 6}" y="{TOP + plot_h}" text-anchor="end">0</text>'
        + "".join(ticks)
        + f'<text x="{LEFT}" y="{HEIGHT - 2}">seen (red), expected (dashed), '
        "band: no alert inside</text></g>"
        "</svg>"
    )
