"""One command, one transaction: the repositories of storage bound to one connection.

    async with unit_of_work(engine) as uow:
        await uow.links.add(...)
        await uow.entries.append(...)
        await uow.audit.write(...)

commits when the block ends and rolls everything back if it raises. A row the database
already holds (a unique key written twice, by this command or another at the same moment)
is refused as ``Duplicate``. ``consistent=True``
reads every statement from one snapshot (``database.snapshot``; with ``write=True`` on SQLite
the transaction is begun IMMEDIATE, so a write after the reads is not overtaken). ``reading``
gives the same repositories for reads outside any command.

The bare connections are opened here too, for work that is not one repository's:
``transaction`` (committed when the block ends), ``connected`` (reads; what was begun is
rolled back) and ``autocommit_connection`` (a session of its own for locks and
notifications, which the caller closes).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from controller.storage.anomalies import Anomalies
from controller.storage.audit import AuditLog, Documents
from controller.storage.counters import Tables
from controller.storage.database import snapshot
from controller.storage.entries import Entries
from controller.storage.errors import Duplicate
from controller.storage.hits import Hits
from controller.storage.links import Links
from controller.storage.meta import LedgerMeta

__all__ = [
    "UnitOfWork",
    "autocommit_connection",
    "connected",
    "reading",
    "transaction",
    "unit_of_work",
]


class UnitOfWork:
    """Storage's repositories, all on ``conn`` (and so in its transaction)."""

    __slots__ = (
        "anomalies",
        "audit",
        "conn",
        "documents",
        "entries",
        "hits",
        "links",
        "meta",
        "tables",
    )

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn
        self.links = Links(conn)
        self.tables = Tables(conn)
        self.entries = Entries(conn)
        self.hits = Hits(conn)
        self.anomalies = Anomalies(conn)
        self.audit = AuditLog(conn)
        self.documents = Documents(conn)
        self.meta = LedgerMeta(conn)


@contextlib.asynccontextmanager
async def unit_of_work(
    engine: AsyncEngine, *, consistent: bool = False, write: bool = False
) -> AsyncIterator[UnitOfWork]:
    """One command's transaction, committed when the block ends without an error."""
    if consistent:
        async with snapshot(engine, write=write) as conn:
            yield UnitOfWork(conn)
    else:
        async with transaction(engine) as conn:
            yield UnitOfWork(conn)


@contextlib.asynccontextmanager
async def transaction(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """One connection in a transaction, committed when the block ends without an error. A
    unique key written twice is refused as ``Duplicate`` (the driver's error is its cause);
    any other refusal of the database (a guard of the history) is raised as it was."""
    try:
        async with engine.begin() as conn:
            yield conn
    except IntegrityError as exc:
        if not _key_written_twice(exc):
            raise
        raise Duplicate("already stored: written twice, or by another at the same moment") from exc


def _key_written_twice(exc: IntegrityError) -> bool:
    """A unique key's violation: SQLSTATE 23505 on PostgreSQL, SQLite's own words."""
    causes = (exc.orig, getattr(exc.orig, "__cause__", None))
    if any(getattr(c, "sqlstate", None) == "23505" for c in causes):
        return True
    return str(exc.orig).startswith("UNIQUE constraint failed")


@contextlib.asynccontextmanager
async def connected(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """One connection for reads; what was begun on it is rolled back when the block ends."""
    async with engine.connect() as conn:
        yield conn


async def autocommit_connection(engine: AsyncEngine) -> AsyncConnection:
    """A connection of its own whose every statement commits at once (session locks,
    notifications): the caller keeps it and closes it."""
    conn = await engine.connect()
    return await conn.execution_options(isolation_level="AUTOCOMMIT")


@contextlib.asynccontextmanager
async def reading(engine: AsyncEngine) -> AsyncIterator[UnitOfWork]:
    """Reads on one connection, nothing kept (what was begun is rolled back at the end)."""
    async with engine.connect() as conn:
        yield UnitOfWork(conn)
