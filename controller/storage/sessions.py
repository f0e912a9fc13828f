"""The statements of a PostgreSQL session that are about the session itself, not the records:
advisory locks, the schema the session works in, listening for notifications, a liveness ping.

The runtime decides which lock to hold and when (``controller.runtime.link_locks``,
``controller.runtime.change_feed``), and a job that must run in one process at a time names
itself to ``only_one``; the SQL is here, with the rest of the SQL.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from controller.storage.channel import ChannelName


def advisory_key(schema: str, what: str) -> int:
    """The advisory lock key of ``what``: the same in every process using ``schema``, distinct
    between schemas (two floors may share a server)."""
    name = f"progressive {schema}: {what}".encode()
    return int.from_bytes(hashlib.blake2b(name, digest_size=8).digest(), "big", signed=True)


async def current_schema(conn: AsyncConnection) -> str:
    """The schema the session works in: advisory lock keys and channels are per schema."""
    return str(await conn.scalar(text("SELECT current_schema()")))


async def ping(conn: AsyncConnection) -> None:
    """One round trip: the server and this session answer."""
    await conn.execute(text("SELECT 1"))


async def lock_for_transaction(conn: AsyncConnection, key: int) -> None:
    """Wait for the advisory lock ``key``, held until the transaction ends however it ends."""
    await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})


async def try_lock(conn: AsyncConnection, key: int) -> bool:
    """Take the session advisory lock ``key`` if no other session holds it."""
    return bool(await conn.scalar(text("SELECT pg_try_advisory_lock(:k)"), {"k": key}))


async def try_locks(conn: AsyncConnection, keys: Sequence[int]) -> set[int]:
    """Try every session advisory lock of ``keys`` in one round trip; the ones now held."""
    rows = await conn.execute(
        text("SELECT k, pg_try_advisory_lock(k) FROM unnest(CAST(:keys AS bigint[])) AS k"),
        {"keys": list(keys)},
    )
    return {key for key, ok in rows if ok}


async def unlock(conn: AsyncConnection, key: int) -> None:
    """Let go of the session advisory lock ``key``."""
    await conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})


async def listen(
    conn: AsyncConnection,
    channel: str,
    on_notification: Callable[..., Any],
    on_terminated: Callable[..., Any],
) -> None:
    """Listen on ``channel`` with the driver's own listener (asyncpg), and hear when the
    session is terminated; both end with the session."""
    raw = await conn.get_raw_connection()
    driver: Any = raw.driver_connection
    driver.add_termination_listener(on_terminated)
    await driver.add_listener(channel, on_notification)


@contextlib.asynccontextmanager
async def only_one(engine: AsyncEngine, what: str) -> AsyncIterator[bool]:
    """Whether this process is the only one doing ``what`` now, on the floor's server: a
    session advisory lock tried, held while the context lasts. Always True on SQLite, where
    one process owns the file."""
    if engine.dialect.name != "postgresql":
        yield True
        return
    async with engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        key = advisory_key(await current_schema(conn), what)
        got = await try_lock(conn, key)
        try:
            yield got
        finally:
            if got:
                await unlock(conn, key)


_TURN = "hashtextextended(:channel || ' turn ' || :link_id, 0)"


@contextlib.asynccontextmanager
async def link_turn(engine: AsyncEngine, channel: ChannelName, link_id: str) -> AsyncIterator[None]:
    """The link's turn, waited for and held while the context lasts: a session advisory lock
    that the claim of any other process's commit only tries for (``Links.claim``), so a
    command that holds it reads the link and commits without being overtaken by the polls of
    the controller driving it. Nothing on SQLite, where one process owns the file."""
    if engine.dialect.name != "postgresql":
        yield
        return
    async with engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        args = {"channel": await channel.of(conn), "link_id": link_id}
        await conn.execute(text(f"SELECT pg_advisory_lock({_TURN})"), args)
        try:
            yield
        finally:
            await conn.execute(text(f"SELECT pg_advisory_unlock({_TURN})"), args)
