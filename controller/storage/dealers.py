"""The dealers' sign-ins and sign-outs (``dealer_events``): appended, and read back as the
pure core's events (``controller.core.dealers``), which say who dealt when.

A change of who deals where reads who deals everywhere, then appends: ``dealer_changes`` makes
those one at a time on the whole floor, so two sign-ins at once cannot both find a table free.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from sqlalchemy import Row, func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased

from controller.core.dealers import DealerEvent, DealerMove, DealerTurn, dealing
from controller.storage import sessions
from controller.storage.audit import AuditLog
from controller.storage.database import snapshot
from controller.storage.handles import Database
from controller.storage.models import DealerEventRow, TableRow
from controller.storage.typed_rows import columns
from controller.storage.unit_of_work import connected, transaction

__all__ = ["DealerRecord", "dealer_changes", "dealer_reads"]

_d = DealerEventRow
_EVENT = columns(DealerEvent, _d.table_id, _d.dealer, _d.kind, _d.at_us, _d.recorded_by)
# Read in the order they happened; the same time in the order recorded.
_ORDER = (_d.at_us, _d.event_id)


def _event(row: Row[*tuple[Any, ...]]) -> DealerEvent:
    values = dict(row._mapping)
    values["kind"] = DealerMove(values["kind"])
    return DealerEvent(**values)


class DealerRecord:
    """The dealers' events on one connection, in its transaction."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn
        self.audit = AuditLog(conn)  # each change's audit entry, in the same transaction

    async def append(self, events: Sequence[DealerEvent]) -> None:
        """Record ``events`` in their order."""
        for e in events:
            await self.conn.execute(
                insert(DealerEventRow).values(
                    table_id=e.table_id,
                    dealer=e.dealer,
                    kind=str(e.kind),
                    at_us=e.at_us,
                    recorded_by=e.recorded_by,
                )
            )

    async def last_events(self, table_id: str | None = None) -> list[DealerEvent]:
        """Each table's newest event (of ``table_id`` only, when named), in order. Sign-outs
        are recorded whenever a turn ends, so these alone say who deals where now."""
        newest = aliased(DealerEventRow)
        last_id = (
            select(func.max(newest.event_id))
            .where(newest.table_id == TableRow.table_id)
            .correlate(TableRow)
            .scalar_subquery()
        )
        q = select(*_EVENT).select_from(TableRow).join(_d, _d.event_id == last_id)
        if table_id is not None:
            q = q.where(TableRow.table_id == table_id)
        return [_event(r) for r in await self.conn.execute(q.order_by(*_ORDER))]

    async def dealing(self, table_id: str | None = None) -> dict[str, DealerTurn]:
        """Who deals at each table now (at ``table_id`` only, when named), by table."""
        return dealing(await self.last_events(table_id))

    async def events(
        self, *, since_us: int, until_us: int, table_id: str | None = None
    ) -> list[DealerEvent]:
        """What ``controller.core.dealers`` needs to read the period ``[since_us, until_us)``
        whole, in order: each table's events of the period, with those of its last moment
        before it (who dealt as it began) and of its first moment after it (when a turn open
        at its end ended). Of ``table_id`` only, when named."""
        other = aliased(DealerEventRow)
        same = other.table_id == _d.table_id
        before = select(func.max(other.at_us)).where(same, other.at_us <= since_us)
        after = select(func.min(other.at_us)).where(same, other.at_us >= until_us)
        q = select(*_EVENT).where(
            _d.at_us >= func.coalesce(before.scalar_subquery(), since_us),
            _d.at_us <= func.coalesce(after.scalar_subquery(), until_us),
        )
        if table_id is not None:
            q = q.where(_d.table_id == table_id)
        return [_event(r) for r in await self.conn.execute(q.order_by(*_ORDER))]


async def _hold(conn: AsyncConnection) -> None:
    """One change of who deals where at a time, until the transaction ends (PostgreSQL: a
    transaction lock, after which each read of this READ COMMITTED transaction sees every
    change committed before)."""
    schema = await sessions.current_schema(conn)
    await sessions.lock_for_transaction(conn, sessions.advisory_key(schema, "dealers"))


@contextlib.asynccontextmanager
async def dealer_changes(engine: Database) -> AsyncIterator[DealerRecord]:
    """A transaction in which to read who deals where and record a change, one such at a
    time on the whole floor; committed when the block ends without an error. SQLite: begun
    IMMEDIATE, one writer at a time from the first read. PostgreSQL: held by ``_hold``."""
    if engine.dialect.name == "postgresql":
        async with transaction(engine) as conn:
            await _hold(conn)
            yield DealerRecord(conn)
        return
    async with snapshot(engine, write=True) as conn:
        yield DealerRecord(conn)


@contextlib.asynccontextmanager
async def dealer_reads(engine: Database) -> AsyncIterator[DealerRecord]:
    """Reads of the dealers' events, nothing kept."""
    async with connected(engine) as conn:
        yield DealerRecord(conn)
