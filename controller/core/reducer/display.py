"""What the floor display shows: the live meter, or after a win the won amount and then
the won and reset amounts in turn; on a link of levels, the same for every level."""

from __future__ import annotations

from typing import NamedTuple

from controller.core.money import displayed_cents
from controller.core.reducer.levels import level_key, parse_key
from controller.core.reducer.state import LastWin, LinkState


class DisplayFrame(NamedTuple):
    """What a display shows now. A named tuple: one is made at every poll of every table."""

    amount_cents: int
    mode: str  # "live", "won" or "reset"
    win: LastWin | None = None


class LevelFrame(NamedTuple):
    """What a display shows of one level of a link's pool now.

    Never the mystery trigger, never a hidden (reserve) or overflow meter: a patron sees the
    level's meter as it stands and, for a mystery level, the ceiling it must hit by."""

    key: str  # "L1", "L2", ...
    name: str
    amount_cents: int
    mode: str  # "live", "won" or "reset"
    must_hit_by_cents: int | None = None
    win: LastWin | None = None


# 68 IAC 10-6-5(g)-(i): the won amount at once (for ``won_first_us``), then won and reset
# amounts in turn every ``alternate_us``, until ``hit_phase_us`` after the win.
WON_FIRST_US = 10_000_000
ALTERNATE_US = 4_000_000
HIT_PHASE_US = 120_000_000


def _won_level(state: LinkState, win: LastWin) -> int:
    """The place of the level ``win`` was paid from (a win from before levels: level 1)."""
    if win.level is None:
        return 0
    try:
        index, pot = parse_key(win.level)
    except ValueError:
        return 0
    return index if pot == "meter" and index < len(state.levels) else 0


def _level_cents(state: LinkState, index: int) -> int:
    if not state.levels:
        return state.meter_cents
    return displayed_cents(state.levels[index].meter_units)


def _phase(
    since: int, won_first_us: int, alternate_us: int, hit_phase_us: int
) -> str:  # "live", "won" or "reset"
    if since < 0 or since >= hit_phase_us:
        return "live"
    if since < won_first_us:
        return "won"
    showing_won = ((since - won_first_us) // alternate_us) % 2 == 1
    return "won" if showing_won else "reset"


def display_frame(
    state: LinkState,
    *,
    now_us: int,
    won_first_us: int = WON_FIRST_US,
    alternate_us: int = ALTERNATE_US,
    hit_phase_us: int = HIT_PHASE_US,
) -> DisplayFrame:
    """68 IAC 10-6-5(g)-(i): the won amount at once, then won and reset amounts in turn.

    Live, the first level's meter; after a win, the won amount and the meter of the level
    that was won (its reset amount and what it has grown by since)."""
    win = state.last_win
    live = DisplayFrame(state.meter_cents, "live")
    if win is None:
        return live
    mode = _phase(now_us - win.at_us, won_first_us, alternate_us, hit_phase_us)
    if mode == "live":
        return live
    if mode == "won":
        return DisplayFrame(win.won_cents, "won", win)
    return DisplayFrame(_level_cents(state, _won_level(state, win)), "reset", win)


def level_frames(
    state: LinkState,
    *,
    now_us: int,
    won_first_us: int = WON_FIRST_US,
    alternate_us: int = ALTERNATE_US,
    hit_phase_us: int = HIT_PHASE_US,
) -> tuple[LevelFrame, ...]:
    """Every level's frame, in the pool's order (level 1 first): the level that was won
    last goes through the hit phase of 68 IAC 10-6-5(g)-(i) (its won amount at once, then
    won and reset amounts in turn), every other level shows its meter live. A fixed-pay link
    has no level: nothing."""
    win = state.last_win
    won = None if win is None else _won_level(state, win)
    out: list[LevelFrame] = []
    for i, lv in enumerate(state.levels):
        cfg = lv.config
        ceiling = None if cfg.mystery is None else cfg.mystery.ceiling_cents
        amount = displayed_cents(lv.meter_units)
        mode = "live"
        if win is not None and won == i:
            mode = _phase(now_us - win.at_us, won_first_us, alternate_us, hit_phase_us)
        if mode == "won" and win is not None:
            out.append(LevelFrame(level_key(i), cfg.name, win.won_cents, mode, ceiling, win))
        else:
            shown_win = win if mode == "reset" else None
            out.append(LevelFrame(level_key(i), cfg.name, amount, mode, ceiling, shown_win))
    return tuple(out)
