"""Persisting link state and history: every outcome of the engine lands in one transaction.

A poll cycle's outcomes (meter entries, table counters, hits, anomalies, the link rows) are
written together or not at all, so after a crash the database holds exactly the counters that
produced the meter it shows. Each link row records its last entry's sequence number and seal;
the update is conditional on them, so two writers can never interleave one chain.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, bindparam, func, insert, or_, select, text, tuple_
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from controller.core.games import Game, Paytable, default_paytable, make_paytable
from controller.core.hands import HandCategory
from controller.core.ledger import (
    ENTRY_COLUMNS,
    GENESIS,
    Anchor,
    ChainVerifier,
    SealedEntry,
    canonical_details,
    key_fingerprint,
    seal,
    seal_hash,
)
from controller.core.reducer import (
    Anomaly,
    ArmedChange,
    EntryKind,
    Hit,
    HitClaim,
    HitPolicy,
    LastWin,
    LinkState,
    Outcome,
    TableConfig,
    TableState,
    open_link,
    record_recovery,
    record_state_sealed,
)
from controller.core.state_seal import SEALED_SINCE, link_seal, table_seal
from controller.storage.database import snapshot
from controller.storage.models import (
    AnomalyRow,
    AuditRow,
    DocumentRow,
    HitRow,
    LedgerAnchorRow,
    LedgerMetaRow,
    LinkRow,
    MeterEntryRow,
    PaytableRow,
    SubmissionRow,
    TableCounterRow,
    TableRow,
    table_of,
)

log = logging.getLogger(__name__)


class StoreError(RuntimeError):
    """A refusal by what is stored, for a person to read. Its type says what kind (answered
    409 over HTTP unless a subclass says otherwise); its message is never parsed."""


class NotFound(StoreError):
    """What was named (a link, table, hit, record...) is not stored; the message names it."""


class Conflict(StoreError):
    """Refused by the stored state: it was done already, or it changed meanwhile."""


def changes_channel(schema: str) -> str:
    """The PostgreSQL notification channel of a floor's commits: one per schema, since two
    floors (or two test runs) may share a server and notifications are server-wide."""
    return "progressive_" + hashlib.blake2b(schema.encode(), digest_size=8).hexdigest()


class StaleState(Conflict):
    """The link's history moved on under us (another writer): reload before going on."""


# SQLSTATE classes of a database that failed rather than refused what it was given
# (PostgreSQL, appendix A): connection exception, transaction rollback (serialization,
# deadlock), insufficient resources, operator intervention, system error.
_FAILED_SQLSTATE_CLASSES = frozenset({"08", "40", "53", "57", "58"})


def database_failed(exc: BaseException) -> bool:
    """Whether a failed commit is the database's failure (out of reach, busy, locked, out of
    room), to be tried again as it was, rather than a refusal of what was written."""
    if isinstance(exc, OSError | TimeoutError | OperationalError | InterfaceError):
        return True
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated:
            return True
        for cause in (exc.orig, getattr(exc.orig, "__cause__", None)):
            state = getattr(cause, "sqlstate", None)
            if isinstance(state, str) and state[:2] in _FAILED_SQLSTATE_CLASSES:
                return True
    return False


class LinkInoperable(StoreError):
    """The state the link would resume from does not match its seals or its history: nothing
    is computed from it until it is recovered (NY 5321.18, NJ 13:69E-1.39B)."""

    def __init__(self, link_id: str, reason: str) -> None:
        super().__init__(f"link {link_id} is inoperable: {reason}")
        self.link_id = link_id
        self.reason = reason


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSpec:
    config: TableConfig
    name: str = ""
    location: str = ""


def _json(value: Any) -> str:
    return canonical_details(value)


async def write_audit(
    conn: AsyncConnection,
    *,
    at_us: int,
    actor: str,
    action: str,
    target: str,
    before: Any = None,
    after: Any = None,
) -> None:
    """One row of the audit log, in the caller's transaction: who, when, what, before, after."""
    await conn.execute(
        insert(AuditRow).values(
            at_us=at_us,
            actor=actor,
            action=action,
            target=target,
            before=None if before is None else _json(before),
            after=None if after is None else _json(after),
        )
    )


def _claims_json(claims: Iterable[HitClaim]) -> str:
    return _json([c.to_dict() for c in claims])


def _last_win_json(win: LastWin | None) -> str | None:
    if win is None:
        return None
    return _json(
        {
            "won_cents": win.won_cents,
            "table_id": win.table_id,
            "seats": list(win.seats),
            "hand": win.hand.name,
            "at_us": win.at_us,
        }
    )


def _last_win(text: str | None) -> LastWin | None:
    if text is None:
        return None
    d = json.loads(text)
    return LastWin(
        won_cents=d["won_cents"],
        table_id=d["table_id"],
        seats=tuple(d["seats"]),
        hand=HandCategory[d["hand"]],
        at_us=d["at_us"],
    )


def _armed_json(change: ArmedChange | None) -> str | None:
    return None if change is None else _json(change.to_dict())


def _armed(text: str | None, game: Game) -> ArmedChange | None:
    if text is None:
        return None
    d = json.loads(text)
    lines = d.get("paytable")
    return ArmedChange(
        submission_id=d["submission_id"],
        effective_at_us=d["effective_at_us"],
        rate_bp=d.get("rate_bp"),
        reset_cents=d.get("reset_cents"),
        paytable=None if lines is None else make_paytable(game, lines),
    )


def _config_dict(c: TableConfig) -> dict[str, Any]:
    return {
        "denomination_cents": c.denomination_cents,
        "seats": c.seats,
        "max_credits_per_seat_round": c.max_credits_per_seat_round,
        "min_round_us": c.min_round_us,
    }


def _link_fields(state: LinkState) -> dict[str, Any]:
    """The link row's fields that change as the link plays (the head is added by the caller)."""
    return {
        "meter_units": state.meter_units,
        "rate_bp": state.rate_bp,
        "reset_cents": state.reset_cents,
        "jackpot_won_since_rate_set": state.jackpot_won_since_rate_set,
        "last_win": _last_win_json(state.last_win),
        "armed_change": _armed_json(state.armed),
    }


