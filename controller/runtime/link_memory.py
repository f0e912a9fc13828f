"""A runtime's links in memory: read from the database, checked, adopted, and committed.

The engine computes; the store commits; only then does the new state replace the old one.
If a commit fails, the link is reloaded from the database, so memory never runs ahead of
what is recorded. Commands on one link are serialized by its lock.

When the database cannot be reached the reload fails too: the link keeps the state of its
last commit known to have succeeded (never ahead of the record, but perhaps behind it, when
the failed commit's answer was lost after it was recorded) and is marked stale; it is read
again before anything else is computed from it, and until then nothing is.

Every time a link's state is read to be driven (at start, at a takeover, after a failure or
another process's commit) it is checked against its seals and its history. A link that fails
is inoperable (``controller.rules.house.RECOVERY_CLAUSE``: fail closed on lost or incorrect
configuration): its tables' readings are not recorded, nothing is credited, no command
applies, until it is recovered from its history (``LinkCommands.recover``).

So is every link while the installed software fails its self-check
(``controller.runtime.self_check``), and a link such a failure held stays inoperable after
the software passes again, until two people recover it: the hold is kept in the database
(read with the link), and here until it is written there.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from controller.core.reducer import LinkState, Outcome
from controller.periods import Clock
from controller.runtime.clock import SystemClock
from controller.storage.errors import LinkInoperable, NotFound
from controller.storage.store import Extra, LedgerStore

# The runtime's modules log under one name, as the one runtime they make.
log = logging.getLogger("controller.runtime.links")


class LinkMemory:
    """The links' states as last committed, with which may play and which may not."""

    def __init__(self, store: LedgerStore, clock: Clock | None = None) -> None:
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.states: dict[str, LinkState] = {}
        self.table_link: dict[str, str] = {}
        self._locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.listeners: list[Callable[[Outcome], None]] = []
        # Called with a link id after the link was read again from the database (another
        # process committed to it), since no outcome of this process says what changed.
        self.reload_listeners: list[Callable[[str], None]] = []
        # 68 IAC 10-1-3(c)(4): links not played yet: None until the commission approves
        # their submission, else when play may begin. Links not listed play.
        self.go_live_at: dict[str, int | None] = {}
        # Links whose reload after a failed commit failed too: read again before next use.
        self._stale: set[str] = set()
        # Links whose stored state failed its check when last read, with what differs: not
        # driven until recovered. The poller disables their tables' progressive wagering.
        self.inoperable: dict[str, str] = {}
        # Tables whose reading could not be recorded, with why: held, their readings left at
        # the table, until one records (``retry_unrecorded``).
        self.unrecorded: dict[str, str] = {}
        # While the installed software fails its self-check, what differs: every link is
        # inoperable (``controller.rules.software``). None while it passes.
        self.software_fault: str | None = None
        # Links a failed check held whose hold is not in the database yet, with why.
        self.software_held: dict[str, str] = {}
        self._software_reason = ""

    async def load(self) -> None:
        await self.store.check_key()
        states, problems = await self.store.load_checked(await self.store.link_ids())
        for state in states.values():
            self._adopt(state, problems.get(state.link_id))
        self.go_live_at = await self.store.go_live_times()
        if isinstance(self.clock, SystemClock) and self.states:
            # A restart while the wall clock is behind the history: hold (controller/clock.py).
            self.clock.not_before(max(s.last_at_us for s in self.states.values()))

    def is_live(self, link_id: str, now_us: int) -> bool:
        if link_id in self.inoperable:
            return False
        start = self.go_live_at.get(link_id, 0)
        return start is not None and now_us >= start

    def wagering_hold(
        self, link_id: str, now_us: int, *, table_id: str | None = None
    ) -> str | None:
        """Why no table of the link (or the table ``table_id`` of it) may take progressive
        wagers now, or None: a link the commission has not approved (68 IAC 10-1-3(c)(4)), one
        made inoperable, or a table whose readings cannot be recorded."""
        reason = self.inoperable.get(link_id)
        if reason is not None:
            return f"inoperable: {reason}"
        if not self.is_live(link_id, now_us):
            return "awaiting the commission's approval"
        if table_id is not None and (reason := self.unrecorded.get(table_id)) is not None:
            return f"its readings cannot be recorded: {reason}"
        return None

    def is_inoperable(self, link_id: str) -> str | None:
        """What differs in the link's stored state, if it failed its check; else None."""
        return self.inoperable.get(link_id)

    def hold_for_software(self, fault: str, reason: str) -> list[str]:
        """The installed software failed its check (``fault``): every link is inoperable from
        now on (``reason`` says why, for each), its tables told to take no side bets, nothing
        sealed, until the software passes and two people recover the link. The links newly
        held are returned; their holds are written to the database apart
        (``software_held`` keeps them until then)."""
        self.software_fault = fault
        self.store.software_fault = fault
        self._software_reason = reason
        held = []
        for link_id in sorted(self.states):
            if link_id not in self.inoperable:
                held.append(link_id)
                log.error("link %s is inoperable: %s", link_id, reason)
            self.inoperable.setdefault(link_id, reason)
            self.software_held.setdefault(link_id, reason)
        return held

    def software_holds_written(self, link_ids: Iterable[str]) -> None:
        """These links' holds are in the database now: read with the link from there on, and
        lifted there by its recovery, whichever process makes it."""
        for link_id in link_ids:
            self.software_held.pop(link_id, None)

    def software_passes(self) -> None:
        """The installed software passed its check: this process may seal again. The links a
        failure held stay inoperable until recovered."""
        if self.software_fault is not None:
            log.warning("the installed software passes its self-check again")
        self.software_fault = None
        self.store.software_fault = None

    def _adopt(self, state: LinkState, problem: str | None = None) -> None:
        """Take a link's state as read from the database, with its check's finding."""
        link_id = state.link_id
        if problem is None:
            problem = self.software_held.get(link_id)
        if problem is None and self.software_fault is not None:
            problem = self.software_held[link_id] = self._software_reason
        self.states[link_id] = state
        self._stale.discard(link_id)
        for tid in state.tables:
            self.table_link[tid] = link_id
        if problem is None:
            if self.inoperable.pop(link_id, None) is not None:
                log.warning("link %s: its stored state checks again; operable", link_id)
        else:
            if self.inoperable.get(link_id) != problem:
                log.error("link %s is inoperable: %s", link_id, problem)
            self.inoperable[link_id] = problem

    def refuse_inoperable(self, link_id: str) -> None:
        problem = self.inoperable.get(link_id)
        if problem is not None:
            raise LinkInoperable(link_id, problem)

    async def reload(self, link_ids: Sequence[str]) -> None:
        """The links read again from the database; none named, the database is not asked."""
        if not link_ids:
            return
        states, problems = await self.store.load_checked(link_ids)
        for link_id in link_ids:
            if link_id not in states:
                raise NotFound(f"no link {link_id!r}")
            self._adopt(states[link_id], problems.get(link_id))

    async def reload_stale(self, link_ids: Sequence[str]) -> None:
        """Called holding the links' locks, before computing anything from them (none stale,
        as at every commit but one after a failure: nothing is read)."""
        await self.reload([link_id for link_id in link_ids if link_id in self._stale])

    async def _reload_after_failure(self, link_ids: Sequence[str]) -> None:
        try:
            await self.reload(link_ids)
        except Exception:  # the database is out of reach: read again before next use
            self._stale.update(link_ids)

    async def take_over(self, link_id: str) -> None:
        """Read the link again from the database, with whether it may play: another controller
        drove it until now, so what this process holds of it may be old."""
        async with self._locks[link_id]:
            await self.reload([link_id])
            starts = await self.store.go_live_times()
            if link_id in starts:
                self.go_live_at[link_id] = starts[link_id]
            else:
                self.go_live_at.pop(link_id, None)

    async def reload_links(
        self, link_ids: Iterable[str], *, skip: Callable[[str], bool] = lambda _: False
    ) -> list[str]:
        """Read links again from the database (new ones too), each under its lock, except
        those ``skip`` says this process has current (asked again once the lock is held: this
        process may have committed meanwhile). Returns the links read."""
        wanted = sorted(lid for lid in set(link_ids) if not skip(lid))
        if not wanted:
            return []
        locks = [self._locks[lid] for lid in wanted]
        for lock in locks:
            await lock.acquire()
        try:
            wanted = [lid for lid in wanted if not skip(lid)]
            loaded, problems = await self.store.load_checked(wanted) if wanted else ({}, {})
            for state in loaded.values():
                self._adopt(state, problems.get(state.link_id))
        finally:
            for lock in locks:
                lock.release()
        reloaded = sorted(loaded)
        self.tell_reloaded(reloaded)
        return reloaded

    async def reload_go_live(self, link_ids: Iterable[str] | None = None) -> None:
        """Read again whether links may play (the commission decided in another process)."""
        starts = await self.store.go_live_times()
        ids = set(self.states) | set(starts) if link_ids is None else set(link_ids)
        missing = [lid for lid in ids if lid not in self.states]
        if missing:
            await self.reload_links(missing)
        for lid in ids:
            if lid in starts:
                self.go_live_at[lid] = starts[lid]
            else:
                self.go_live_at.pop(lid, None)
        self.tell_reloaded(sorted(ids & set(self.states)))

    def tell_reloaded(self, link_ids: Sequence[str]) -> None:
        for link_id in link_ids:
            for listener in self.reload_listeners:
                listener(link_id)

    def lock(self, link_id: str) -> asyncio.Lock:
        """The lock that serializes everything done to one link in this process."""
        return self._locks[link_id]

    def link_of(self, table_id: str) -> str:
        try:
            return self.table_link[table_id]
        except KeyError:
            raise NotFound(f"no table {table_id!r}") from None

    async def commit(
        self,
        outcomes: Sequence[Outcome],
        link_ids: Sequence[str],
        *,
        audit: Mapping[str, Any] | None = None,
        extra: Extra | None = None,
        turns: Sequence[str] = (),
    ) -> None:
        try:
            await self.store.commit(outcomes, audit=audit, extra=extra, turns=turns)
        except BaseException:
            await asyncio.shield(self._reload_after_failure(link_ids))
            raise
        for o in outcomes:
            self.states[o.state.link_id] = o.state
        for o in outcomes:
            for listener in self.listeners:
                listener(o)
