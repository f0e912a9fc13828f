"""Keeping a process's links in step with what other processes commit (PostgreSQL).

Several processes serve one floor: the controller driving a link, a standby for it, web
processes in front of the displays. Each commit that moves a link tells the others, by a
PostgreSQL notification sent in the same transaction (so only if it commits), which link
moved and to which sequence number of its history, and nothing else (DESIGN.md, "Scale beyond
one machine"). A process hearing of it reads the link again from the database, with the
states of its tables, and its displays push the new state.

* Payloads: ``"<seq>:<link_id>"`` for a commit of the link's state (``LedgerStore`` sends it
  with the chain-head claim); ``"p:<link_id>"`` when the link's paperwork changed (a new link
  filed or approved: whether it may play); ``"h:<link_id>"`` when a failed check of the
  software held the link (read again by every process, the one driving it too).
* A process that drives a link (holds its lock and polls it) has the newest state of it
  itself: it reads it again only when the sequence number is past its own (a command, such
  as a technician releasing a table, committed by a web process).
* Notifications are not kept for a listener that is not connected. So on every (re)connection,
  once listening, the process reads again every link that may have moved meanwhile and every
  link's paperwork: nothing missed stays missed.
* A burst of commits is read once: notifications gather for a short window, and the links
  named are read together, in one snapshot.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from controller.runtime.link_locks import discard
from controller.runtime.links import LinkRuntime
from controller.storage import sessions
from controller.storage.channel import changes_channel
from controller.storage.handles import Connection, Database
from controller.storage.unit_of_work import autocommit_connection

log = logging.getLogger(__name__)

# Notifications arriving within this window are read together.
GATHER_S = 0.02
# How often the listening connection is checked, and how long it may take to answer: a
# connection the network lost says nothing by itself.
CHECK_S = 1.0
CHECK_TIMEOUT_S = 2.0
RETRY_S = 1.0


class ChangeFeed:
    """``start()`` listens and keeps listening (reconnecting) until ``stop()``.

    ``drives(link_id)``: whether this process drives the link, so commits of its own need not
    be read back.
    """

    def __init__(
        self,
        engine: Database,
        runtime: LinkRuntime,
        *,
        drives: Callable[[str], bool] = lambda _: False,
        gather_s: float = GATHER_S,
        check_s: float = CHECK_S,
        check_timeout_s: float = CHECK_TIMEOUT_S,
        retry_s: float = RETRY_S,
    ) -> None:
        self._engine = engine
        self.runtime = runtime
        self._drives = drives
        self._gather_s = gather_s
        self._check_s = check_s
        self._check_timeout_s = check_timeout_s
        self._retry_s = retry_s
        self._conn: Connection | None = None
        self._lost = False
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        # Links heard of and not read yet, with the highest sequence number heard (None: read
        # it whatever this process holds).
        self._moved: dict[str, int | None] = {}
        self._paperwork: set[str] = set()
        self.channel: str | None = None
        self.problem: str | None = None  # why the feed is not listening, while it is not
        self.connections = 0  # listening connections made, the first included
        self.notifications = 0
        self.links_read = 0

    # ------------------------------------------------------------------------- running

    async def start(self) -> None:
        """Listen (or, if the database does not answer now, keep trying in the background)."""
        await self._connect()
        self._task = asyncio.create_task(self._run(), name="change feed")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await self._drop_connection()

    @property
    def listening(self) -> bool:
        return self._conn is not None and not self._lost

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        next_check = loop.time() + self._check_s
        while True:
            if not self.listening:
                await self._drop_connection()
                await asyncio.sleep(self._retry_s)
                await self._connect()
                next_check = loop.time() + self._check_s
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, next_check - loop.time())):
                    await self._wake.wait()
            if self._wake.is_set():
                await asyncio.sleep(self._gather_s)  # let a burst gather
                self._wake.clear()
                await self._read_moved()
            if loop.time() >= next_check:
                next_check = loop.time() + self._check_s
                await self._check()

    async def _connect(self) -> None:
        try:
            async with asyncio.timeout(self._check_timeout_s):
                conn = await autocommit_connection(self._engine)
                self._conn = conn
                self._lost = False
                self.channel = changes_channel(await sessions.current_schema(conn))
                await sessions.listen(
                    conn, self.channel, self._on_notification, self._on_terminated
                )
        except Exception as exc:
            self._fail(exc)
            return
        self.connections += 1
        if self.problem is not None:
            log.info("listening for other processes' commits again")
        self.problem = None
        # Listening now: whatever was committed before is read from the database, so a
        # notification sent while nobody listened is not missed.
        try:
            async with asyncio.timeout(self._check_timeout_s):
                heads = await self.runtime.memory.store.link_heads()
        except Exception as exc:
            self._fail(exc)
            return
        for link_id in set(heads) | set(self.runtime.memory.states):
            self._moved[link_id] = heads.get(link_id)
        self._paperwork.update(heads)
        self._wake.set()

    async def _check(self) -> None:
        conn = self._conn
        if conn is None or self._lost:
            return
        try:
            async with asyncio.timeout(self._check_timeout_s):
                await sessions.ping(conn)
        except Exception as exc:
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        why = f"{type(exc).__name__}: {exc}"
        if self.problem is None:
            log.warning("not listening for other processes' commits (%s); retrying", why)
        self.problem = why
        self._lost = True

    def _on_terminated(self, _conn: Any) -> None:
        if not self._lost:
            self._fail(ConnectionError("the listening connection ended"))

    def _on_notification(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        self.notifications += 1
        kind, _, link_id = payload.partition(":")
        if not link_id:
            return
        if kind == "p":
            self._paperwork.add(link_id)
        elif kind == "h":
            self._moved[link_id] = None  # read again, whoever drives it
        else:
            try:
                seq: int | None = int(kind)
            except ValueError:
                return
            if link_id in self._moved:
                old = self._moved[link_id]
                seq = None if old is None or seq is None else max(old, seq)
            self._moved[link_id] = seq
        self._wake.set()

    async def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        self._lost = True  # its ending, now, is no news
        await discard(conn, self._check_timeout_s)

    # ------------------------------------------------------------------------- reading

    async def _read_moved(self) -> None:
        moved, self._moved = self._moved, {}
        paperwork, self._paperwork = self._paperwork, set()
        store = self.runtime.memory.store

        def current(link_id: str) -> bool:
            # Read back only what this process did not commit itself.
            if not self._drives(link_id):
                return False
            heard = moved[link_id]
            held = store.head_seq(link_id)
            return heard is not None and held is not None and heard <= held

        try:
            if paperwork:
                await self.runtime.memory.reload_go_live(paperwork)
            read = await self.runtime.memory.reload_links(moved, skip=current)
        except Exception as exc:
            # Read again at the next try; the feed reconnects and catches up if need be (and
            # says so once, not at every try).
            for link_id, seq in moved.items():
                self._moved.setdefault(link_id, seq)
            self._paperwork |= paperwork
            self._fail(exc)
            return
        self.links_read += len(read)