# Entries made from a table's reading: their time is the reading's, which its counter row keeps.
_FROM_READINGS = frozenset(
    {
        EntryKind.CONTRIBUTION,
        EntryKind.TABLE_BASELINE,
        EntryKind.TABLE_COUNTER_RESET,
        EntryKind.ANOMALY_HELD,
        EntryKind.CREDITS_REFUSED,
        EntryKind.TABLE_ONLINE,
        EntryKind.TABLE_AHEAD,
    }
)
# Entries that set a parameter, with what they set it to.
_RATE_KINDS = frozenset({EntryKind.LINK_OPENED, EntryKind.RATE_CHANGED})
_RESET_KINDS = frozenset({EntryKind.LINK_OPENED, EntryKind.RESET_AMOUNT_CHANGED})
_PAYTABLE_KINDS = frozenset({EntryKind.LINK_OPENED, EntryKind.PAYTABLE_CHANGED})

# Entries that record an approved change taking effect (they name their submission).
_TAKING_EFFECT = frozenset(
    {EntryKind.RATE_CHANGED, EntryKind.RESET_AMOUNT_CHANGED, EntryKind.PAYTABLE_CHANGED}
)


def _cards_text(cards: Sequence[int] | None) -> str | None:
    return None if cards is None else ",".join(str(c) for c in cards)


