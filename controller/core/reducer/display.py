"""What the floor display shows: the live meter, or after a win the won amount and then
the won and reset amounts in turn."""

from __future__ import annotations

from typing import NamedTuple

from controller.core.reducer.state import LastWin, LinkState


class DisplayFrame(NamedTuple):
    """What a display shows now. A named tuple: one is made at every poll of every table."""

    amount_cents: int
    mode: str  # "live", "won" or "reset"
    win: LastWin | None = None


def display_frame(
    state: LinkState,
    *,
    now_us: int,
    won_first_us: int = 10_000_000,
    alternate_us: int = 4_000_000,
    hit_phase_us: int = 120_000_000,
) -> DisplayFrame:
    """68 IAC 10-6-5(g)-(i): the won amount at once, then won and reset amounts in turn."""
    win = state.last_win
    live = DisplayFrame(state.meter_cents, "live")
    if win is None:
        return live
    since = now_us - win.at_us
    if since < 0 or since >= hit_phase_us:
        return live
    if since < won_first_us:
        return DisplayFrame(win.won_cents, "won", win)
    showing_won = ((since - won_first_us) // alternate_us) % 2 == 1
    if showing_won:
        return DisplayFrame(win.won_cents, "won", win)
    return DisplayFrame(state.meter_cents, "reset", win)
