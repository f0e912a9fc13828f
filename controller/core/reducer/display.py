"""What the floor display shows: the live meter, or after a win the won amount and then
the won and reset amounts in turn; on a link of levels, the same for every level.

Wins that come close together are announced one after the other (``announcements``), each
for its whole time, never one dropped for another."""

from __future__ import annotations

from collections.abc import Sequence
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
# An announcement's whole time, which no other win takes from it: the won amount at once,
# then reset, won, reset, won and reset amounts in turn. Past it, an announcement goes on up
# to ``HIT_PHASE_US`` while no win as big as its own waits.
ANNOUNCE_US = WON_FIRST_US + 5 * ALTERNATE_US


class Slot(NamedTuple):
    """The time one win is announced: from ``start_us`` until ``end_us``."""

    win: LastWin
    rank: int  # the place of the level won: 0 for level 1 (the biggest), 1 for level 2, ...
    start_us: int
    end_us: int
    cut: bool = False  # a bigger win came: it is announced again, whole, later


def announcements(
    wins: Sequence[tuple[LastWin, int]],
    *,
    announce_us: int = ANNOUNCE_US,
    hit_phase_us: int = HIT_PHASE_US,
) -> tuple[Slot, ...]:
    """68 IAC 10-6-5(g)-(i) for wins close together: when each ``(win, rank)`` is announced.

    One announcement at a time, each for at least its whole time (``announce_us``), never a
    win dropped. The order:

    * a win of a bigger level (a smaller rank) is shown at once, as (g) asks: it cuts the
      announcement of a smaller one, which is announced again, whole, afterwards;
    * a win never cuts one as big or bigger: it waits;
    * of the waiting wins, the biggest level's goes first, then the earliest;
    * past its whole time an announcement goes on, up to ``hit_phase_us``, until a win at
      least as big as its own waits (a Mini waits out a Grand's time; a Mini after a Mini
      ends the first one's extra time).
    """
    order = sorted(wins, key=lambda w: w[0].at_us)
    slots: list[Slot] = []
    waiting: list[tuple[LastWin, int]] = []
    active: tuple[LastWin, int] | None = None
    start = 0
    i = 0
    while i < len(order) or active is not None or waiting:
        if active is None:
            if not waiting:
                active, start = order[i], order[i][0].at_us
                i += 1
                continue
            active = min(waiting, key=lambda w: (w[1], w[0].at_us))
            waiting.remove(active)
        rank = active[1]
        rivals = [w[0].at_us for w in waiting if w[1] <= rank]
        end = start + (max(announce_us, min(rivals) - start) if rivals else hit_phase_us)
        if i < len(order) and order[i][0].at_us < end:
            came = order[i]
            i += 1
            if came[1] < rank:
                slots.append(Slot(active[0], rank, start, came[0].at_us, cut=True))
                waiting.append(active)
                active, start = came, came[0].at_us
            else:
                waiting.append(came)
            continue
        slots.append(Slot(active[0], rank, start, end))
        active, start = None, end
    return tuple(slots)


def announcing(slots: Sequence[Slot], now_us: int) -> Slot | None:
    """The announcement on the display at ``now_us``, if any."""
    for slot in slots:
        if slot.start_us <= now_us < slot.end_us:
            return slot
    return None


def won_level(state: LinkState, win: LastWin) -> int:
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


def _shown(
    state: LinkState, slots: Sequence[Slot] | None, now_us: int, hit_phase_us: int
) -> tuple[LastWin, int, int] | None:
    """The win announced at ``now_us``, since when and for how long: from ``slots`` (the
    link's announcements), or without them from the link's last win alone."""
    if slots is None:
        win = state.last_win
        return None if win is None else (win, win.at_us, hit_phase_us)
    slot = announcing(slots, now_us)
    return None if slot is None else (slot.win, slot.start_us, slot.end_us - slot.start_us)


def display_frame(
    state: LinkState,
    *,
    now_us: int,
    slots: Sequence[Slot] | None = None,
    won_first_us: int = WON_FIRST_US,
    alternate_us: int = ALTERNATE_US,
    hit_phase_us: int = HIT_PHASE_US,
) -> DisplayFrame:
    """68 IAC 10-6-5(g)-(i): the won amount at once, then won and reset amounts in turn.

    Live, the first level's meter; after a win, the won amount and the meter of the level
    that was won (its reset amount and what it has grown by since). ``slots``: the link's
    announcements (``announcements``); without them, its last win's."""
    live = DisplayFrame(state.meter_cents, "live")
    shown = _shown(state, slots, now_us, hit_phase_us)
    if shown is None:
        return live
    win, start, length = shown
    mode = _phase(now_us - start, won_first_us, alternate_us, length)
    if mode == "live":
        return live
    if mode == "won":
        return DisplayFrame(win.won_cents, "won", win)
    return DisplayFrame(_level_cents(state, won_level(state, win)), "reset", win)


def level_frames(
    state: LinkState,
    *,
    now_us: int,
    slots: Sequence[Slot] | None = None,
    won_first_us: int = WON_FIRST_US,
    alternate_us: int = ALTERNATE_US,
    hit_phase_us: int = HIT_PHASE_US,
) -> tuple[LevelFrame, ...]:
    """Every level's frame, in the pool's order (level 1 first): the level whose win is
    announced goes through the hit phase of 68 IAC 10-6-5(g)-(i) (its won amount at once,
    then won and reset amounts in turn), every other level shows its meter live. A fixed-pay
    link has no level: nothing."""
    shown = _shown(state, slots, now_us, hit_phase_us)
    win = None if shown is None else shown[0]
    won = None if win is None else won_level(state, win)
    out: list[LevelFrame] = []
    for i, lv in enumerate(state.levels):
        cfg = lv.config
        ceiling = None if cfg.mystery is None else cfg.mystery.ceiling_cents
        amount = displayed_cents(lv.meter_units)
        mode = "live"
        if shown is not None and won == i:
            mode = _phase(now_us - shown[1], won_first_us, alternate_us, shown[2])
        if mode == "won" and win is not None:
            out.append(LevelFrame(level_key(i), cfg.name, win.won_cents, mode, ceiling, win))
        else:
            shown_win = win if mode == "reset" else None
            out.append(LevelFrame(level_key(i), cfg.name, amount, mode, ceiling, shown_win))
    return tuple(out)
