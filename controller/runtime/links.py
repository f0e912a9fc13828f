"""The links in memory, kept in step with the database.

The engine computes; the store commits; only then does the new state replace the old one.
If a commit fails, the link is reloaded from the database, so memory never runs ahead of
what is recorded. Commands on one link are serialized by its lock.

When the database cannot be reached the reload fails too: the link keeps the state of its
last commit known to have succeeded (never ahead of the record, but perhaps behind it, when
the failed commit's answer was lost after it was recorded) and is marked stale; it is read
again before anything else is computed from it, and until then nothing is.

Every time a link's state is read to be driven (at start, at a takeover, after a failure or
another process's commit) it is checked against its seals and its history. A link that fails
is inoperable (NY 5321.18, NJ 13:69E-1.39B: fail closed on lost or incorrect configuration):
its tables' readings are not recorded, nothing is credited, no command applies, until it is
recovered from its history (``recover``).

One reading that cannot be recorded never stops the others. When a poll cycle's outcome cannot
be computed, or the database refuses its commit while it answers, the cycle is recorded again
in halves until only the readings that fail are left out; their tables are held
(``unrecorded``): read and kept alive with progressive wagering disabled, nothing of them
recorded or acknowledged, so a hit waits at the head of the table's FIFO. A held table's
reading is tried again alone (``retry_unrecorded``) and the table released once it records.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core import reducer
from controller.core.hands import HandCategory
from controller.core.money import UNITS_PER_CENT
from controller.core.reducer import HitClaim, LinkState, Outcome, TableReading
from controller.core.verification import (
    check_hand_pay,
    check_release,
    confirmed_cards,
    parse_stored_cards,
)
from controller.rules.house import check_correction_approval, check_recovery
from controller.rules.records import check_correction_reason
from controller.runtime.clock import Clock, SystemClock
from controller.storage import command_rows, hits_repo
from controller.storage.hits_repo import HitRecord
from controller.storage.store import (
    Conflict,
    LedgerStore,
    LinkInoperable,
    NotFound,
    StaleState,
    database_failed,
)

Extra = Callable[[AsyncConnection], Awaitable[None]]

log = logging.getLogger(__name__)


# A command that finds its link moved on by another process is decided again this many times.
COMMAND_TRIES = 5


class LinkRuntime:
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

    def _adopt(self, state: LinkState, problem: str | None = None) -> None:
        """Take a link's state as read from the database, with its check's finding."""
        link_id = state.link_id
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

    def _refuse_inoperable(self, link_id: str) -> None:
        problem = self.inoperable.get(link_id)
        if problem is not None:
            raise LinkInoperable(link_id, problem)

    async def _reload(self, link_ids: Sequence[str]) -> None:
        states, problems = await self.store.load_checked(link_ids)
        for link_id in link_ids:
            if link_id not in states:
                raise NotFound(f"no link {link_id!r}")
            self._adopt(states[link_id], problems.get(link_id))

    async def _reload_stale(self, link_ids: Sequence[str]) -> None:
        """Called holding the links' locks, before computing anything from them."""
        await self._reload([link_id for link_id in link_ids if link_id in self._stale])

    async def _reload_after_failure(self, link_ids: Sequence[str]) -> None:
        try:
            await self._reload(link_ids)
        except Exception:  # the database is out of reach: read again before next use
            self._stale.update(link_ids)

    async def take_over(self, link_id: str) -> None:
        """Read the link again from the database, with whether it may play: another controller
        drove it until now, so what this process holds of it may be old."""
        async with self._locks[link_id]:
            await self._reload([link_id])
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
        self._tell_reloaded(reloaded)
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
        self._tell_reloaded(sorted(ids & set(self.states)))

    def _tell_reloaded(self, link_ids: Sequence[str]) -> None:
        for link_id in link_ids:
            for listener in self.reload_listeners:
                listener(link_id)

    def link_of(self, table_id: str) -> str:
        try:
            return self.table_link[table_id]
        except KeyError:
            raise NotFound(f"no table {table_id!r}") from None

    # ------------------------------------------------------------------------- the poll path

    async def apply_readings(self, readings: Sequence[TableReading]) -> list[Outcome]:
        """One poll cycle: every reading applied in order, all committed in one transaction.

        Readings of an inoperable link or a held table are not recorded. A reading that
        cannot be recorded is left out and its table held; the others are recorded.
        """
        link_ids = sorted({self.link_of(r.table_id) for r in readings})
        locks = [self._locks[lid] for lid in link_ids]
        for lock in locks:
            await lock.acquire()
        try:
            await self._reload_stale(link_ids)
            wanted = [
                r
                for r in readings
                if self.table_link[r.table_id] not in self.inoperable
                and r.table_id not in self.unrecorded
            ]
            held: dict[str, str] = {}
            outcomes = await self._record(sorted(wanted, key=reducer.seen_order), held)
            for table_id, reason in held.items():
                self._hold(table_id, reason)
            return outcomes
        finally:
            for lock in locks:
                lock.release()

    async def retry_unrecorded(self, reading: TableReading) -> bool:
        """Try a held table's reading again, alone: True once it is recorded and the table
        released; False while it still cannot be (the table stays held)."""
        table_id = reading.table_id
        link_id = self.link_of(table_id)
        async with self._locks[link_id]:
            await self._reload_stale([link_id])
            if (
                table_id not in self.unrecorded
                or self.wagering_hold(link_id, self.clock.now_us()) is not None
            ):
                return False
            held: dict[str, str] = {}
            await self._record([reading], held)
            if table_id in held:
                self._hold(table_id, held[table_id])
                return False
            del self.unrecorded[table_id]
        log.warning("table %s: its readings are recorded again; released", table_id)
        return True

    async def _record(
        self, readings: Sequence[TableReading], held: dict[str, str]
    ) -> list[Outcome]:
        """Compute and commit ``readings`` (held locks, in the order seen); on a failure that
        is not the database's, record them again in halves by table, and put in ``held`` the
        tables whose readings alone fail. Returns the outcomes committed."""
        if not readings:
            return []
        by_link: dict[str, list[TableReading]] = defaultdict(list)
        for r in readings:
            by_link[self.table_link[r.table_id]].append(r)
        link_ids = sorted(by_link)
        try:
            # One outcome per link per cycle: one chain-head update, one batch of entries.
            computed = [reducer.apply_readings(self.states[lid], by_link[lid]) for lid in link_ids]
        except Exception as exc:  # no outcome of a reading the engine cannot apply
            failure: Exception = exc
        else:
            outcomes = [o for o in computed if o.changed]
            try:
                await self._commit(outcomes, link_ids)
                return outcomes
            except StaleState:
                raise  # another writer: read again and decided anew by the caller
            except Exception as exc:
                if database_failed(exc) or not await self.store.answers():
                    raise  # the database, not these readings: nothing is left out
                failure = exc
        tables = list(dict.fromkeys(r.table_id for r in readings))
        if len(tables) == 1:
            held[tables[0]] = f"{type(failure).__name__}: {failure}".splitlines()[0][:500]
            return []
        first = set(tables[: len(tables) // 2])
        return [
            *await self._record([r for r in readings if r.table_id in first], held),
            *await self._record([r for r in readings if r.table_id not in first], held),
        ]

    def _hold(self, table_id: str, reason: str) -> None:
        if self.unrecorded.get(table_id) != reason:
            log.error(
                "table %s: its reading cannot be recorded (%s); the table is held with "
                "progressive wagering disabled, its hits wait at the table, the rest of the "
                "floor is recorded; tried again alone from time to time",
                table_id,
                reason,
            )
        self.unrecorded[table_id] = reason

    async def _commit(
        self,
        outcomes: Sequence[Outcome],
        link_ids: Sequence[str],
        *,
        audit: Mapping[str, Any] | None = None,
        extra: Extra | None = None,
    ) -> None:
        try:
            await self.store.commit(outcomes, audit=audit, extra=extra)
        except BaseException:
            await asyncio.shield(self._reload_after_failure(link_ids))
            raise
        for o in outcomes:
            self.states[o.state.link_id] = o.state
        for o in outcomes:
            for listener in self.listeners:
                listener(o)

    # ------------------------------------------------------------------------- commands

    async def command(
        self,
        link_id: str,
        step: Callable[[LinkState, int], Outcome],
        *,
        actor: str,
        action: str,
        target: str,
        extra: Extra | None = None,
        audit_after: Any = None,
    ) -> Outcome:
        """An operator command on one link: computed, audited and committed as one."""
        if link_id not in self.states:
            raise NotFound(f"no link {link_id!r}")
        for attempt in range(1, COMMAND_TRIES + 1):
            async with self._locks[link_id]:
                await self._reload_stale([link_id])
                self._refuse_inoperable(link_id)
                at = self.clock.now_us()
                before = self.states[link_id]
                o = step(before, at)
                audit = {
                    "at_us": at,
                    "actor": actor,
                    "action": action,
                    "target": target,
                    "before": {
                        "meter_units": before.meter_units,
                        "rate_bp": before.rate_bp,
                        "reset_cents": before.reset_cents,
                    },
                    "after": {
                        "meter_units": o.state.meter_units,
                        "rate_bp": o.state.rate_bp,
                        "reset_cents": o.state.reset_cents,
                        **(audit_after or {}),
                    },
                }
                try:
                    await self._commit([o], [link_id], audit=audit, extra=extra)
                except StaleState:
                    # Another process (the controller polling the link, when this is a web
                    # process) committed first: the link was read again; decide again from it.
                    if attempt == COMMAND_TRIES:
                        raise
                    continue
                return o
        raise AssertionError("unreachable")

    async def recover(self, link_id: str, *, reason: str, by: str, approved_by: str) -> Outcome:
        """Bring an inoperable link back on what its sealed history vouches for: asked by one
        person, approved by another, recorded as an entry of the history (see
        ``LedgerStore.recover_link``). Its tables are re-baselined from their next readings,
        nothing credited between, and held until a technician releases them."""
        check_recovery(reason=reason, by=by, approved_by=approved_by)
        if link_id not in self.states:
            raise NotFound(f"no link {link_id!r}")
        async with self._locks[link_id]:
            await self.store.recover_link(
                link_id, at_us=self.clock.now_us(), reason=reason, by=by, approved_by=approved_by
            )
            await self._reload([link_id])
            o = reducer.Outcome(self.states[link_id])
        self._tell_reloaded([link_id])
        return o

    async def change_rate(self, link_id: str, *, rate_bp: int, actor: str) -> Outcome:
        return await self.command(
            link_id,
            lambda s, at: reducer.change_rate(s, rate_bp=rate_bp, at_us=at, by=actor),
            actor=actor,
            action="link.rate",
            target=f"link:{link_id}",
        )

    async def change_reset_amount(self, link_id: str, *, reset_cents: int, actor: str) -> Outcome:
        return await self.command(
            link_id,
            lambda s, at: reducer.change_reset_amount(
                s, reset_cents=reset_cents, at_us=at, by=actor
            ),
            actor=actor,
            action="link.reset_amount",
            target=f"link:{link_id}",
        )

    async def release_table(self, table_id: str, *, actor: str) -> Outcome:
        """Reset a table held for a hit; refused until its awards are verified."""
        link_id = self.link_of(table_id)

        async def mark_hits(conn: AsyncConnection) -> None:
            # Checked in the transaction that releases, so a verification cannot race it.
            waiting = await hits_repo.unverified(conn, table_id)
            check_release(table_id=table_id, unverified_hit_ids=[h.hit_id for h in waiting])
            await hits_repo.mark_released(conn, table_id, by=actor, at_us=self.clock.now_us())

        return await self.command(
            link_id,
            lambda s, at: reducer.release_table(s, table_id=table_id, at_us=at, by=actor),
            actor=actor,
            action="table.release",
            target=f"table:{table_id}",
            extra=mark_hits,
        )

    async def enter_hit(self, table_id: str, claim: HitClaim, *, actor: str) -> Outcome:
        link_id = self.link_of(table_id)
        hit_id = f"{table_id}#manual-{uuid.uuid4().hex[:12]}"
        return await self.command(
            link_id,
            lambda s, at: reducer.enter_hit(
                s, hit_id=hit_id, table_id=table_id, claim=claim, at_us=at, entered_by=actor
            ),
            actor=actor,
            action="hit.enter",
            target=f"table:{table_id}",
            audit_after={"hit_id": hit_id, "claim": claim.to_dict()},
        )

    async def table_offline(self, table_id: str, *, reason: str) -> Outcome:
        link_id = self.link_of(table_id)
        async with self._locks[link_id]:
            await self._reload_stale([link_id])
            if link_id in self.inoperable:
                return reducer.Outcome(self.states[link_id])
            o = reducer.table_offline(
                self.states[link_id], table_id=table_id, at_us=self.clock.now_us(), reason=reason
            )
            if o.changed:
                await self._commit([o], [link_id])
            return o

    async def review_anomaly(
        self, anomaly_id: str, *, approve: bool, reviewer: str, reason: str = ""
    ) -> Outcome:
        anomaly, status = await self.store.load_anomaly(anomaly_id)
        if status != "held":
            raise Conflict(f"anomaly {anomaly_id} was already {status}")
        now = self.clock.now_us()

        async def mark(conn: AsyncConnection) -> None:
            if not await command_rows.mark_anomaly_reviewed(
                conn,
                anomaly_id,
                approved=approve,
                reviewer=reviewer,
                reason=reason or None,
                at_us=now,
            ):
                raise Conflict(f"anomaly {anomaly_id} was reviewed meanwhile")

        def step(s: LinkState, at: int) -> Outcome:
            if approve:
                return reducer.approve_anomaly(s, anomaly, at_us=at, reviewer=reviewer)
            return reducer.reject_anomaly(s, anomaly, at_us=at, reviewer=reviewer, reason=reason)

        return await self.command(
            anomaly.link_id,
            step,
            actor=reviewer,
            action="anomaly.approve" if approve else "anomaly.reject",
            target=f"anomaly:{anomaly_id}",
            extra=mark,
            audit_after={"credits": anomaly.credits, "reason": reason},
        )

    async def correct(
        self,
        link_id: str,
        *,
        delta_cents: int,
        category: str,
        reason: str,
        requested_by: str,
        approved_by: str | None,
        document: bytes | None = None,
        document_name: str = "",
        document_type: str = "application/octet-stream",
        correction_id: str | None = None,
        also: Extra | None = None,
    ) -> Outcome:
        """A correcting entry with its supporting document, all in one transaction.

        ``also`` writes what belongs with it (the approved request) in the same transaction.
        """
        check_correction_reason(reason)
        check_correction_approval(requested_by=requested_by, approved_by=approved_by)
        correction_id = correction_id or uuid.uuid4().hex
        digest = hashlib.sha256(document).hexdigest() if document is not None else None
        now = self.clock.now_us()

        async def record(conn: AsyncConnection) -> None:
            if document is not None:
                await self.store.store_document(
                    conn,
                    content=document,
                    filename=document_name or "document",
                    content_type=document_type,
                    uploaded_by=requested_by,
                    at_us=now,
                )
            await command_rows.add_correction(
                conn,
                correction_id=correction_id,
                link_id=link_id,
                delta_units=delta_cents * UNITS_PER_CENT,
                category=category,
                reason=reason,
                document_sha256=digest,
                requested_by=requested_by,
                approved_by=approved_by,
                at_us=now,
            )
            if also is not None:
                await also(conn)

        return await self.command(
            link_id,
            lambda s, at: reducer.apply_correction(
                s,
                correction_id=correction_id,
                delta_units=delta_cents * UNITS_PER_CENT,
                reason=f"correction ({category}) by {requested_by}: {reason}",
                at_us=at,
                document_sha256=digest,
            ),
            # The approval is what changes the meter: the approver is the one who acted.
            actor=approved_by or requested_by,
            action="meter.correct",
            target=f"link:{link_id}",
            extra=record,
            audit_after={
                "correction_id": correction_id,
                "delta_cents": delta_cents,
                "document_sha256": digest,
                "requested_by": requested_by,
                "approved_by": approved_by,
            },
        )

    async def hits(self, link_id: str) -> list[HitRecord]:
        async with self.store.engine.connect() as conn:
            return await hits_repo.of_link(conn, link_id)

    async def unverified_hits(self, table_id: str) -> list[HitRecord]:
        """The awards a held table waits on before it may be reset, oldest first."""
        async with self.store.engine.connect() as conn:
            return await hits_repo.unverified(conn, table_id)

    async def hit(self, hit_id: str) -> HitRecord:
        async with self.store.engine.connect() as conn:
            row = await hits_repo.find(conn, hit_id)
        if row is None:
            raise NotFound(f"no hit {hit_id!r}")
        return row

    async def verify_hit(
        self, hit_id: str, *, actor: str, cards: Sequence[int] | None = None
    ) -> HitRecord:
        """The technician's verification of a hit's hand, recorded once and audited.

        Cards the table reported are confirmed; when it reported none, ``cards`` are the five
        the technician saw, and they must make the claimed hand.
        """
        row = await self.hit(hit_id)
        if row.verified_by is not None:
            raise Conflict(f"hit {hit_id} was already verified by {row.verified_by}")
        reported = parse_stored_cards(row.cards)
        confirmed = confirmed_cards(
            hit_id=hit_id,
            status=row.status,
            claimed=HandCategory[row.hand],
            reported=reported,
            entered=None if cards is None else tuple(cards),
        )
        stored = ",".join(str(c) for c in confirmed)
        await self._fill_in_hit(
            row,
            mark=lambda conn, now: hits_repo.mark_verified(
                conn, hit_id, by=actor, at_us=now, cards=stored
            ),
            meanwhile="was verified meanwhile",
            actor=actor,
            action="hit.verify",
            before={"verified_by": None, "reported_cards": reported},
            after={
                "verified_by": actor,
                "verified_cards": list(confirmed),
                "entered_by_technician": reported is None,
            },
        )
        return await self.hit(hit_id)

    async def record_hand_pay(self, hit_id: str, *, amount_cents: int, actor: str) -> HitRecord:
        """A verified award paid by hand at the table, recorded once and audited."""
        row = await self.hit(hit_id)
        check_hand_pay(
            hit_id=hit_id,
            status=row.status,
            award_cents=row.award_cents,
            amount_cents=amount_cents,
            verified=row.verified_by is not None,
            already_paid_cents=row.hand_paid_cents,
        )
        await self._fill_in_hit(
            row,
            mark=lambda conn, now: hits_repo.mark_hand_paid(
                conn, hit_id, by=actor, at_us=now, cents=amount_cents
            ),
            meanwhile="had a hand pay recorded meanwhile",
            actor=actor,
            action="hit.hand_pay",
            before={"hand_paid_cents": None, "award_cents": row.award_cents},
            after={"hand_paid_by": actor, "hand_paid_cents": amount_cents},
        )
        return await self.hit(hit_id)

    async def _fill_in_hit(
        self,
        row: HitRecord,
        *,
        mark: Callable[[AsyncConnection, int], Awaitable[bool]],
        meanwhile: str,
        actor: str,
        action: str,
        before: Mapping[str, Any],
        after: Mapping[str, Any],
    ) -> None:
        """Fill in a technician's fields of a hit once (its facts never change), audited in
        the same transaction; refused if someone filled them in meanwhile."""
        hit_id = row.hit_id
        async with self._locks[row.link_id]:
            now = self.clock.now_us()

            async def fill_in(conn: AsyncConnection) -> None:
                if not await mark(conn, now):
                    raise Conflict(f"hit {hit_id} {meanwhile}")

            await self.store.commit(
                [],
                extra=fill_in,
                audit={
                    "at_us": now,
                    "actor": actor,
                    "action": action,
                    "target": f"hit:{hit_id}",
                    "before": dict(before),
                    "after": dict(after),
                },
            )