class LedgerStore:
    """The database side of links: load state, commit outcomes, keep the chain heads."""

    def __init__(self, engine: AsyncEngine, key: bytes) -> None:
        self.engine = engine
        self.key = key
        self._heads: dict[str, tuple[int, str]] = {}
        # The seals this store last read or wrote: a link's is the condition of its next
        # write (any other writer changed it), its tables' go into the link's next seal.
        self._seals: dict[str, str | None] = {}
        self._table_seals: dict[str, str | None] = {}
        # Links whose stored state failed its check when last read, with what differs.
        self.broken: dict[str, str] = {}
        self._channel: str | None = None
        # Told of the entries of every commit once it is durable, in commit order per link
        # (the signed checkpoints digest them: controller.runtime.anchoring).
        self.sealed_listeners: list[Callable[[Sequence[SealedEntry]], None]] = []

    async def _changes_channel(self, conn: AsyncConnection) -> str:
        if self._channel is None:
            self._channel = changes_channel(str(await conn.scalar(text("SELECT current_schema()"))))
        return self._channel

    # ----------------------------------------------------------------------------- the key

    async def check_key(self) -> None:
        """Refuse to write with a key other than the one the history was sealed with."""
        fp = key_fingerprint(self.key)
        async with self.engine.begin() as conn:
            row = (
                await conn.execute(
                    select(LedgerMetaRow.value).where(LedgerMetaRow.name == "key_fingerprint")
                )
            ).scalar_one_or_none()
            if row is None:
                await conn.execute(insert(LedgerMetaRow).values(name="key_fingerprint", value=fp))
            elif row != fp:
                raise StoreError(
                    f"this ledger key (fingerprint {fp}) is not the one the history was sealed "
                    f"with ({row}); refusing to write"
                )
            await self._start_sealing(conn)

    async def _start_sealing(self, conn: AsyncConnection) -> None:
        """Seal the state of links written before state seals existed, once.

        A row without a seal is taken as an old one only until the first sealing is recorded
        (``ledger_meta`` ``state_sealed_since``); from then on it is a row someone changed.
        An old link is sealed only when its row ends where its history does (last entry,
        seal, meter); one that does not stays unsealed, and so inoperable, for recovery.
        """
        sealed = await conn.scalar(
            select(LedgerMetaRow.value).where(LedgerMetaRow.name == SEALED_SINCE)
        )
        if sealed is not None:
            return
        ids = list(await conn.scalars(select(LINKS.c.link_id).where(LINKS.c.state_seal.is_(None))))
        states, problems = await self._load_links(conn, ids, sealing=False) if ids else ({}, {})
        for link_id, state in sorted(states.items()):
            if link_id in problems:
                # A row that does not end where its history does, or one whose history says it
                # was sealed (its seals were stripped, not never written): recovery's to judge.
                log.warning("link %s left unsealed: %s", link_id, problems[link_id])
                continue
            # Sealed through the ordinary commit, with an entry saying so: the history itself
            # then tells a row stripped of its seal from one written before seals.
            at = max(state.last_at_us, time.time_ns() // 1000)
            await self._write(conn, [record_state_sealed(state, at_us=at)])
        await conn.execute(
            insert(LedgerMetaRow).values(name=SEALED_SINCE, value=str(time.time_ns() // 1000))
        )

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
    ) -> LinkState:
        pt = paytable if paytable is not None else default_paytable(game)
        outcome = open_link(
            link_id=link_id,
            game=game,
            rate_bp=rate_bp,
            reset_cents=reset_cents,
            paytable=pt,
            tables=[t.config for t in tables],
            at_us=at_us,
            hit_policy=hit_policy,
        )
        async with self.engine.begin() as conn:
            exists = await conn.scalar(select(LinkRow.link_id).where(LinkRow.link_id == link_id))
            if exists:
                raise Conflict(f"link {link_id!r} already exists")
            await self._start_sealing(conn)
            pt_id = await self._insert_paytable(conn, link_id, pt, at_us)
            await conn.execute(
                insert(LinkRow).values(
                    link_id=link_id,
                    name=name,
                    game=str(game),
                    rate_bp=rate_bp,
                    reset_cents=reset_cents,
                    meter_units=0,
                    hit_policy=str(hit_policy),
                    jackpot_won_since_rate_set=False,
                    paytable_id=pt_id,
                    last_win=None,
                    last_seq=0,
                    last_hash=GENESIS,
                    created_at_us=at_us,
                )
            )
            for spec in tables:
                c = spec.config
                await conn.execute(
                    insert(TableRow).values(
                        table_id=c.table_id,
                        link_id=link_id,
                        name=spec.name or c.table_id,
                        location=spec.location,
                        denomination_cents=c.denomination_cents,
                        seats=c.seats,
                        max_credits_per_seat_round=c.max_credits_per_seat_round,
                        min_round_us=c.min_round_us,
                        created_at_us=at_us,
                    )
                )
            self._heads[link_id] = (0, GENESIS)
            self._seals[link_id] = None
            await self._write(conn, [outcome], insert_tables=True)
            await self.audit(
                conn,
                at_us=at_us,
                actor=actor,
                action="link.create",
                target=f"link:{link_id}",
                after={
                    "game": str(game),
                    "rate_bp": rate_bp,
                    "reset_cents": reset_cents,
                    "tables": [t.config.table_id for t in tables],
                    "paytable": pt.to_dicts(),
                },
            )
        return outcome.state

    async def _insert_paytable(
        self, conn: AsyncConnection, link_id: str, pt: Paytable, at_us: int
    ) -> int:
        result = await conn.execute(
            insert(PaytableRow)
            .values(
                link_id=link_id, game=str(pt.game), lines=_json(pt.to_dicts()), created_at_us=at_us
            )
            .returning(PaytableRow.paytable_id)
        )
        return int(result.scalar_one())

    async def go_live_times(self) -> dict[str, int | None]:
        """Links that may not play yet: None until their new-link submission is approved,
        else the moment play may begin. A link with no such submission is not listed."""
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                select(
                    SubmissionRow.link_id, SubmissionRow.status, SubmissionRow.applied_at_us
                ).where(SubmissionRow.kind == "new_link")
            )
            starts: dict[str, int | None] = {}
            for link_id, status, at in rows:
                # One approval is enough; no new-link submission is filed after it.
                if status == "approved" or link_id not in starts:
                    starts[link_id] = at if status == "approved" else starts.get(link_id)
        return starts

    async def link_ids(self) -> list[str]:
        async with self.engine.connect() as conn:
            return list(
                (await conn.scalars(select(LinkRow.link_id).order_by(LinkRow.link_id))).all()
            )

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
        self, link_ids: Sequence[str]
    ) -> tuple[dict[str, LinkState], dict[str, str]]:
        """Links read in one snapshot, with the ones whose stored state does not match its
        seals or its history, and what differs. Nothing may be computed from those."""
        async with snapshot(self.engine) as conn:
            return await self._load_links(conn, link_ids)

    async def link_heads(self) -> dict[str, int]:
        """Every link's last history sequence number in the database."""
        async with self.engine.connect() as conn:
            return {
                lid: seq
                for lid, seq in await conn.execute(select(LINKS.c.link_id, LINKS.c.last_seq))
            }

    async def chain_heads(self) -> dict[str, tuple[int, str, int]]:
        """Every link's last sequence number, seal and meter, as its row records them."""
        async with self.engine.connect() as conn:
            return {
                r.link_id: (r.last_seq, r.last_hash, r.meter_units)
                for r in await conn.execute(
                    select(
                        LINKS.c.link_id, LINKS.c.last_seq, LINKS.c.last_hash, LINKS.c.meter_units
                    )
                )
            }

    async def entry_seals(self, wanted: Iterable[tuple[str, int]]) -> dict[tuple[str, int], str]:
        """The seals of the given (link, sequence number) entries that exist."""
        pairs = sorted(set(wanted))
        out: dict[tuple[str, int], str] = {}
        async with self.engine.connect() as conn:
            for i in range(0, len(pairs), 500):
                chunk = pairs[i : i + 500]
                for lid, seq, h in await conn.execute(
                    select(ENTRIES.c.link_id, ENTRIES.c.seq, ENTRIES.c.hash).where(
                        tuple_(ENTRIES.c.link_id, ENTRIES.c.seq).in_(chunk)
                    )
                ):
                    out[(lid, seq)] = h
        return out

    async def entries_after(
        self, link_id: str, after_seq: int, batch: int = 2000
    ) -> AsyncIterator[Sequence[Any]]:
        """The link's entries after ``after_seq``, in order, as rows in ``ENTRY_COLUMNS``
        order, read in keyset batches (no transaction held open between them)."""
        cols = [ENTRIES.c[c] for c in ENTRY_COLUMNS]
        seq = after_seq
        while True:
            async with self.engine.connect() as conn:
                rows = (
                    await conn.execute(
                        select(*cols)
                        .where(ENTRIES.c.link_id == link_id, ENTRIES.c.seq > seq)
                        .order_by(ENTRIES.c.seq)
                        .limit(batch)
                    )
                ).all()
            for row in rows:
                yield tuple(row)
            if len(rows) < batch:
                return
            seq = rows[-1][1]

    def head_seq(self, link_id: str) -> int | None:
        """The last sequence number of the link's history as this store last read or wrote it."""
        head = self._heads.get(link_id)
        return None if head is None else head[0]

    async def _load_links(
        self, conn: AsyncConnection, link_ids: Sequence[str], *, sealing: bool | None = None
    ) -> tuple[dict[str, LinkState], dict[str, str]]:
        """The links' states and, for those that fail their check, what differs.

        ``sealing``: whether rows must carry seals (read from ``ledger_meta`` unless given).
        """
        ids = list(link_ids)
        links = (await conn.execute(select(LinkRow).where(LinkRow.link_id.in_(ids)))).all()
        if not links:
            return {}, {}
        if sealing is None:
            sealing = (
                await conn.scalar(
                    select(LedgerMetaRow.value).where(LedgerMetaRow.name == SEALED_SINCE)
                )
            ) is not None
        paytables = {
            p.paytable_id: p
            for p in await conn.execute(
                select(PaytableRow).where(
                    PaytableRow.paytable_id.in_({link.paytable_id for link in links})
                )
            )
        }
        table_rows = (await conn.execute(select(TableRow).where(TableRow.link_id.in_(ids)))).all()
        counters = {
            c.table_id: c
            for c in await conn.execute(
                select(TableCounterRow).where(
                    TableCounterRow.table_id.in_([t.table_id for t in table_rows])
                )
            )
        }
        tables_of: dict[str, dict[str, TableState]] = {link.link_id: {} for link in links}
        stored_seals: dict[str, str | None] = {}
        for t in table_rows:
            c = counters.get(t.table_id)
            if c is None:
                raise StoreError(f"table {t.table_id} has no counter row")
            cfg = TableConfig(
                table_id=t.table_id,
                denomination_cents=t.denomination_cents,
                seats=t.seats,
                max_credits_per_seat_round=t.max_credits_per_seat_round,
                min_round_us=t.min_round_us,
            )
            stored_seals[t.table_id] = c.seal
            tables_of[t.link_id][t.table_id] = TableState(
                config=cfg,
                poll_seq=c.poll_seq,
                credits=c.credits,
                rounds=c.rounds,
                at_us=c.at_us,
                last_hit_seq=c.last_hit_seq,
                last_hit_round=c.last_hit_round,
                last_hit_claim=(
                    None
                    if c.last_hit_claim is None
                    else HitClaim.from_dict(json.loads(c.last_hit_claim))
                ),
                last_hit_gone=c.last_hit_gone,
                hit_epoch=c.hit_epoch,
                open_claims=tuple(HitClaim.from_dict(d) for d in json.loads(c.open_claims)),
                hit_pending=c.hit_pending,
                online=c.online,
                out_of_play=c.out_of_play,
            )
        # Each chain's entry at the link's recorded head (its time: later entries never carry
        # an earlier one) and how far the chain really goes.
        heads = {
            row[0]: row
            for row in await conn.execute(
                select(*[ENTRIES.c[k] for k in ENTRY_COLUMNS]).where(
                    tuple_(ENTRIES.c.link_id, ENTRIES.c.seq).in_(
                        [(link.link_id, link.last_seq) for link in links]
                    )
                )
            )
        }
        ends = {
            lid: seq
            for lid, seq in await conn.execute(
                select(ENTRIES.c.link_id, func.max(ENTRIES.c.seq))
                .where(ENTRIES.c.link_id.in_(ids))
                .group_by(ENTRIES.c.link_id)
            )
        }
        unsealed = [
            link.link_id
            for link in links
            if link.state_seal is None
            or any(stored_seals[tid] is None for tid in tables_of[link.link_id])
        ]
        # Rows without seals pass only as rows from before seals, and only while neither the
        # ledger's meta nor the link's own history says its state was sealed.
        marked = set() if sealing else await self._sealed_by_history(conn, unsealed)
        states: dict[str, LinkState] = {}
        problems: dict[str, str] = {}
        for link in links:
            lid = link.link_id
            game = Game(link.game)
            head = heads.get(lid)
            try:
                paytable = make_paytable(game, json.loads(paytables[link.paytable_id].lines))
                state = LinkState(
                    link_id=lid,
                    game=game,
                    rate_bp=link.rate_bp,
                    reset_cents=link.reset_cents,
                    paytable=paytable,
                    meter_units=link.meter_units,
                    hit_policy=HitPolicy(link.hit_policy),
                    jackpot_won_since_rate_set=link.jackpot_won_since_rate_set,
                    tables=tables_of[lid],
                    last_win=_last_win(link.last_win),
                    armed=_armed(link.armed_change, game),
                    last_at_us=head[2] if head is not None else 0,
                )
            except (KeyError, ValueError) as exc:
                raise StoreError(f"link {lid}: its stored state cannot be read: {exc}") from exc
            self._heads[lid] = (link.last_seq, link.last_hash)
            self._seals[lid] = link.state_seal
            for tid in state.tables:
                self._table_seals[tid] = stored_seals[tid]
            states[lid] = state
            problem = self._check_head(link, head, ends.get(lid)) or self._check_seals(
                state, link.state_seal, sealing or lid in marked
            )
            if problem is not None:
                problems[lid] = await self._diagnose(conn, state, problem)
        for lid in states:
            if lid in problems:
                self.broken[lid] = problems[lid]
            else:
                self.broken.pop(lid, None)
        return states, problems

    async def _sealed_by_history(self, conn: AsyncConnection, link_ids: list[str]) -> set[str]:
        """Links whose history says their state is sealed: opened sealed, or sealed since."""
        if not link_ids:
            return set()
        marked = await conn.scalars(
            select(ENTRIES.c.link_id)
            .where(
                ENTRIES.c.link_id.in_(link_ids),
                or_(
                    ENTRIES.c.kind == str(EntryKind.STATE_SEALED),
                    and_(
                        ENTRIES.c.kind == str(EntryKind.LINK_OPENED),
                        ENTRIES.c.details.like('%"state_sealed":true%'),
                    ),
                ),
            )
            .distinct()
        )
        return set(marked.all())

    def _check_head(self, link: Any, head: Sequence[Any] | None, end: int | None) -> str | None:
        """Does the link row end where its history does?"""
        if head is None:
            return (
                f"the link row says its history ends at entry {link.last_seq}, "
                "which is not in the history"
            )
        if end is not None and end > link.last_seq:
            return (
                f"the link row says its history ends at entry {link.last_seq}, but it goes on "
                f"to entry {end}"
            )
        if seal_hash(self.key, head[:14]) != head[14]:
            return f"the history's entry {link.last_seq} does not match its seal"
        if head[14] != link.last_hash:
            return f"the link row's last seal differs from its history's entry {link.last_seq}"
        if head[6] != link.meter_units:
            return (
                f"the link row shows meter {link.meter_units} units but its history ends at "
                f"{head[6]} (entry {link.last_seq})"
            )
        return None

    def _check_seals(self, state: LinkState, stored: str | None, sealing: bool) -> str | None:
        """Do the link's rows match their seals? (The first that does not is named.)"""
        lid = state.link_id
        for tid, ts in sorted(state.tables.items()):
            seal_ = self._table_seals[tid]
            if seal_ is None:
                if sealing:
                    return f"table {tid}: its counter row has no seal"
            elif not hmac.compare_digest(self._seal_table(lid, ts), seal_):
                return (
                    f"table {tid}: its counter row was changed since it was sealed (it shows "
                    f"credits {ts.credits}, rounds {ts.rounds}, poll {ts.poll_seq}, last hit "
                    f"{ts.last_hit_seq})"
                )
        if stored is None:
            return "the link row has no seal" if sealing else None
        last_seq, last_hash = self._heads[lid]
        if not hmac.compare_digest(self._seal_link(state, last_seq, last_hash), stored):
            return "LINK"
        return None

    async def _diagnose(self, conn: AsyncConnection, state: LinkState, problem: str) -> str:
        """Name what differs when the link's own seal fails: a table row put back from an
        older copy (its own seal intact, the history has entries of it after it was read),
        or a parameter the history says otherwise."""
        if problem != "LINK":
            return problem
        lid = state.link_id
        found: list[str] = []
        for tid, ts in sorted(state.tables.items()):
            newest = await conn.scalar(
                select(ENTRIES.c.at_us)
                .where(
                    ENTRIES.c.link_id == lid,
                    ENTRIES.c.table_id == tid,
                    ENTRIES.c.kind.in_([str(k) for k in _FROM_READINGS]),
                )
                .order_by(ENTRIES.c.seq.desc())
                .limit(1)
            )
            if newest is not None and (ts.at_us is None or ts.at_us < newest):
                found.append(
                    f"table {tid}: its counter row is an older copy (read at {ts.at_us}, the "
                    f"history has a reading of it at {newest})"
                )
        for what, kinds, fieldname, now in (
            ("rate", _RATE_KINDS, ("rate_bp", "to_bp"), state.rate_bp),
            ("reset amount", _RESET_KINDS, ("reset_cents", "to_cents"), state.reset_cents),
            ("paytable", _PAYTABLE_KINDS, ("paytable",), state.paytable.to_dicts()),
        ):
            said = await self._said(conn, lid, kinds, fieldname)
            if said is not None and said != now:
                found.append(f"the link's {what} is {now}, its history says {said}")
        if not found:
            found.append(
                "the link row (its hit policy, flags, last win or armed change) or its record "
                "of its tables was changed since it was sealed"
            )
        return "; ".join(found)

    @staticmethod
    async def _said(
        conn: AsyncConnection, link_id: str, kinds: frozenset[EntryKind], names: tuple[str, ...]
    ) -> Any:
        """What the newest entry of ``kinds`` says of a parameter (None: no such entry)."""
        details = await conn.scalar(
            select(ENTRIES.c.details)
            .where(ENTRIES.c.link_id == link_id, ENTRIES.c.kind.in_([str(k) for k in kinds]))
            .order_by(ENTRIES.c.seq.desc())
            .limit(1)
        )
        if details is None:
            return None
        d = json.loads(details)
        return next((d[n] for n in names if n in d), None)

    # ----------------------------------------------------------------------------- recovery

    async def recover_link(
        self, link_id: str, *, at_us: int, reason: str, by: str, approved_by: str
    ) -> LinkState:
        """Put an inoperable link back on what its sealed history vouches for, recorded as an
        entry of that history (NY 5321.18, NJ 13:69E-1.39B: recover to the prior state).

        The history is walked whole first: a recovery never starts from a broken one. From it
        come the meter and chain head, the rate, reset amount and paytable (the newest entries
        that set them; a value the history no longer holds after a retention purge is kept
        from the row and listed as such in the entry), whether a jackpot was won since the
        rate was set, each table's last hit taken and whether it is out of play. Every table
        is re-baselined from its next reading (nothing credited for what it counted before)
        and held until a technician releases it. An armed change is dropped; it is armed again
        from its approved submission.
        """
        async with snapshot(self.engine, write=True) as conn:
            if conn.dialect.name == "postgresql":
                await conn.execute(
                    select(LINKS.c.link_id).where(LINKS.c.link_id == link_id).with_for_update()
                )
            row = (
                await conn.execute(
                    select(LINKS.c.last_seq, LINKS.c.state_seal).where(LINKS.c.link_id == link_id)
                )
            ).one_or_none()
            if row is None:
                raise NotFound(f"no link {link_id!r}")
            states, problems = await self._load_links(conn, [link_id])
            state = states[link_id]
            anchor = (
                await conn.execute(
                    select(LedgerAnchorRow).where(LedgerAnchorRow.link_id == link_id)
                )
            ).one_or_none()
            v = ChainVerifier(
                self.key,
                link_id,
                None if anchor is None else Anchor(anchor.seq, anchor.hash, anchor.meter_units),
            )
            last_at = 0
            rows = await conn.stream(
                select(*[ENTRIES.c[k] for k in ENTRY_COLUMNS])
                .where(ENTRIES.c.link_id == link_id, ENTRIES.c.seq > v.seq)
                .order_by(ENTRIES.c.seq)
            )
            async for entry in rows:
                if v.feed(entry) is not None:
                    break
                last_at = entry[2]
            if v.problem is not None:
                raise StoreError(f"cannot recover from a broken history: {v.problem}")
            if v.seq == 0:
                raise StoreError(f"link {link_id} has no history to recover from")
            kept: list[str] = []
            said_rate = await self._said(conn, link_id, _RATE_KINDS, ("rate_bp", "to_bp"))
            said_reset = await self._said(conn, link_id, _RESET_KINDS, ("reset_cents", "to_cents"))
            said_lines = await self._said(conn, link_id, _PAYTABLE_KINDS, ("paytable",))
            if said_rate is None:
                kept.append("rate_bp")
            if said_reset is None:
                kept.append("reset_cents")
            if said_lines is None:
                kept.append("paytable")
            rate_seq = await conn.scalar(
                select(func.max(ENTRIES.c.seq)).where(
                    ENTRIES.c.link_id == link_id,
                    ENTRIES.c.kind.in_([str(k) for k in _RATE_KINDS]),
                )
            )
            won = await conn.scalar(
                select(func.count())
                .select_from(ENTRIES)
                .where(
                    ENTRIES.c.link_id == link_id,
                    ENTRIES.c.kind == str(EntryKind.JACKPOT_RESET),
                    ENTRIES.c.seq > (rate_seq or 0),
                )
            )
            tables: dict[str, TableState] = {}
            for tid, ts in sorted(state.tables.items()):
                tables[tid] = await self._recovered_table(conn, link_id, ts)
            recovered = LinkState(
                link_id=link_id,
                game=state.game,
                rate_bp=state.rate_bp if said_rate is None else int(said_rate),
                reset_cents=state.reset_cents if said_reset is None else int(said_reset),
                paytable=(
                    state.paytable if said_lines is None else make_paytable(state.game, said_lines)
                ),
                meter_units=v.meter,
                hit_policy=state.hit_policy,
                jackpot_won_since_rate_set=(
                    state.jackpot_won_since_rate_set if rate_seq is None else bool(won)
                ),
                tables=tables,
                last_at_us=last_at,
            )
            outcome = record_recovery(
                recovered,
                at_us=max(at_us, last_at),
                explanation=(
                    f"link state recovered from its history by {by}, approved by "
                    f"{approved_by}: {reason}"
                ),
                details={
                    "by": by,
                    "approved_by": approved_by,
                    "reason": reason,
                    "found": problems.get(link_id, "nothing"),
                    "meter_units": v.meter,
                    "rate_bp": recovered.rate_bp,
                    "reset_cents": recovered.reset_cents,
                    "kept_from_row": kept,
                    "dropped_armed_change": _armed_json(state.armed),
                    "tables": {
                        tid: {
                            "config": _config_dict(ts.config),
                            "last_hit_seq": ts.last_hit_seq,
                            "hit_epoch": ts.hit_epoch,
                            "out_of_play": ts.out_of_play,
                        }
                        for tid, ts in tables.items()
                    },
                },
            )
            self._heads[link_id] = (v.seq, v.prev_hash)
            await self._write(conn, [outcome], expect={link_id: (row.last_seq, row.state_seal)})
            await self.audit(
                conn,
                at_us=at_us,
                actor=approved_by,
                action="link.recover",
                target=f"link:{link_id}",
                before={"problem": problems.get(link_id)},
                after={"requested_by": by, "reason": reason, "meter_units": v.meter},
            )
            self.broken.pop(link_id, None)
        return outcome.state

    async def _recovered_table(
        self, conn: AsyncConnection, link_id: str, ts: TableState
    ) -> TableState:
        """A table as its history has it: its last hit taken (so a hit still at the head of its
        FIFO is not taken twice) and whether it is out of play; no baseline, held."""
        tid = ts.config.table_id
        hit_id = await conn.scalar(
            select(ENTRIES.c.hit_id)
            .where(
                ENTRIES.c.link_id == link_id,
                ENTRIES.c.table_id == tid,
                ENTRIES.c.hit_id.is_not(None),
                ENTRIES.c.hit_id.not_like("%#manual-%"),
            )
            .order_by(ENTRIES.c.seq.desc())
            .limit(1)
        )
        claim: HitClaim | None = None
        epoch = 0
        if hit_id is not None:
            number = hit_id.rsplit("#", 1)[1]
            if "." in number:
                epoch_text, number = number.split(".", 1)
                epoch = int(epoch_text)
            hit = (await conn.execute(select(HitRow).where(HitRow.hit_id == hit_id))).one_or_none()
            cards = None if hit is None or hit.cards is None else hit.cards.split(",")
            claim = HitClaim(
                table_seq=int(number),
                seat=hit.seat if hit is not None else 1,
                hand=HandCategory[hit.hand] if hit is not None else HandCategory.ROYAL_FLUSH,
                round=hit.round if hit is not None else 0,
                cards=None if cards is None else tuple(int(c) for c in cards),
            )
        play = await conn.scalar(
            select(ENTRIES.c.kind)
            .where(
                ENTRIES.c.link_id == link_id,
                ENTRIES.c.table_id == tid,
                ENTRIES.c.kind.in_(
                    [str(EntryKind.TABLE_OUT_OF_PLAY), str(EntryKind.TABLE_RETURNED_TO_PLAY)]
                ),
            )
            .order_by(ENTRIES.c.seq.desc())
            .limit(1)
        )
        return TableState(
            config=ts.config,
            last_hit_seq=None if claim is None else claim.table_seq,
            last_hit_round=None if claim is None else claim.round,
            last_hit_claim=claim,
            hit_epoch=epoch,
            hit_pending=True,
            out_of_play=play == str(EntryKind.TABLE_OUT_OF_PLAY),
        )

    def _seal_table(self, link_id: str, ts: TableState) -> str:
        return table_seal(
            self.key, link_id=link_id, config=ts.config, counters=self._counter_row(ts)
        )

    def _seal_link(
        self,
        state: LinkState,
        last_seq: int,
        last_hash: str,
        new_table_seals: Mapping[str, str] | None = None,
    ) -> str:
        fresh = new_table_seals or {}
        return link_seal(
            self.key,
            fields={
                **_link_fields(state),
                "last_seq": last_seq,
                "last_hash": last_hash,
                "game": str(state.game),
                "hit_policy": str(state.hit_policy),
                "paytable": state.paytable.to_dicts(),
            },
            tables=[
                (tid, fresh[tid] if tid in fresh else self._table_seals.get(tid))
                for tid in state.tables
            ],
        )

    # ----------------------------------------------------------------------------- commits

    async def commit(
        self,
        outcomes: Sequence[Outcome],
        *,
        audit: Mapping[str, Any] | None = None,
        extra: Callable[[AsyncConnection], Awaitable[None]] | None = None,
        notify: Sequence[str] = (),
    ) -> list[SealedEntry]:
        """Write the outcomes of one poll cycle (any links) in one transaction.

        ``extra`` writes the records that belong with them (a review, a correction) in the
        same transaction; ``audit`` adds the audit-log row of a privileged action; ``notify``
        names links whose paperwork ``extra`` changed (whether they may play), for the other
        processes to read again.
        """
        todo = [o for o in outcomes if o.changed]
        if not todo and extra is None:
            return []
        saved = dict(self._heads), dict(self._seals), dict(self._table_seals)
        try:
            async with self.engine.begin() as conn:
                if extra is not None:
                    await extra(conn)
                sealed = await self._write(conn, todo)
                if notify and conn.dialect.name == "postgresql":
                    await conn.execute(
                        _PG_NOTIFY_PAPERWORK,
                        {"channel": await self._changes_channel(conn), "link_ids": list(notify)},
                    )
                if audit is not None:
                    await self.audit(conn, **audit)
        except BaseException:
            self._heads, self._seals, self._table_seals = saved
            raise
        if sealed:
            for listener in self.sealed_listeners:
                listener(sealed)
        return sealed

    async def answers(self, within_s: float = 2.0) -> bool:
        """Whether the database answers a query now."""
        try:
            async with asyncio.timeout(within_s):
                async with self.engine.connect() as conn:
                    await conn.execute(text("SELECT 1"))
        except Exception:  # any failure to reach it is the answer
            return False
        return True

    async def _write(
        self,
        conn: AsyncConnection,
        outcomes: Sequence[Outcome],
        *,
        insert_tables: bool = False,
        expect: Mapping[str, tuple[int, str | None]] | None = None,
    ) -> list[SealedEntry]:
        """Seal the touched tables' rows, claim each link's chain head with its new seal, then
        write all links' rows in one statement per table.

        Only the tables a cycle touched are sealed again; the others' seals enter the link's
        seal from memory (as last read or written by this store).
        """
        entries: list[SealedEntry] = []
        counters: list[dict[str, Any]] = []
        hits: list[dict[str, Any]] = []
        anomalies: list[dict[str, Any]] = []
        table_seals: dict[str, str] = {}
        key = self.key
        for o in outcomes:
            state = o.state
            link_id = state.link_id
            for tid in sorted(o.tables_touched):
                ts = state.tables[tid]
                row = self._counter_row(ts)
                row["seal"] = table_seals[tid] = table_seal(
                    key, link_id=link_id, config=ts.config, counters=row
                )
                counters.append(row)
            hits.extend(_hit_row(h) for h in o.hits)
            anomalies.extend(_anomaly_row(a) for a in o.anomalies)
        entries.extend(await self._claim_heads(conn, outcomes, table_seals, expect))
        if entries:
            if conn.dialect.name == "postgresql":
                # COPY, in this same transaction: the history is the floor's busiest table.
                # Check constraints hold for COPY as for INSERT.
                raw = await conn.get_raw_connection()
                driver: Any = raw.driver_connection
                await driver.copy_records_to_table(
                    "meter_entries", records=entries, columns=ENTRY_COLUMNS
                )
            else:
                await conn.execute(ENTRIES.insert(), [e.as_row() for e in entries])
        if counters:
            if insert_tables:
                await conn.execute(COUNTERS.insert(), counters)
            elif conn.dialect.name == "postgresql":
                # Every table of the floor changes every cycle: one statement over arrays beats
                # a thousand single-row updates.
                await conn.execute(
                    _PG_COUNTER_UPDATE,
                    {k: [r[k] for r in counters] for k in ("table_id", *_COUNTER_FIELDS)},
                )
            else:
                await conn.execute(
                    _COUNTER_UPDATE, [{f"b_{k}": v for k, v in r.items()} for r in counters]
                )
        if hits:
            await conn.execute(table_of(HitRow).insert(), hits)
        if anomalies:
            await conn.execute(table_of(AnomalyRow).insert(), anomalies)
        for o in outcomes:
            if o.hits:  # an approved change takes effect only at a jackpot reset
                await self._record_taking_effect(conn, o)
        return entries

    async def _record_taking_effect(self, conn: AsyncConnection, o: Outcome) -> None:
        for e in o.events:
            if e.kind not in _TAKING_EFFECT or isinstance(e.details, str):
                continue
            submission_id = e.details.get("submission_id")
            if submission_id is None:
                continue
            if e.kind is EntryKind.PAYTABLE_CHANGED:
                link_id = o.state.link_id
                pt_id = await self._insert_paytable(conn, link_id, o.state.paytable, e.at_us)
                await conn.execute(
                    LINKS.update().where(LINKS.c.link_id == link_id).values(paytable_id=pt_id)
                )
            await conn.execute(
                table_of(SubmissionRow)
                .update()
                .where(
                    SubmissionRow.submission_id == submission_id,
                    SubmissionRow.applied_at_us.is_(None),
                )
                .values(applied_at_us=e.at_us)
            )

    async def _claim_heads(
        self,
        conn: AsyncConnection,
        outcomes: Sequence[Outcome],
        table_seals: Mapping[str, str],
        expect: Mapping[str, tuple[int, str | None]] | None = None,
    ) -> list[SealedEntry]:
        """Seal each link's events onto its chain and claim every head in one statement.

        The claim comes before anything is written and is conditional on the link row being
        the one this store last read or wrote (its last entry and its seal, which covers its
        tables' rows): a stale writer stops here, and on PostgreSQL the row locks serialize
        the writers of one link. ``expect`` overrides that condition for a recovery, which
        replaces a row that is not what it should be.
        """
        entries: list[SealedEntry] = []
        heads: list[dict[str, Any]] = []
        new_heads: dict[str, tuple[int, str]] = {}
        new_seals: dict[str, str] = {}
        for o in outcomes:
            state = o.state
            link_id = state.link_id
            try:
                last_seq, last_hash = self._heads[link_id]
            except KeyError:
                raise StoreError(f"link {link_id!r} was not loaded through this store") from None
            if expect is not None and link_id in expect:
                expected_seq, expected_seal = expect[link_id]
            elif link_id in self.broken:
                raise LinkInoperable(link_id, self.broken[link_id])
            else:
                expected_seq, expected_seal = last_seq, self._seals.get(link_id)
            sealed = seal(self.key, link_id, o.events, last_seq=last_seq, last_hash=last_hash)
            entries.extend(sealed)
            new_seq, new_hash = (
                (sealed[-1].seq, sealed[-1].hash) if sealed else (last_seq, last_hash)
            )
            new_heads[link_id] = (new_seq, new_hash)
            new_seals[link_id] = self._seal_link(state, new_seq, new_hash, table_seals)
            heads.append(
                {
                    "link_id": link_id,
                    "expected_seq": expected_seq,
                    "expected_seal": expected_seal,
                    **_link_fields(state),
                    "last_seq": new_seq,
                    "last_hash": new_hash,
                    "state_seal": new_seals[link_id],
                }
            )
        if not heads:
            return entries
        if conn.dialect.name == "postgresql":
            result = await conn.execute(
                _PG_HEAD_UPDATE,
                {
                    "channel": await self._changes_channel(conn),
                    **{k: [h[k] for h in heads] for k in _HEAD_FIELDS},
                },
            )
            claimed = {row[0] for row in result}
        else:
            result = await conn.execute(
                _HEAD_UPDATE, [{f"b_{k}": v for k, v in h.items()} for h in heads]
            )
            claimed = set(new_heads)
            if result.rowcount != len(heads):  # someone's claim failed: find whose
                moved = await conn.execute(
                    select(LINKS.c.link_id, LINKS.c.state_seal).where(
                        LINKS.c.link_id.in_(list(new_heads))
                    )
                )
                # Our own claims now hold our new seal; it covers the new head.
                claimed = {lid for lid, s in moved if s == new_seals[lid]}
        stale = sorted(set(new_heads) - claimed)
        if stale:
            raise StaleState(f"link {stale[0]}: its history moved on since it was loaded")
        self._heads.update(new_heads)
        self._seals.update(new_seals)
        self._table_seals.update(table_seals)
        return entries

    @staticmethod
    def _counter_row(ts: TableState) -> dict[str, Any]:
        return {
            "table_id": ts.config.table_id,
            "poll_seq": ts.poll_seq,
            "credits": ts.credits,
            "rounds": ts.rounds,
            "at_us": ts.at_us,
            "last_hit_seq": ts.last_hit_seq,
            "last_hit_round": ts.last_hit_round,
            "last_hit_claim": None
            if ts.last_hit_claim is None
            else _json(ts.last_hit_claim.to_dict()),
            "last_hit_gone": ts.last_hit_gone,
            "hit_epoch": ts.hit_epoch,
            "open_claims": _claims_json(ts.open_claims),
            "hit_pending": ts.hit_pending,
            "online": ts.online,
            "out_of_play": ts.out_of_play,
        }

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
        digest = hashlib.sha256(content).hexdigest()
        known = await conn.scalar(select(DocumentRow.sha256).where(DocumentRow.sha256 == digest))
        if known is None:
            await conn.execute(
                insert(DocumentRow).values(
                    sha256=digest,
                    filename=filename,
                    content_type=content_type,
                    size=len(content),
                    content=content,
                    uploaded_by=uploaded_by,
                    at_us=at_us,
                )
            )
        return digest

    async def load_anomaly(self, anomaly_id: str) -> tuple[Anomaly, str]:
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(select(AnomalyRow).where(AnomalyRow.anomaly_id == anomaly_id))
            ).one_or_none()
        if row is None:
            raise NotFound(f"no anomaly {anomaly_id!r}")
        a = Anomaly(
            anomaly_id=row.anomaly_id,
            link_id=row.link_id,
            table_id=row.table_id,
            at_us=row.at_us,
            credits=row.credits,
            units=row.units,
            counter_before=row.counter_before,
            counter_after=row.counter_after,
            reason=row.reason,
        )
        return a, row.status


