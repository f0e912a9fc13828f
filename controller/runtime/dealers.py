"""Dealers signing in at the floor's tables and out of them, and who dealt when.

The rules (one table per dealer, one dealer per table, a sign-in where another deals signs
them out) are the pure core's (``controller.core.dealers``); the record is storage's
(``controller.storage.dealers``). ``Dealers`` dates each change by the floor's clock, records
it with an audit entry per event in one transaction, and reads the record back.
"""

from __future__ import annotations

from dataclasses import replace

from controller.access import users
from controller.core import dealers as core
from controller.core.dealers import DealerEvent, DealerMove, DealerSpan, DealerTurn
from controller.periods import Clock
from controller.refusal import Invalid
from controller.roles import Role
from controller.runtime.link_memory import LinkMemory
from controller.storage.dealers import DealerRecord, dealer_changes, dealer_reads
from controller.storage.handles import Database

__all__ = ["Dealers", "NotADealer"]


class NotADealer(Invalid):
    """The person named to deal is no enabled dealer's account."""


class Dealers:
    """Who deals at the tables of one floor: signed in and out, and read back."""

    def __init__(self, engine: Database, memory: LinkMemory, clock: Clock) -> None:
        self.engine = engine
        self.memory = memory
        self.clock = clock

    async def _check_dealer(self, username: str) -> None:
        user = await users.get_user(self.engine, username)
        if user is None or user.role is not Role.DEALER:
            raise NotADealer(f"{username!r} is not a dealer's account")
        if user.disabled:
            raise NotADealer(f"the account of {username!r} is disabled")

    async def _now(self, record: DealerRecord) -> tuple[dict[str, DealerTurn], int]:
        """Who deals where, and the time of a change made now: the clock's, never before the
        newest event recorded (another process's clock may run a little ahead), so that the
        record read in time order is the record in the order it was decided."""
        last = await record.last_events()
        newest = max((e.at_us for e in last), default=0)
        return core.dealing(last), max(self.clock.now_us(), newest)

    async def sign_in(self, table_id: str, *, dealer: str, actor: str) -> DealerTurn:
        """``dealer`` deals at ``table_id`` from now, recorded by ``actor``: signed out of
        any other table, and whoever dealt here signed out (``core.sign_in``). Signing in
        where one deals already changes nothing. The turn now open."""
        self.memory.link_of(table_id)  # no such table: NotFound
        await self._check_dealer(dealer)
        async with dealer_changes(self.engine) as record:
            open_turns, at_us = await self._now(record)
            events = core.sign_in(
                open_turns.values(),
                table_id=table_id,
                dealer=dealer,
                at_us=at_us,
                recorded_by=actor,
            )
            if not events:
                return open_turns[table_id]
            await record.append(events)
            for event in events:
                await _audit(record, event, open_turns, signed_in=events[-1])
        return DealerTurn(
            table_id=table_id,
            dealer=dealer,
            from_us=at_us,
            until_us=None,
            signed_in_by=actor,
            signed_out_by=None,
        )

    async def sign_out(self, table_id: str, *, dealer: str | None, actor: str) -> DealerTurn:
        """The dealer at ``table_id`` (``dealer`` when named: refused unless they deal there)
        signed out of it now, recorded by ``actor``. The turn it ends, ended."""
        self.memory.link_of(table_id)
        async with dealer_changes(self.engine) as record:
            open_turns, at_us = await self._now(record)
            event = core.sign_out(
                open_turns.values(),
                table_id=table_id,
                dealer=dealer,
                at_us=at_us,
                recorded_by=actor,
            )
            await record.append([event])
            await _audit(record, event, open_turns, signed_in=None)
        return replace(open_turns[table_id], until_us=at_us, signed_out_by=actor)

    async def dealing(self) -> dict[str, DealerTurn]:
        """Who deals at each table now: the open turns, by table (a table where no one is
        signed in is absent)."""
        async with dealer_reads(self.engine) as record:
            return await record.dealing()

    async def dealing_at(self, table_id: str) -> DealerTurn | None:
        """Who deals at ``table_id`` now; None: no one is signed in there."""
        self.memory.link_of(table_id)
        async with dealer_reads(self.engine) as record:
            return (await record.dealing(table_id)).get(table_id)

    async def turns(self, table_id: str, *, since_us: int, until_us: int) -> list[DealerTurn]:
        """The turns at ``table_id`` that overlap ``[since_us, until_us)``, as recorded (not
        cut to the period), in the order they began."""
        self.memory.link_of(table_id)
        async with dealer_reads(self.engine) as record:
            events = await record.events(since_us=since_us, until_us=until_us, table_id=table_id)
        return [
            t
            for t in core.turns(events)
            if t.from_us < until_us and (t.until_us is None or t.until_us > since_us)
        ]

    async def spans(
        self, *, since_us: int, until_us: int, table_id: str | None = None
    ) -> dict[str, list[DealerSpan]]:
        """``[since_us, until_us)`` cut into who dealt when, per table (``table_id`` only
        when named): what rounds and hits of the period are held against."""
        if table_id is not None:
            self.memory.link_of(table_id)
        async with dealer_reads(self.engine) as record:
            events = await record.events(since_us=since_us, until_us=until_us, table_id=table_id)
        return core.spans_by_table(events, since_us, until_us)


async def _audit(
    record: DealerRecord,
    event: DealerEvent,
    open_turns: dict[str, DealerTurn],
    *,
    signed_in: DealerEvent | None,
) -> None:
    """The audit entry of one event: who dealt at the table before it, and after."""
    before = open_turns.get(event.table_id)
    after: dict[str, object]
    if event.kind is DealerMove.SIGN_IN:
        action, after = "dealer.sign_in", {"dealer": event.dealer}
    else:
        action, after = "dealer.sign_out", {"dealer": None}
        if signed_in is not None:  # ended by a sign-in: this table's, or the dealer's elsewhere
            after["because"] = (
                f"{signed_in.dealer} signed in at this table"
                if signed_in.table_id == event.table_id
                else f"signed in at table {signed_in.table_id}"
            )
    await record.audit.write(
        at_us=event.at_us,
        actor=event.recorded_by,
        action=action,
        target=f"table:{event.table_id}",
        before={"dealer": None if before is None else before.dealer},
        after=after,
    )
