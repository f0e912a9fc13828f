"""Who deals at each table: the dealers' sign-ins and sign-outs, and who dealt when.

The record of a table's dealers is a list of events: a dealer signed in at a table, or out of
it, when, and who recorded it; never edited. Two rules hold at every moment and are stated
once, here (``_Board.apply``): a dealer deals at one table at a time, and a table has one
dealer at a time. A dealer who signs in at a second table is signed out of the first, and one
who signs in where another deals signs that dealer out. ``sign_in`` gives those sign-outs as
events of their own, so the record says them plainly; reading applies the same rules, so any
list of events reads one way.

A turn at a table runs from its sign-in (included) to its sign-out (excluded): at the
instant of a handover the new dealer deals. Events are read in the order they happened, by
time, and in the order given among those of the same time (the order they were recorded).
Times are microseconds, as everywhere in the records. What a table reported while no one was
signed in there is dealt by no one known (``dealer_at`` gives None, no span covers it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum

from controller.refusal import Conflict

__all__ = [
    "DealerEvent",
    "DealerMove",
    "DealerSpan",
    "DealerTurn",
    "dealer_at",
    "dealer_spans",
    "dealing",
    "sign_in",
    "sign_out",
    "spans_by_table",
    "turns",
]


class DealerMove(StrEnum):
    SIGN_IN = "sign_in"
    SIGN_OUT = "sign_out"


@dataclass(frozen=True, slots=True, kw_only=True)
class DealerEvent:
    """A dealer signed in at a table or out of it, at ``at_us``, recorded by ``recorded_by``
    (the dealer, or the supervisor who signed them in or out)."""

    table_id: str
    dealer: str
    kind: DealerMove
    at_us: int
    recorded_by: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DealerTurn:
    """A dealer's turn at one table, as recorded: ``until_us`` and ``signed_out_by`` are None
    while it lasts."""

    table_id: str
    dealer: str
    from_us: int
    until_us: int | None
    signed_in_by: str
    signed_out_by: str | None


@dataclass(frozen=True, slots=True)
class DealerSpan:
    """Who dealt at a table from ``from_us`` (included) until ``until_us`` (excluded), within
    a period: what the table's rounds and hits of that time are held against."""

    dealer: str
    from_us: int
    until_us: int


class _Board:
    """The turns open at each table, as the events are applied in order."""

    def __init__(self, open_turns: Iterable[DealerTurn] = ()) -> None:
        self.open: dict[str, DealerTurn] = {t.table_id: t for t in open_turns}

    def apply(self, event: DealerEvent) -> list[DealerTurn]:
        """Apply one event; the turns it ends, ended."""
        here = self.open.get(event.table_id)
        if event.kind is DealerMove.SIGN_OUT:
            # Only the dealer dealing there signs out of a table; any other sign-out is moot.
            if here is None or here.dealer != event.dealer:
                return []
            del self.open[event.table_id]
            return [replace(here, until_us=event.at_us, signed_out_by=event.recorded_by)]
        if here is not None and here.dealer == event.dealer:
            return []  # dealing there already: the turn goes on
        # One table per dealer, one dealer per table: whatever else either holds ends now.
        ended = [
            replace(turn, until_us=event.at_us, signed_out_by=event.recorded_by)
            for turn in self.open.values()
            if turn.table_id == event.table_id or turn.dealer == event.dealer
        ]
        for turn in ended:
            del self.open[turn.table_id]
        self.open[event.table_id] = DealerTurn(
            table_id=event.table_id,
            dealer=event.dealer,
            from_us=event.at_us,
            until_us=None,
            signed_in_by=event.recorded_by,
            signed_out_by=None,
        )
        return ended


def _in_order(events: Iterable[DealerEvent]) -> list[DealerEvent]:
    return sorted(events, key=lambda e: e.at_us)  # stable: the same time keeps its order


def _played(events: Iterable[DealerEvent]) -> tuple[list[DealerTurn], _Board]:
    board = _Board()
    ended: list[DealerTurn] = []
    for event in _in_order(events):
        ended.extend(board.apply(event))
    return ended, board


