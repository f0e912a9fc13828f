"""The statements of a PostgreSQL session that are about the session itself, not the records:
advisory locks, the schema the session works in, listening for notifications, a liveness ping.

The runtime decides which lock to hold and when (``controller.runtime.link_locks``,
``controller.runtime.change_feed``); the SQL is here, with the rest of the SQL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection


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