def _hit_row(h: Hit) -> dict[str, Any]:
    return {
        "hit_id": h.hit_id, "link_id": h.link_id, "table_id": h.table_id,
        "table_seq": h.claim.table_seq, "seat": h.claim.seat, "hand": h.claim.hand.name,
        "round": h.claim.round, "cards": _cards_text(h.claim.cards), "source": h.source,
        "status": h.status, "award_cents": h.award_cents, "paid_from": h.paid_from,
        "settlement_group": h.settlement_group, "settlement_order": h.settlement_order,
        "policy": str(h.policy), "refusal": h.refusal, "entered_by": h.entered_by,
        "at_us": h.at_us,
    }  # fmt: skip


def _anomaly_row(a: Anomaly) -> dict[str, Any]:
    return {
        "anomaly_id": a.anomaly_id, "link_id": a.link_id, "table_id": a.table_id,
        "at_us": a.at_us, "credits": a.credits, "units": a.units,
        "counter_before": a.counter_before, "counter_after": a.counter_after,
        "reason": a.reason, "status": "held",
    }  # fmt: skip


# Core tables for the poll path: a list of parameters becomes one executemany (one prepared
# statement, pipelined), where the ORM bulk path would build a statement per row.
ENTRIES = table_of(MeterEntryRow)
LINKS = table_of(LinkRow)
COUNTERS = table_of(TableCounterRow)
_COUNTER_FIELDS = (
    "poll_seq",
    "credits",
    "rounds",
    "at_us",
    "last_hit_seq",
    "last_hit_round",
    "last_hit_claim",
    "last_hit_gone",
    "hit_epoch",
    "open_claims",
    "hit_pending",
    "online",
    "out_of_play",
    "seal",
)
_PG_TYPES = {
    "table_id": "text", "poll_seq": "bigint", "credits": "bigint", "rounds": "bigint",
    "at_us": "bigint", "last_hit_seq": "bigint", "last_hit_round": "bigint",
    "last_hit_claim": "text", "last_hit_gone": "boolean", "hit_epoch": "integer",
    "open_claims": "text",
    "hit_pending": "boolean", "online": "boolean", "out_of_play": "boolean", "seal": "text",
}  # fmt: skip
_PG_COUNTER_UPDATE = text(
    "UPDATE table_counters AS t SET "
    + ", ".join(f"{k} = v.{k}" for k in _COUNTER_FIELDS)
    + " FROM unnest("
    + ", ".join(f"CAST(:{k} AS {_PG_TYPES[k]}[])" for k in ("table_id", *_COUNTER_FIELDS))
    + ") AS v("
    + ", ".join(("table_id", *_COUNTER_FIELDS))
    + ") WHERE t.table_id = v.table_id"
)
_HEAD_FIELDS = (
    "link_id", "expected_seq", "expected_seal", "meter_units", "rate_bp", "reset_cents",
    "jackpot_won_since_rate_set", "last_win", "armed_change", "last_seq", "last_hash",
    "state_seal",
)  # fmt: skip
_HEAD_SET = _HEAD_FIELDS[3:]
_PG_HEAD_TYPES = {
    "link_id": "text", "expected_seq": "bigint", "expected_seal": "text", "meter_units": "bigint",
    "rate_bp": "integer", "reset_cents": "bigint", "jackpot_won_since_rate_set": "boolean",
    "last_win": "text", "armed_change": "text", "last_seq": "bigint", "last_hash": "text",
    "state_seal": "text",
}  # fmt: skip
# The claim also tells every process listening (web processes, a standby) which links moved
# and to which sequence number; PostgreSQL delivers the notifications only if the
# transaction commits (DESIGN.md: NOTIFY carries only ids and seq).
_PG_HEAD_UPDATE = text(
    "WITH claimed AS (UPDATE links AS l SET "
    + ", ".join(f"{k} = v.{k}" for k in _HEAD_SET)
    + " FROM unnest("
    + ", ".join(f"CAST(:{k} AS {_PG_HEAD_TYPES[k]}[])" for k in _HEAD_FIELDS)
    + ") AS v("
    + ", ".join(_HEAD_FIELDS)
    + ") WHERE l.link_id = v.link_id AND l.last_seq = v.expected_seq"
    + " AND l.state_seal IS NOT DISTINCT FROM v.expected_seal"
    + " RETURNING l.link_id, l.last_seq)"
    + " SELECT link_id, pg_notify(:channel, last_seq || ':' || link_id) FROM claimed"
)
_PG_NOTIFY_PAPERWORK = text(
    "SELECT pg_notify(:channel, 'p:' || x) FROM unnest(CAST(:link_ids AS text[])) AS x"
)
_HEAD_UPDATE = (
    LINKS.update()
    .where(
        LINKS.c.link_id == bindparam("b_link_id"),
        LINKS.c.last_seq == bindparam("b_expected_seq"),
        LINKS.c.state_seal.is_not_distinct_from(bindparam("b_expected_seal")),
    )
    .values({k: bindparam(f"b_{k}") for k in _HEAD_SET})
)
_COUNTER_UPDATE = (
    COUNTERS.update()
    .where(COUNTERS.c.table_id == bindparam("b_table_id"))
    .values({k: bindparam(f"b_{k}") for k in _COUNTER_FIELDS})
)