def turns(events: Iterable[DealerEvent]) -> list[DealerTurn]:
    """Every turn the events record, ended or not, in the order they began."""
    ended, board = _played(events)
    return sorted([*ended, *board.open.values()], key=lambda t: t.from_us)


def dealing(events: Iterable[DealerEvent]) -> dict[str, DealerTurn]:
    """The turns open after the events: who deals at each table now, by table."""
    return dict(_played(events)[1].open)


def dealer_at(events: Iterable[DealerEvent], table_id: str, at_us: int) -> str | None:
    """Who dealt at ``table_id`` at ``at_us`` by the events (None: no one signed in)."""
    board = _Board()
    for event in _in_order(events):
        if event.at_us > at_us:
            break
        board.apply(event)
    turn = board.open.get(table_id)
    return None if turn is None else turn.dealer


def _spans(
    all_turns: Iterable[DealerTurn], since_us: int, until_us: int
) -> dict[str, list[DealerSpan]]:
    found: dict[str, list[DealerSpan]] = {}
    for t in all_turns:
        start = max(t.from_us, since_us)
        end = until_us if t.until_us is None else min(t.until_us, until_us)
        if start < end:
            found.setdefault(t.table_id, []).append(DealerSpan(t.dealer, start, end))
    return found


def dealer_spans(
    events: Iterable[DealerEvent], table_id: str, since_us: int, until_us: int
) -> list[DealerSpan]:
    """The period ``[since_us, until_us)`` at ``table_id`` cut into who dealt when, in
    order; a time when no one was signed in there is in no span."""
    mine = [e for e in events if e.table_id == table_id]
    return spans_by_table(mine, since_us, until_us).get(table_id, [])


def spans_by_table(
    events: Iterable[DealerEvent], since_us: int, until_us: int
) -> dict[str, list[DealerSpan]]:
    """``dealer_spans`` of every table the events name that someone dealt at in the period,
    by table."""
    if until_us < since_us:
        raise ValueError(f"a period ends after it begins: {since_us} to {until_us}")
    return _spans(turns(events), since_us, until_us)


def sign_in(
    open_turns: Iterable[DealerTurn],
    *,
    table_id: str,
    dealer: str,
    at_us: int,
    recorded_by: str,
) -> tuple[DealerEvent, ...]:
    """The events that sign ``dealer`` in at ``table_id`` while ``open_turns`` are dealt
    (every table's open turn: ``dealing(...).values()``): first a sign-out of each turn it ends (the
    dealer's at another table, another dealer's at this one), then the sign-in. None when
    the dealer deals there already."""
    board = _Board(open_turns)
    event = DealerEvent(
        table_id=table_id,
        dealer=dealer,
        kind=DealerMove.SIGN_IN,
        at_us=at_us,
        recorded_by=recorded_by,
    )
    here = board.open.get(table_id)
    if here is not None and here.dealer == dealer:
        return ()
    ended = board.apply(event)
    outs = tuple(
        DealerEvent(
            table_id=t.table_id,
            dealer=t.dealer,
            kind=DealerMove.SIGN_OUT,
            at_us=at_us,
            recorded_by=recorded_by,
        )
        for t in ended
    )
    return (*outs, event)


def sign_out(
    open_turns: Iterable[DealerTurn],
    *,
    table_id: str,
    dealer: str | None,
    at_us: int,
    recorded_by: str,
) -> DealerEvent:
    """The event that signs the dealer at ``table_id`` out of it: ``dealer`` when named
    (refused unless that dealer deals there), whoever deals there when not (a supervisor
    signing out a dealer who left without). Refused when no one deals there."""
    board = _Board(open_turns)
    here = board.open.get(table_id)
    if here is None:
        raise Conflict(f"no dealer is signed in at table {table_id}")
    if dealer is not None and here.dealer != dealer:
        raise Conflict(f"{dealer} does not deal at table {table_id}: {here.dealer} does")
    return DealerEvent(
        table_id=table_id,
        dealer=here.dealer,
        kind=DealerMove.SIGN_OUT,
        at_us=at_us,
        recorded_by=recorded_by,
    )
