"""The pool at work: one wager's contribution shared among the levels (limits, overflow,
the next level, the hidden reserve), a level reset funded from its reserve and overflow, and
a mystery level's trigger armed and reached."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import NamedTuple

from controller.core.money import cents_to_units, format_cents
from controller.core.reducer.builder import Builder
from controller.core.reducer.levels import (
    OVERFLOW,
    RESERVE,
    AboveLimit,
    LevelState,
    MysteryDraw,
    level_key,
    limit_units,
)
from controller.core.reducer.state import EngineError, EntryKind, LinkState


class Crossing(NamedTuple):
    """A mystery level whose trigger a contribution reached."""

    level: int  # the level's place in the pool, from 0
    need_units: int  # what the level still lacked of its trigger before the contribution


def contribution_moves(b: Builder, wager_cents: int) -> tuple[dict[str, int], list[Crossing]]:
    """How a wager of ``wager_cents`` (credits x denomination) moves the pool's meters: each
    level's shown share to its meter up to its limit, the excess to its overflow meter or on
    to the next level, its hidden share to its reserve. Exact: every share is whole units."""
    moves: dict[str, int] = {}
    crossings: list[Crossing] = []
    carry = 0
    last = len(b.levels) - 1
    for i, lv in enumerate(b.levels):
        cfg = lv.config
        key = level_key(i)
        share = wager_cents * cfg.rate_bp + carry
        carry = 0
        if cfg.reserve_bp:
            moves[key + RESERVE] = wager_cents * cfg.reserve_bp
        current = b.meter_of(key)
        limit = limit_units(cfg)
        if limit is not None and current + share > limit:
            room = max(0, limit - current)
            excess = share - room
            share = room
            if cfg.above_limit is AboveLimit.NEXT_LEVEL and i < last:
                carry = excess
            else:
                moves[key + OVERFLOW] = excess
        moves[key] = share
        if cfg.mystery is not None and lv.armed is not None:
            trigger = cents_to_units(lv.armed.trigger_cents)
            # A trigger already passed when it was armed (a wager beyond the last trigger
            # stays on the meter over the reset) is reached by the next wager: the level
            # must hit by its ceiling, never climb past it unwon.
            if trigger <= current + share and (current < trigger or share > 0):
                crossings.append(Crossing(level=i, need_units=max(0, trigger - current)))
    return moves, crossings


def reset_level(b: Builder, index: int, at_us: int, table_id: str | None, why: str) -> None:
    """Reset a level that was just won: its reset amount, funded first from its reserve (the
    house seeds the rest), then what its overflow meter holds moved in up to its limit."""
    lv = b.levels[index]
    cfg = lv.config
    key = level_key(index)
    reset = cents_to_units(cfg.reset_cents)
    from_reserve = min(
        b.meter_of(key + RESERVE) if cfg.reserve_bp or lv.reserve_units else 0, reset
    )
    moves = {key: reset}
    if from_reserve:
        moves[key + RESERVE] = -from_reserve
    overflow = lv.overflow_units
    moved_in = 0
    if overflow:
        limit = limit_units(cfg)
        after = b.meter_of(key) + reset
        room = overflow if limit is None else max(0, limit - after)
        moved_in = min(overflow, room)
        if moved_in:
            moves[key] += moved_in
            moves[key + OVERFLOW] = -moved_in
    seeded = reset - from_reserve
    parts = [f"{cfg.name} reset with {format_cents(cfg.reset_cents)}"]
    if from_reserve:
        parts.append(f"{format_cents(from_reserve // 10_000)} of it from the reserve")
    if moved_in:
        parts.append(f"{format_cents(moved_in // 10_000)} moved in from the overflow")
    b.move(
        EntryKind.JACKPOT_RESET,
        at_us,
        moves,
        f"{why}: " + ", ".join(parts),
        details={
            "level": key,
            "reset_cents": cfg.reset_cents,
            "from_reserve_units": from_reserve,
            "from_overflow_units": moved_in,
            "seeded_units": seeded,
        },
        table_id=table_id,
    )
    b.put_level(index, replace(b.levels[index], wins=b.levels[index].wins + 1, armed=None))
    if cfg.mystery is not None:
        arm_mystery(b, index, at_us)


def arm_mystery(b: Builder, index: int, at_us: int) -> bool:
    """Arm a mystery level with the next draw made ready for it, sealing its commitment in
    the history (the trigger and salt stay secret until the level hits). False when no draw
    is ready: the level cannot hit until one is (the controller draws one at once)."""
    lv = b.levels[index]
    cfg = lv.config
    m = cfg.mystery
    if m is None or lv.armed is not None or not lv.draws:
        return False
    draw, rest = lv.draws[0], lv.draws[1:]
    if not m.floor_cents <= draw.trigger_cents <= m.ceiling_cents:
        raise EngineError(
            f"level {cfg.name}: a trigger of {format_cents(draw.trigger_cents)} is outside "
            f"{format_cents(m.floor_cents)} to {format_cents(m.ceiling_cents)}"
        )
    key = level_key(index)
    commitment = draw.commitment(b.state.link_id, key)
    b.put_level(index, replace(lv, armed=draw, draws=rest))
    b.emit(
        EntryKind.MYSTERY_ARMED,
        at_us,
        0,
        f"{cfg.name}: mystery trigger drawn between {format_cents(m.floor_cents)} and "
        f"{format_cents(m.ceiling_cents)}; commitment {commitment[:16]}...",
        details={
            "level": key,
            "commitment": commitment,
            "floor_cents": m.floor_cents,
            "ceiling_cents": m.ceiling_cents,
        },
    )
    return True


def arm_ready(b: Builder, at_us: int) -> None:
    """Arm every mystery level left unarmed (more resets in one step than draws ready)."""
    for i, lv in enumerate(b.levels):
        if lv.config.mystery is not None and lv.armed is None and lv.draws:
            arm_mystery(b, i, at_us)


def needs_arming(levels: Sequence[LevelState]) -> bool:
    return any(lv.config.mystery is not None and lv.armed is None and lv.draws for lv in levels)


def winning_seat(
    need_units: int,
    rate_bp: int,
    denomination_cents: int,
    seat_credits: Sequence[int] | None,
    bet_seats: frozenset[int] | None,
) -> tuple[int, str]:
    """Which seat's wager took a mystery level to its trigger, and by which rule.

    The table reports one reading's wagers together; their order within it is not known. The
    rule, recorded with every mystery hit: the reading's wagers are laid down seat by seat,
    seat 1 first, each seat's credits in full, and the seat whose wager reaches the trigger
    wins. Without per-seat counters: the lowest seat with a side bet in the round (the bet
    sensors); without either: seat 1, and the technician confirms at the table.
    """
    if seat_credits is not None and any(seat_credits):
        reached = 0
        for seat, credits in enumerate(seat_credits, start=1):
            reached += credits * denomination_cents * rate_bp
            if credits and reached >= need_units:
                return seat, "per-seat counters, seats in order from seat 1"
    if bet_seats:
        return min(bet_seats), "lowest seat with a side bet in the round (no per-seat counters)"
    return 1, "no per-seat counters and no bet sensors: seat 1, for the technician to confirm"


def draws_wanted(state: LinkState, ready: int) -> dict[int, int]:
    """How many draws each mystery level lacks to have ``ready`` made ready, by level index."""
    return {
        i: ready - len(lv.draws)
        for i, lv in enumerate(state.levels)
        if lv.config.mystery is not None and len(lv.draws) < ready
    }


def with_draws(state: LinkState, draws: Mapping[int, Sequence[MysteryDraw]]) -> LinkState:
    """The state with ``draws`` (by level index) queued after each mystery level's own draws.
    No entry: a draw stays secret until the level is armed with it (``arm_mystery`` seals its
    commitment) and revealed when the level hits."""
    if not any(draws.values()):
        return state
    levels = list(state.levels)
    for i, more in draws.items():
        lv = levels[i]
        m = lv.config.mystery
        if m is None:
            raise EngineError(f"level {lv.config.name} is not a mystery level: it takes no draw")
        for d in more:
            if not m.floor_cents <= d.trigger_cents <= m.ceiling_cents:
                raise EngineError(
                    f"level {lv.config.name}: a trigger of {format_cents(d.trigger_cents)} is "
                    f"outside {format_cents(m.floor_cents)} to {format_cents(m.ceiling_cents)}"
                )
        levels[i] = replace(lv, draws=(*lv.draws, *more))
    return replace(state, levels=tuple(levels))
