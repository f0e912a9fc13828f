"""Which controller drives which link, on PostgreSQL: the one holding the link's advisory lock.

PostgreSQL is the coordination engine (DESIGN.md, "Scale beyond one machine"): each controller
process keeps one connection open for its life and holds on it the session advisory lock of
every link it drives. A session's locks end with the session, so when a process dies (kill -9
included) the server drops them and a standby takes each link at its next try, about every
second. A process polls a link only while it holds the link's lock: when the lock connection
fails or stops answering, every link is given up at once, before anything else, and the locks
are sought again on a new connection. The chain-head claim of every commit (``LedgerStore``)
stays the last guard for the moment between losing a lock and noticing it: a commit computed
from a state another controller has moved on from is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from controller.storage import sessions
from controller.storage.handles import Connection, Database
from controller.storage.unit_of_work import autocommit_connection, transaction

log = logging.getLogger(__name__)

RETRY_S = 1.0
# A lock connection that does not answer within this is taken as lost.
CHECK_TIMEOUT_S = 2.0


def lock_key(schema: str, link_id: str) -> int:
    """The advisory lock key of a link."""
    return sessions.advisory_key(schema, f"link {link_id}")


@contextlib.asynccontextmanager
async def floor_setup(engine: Database) -> AsyncIterator[None]:
    """Held while a controller creates and checks its floor's links: two controllers started
    together on a new database would otherwise both create the same links. Nothing to hold on
    SQLite, where one process owns the file."""
    if engine.dialect.name != "postgresql":
        yield
        return
    async with transaction(engine) as conn:
        schema = await sessions.current_schema(conn)
        # A transaction lock: it ends with the transaction, however the setup ends.
        await sessions.lock_for_transaction(conn, sessions.advisory_key(schema, "setup"))
        yield


async def discard(conn: Connection, timeout_s: float) -> None:
    """Close a connection for good, never back to the pool: its session ends (the locks held
    on it, the channels it listened to), each step bounded by ``timeout_s`` whatever the
    state of the server."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(timeout_s):
            await conn.invalidate()
    with contextlib.suppress(Exception):
        async with asyncio.timeout(timeout_s):
            await conn.close()


LinkCall = Callable[[str], Awaitable[None]]


class LinkLocks:
    """Holds the advisory locks of the links this process can take, trying for the others.

    ``on_acquired(link_id)`` runs once the lock is held (reload the link, start polling it);
    ``on_lost(link_id)`` once it may no longer be (stop polling it). Neither runs concurrently
    with the other.
    """

    def __init__(
        self,
        engine: Database,
        link_ids: Sequence[str],
        *,
        on_acquired: LinkCall,
        on_lost: LinkCall,
        retry_s: float = RETRY_S,
        check_timeout_s: float = CHECK_TIMEOUT_S,
    ) -> None:
        self._engine = engine
        self.link_ids = tuple(link_ids)
        self._on_acquired = on_acquired
        self._on_lost = on_lost
        self._retry_s = retry_s
        self._check_timeout_s = check_timeout_s
        self._conn: Connection | None = None
        self._keys: dict[str, int] = {}
        self._task: asyncio.Task[None] | None = None
        self.held: set[str] = set()
        self.problem: str | None = None  # why the lock connection is down, while it is

    async def start(self) -> None:
        """Try for every lock once (a lone controller starts polling at once), then keep
        trying for the others in the background."""
        await self.try_once()
        self._task = asyncio.create_task(self._run(), name="link locks")

    async def stop(self) -> None:
        """Stop trying; the locks held stay held until ``close``."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def close(self) -> None:
        """Let every lock go (the standby takes them over) and close the connection."""
        await self.stop()
        self.held.clear()
        await self._drop_connection()

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._retry_s)
            await self.try_once()

    async def try_once(self) -> None:
        try:
            async with asyncio.timeout(self._check_timeout_s):
                taken = await self._lock_round()
        except Exception as exc:  # any failure of the lock connection is the same: fence
            await self._give_up_all(f"{type(exc).__name__}: {exc}")
            return
        if self.problem is not None:
            log.info("the lock connection is back")
            self.problem = None
        for link_id in taken:
            self.held.add(link_id)
            log.info("link %s: lock taken, this controller drives it", link_id)
            try:
                await self._on_acquired(link_id)
            except Exception:
                # Not driven after all: let the lock go, for this process or another to retry.
                log.exception("link %s: could not take it over; its lock is let go", link_id)
                self.held.discard(link_id)
                await self._on_lost(link_id)
                await self._unlock(link_id)

    async def _lock_round(self) -> list[str]:
        """One round trip on the lock connection: it answers (the locks held on it are still
        ours), and every lock not held is tried. Returns the links just locked."""
        conn = self._conn
        if conn is None:
            conn = await autocommit_connection(self._engine)
            self._conn = conn
            schema = await sessions.current_schema(conn)
            self._keys = {link_id: lock_key(schema, link_id) for link_id in self.link_ids}
        wanted = [link_id for link_id in self.link_ids if link_id not in self.held]
        if not wanted:
            await sessions.ping(conn)
            return []
        locked = await sessions.try_locks(conn, [self._keys[link_id] for link_id in wanted])
        return [link_id for link_id in wanted if self._keys[link_id] in locked]

    async def _give_up_all(self, why: str) -> None:
        if self.problem is None:
            log.warning("the lock connection failed (%s): every link is given up", why)
        self.problem = why
        held, self.held = self.held, set()
        for link_id in sorted(held):
            await self._on_lost(link_id)
        await self._drop_connection()

    async def _unlock(self, link_id: str) -> None:
        conn = self._conn
        if conn is None:
            return
        try:
            async with asyncio.timeout(self._check_timeout_s):
                await sessions.unlock(conn, self._keys[link_id])
        except Exception as exc:
            await self._give_up_all(f"{type(exc).__name__}: {exc}")

    async def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        # Its session (and every lock on it) must end.
        await discard(conn, self._check_timeout_s)
