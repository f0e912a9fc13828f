"""Persisting link state and history: every outcome of the engine lands in one transaction.

A poll cycle's outcomes (meter entries, table counters, hits, anomalies, the link rows) are
written together or not at all, so after a crash the database holds exactly the counters that
produced the meter it shows. Each link row records its last entry's sequence number and seal;
the update is conditional on them, so two writers can never interleave one chain.

``LedgerStore`` is the face of storage to the rest of the controller; the SQL of each subject
lives in its own module (links, counters, entries, hits, anomalies, audit, meta), all bound to
one transaction by ``unit_of_work``; ``commit`` writes a cycle, ``loading`` reads links back
and checks them, ``recovery`` puts an inoperable link back on its history.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from controller.core.games import Game, Paytable, default_paytable
from controller.core.law import Law
from controller.core.ledger import GENESIS, SealedEntry, key_fingerprint
from controller.core.reducer import (
    Anomaly,
    HitPolicy,
    LinkState,
    Outcome,
    open_link,
    record_state_sealed,
)
from controller.core.reducer.levels import LevelConfig, MysteryDraw
from controller.core.state_seal import SEALED_SINCE
from controller.rules.house import FIXED_PAY_TECHNICIAN_FROM_CENTS
from controller.rules.jurisdictions import INDIANA
from controller.storage.audit import Documents, write_audit
from controller.storage.channel import ChannelName, notify_held, notify_paperwork
from controller.storage.commit import write_outcomes
from controller.storage.draw_cipher import has_plain_draws, hide_draws
from controller.storage.errors import Conflict, NotFound, SoftwareFailed, StoreError
from controller.storage.links import TableSpec
from controller.storage.loading import load_links
from controller.storage.meta import DEMONSTRATION_SINCE, KEY_FINGERPRINT
from controller.storage.recovery import recovery_of
from controller.storage.seals import SealBook
from controller.storage.sessions import link_turn
from controller.storage.unit_of_work import UnitOfWork, reading, unit_of_work

__all__ = ["Extra", "LedgerStore"]

log = logging.getLogger(__name__)

# What a commit writes beside its links' entries, in the same transaction (``LedgerStore.commit``).
Extra = Callable[[AsyncConnection], Awaitable[None]]


class LedgerStore:
    """The database side of links: load state, commit outcomes, keep the chain heads."""

    def __init__(
        self,
        engine: AsyncEngine,
        key: bytes,
        *,
        technician_from_cents: int = FIXED_PAY_TECHNICIAN_FROM_CENTS,
        law: Law | None = None,
    ) -> None:
        self.engine = engine
        # The jurisdiction the installation plays under (PROGRESSIVE_JURISDICTION): handed to
        # every link read or made, never stored. None: the default jurisdiction's.
        self.law: Law = INDIANA if law is None else law
        # The operator's amount from which a fixed pay waits for a technician (the setting
        # PROGRESSIVE_FIXED_PAY_TECHNICIAN_FROM): handed to every link read or made, never
        # stored.
        self.technician_from_cents = technician_from_cents
        # The heads and seals this store last read or wrote: a link's is the condition of
        # its next write (any other writer changed it), its tables' go into the link's next
        # seal; and the links whose stored state failed its check when last read.
        self.book = SealBook(key)
        self._channel = ChannelName()
        # Told of the entries of every commit once it is durable, in commit order per link
        # (the signed checkpoints digest them: controller.runtime.anchoring).
        self.sealed_listeners: list[Callable[[Sequence[SealedEntry]], None]] = []
        # Set while the installed software fails its self-check (``controller.rules.software``):
        # nothing is sealed, whatever asks.
        self.software_fault: str | None = None

    @property
    def key(self) -> bytes:
        return self.book.key

    @property
    def broken(self) -> dict[str, str]:
        """Links whose stored state failed its check when last read, with what differs."""
        return self.book.broken

    @property
    def _heads(self) -> dict[str, tuple[int, str]]:
        return self.book.heads

    def _seal_link(self, state: LinkState, last_seq: int, last_hash: str) -> str:
        return self.book.seal_link(state, last_seq, last_hash)

    # ----------------------------------------------------------------------------- the key

    async def check_key(self) -> None:
        """Refuse to write with a key other than the one the history was sealed with."""
        fp = key_fingerprint(self.key)
        async with unit_of_work(self.engine) as uow:
            # The first key to write stands, even for controllers started together.
            first = await uow.meta.put_first(KEY_FINGERPRINT, fp)
            stored = fp if first else await uow.meta.get(KEY_FINGERPRINT)
            if stored != fp:
                raise StoreError(
                    f"this ledger key (fingerprint {fp}) is not the one the history was sealed "
                    f"with ({stored}); refusing to write"
                )
            await self._start_sealing(uow)
            await self._hide_plain_draws(uow)

    async def _hide_plain_draws(self, uow: UnitOfWork) -> None:
        """Encrypt the mystery triggers of rows written before they were (storage.draw_cipher).

        The text changes, not what it says: the link's seal covers the triggers themselves."""
        for link_id, stored in sorted((await uow.links.levels_texts()).items()):
            if has_plain_draws(stored):
                hidden = hide_draws(self.key, link_id, stored)
                if hidden is not None and await uow.links.replace_levels(
                    link_id, old=stored, new=hidden
                ):
                    log.info("link %s: its mystery draws are now stored encrypted", link_id)

    async def _start_sealing(self, uow: UnitOfWork) -> None:
        """Seal the state of links written before state seals existed, once.

        A row without a seal is taken as an old one only until the first sealing is recorded
        (``ledger_meta`` ``state_sealed_since``); from then on it is a row someone changed.
        An old link is sealed only when its row ends where its history does (last entry,
        seal, meter); one that does not stays unsealed, and so inoperable, for recovery.
        """
        if await uow.meta.sealing():
            return
        ids = await uow.links.unsealed()
        states, problems = (
            await load_links(uow, self.book, ids, sealing=False, law=self.law) if ids else ({}, {})
        )
        for link_id, state in sorted(states.items()):
            if link_id in problems:
                # A row that does not end where its history does, or one whose history says it
                # was sealed (its seals were stripped, not never written): recovery's to judge.
                log.warning("link %s left unsealed: %s", link_id, problems[link_id])
                continue
            # Sealed through the ordinary commit, with an entry saying so: the history itself
            # then tells a row stripped of its seal from one written before seals.
            at = max(state.last_at_us, time.time_ns() // 1000)
            await self._write(uow, [record_state_sealed(state, at_us=at)])
        await uow.meta.put_first(SEALED_SINCE, str(time.time_ns() // 1000))

    # ----------------------------------------------------------------------------- links

    async def create_link(
        self,
        *,
        link_id: str,
        name: str,
        game: Game,
        rate_bp: int,
        reset_cents: int,
        tables: Sequence[TableSpec],
        at_us: int,
        actor: str,
        paytable: Paytable | None = None,
        hit_policy: HitPolicy = HitPolicy.SPLIT,
        levels: Sequence[LevelConfig] | None = None,
        draws: Mapping[int, Sequence[MysteryDraw]] | None = None,
        paytables: Mapping[Game, Paytable] | None = None,
        demonstration: bool = False,
    ) -> LinkState:
        """A new link with its tables (see ``reducer.open_link``: ``levels`` None is a classic
        link, ``()`` a fixed-pay one; ``draws`` the mystery levels' first triggers, drawn by
        the caller; ``paytables`` the other games of a mixed-game link; ``demonstration``
        opened by an installation in demonstration mode, which its history says for good)."""
        pt = paytable if paytable is not None else default_paytable(game)
        outcome = open_link(
            link_id=link_id,
            game=game,
            rate_bp=rate_bp,
            reset_cents=reset_cents,
            paytable=pt,
            tables=[t.config for t in tables],
            at_us=at_us,
            law=self.law,
            hit_policy=hit_policy,
            levels=levels,
            draws=draws,
            paytables=paytables,
            demonstration=demonstration,
        )
        opened = outcome.state
        async with unit_of_work(self.engine) as uow:
            if await uow.links.exists(link_id):
                raise Conflict(f"link {link_id!r} already exists")
            # A table plays on one link: one already on a link is not opened on another.
            table_ids = [t.config.table_id for t in tables]
            twice = sorted({t for t in table_ids if table_ids.count(t) > 1})
            if twice:
                raise Conflict(f"table {twice[0]!r} is given twice; each table once")
            taken = await uow.tables.links_of(table_ids)
            if taken:
                table_id = min(taken)
                raise Conflict(
                    f"table {table_id!r} already plays on link {taken[table_id]!r}: a table "
                    "plays on one link"
                )
            await self._start_sealing(uow)
            pt_id = await uow.links.add_paytable(link_id, pt, at_us)
            await uow.links.add(
                link_id=link_id,
                name=name,
                game=str(game),
                rate_bp=opened.rate_bp,
                reset_cents=opened.reset_cents,
                hit_policy=hit_policy,
                paytable_id=pt_id,
                at_us=at_us,
            )
            await uow.tables.add(
                link_id,
                [(t.config, t.name or t.config.table_id, t.location) for t in tables],
                at_us,
            )
            self.book.heads[link_id] = (0, GENESIS)
            self.book.meters[link_id] = 0
            self.book.seals[link_id] = None
            self.book.demonstration[link_id] = demonstration
            await self._write(uow, [outcome], insert_tables=True)
            await uow.audit.write(
                at_us=at_us,
                actor=actor,
                action="link.create",
                target=f"link:{link_id}",
                after={
                    "game": str(game),
                    "rate_bp": opened.rate_bp,
                    "reset_cents": opened.reset_cents,
                    "tables": [t.config.table_id for t in tables],
                    "paytable": pt.to_dicts(),
                    **({} if levels is None else {"levels": [cfg.to_dict() for cfg in levels]}),
                    **(
                        {}
                        if not paytables
                        else {"paytables": {str(g): p.to_dicts() for g, p in paytables.items()}}
                    ),
                    **({"demonstration": True} if demonstration else {}),
                },
            )
        return replace(opened, technician_from_cents=self.technician_from_cents)

    async def note_demonstration(self, *, at_us: int, actor: str) -> bool:
        """Record that the installation runs in demonstration mode: ``ledger_meta``'s
        ``demonstration_since`` the first time (True), and an audit entry at every start under
        it, so that the records say when links could be opened and filed without notice."""
        async with unit_of_work(self.engine) as uow:
            # Controllers started together each note it: the first write stands.
            first = await uow.meta.put_first(DEMONSTRATION_SINCE, str(at_us))
            await uow.audit.write(
                at_us=at_us,
                actor=actor,
                action="installation.demonstration",
                target="installation",
                after={"demonstration": True, "first": first, "jurisdiction": self.law.key},
            )
        return first

    async def demonstration_since(self) -> int | None:
        """When the installation first ran in demonstration mode (None: never)."""
        async with reading(self.engine) as uow:
            since = await uow.meta.get(DEMONSTRATION_SINCE)
        return None if since is None else int(since)

    async def go_live_times(self) -> dict[str, int | None]:
        """Links that may not play yet: None until their new-link submission is approved,
        else the moment play may begin. A link with no such submission is not listed."""
        async with reading(self.engine) as uow:
            return await uow.links.go_live_times()

    async def link_ids(self) -> list[str]:
        async with reading(self.engine) as uow:
            return await uow.links.ids()

    async def load_link(self, link_id: str) -> LinkState:
        """The link as stored; ``broken`` says whether its state passed its check."""
        states, _ = await self.load_checked([link_id])
        if link_id not in states:
            raise NotFound(f"no link {link_id!r}")
        return states[link_id]

    async def load_links(self, link_ids: Sequence[str]) -> dict[str, LinkState]:
        """Several links read in one snapshot, a few statements whatever their number (a web
        process catching up with the commits of the controllers)."""
        states, _ = await self.load_checked(link_ids)
        return states

    async def load_checked(
        self, link_ids: Sequence[str], *, software_holds: bool = True
    ) -> tuple[dict[str, LinkState], dict[str, str]]:
        """Links read in one snapshot, with the ones whose stored state does not match its
        seals or its history, and what differs. Nothing may be computed from those.

        With ``software_holds`` a link held by a failed check of the software (until two
        people recover it) is listed too, with why; ``ledger verify``, which judges the
        history and the state it resumes from, leaves those out."""
        async with unit_of_work(self.engine, consistent=True) as uow:
            states, problems = await load_links(
                uow,
                self.book,
                link_ids,
                technician_from_cents=self.technician_from_cents,
                law=self.law,
            )
            if software_holds:
                for link_id, why in (await uow.meta.software_holds(list(states))).items():
                    problems.setdefault(link_id, why)
                    self.book.broken.setdefault(link_id, why)
            return states, problems

    async def record_self_check(
        self, *, at_us: int, actor: str, after: Mapping[str, Any], hold: Mapping[str, str]
    ) -> list[str]:
        """A check of the software in the audit log, with the links its failure holds until
        two people recover them (``hold``: link -> why), in one transaction; the links newly
        held. Other processes are told to read those links again."""
        async with unit_of_work(self.engine) as uow:
            held = [
                link_id
                for link_id, why in sorted(hold.items())
                if await uow.meta.hold_for_software(link_id, why)
            ]
            await uow.audit.write(
                at_us=at_us,
                actor=actor,
                action="software.check",
                target="software",
                after={**after, "links_held": held} if held else dict(after),
            )
            if held and uow.conn.dialect.name == "postgresql":
                await notify_held(uow.conn, await self._channel.of(uow.conn), held)
        return held

    async def link_heads(self) -> dict[str, int]:
        """Every link's last history sequence number in the database."""
        async with reading(self.engine) as uow:
            return await uow.links.heads()

    async def chain_heads(self) -> dict[str, tuple[int, str, int]]:
        """Every link's last sequence number, seal and meter, as its row records them."""
        async with reading(self.engine) as uow:
            return await uow.links.chain_heads()

    async def entry_seals(self, wanted: Iterable[tuple[str, int]]) -> dict[tuple[str, int], str]:
        """The seals of the given (link, sequence number) entries that exist."""
        async with reading(self.engine) as uow:
            return await uow.entries.seals(sorted(set(wanted)))

    async def entries_after(
        self, link_id: str, after_seq: int, batch: int = 2000
    ) -> AsyncIterator[SealedEntry]:
        """The link's entries after ``after_seq``, in order, read in keyset batches (no
        transaction held open between them)."""
        seq = after_seq
        while True:
            async with reading(self.engine) as uow:
                entries = await uow.entries.after(link_id, seq, batch)
            for entry in entries:
                yield entry
            if len(entries) < batch:
                return
            seq = entries[-1].seq

    def head_seq(self, link_id: str) -> int | None:
        """The last sequence number of the link's history as this store last read or wrote it."""
        head = self.book.heads.get(link_id)
        return None if head is None else head[0]

    # ----------------------------------------------------------------------------- recovery

    async def recover_link(
        self,
        link_id: str,
        *,
        at_us: int,
        reason: str,
        by: str,
        approved_by: str,
        draw: Callable[[LevelConfig], MysteryDraw],
    ) -> LinkState:
        """Put an inoperable link back on what its sealed history vouches for, recorded as an
        entry of that history (house policy adopted from NY 5321.18, NJ 13:69E-1.39B: recover
        to the prior state); see
        ``recovery.recovery_of`` for what is taken from where. ``draw`` makes each mystery
        level's new trigger (the runtime's cryptographic draw)."""
        async with unit_of_work(self.engine, consistent=True, write=True) as uow:
            r = await recovery_of(
                uow,
                self.book,
                link_id,
                at_us=at_us,
                reason=reason,
                by=by,
                approved_by=approved_by,
                draw=draw,
                law=self.law,
            )
            await self._write(uow, [r.outcome], expect={link_id: r.expect})
            await uow.meta.release_software_hold(link_id)
            await uow.audit.write(
                at_us=at_us,
                actor=approved_by,
                action="link.recover",
                target=f"link:{link_id}",
                before={"problem": r.problem},
                after={"requested_by": by, "reason": reason, "meter_units": r.meter_units},
            )
            self.book.broken.pop(link_id, None)
        return r.outcome.state

    # ----------------------------------------------------------------------------- commits

    async def commit(
        self,
        outcomes: Sequence[Outcome],
        *,
        audit: Mapping[str, Any] | None = None,
        extra: Extra | None = None,
        notify: Sequence[str] = (),
        turns: Sequence[str] = (),
    ) -> list[SealedEntry]:
        """Write the outcomes of one poll cycle (any links) in one transaction.

        ``extra`` writes the records that belong with them (a review, a correction) in the
        same transaction; ``audit`` adds the audit-log row of a privileged action; ``notify``
        names links whose paperwork ``extra`` changed (whether they may play), for the other
        processes to read again; ``turns``, the links whose turn this process holds
        (``link_turn``).
        """
        todo = [o for o in outcomes if o.changed]
        if not todo and extra is None:
            return []
        saved = self.book.remember()
        try:
            async with unit_of_work(self.engine) as uow:
                if extra is not None:
                    await extra(uow.conn)
                sealed = await self._write(uow, todo, turns=turns)
                if notify and uow.conn.dialect.name == "postgresql":
                    await notify_paperwork(uow.conn, await self._channel.of(uow.conn), notify)
                if audit is not None:
                    await uow.audit.write(**audit)
        except BaseException:
            self.book.restore(saved)
            raise
        if sealed:
            for listener in self.sealed_listeners:
                listener(sealed)
        return sealed

    async def _write(
        self,
        uow: UnitOfWork,
        outcomes: Sequence[Outcome],
        *,
        insert_tables: bool = False,
        expect: Mapping[str, tuple[int, str | None]] | None = None,
        turns: Sequence[str] = (),
    ) -> list[SealedEntry]:
        if self.software_fault is not None and outcomes:
            # Nothing is sealed by software that failed its check (controller.rules.software).
            raise SoftwareFailed(f"nothing is written: {self.software_fault}")
        return await write_outcomes(
            uow,
            self.book,
            self._channel,
            outcomes,
            insert_tables=insert_tables,
            expect=expect,
            turns=turns,
        )

    @contextlib.asynccontextmanager
    async def turn(self, link_id: str) -> AsyncIterator[None]:
        """The link's turn (``sessions.link_turn``), waited for and held while the context
        lasts: commits with ``turns=[link_id]`` meanwhile are not overtaken by another
        process's."""
        async with link_turn(self.engine, self._channel, link_id):
            yield

    async def answers(self, within_s: float = 2.0) -> bool:
        """Whether the database answers a query now."""
        try:
            async with asyncio.timeout(within_s):
                async with self.engine.connect() as conn:
                    await conn.execute(text("SELECT 1"))
        except Exception:  # any failure to reach it is the answer
            return False
        return True

    # ----------------------------------------------------------------------------- records

    async def audit(
        self,
        conn: AsyncConnection,
        *,
        at_us: int,
        actor: str,
        action: str,
        target: str,
        before: Any = None,
        after: Any = None,
    ) -> None:
        """The audit-log row of an action, in the caller's transaction (``write_audit``)."""
        await write_audit(
            conn, at_us=at_us, actor=actor, action=action, target=target, before=before, after=after
        )

    async def store_document(
        self,
        conn: AsyncConnection,
        *,
        content: bytes,
        filename: str,
        content_type: str,
        uploaded_by: str,
        at_us: int,
    ) -> str:
        """Keep a supporting document whole; it is named by its SHA-256 and never replaced."""
        return await Documents(conn).store(
            content=content,
            filename=filename,
            content_type=content_type,
            uploaded_by=uploaded_by,
            at_us=at_us,
        )

    async def load_anomaly(self, anomaly_id: str) -> tuple[Anomaly, str]:
        """An anomaly as found, with its review status."""
        async with reading(self.engine) as uow:
            found = await uow.anomalies.get(anomaly_id)
        if found is None:
            raise NotFound(f"no anomaly {anomaly_id!r}")
        return found
