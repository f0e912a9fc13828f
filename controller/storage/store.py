"""Persisting link state and history: every outcome of the engine lands in one transaction.

A poll cycle's outcomes (meter entries, table counters, hits, anomalies, the link rows) are
written together or not at all, so after a crash the database holds exactly the counters that
produced the meter it shows. Each link row records its last entry's sequence number and seal;
the update is conditional on them, so two writers can never interleave one chain.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, insert, select, text, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from controller.engine import (
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
)
from controller.games import Game, Paytable, default_paytable, make_paytable
from controller.hands import HandCategory
from controller.ledger import (
    ENTRY_COLUMNS,
    GENESIS,
    SealedEntry,
    canonical_details,
    key_fingerprint,
    seal,
)
from controller.storage.models import (
    AnomalyRow,
    AuditRow,
    DocumentRow,
    HitRow,
    LedgerMetaRow,
    LinkRow,
    MeterEntryRow,
    PaytableRow,
    SubmissionRow,
    TableCounterRow,
    TableRow,
    table_of,
)


class StoreError(RuntimeError):
    pass


def changes_channel(schema: str) -> str:
    """The PostgreSQL notification channel of a floor's commits: one per schema, since two
    floors (or two test runs) may share a server and notifications are server-wide."""
    return "progressive_" + hashlib.blake2b(schema.encode(), digest_size=8).hexdigest()


class StaleState(StoreError):
    """The link's history moved on under us (another writer): reload before going on."""


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
        self._channel: str | None = None

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
                raise StoreError(f"link {link_id!r} already exists")
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

    @contextlib.asynccontextmanager
    async def _snapshot(self) -> AsyncIterator[AsyncConnection]:
        """A connection whose reads all see one moment: a link row and its tables' counters
        from the same commit, while controllers go on committing."""
        async with self.engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                await conn.execution_options(isolation_level="REPEATABLE READ")
            async with conn.begin():
                yield conn

    async def load_link(self, link_id: str) -> LinkState:
        async with self._snapshot() as conn:
            return await self._load_link(conn, link_id)

    async def load_links(self, link_ids: Sequence[str]) -> dict[str, LinkState]:
        """Several links read in one snapshot, five statements whatever their number (a web
        process catching up with the commits of the controllers)."""
        async with self._snapshot() as conn:
            return await self._load_links(conn, link_ids)

    async def link_heads(self) -> dict[str, int]:
        """Every link's last history sequence number in the database."""
        async with self.engine.connect() as conn:
            return {
                lid: seq
                for lid, seq in await conn.execute(select(LINKS.c.link_id, LINKS.c.last_seq))
            }

    def head_seq(self, link_id: str) -> int | None:
        """The last sequence number of the link's history as this store last read or wrote it."""
        head = self._heads.get(link_id)
        return None if head is None else head[0]

    async def _load_link(self, conn: AsyncConnection, link_id: str) -> LinkState:
        states = await self._load_links(conn, [link_id])
        if link_id not in states:
            raise StoreError(f"no link {link_id!r}")
        return states[link_id]

    async def _load_links(
        self, conn: AsyncConnection, link_ids: Sequence[str]
    ) -> dict[str, LinkState]:
        ids = list(link_ids)
        links = (await conn.execute(select(LinkRow).where(LinkRow.link_id.in_(ids)))).all()
        if not links:
            return {}
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
        for t in table_rows:
            c = counters[t.table_id]
            cfg = TableConfig(
                table_id=t.table_id,
                denomination_cents=t.denomination_cents,
                seats=t.seats,
                max_credits_per_seat_round=t.max_credits_per_seat_round,
                min_round_us=t.min_round_us,
            )
            tables_of[t.link_id][t.table_id] = TableState(
                config=cfg,
                poll_seq=c.poll_seq,
                credits=c.credits,
                rounds=c.rounds,
                at_us=c.at_us,
                last_hit_seq=c.last_hit_seq,
                last_hit_round=c.last_hit_round,
                hit_epoch=c.hit_epoch,
                open_claims=tuple(HitClaim.from_dict(d) for d in json.loads(c.open_claims)),
                hit_pending=c.hit_pending,
                online=c.online,
                out_of_play=c.out_of_play,
            )
        # The time of each chain's newest entry: later entries never carry an earlier one.
        newest = {
            lid: at
            for lid, at in await conn.execute(
                select(ENTRIES.c.link_id, ENTRIES.c.at_us).where(
                    tuple_(ENTRIES.c.link_id, ENTRIES.c.seq).in_(
                        [(link.link_id, link.last_seq) for link in links]
                    )
                )
            )
        }
        states: dict[str, LinkState] = {}
        for link in links:
            game = Game(link.game)
            paytable = make_paytable(game, json.loads(paytables[link.paytable_id].lines))
            self._heads[link.link_id] = (link.last_seq, link.last_hash)
            states[link.link_id] = LinkState(
                link_id=link.link_id,
                game=game,
                rate_bp=link.rate_bp,
                reset_cents=link.reset_cents,
                paytable=paytable,
                meter_units=link.meter_units,
                hit_policy=HitPolicy(link.hit_policy),
                jackpot_won_since_rate_set=link.jackpot_won_since_rate_set,
                tables=tables_of[link.link_id],
                last_win=_last_win(link.last_win),
                armed=_armed(link.armed_change, game),
                last_at_us=newest.get(link.link_id, 0),
            )
        return states

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
        heads = dict(self._heads)
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
            self._heads = heads
            raise
        return sealed

    async def _write(
        self, conn: AsyncConnection, outcomes: Sequence[Outcome], *, insert_tables: bool = False
    ) -> list[SealedEntry]:
        """Claim each link's chain head, then write all links' rows in one statement per table."""
        entries: list[SealedEntry] = []
        counters: list[dict[str, Any]] = []
        hits: list[dict[str, Any]] = []
        anomalies: list[dict[str, Any]] = []
        entries.extend(await self._claim_heads(conn, outcomes))
        for o in outcomes:
            tables = o.state.tables
            counters.extend(self._counter_row(tables[tid]) for tid in sorted(o.tables_touched))
            hits.extend(_hit_row(h) for h in o.hits)
            anomalies.extend(_anomaly_row(a) for a in o.anomalies)
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
        self, conn: AsyncConnection, outcomes: Sequence[Outcome]
    ) -> list[SealedEntry]:
        """Seal each link's events onto its chain and claim every head in one statement.

        The claim comes before anything is written: a stale writer (one whose link's history
        moved on since it loaded it) stops here, and on PostgreSQL the row locks serialize the
        writers of one link.
        """
        entries: list[SealedEntry] = []
        heads: list[dict[str, Any]] = []
        new_heads: dict[str, tuple[int, str]] = {}
        for o in outcomes:
            state = o.state
            link_id = state.link_id
            try:
                last_seq, last_hash = self._heads[link_id]
            except KeyError:
                raise StoreError(f"link {link_id!r} was not loaded through this store") from None
            sealed = seal(self.key, link_id, o.events, last_seq=last_seq, last_hash=last_hash)
            entries.extend(sealed)
            new_seq, new_hash = (
                (sealed[-1].seq, sealed[-1].hash) if sealed else (last_seq, last_hash)
            )
            new_heads[link_id] = (new_seq, new_hash)
            heads.append(
                {
                    "link_id": link_id,
                    "expected_seq": last_seq,
                    "meter_units": state.meter_units,
                    "rate_bp": state.rate_bp,
                    "reset_cents": state.reset_cents,
                    "jackpot_won_since_rate_set": state.jackpot_won_since_rate_set,
                    "last_win": _last_win_json(state.last_win),
                    "armed_change": _armed_json(state.armed),
                    "last_seq": new_seq,
                    "last_hash": new_hash,
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
                    select(LINKS.c.link_id, LINKS.c.last_seq, LINKS.c.last_hash).where(
                        LINKS.c.link_id.in_(list(new_heads))
                    )
                )
                # Our own claims now hold our new head; a hash is never the same twice.
                claimed = {lid for lid, seq, h in moved if (seq, h) == new_heads[lid]}
        stale = sorted(set(new_heads) - claimed)
        if stale:
            raise StaleState(f"link {stale[0]}: its history moved on since it was loaded")
        self._heads.update(new_heads)
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
            raise StoreError(f"no anomaly {anomaly_id!r}")
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
    "hit_epoch",
    "open_claims",
    "hit_pending",
    "online",
    "out_of_play",
)
_PG_TYPES = {
    "table_id": "text", "poll_seq": "bigint", "credits": "bigint", "rounds": "bigint",
    "at_us": "bigint", "last_hit_seq": "bigint", "last_hit_round": "bigint",
    "hit_epoch": "integer", "open_claims": "text",
    "hit_pending": "boolean", "online": "boolean", "out_of_play": "boolean",
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
    "link_id", "expected_seq", "meter_units", "rate_bp", "reset_cents",
    "jackpot_won_since_rate_set", "last_win", "armed_change", "last_seq", "last_hash",
)  # fmt: skip
_HEAD_SET = _HEAD_FIELDS[2:]
_PG_HEAD_TYPES = {
    "link_id": "text", "expected_seq": "bigint", "meter_units": "bigint", "rate_bp": "integer",
    "reset_cents": "bigint", "jackpot_won_since_rate_set": "boolean", "last_win": "text",
    "armed_change": "text", "last_seq": "bigint", "last_hash": "text",
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
    )
    .values({k: bindparam(f"b_{k}") for k in _HEAD_SET})
)
_COUNTER_UPDATE = (
    COUNTERS.update()
    .where(COUNTERS.c.table_id == bindparam("b_table_id"))
    .values({k: bindparam(f"b_{k}") for k in _COUNTER_FIELDS})
)
