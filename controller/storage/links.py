"""Link rows: a link's parameters, its paytables, and the head of its chain with its seal.

A link row records its last entry's sequence number and seal and the seal of its state; a
commit claims the row on exactly those (``Links.claim``), so two writers can never
interleave one chain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, insert, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.games import Paytable
from controller.core.ledger import GENESIS
from controller.core.reducer import HitPolicy, TableConfig
from controller.storage.codec import to_json
from controller.storage.models import LinkRow, PaytableRow, SubmissionRow, table_of

__all__ = ["HEAD_FIELDS", "LINKS", "Links", "StoredLink", "TableSpec"]

LINKS = table_of(LinkRow)


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSpec:
    config: TableConfig
    name: str = ""
    location: str = ""


@dataclass(frozen=True, slots=True)
class StoredLink:
    """A link row as a controller resumes from it (its paytable's lines read with it)."""

    link_id: str
    game: str
    rate_bp: int
    reset_cents: int
    meter_units: int
    hit_policy: str
    jackpot_won_since_rate_set: bool
    paytable_id: int
    last_win: str | None
    armed_change: str | None
    last_seq: int
    last_hash: str
    state_seal: str | None
    levels: str | None
    paytables: str | None


_STORED_LINK = (
    LinkRow.link_id,
    LinkRow.game,
    LinkRow.rate_bp,
    LinkRow.reset_cents,
    LinkRow.meter_units,
    LinkRow.hit_policy,
    LinkRow.jackpot_won_since_rate_set,
    LinkRow.paytable_id,
    LinkRow.last_win,
    LinkRow.armed_change,
    LinkRow.last_seq,
    LinkRow.last_hash,
    LinkRow.state_seal,
    LinkRow.levels,
    LinkRow.paytables,
)


def _values(row: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(row)


# The claim of a chain head: what it must still be (``expected_*``) and what it becomes.
HEAD_FIELDS = (
    "link_id", "expected_seq", "expected_seal", "meter_units", "rate_bp", "reset_cents",
    "jackpot_won_since_rate_set", "last_win", "armed_change", "last_seq", "last_hash",
    "state_seal", "levels", "paytables",
)  # fmt: skip
_HEAD_SET = HEAD_FIELDS[3:]
_PG_HEAD_TYPES = {
    "link_id": "text", "expected_seq": "bigint", "expected_seal": "text", "meter_units": "bigint",
    "rate_bp": "integer", "reset_cents": "bigint", "jackpot_won_since_rate_set": "boolean",
    "last_win": "text", "armed_change": "text", "last_seq": "bigint", "last_hash": "text",
    "state_seal": "text", "levels": "text", "paytables": "text",
}  # fmt: skip
# The claim also tells every process listening (web processes, a standby) which links moved
# and to which sequence number; PostgreSQL delivers the notifications only if the
# transaction commits (DESIGN.md: NOTIFY carries only ids and seq).
_PG_HEAD_UPDATE = text(
    "WITH claimed AS (UPDATE links AS l SET "
    + ", ".join(f"{k} = v.{k}" for k in _HEAD_SET)
    + " FROM unnest("
    + ", ".join(f"CAST(:{k} AS {_PG_HEAD_TYPES[k]}[])" for k in HEAD_FIELDS)
    + ") AS v("
    + ", ".join(HEAD_FIELDS)
    + ") WHERE l.link_id = v.link_id AND l.last_seq = v.expected_seq"
    + " AND l.state_seal IS NOT DISTINCT FROM v.expected_seal"
    # A command at another process holding the link's turn (``sessions.link_turn``) is not
    # overtaken: the claim only tries for the turn, never waits on it, and is refused.
    + " AND (l.link_id = ANY(CAST(:turns AS text[])) OR "
    + "pg_try_advisory_xact_lock_shared(hashtextextended(:channel || ' turn ' || l.link_id, 0)))"
    + " RETURNING l.link_id, l.last_seq)"
    + " SELECT link_id, pg_notify(:channel, last_seq || ':' || link_id) FROM claimed"
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


class Links:
    """Link rows and paytables, read and written through one connection."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    # ------------------------------------------------------------------------- writing

    async def exists(self, link_id: str) -> bool:
        found = await self.conn.scalar(select(LinkRow.link_id).where(LinkRow.link_id == link_id))
        return bool(found)

    async def add_paytable(self, link_id: str, pt: Paytable, at_us: int) -> int:
        """A paytable row (never edited: a change is a new row); its id."""
        result = await self.conn.execute(
            insert(PaytableRow)
            .values(
                link_id=link_id,
                game=str(pt.game),
                lines=to_json(pt.to_dicts()),
                created_at_us=at_us,
            )
            .returning(PaytableRow.paytable_id)
        )
        return int(result.scalar_one())

    async def add(
        self,
        *,
        link_id: str,
        name: str,
        game: str,
        rate_bp: int,
        reset_cents: int,
        hit_policy: HitPolicy,
        paytable_id: int,
        at_us: int,
    ) -> None:
        """A new link's row, its chain not begun (its first entry claims it)."""
        await self.conn.execute(
            insert(LinkRow).values(
                link_id=link_id,
                name=name,
                game=game,
                rate_bp=rate_bp,
                reset_cents=reset_cents,
                meter_units=0,
                hit_policy=str(hit_policy),
                jackpot_won_since_rate_set=False,
                paytable_id=paytable_id,
                last_win=None,
                last_seq=0,
                last_hash=GENESIS,
                created_at_us=at_us,
            )
        )

    async def set_paytable(self, link_id: str, paytable_id: int) -> None:
        await self.conn.execute(
            LINKS.update().where(LINKS.c.link_id == link_id).values(paytable_id=paytable_id)
        )

    async def claim(
        self,
        heads: Sequence[Mapping[str, Any]],
        channel: str | None,
        turns: Sequence[str] = (),
    ) -> set[str]:
        """Move the given chain heads (``HEAD_FIELDS`` each) in one statement, each only if
        its row still has the expected last entry and seal; the links claimed.

        On PostgreSQL the claim notifies ``channel`` (it must be given there) of each moved
        link, and refuses a link whose turn another session holds (``turns``: those this
        transaction's own process holds); on SQLite, one process's file, a failed claim is
        found by the seals the rows now hold.
        """
        conn = self.conn
        if conn.dialect.name == "postgresql":
            result = await conn.execute(
                _PG_HEAD_UPDATE,
                {
                    "channel": channel,
                    "turns": list(turns),
                    **{k: [h[k] for h in heads] for k in HEAD_FIELDS},
                },
            )
            return {row[0] for row in result}
        result = await conn.execute(
            _HEAD_UPDATE, [{f"b_{k}": v for k, v in h.items()} for h in heads]
        )
        claimed = {h["link_id"] for h in heads}
        if result.rowcount != len(heads):  # someone's claim failed: find whose
            moved = await conn.execute(
                select(LINKS.c.link_id, LINKS.c.state_seal).where(LINKS.c.link_id.in_(claimed))
            )
            # Our own claims now hold our new seal; it covers the new head.
            new_seal = {h["link_id"]: h["state_seal"] for h in heads}
            claimed = {lid for lid, s in moved if s == new_seal[lid]}
        return claimed

    async def mark_applied(self, submission_id: str, at_us: int) -> None:
        """An approved change (its submission) took effect on the link; recorded once."""
        await self.conn.execute(
            table_of(SubmissionRow)
            .update()
            .where(
                SubmissionRow.submission_id == submission_id,
                SubmissionRow.applied_at_us.is_(None),
            )
            .values(applied_at_us=at_us)
        )

    # ------------------------------------------------------------------------- reading

    async def lock(self, link_id: str) -> tuple[int, str | None] | None:
        """The link's last sequence number and state seal, its row locked (PostgreSQL) until
        the transaction ends; None: no such link."""
        if self.conn.dialect.name == "postgresql":
            await self.conn.execute(
                select(LINKS.c.link_id).where(LINKS.c.link_id == link_id).with_for_update()
            )
        row = (
            await self.conn.execute(
                select(LinkRow.last_seq, LinkRow.state_seal).where(LinkRow.link_id == link_id)
            )
        ).one_or_none()
        if row is None:
            return None
        last_seq, state_seal = row
        return last_seq, state_seal

    async def read(self, link_ids: Sequence[str]) -> list[StoredLink]:
        rows = await self.conn.execute(
            select(*_STORED_LINK).where(LinkRow.link_id.in_(list(link_ids)))
        )
        return [StoredLink(*_values(row)) for row in rows]

    async def paytable_lines(self, paytable_ids: set[int]) -> dict[int, str]:
        """The lines (canonical JSON) of each paytable."""
        rows = await self.conn.execute(
            select(PaytableRow.paytable_id, PaytableRow.lines).where(
                PaytableRow.paytable_id.in_(paytable_ids)
            )
        )
        return {pid: lines for pid, lines in rows}

    async def levels_texts(self) -> dict[str, str]:
        """Each link's stored levels (``links.levels``), where it has any."""
        rows = await self.conn.execute(
            select(LinkRow.link_id, LinkRow.levels).where(LinkRow.levels.is_not(None))
        )
        return {lid: levels for lid, levels in rows if levels is not None}

    async def replace_levels(self, link_id: str, *, old: str, new: str) -> bool:
        """Rewrite a link's stored levels, only if they still read ``old``."""
        result = await self.conn.execute(
            LINKS.update()
            .where(LINKS.c.link_id == link_id, LINKS.c.levels == old)
            .values(levels=new)
        )
        return bool(result.rowcount)

    async def unsealed(self) -> list[str]:
        return list(
            await self.conn.scalars(select(LinkRow.link_id).where(LinkRow.state_seal.is_(None)))
        )

    async def ids(self) -> list[str]:
        return list(await self.conn.scalars(select(LinkRow.link_id).order_by(LinkRow.link_id)))

    async def heads(self) -> dict[str, int]:
        """Every link's last history sequence number."""
        rows = await self.conn.execute(select(LinkRow.link_id, LinkRow.last_seq))
        return {lid: seq for lid, seq in rows}

    async def chain_heads(self) -> dict[str, tuple[int, str, int]]:
        """Every link's last sequence number, seal and meter, as its row records them."""
        rows = await self.conn.execute(
            select(LinkRow.link_id, LinkRow.last_seq, LinkRow.last_hash, LinkRow.meter_units)
        )
        return {lid: (seq, h, meter) for lid, seq, h, meter in rows}

    async def go_live_times(self) -> dict[str, int | None]:
        """Links that may not play yet: None until their new-link submission is approved,
        else the moment play may begin. A link with no such submission is not listed."""
        rows = await self.conn.execute(
            select(SubmissionRow.link_id, SubmissionRow.status, SubmissionRow.applied_at_us).where(
                SubmissionRow.kind == "new_link"
            )
        )
        starts: dict[str, int | None] = {}
        for link_id, status, at in rows:
            # One approval is enough; no new-link submission is filed after it.
            if status == "approved" or link_id not in starts:
                starts[link_id] = at if status == "approved" else starts.get(link_id)
        return starts
