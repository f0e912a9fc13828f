"""A table's life on the link apart from its readings: released after a hit, offline,
removed from play and returned to it."""

from __future__ import annotations

from dataclasses import replace

from controller.core.reducer.builder import Builder
from controller.core.reducer.state import EngineError, EntryKind, LinkState, Outcome


def release_table(state: LinkState, *, table_id: str, at_us: int, by: str) -> Outcome:
    """A technician has verified the hit and reset the table: it may take bets again."""
    ts = state.table(table_id)
    if not ts.hit_pending:
        raise EngineError(f"table {table_id} has no hit pending")
    b = Builder(state)
    b.emit(
        EntryKind.TABLE_RELEASED,
        at_us,
        0,
        f"table {table_id} reset by {by} after a hit",
        table_id=table_id,
    )
    b.put_table(replace(ts, hit_pending=False))
    return b.done()


def table_offline(state: LinkState, *, table_id: str, at_us: int, reason: str) -> Outcome:
    ts = state.table(table_id)
    if not ts.online:
        return Outcome(state)
    b = Builder(state)
    b.emit(
        EntryKind.TABLE_OFFLINE, at_us, 0, f"table {table_id} offline: {reason}", table_id=table_id
    )
    b.put_table(replace(ts, online=False))
    return b.done()


def remove_from_play(
    state: LinkState, *, table_id: str, record_id: str, reason: str, at_us: int, by: str
) -> Outcome:
    """68 IAC 10-1-6.2(a): a table whose integrity is in question takes no part in the link."""
    ts = state.table(table_id)
    if ts.out_of_play:
        raise EngineError(f"table {table_id} is already out of play")
    b = Builder(state)
    b.emit(
        EntryKind.TABLE_OUT_OF_PLAY,
        at_us,
        0,
        f"table {table_id} removed from play by {by}: {reason}",
        table_id=table_id,
        details={"integrity_record": record_id},
    )
    b.put_table(replace(ts, out_of_play=True))
    return b.done()


def return_to_play(
    state: LinkState, *, table_id: str, record_id: str, at_us: int, by: str
) -> Outcome:
    """Back in play after repair and verification; credits count from the next reading."""
    ts = state.table(table_id)
    if not ts.out_of_play:
        raise EngineError(f"table {table_id} is not out of play")
    b = Builder(state)
    b.emit(
        EntryKind.TABLE_RETURNED_TO_PLAY,
        at_us,
        0,
        f"table {table_id} returned to play by {by}",
        table_id=table_id,
        details={"integrity_record": record_id},
    )
    b.put_table(replace(ts, out_of_play=False))
    return b.done()
