"""The controller's database going away for a while and coming back, without stopping a server
others use.

* PostgreSQL (``PostgresRestart``): the controller's database, one of its own on the shared
  server, stops taking connections (``ALLOW_CONNECTIONS false``) and every connection to it is
  cut (``pg_terminate_backend``), as a restart of the server cuts them and refuses new ones;
  then it takes them again. What runs it is connected to another database of the server.
* SQLite (``SqliteLock``): another process (a backup, a shell left open) holds the write lock
  of the controller's file; the controller's commits wait their busy timeout, then fail.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import asyncpg

__all__ = ["DatabaseFault", "PostgresRestart", "SqliteLock"]

# Held by a process of its own until its standard input closes.
_HOLD_LOCK = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=60, isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
db.execute("ROLLBACK")
"""


class DatabaseFault:
    """A database fault, begun and ended by the run; ``what`` says what it does."""

    what = ""

    async def begin(self) -> None:
        raise NotImplementedError

    async def end(self) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        """Whatever the run ended in: the database is given back."""
        await self.end()


class PostgresRestart(DatabaseFault):
    what = "every connection cut and new ones refused"

    def __init__(self, admin_dsn: str, database: str) -> None:
        self.admin_dsn = admin_dsn
        self.database = database
        self.cut = 0  # connections cut, over the run
        self._admin: asyncpg.Connection | None = None
        self._down = False

    async def _conn(self) -> asyncpg.Connection:
        if self._admin is None or self._admin.is_closed():
            self._admin = await asyncpg.connect(self.admin_dsn)
        return self._admin

    async def begin(self) -> None:
        conn = await self._conn()
        await conn.execute(f'ALTER DATABASE "{self.database}" WITH ALLOW_CONNECTIONS false')
        self._down = True
        await self._cut(conn)
        # A connection that was being opened as connections stopped being taken.
        await asyncio.sleep(0.5)
        await self._cut(conn)

    async def _cut(self, conn: asyncpg.Connection) -> None:
        cut = await conn.fetchval(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = $1 AND pid <> pg_backend_pid()",
            self.database,
        )
        self.cut += int(cut or 0)

    async def end(self) -> None:
        if not self._down:
            return
        conn = await self._conn()
        await conn.execute(f'ALTER DATABASE "{self.database}" WITH ALLOW_CONNECTIONS true')
        self._down = False

    async def close(self) -> None:
        await self.end()
        if self._admin is not None:
            await self._admin.close()
            self._admin = None


class SqliteLock(DatabaseFault):
    what = "its write lock held by another process"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._holder: asyncio.subprocess.Process | None = None

    async def begin(self) -> None:
        holder = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _HOLD_LOCK,
            str(self.path),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        self._holder = holder
        assert holder.stdout is not None
        async with asyncio.timeout(90):
            line = await holder.stdout.readline()
        if line.strip() != b"locked":
            raise RuntimeError(f"the lock was not taken: {line!r}")

    async def end(self) -> None:
        holder, self._holder = self._holder, None
        if holder is None:
            return
        assert holder.stdin is not None
        holder.stdin.close()
        async with asyncio.timeout(30):
            await holder.wait()
