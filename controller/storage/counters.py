"""Tables and their counter rows: the last reading applied per table, sealed, and the
tables' fixed configuration."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from sqlalchemy import insert, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.core.games import Game
from controller.core.reducer import TableConfig, TableState
from controller.storage.codec import claim_of, claims_of
from controller.storage.models import TableCounterRow, TableRow, table_of

__all__ = ["COUNTERS", "StoredCounter", "StoredTable", "Tables"]

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
# SQLite: one row a parameter set, handed to the driver as it is (a tuple in this order):
# every table of the floor is written every cycle, and the statement layer's work on a
# thousand parameter sets (its bind processors turn each boolean into the 1 or 0 the driver
# makes of it anyway) would cost more than the update itself.
_COUNTER_UPDATE_SQL = (
    "UPDATE table_counters SET "
    + ", ".join(f"{k} = ?" for k in _COUNTER_FIELDS)
    + " WHERE table_id = ?"
)
_COUNTER_UPDATE_ROW = itemgetter(*_COUNTER_FIELDS, "table_id")


@dataclass(frozen=True, slots=True)
class StoredTable:
    """A table of a link: its fixed configuration."""

    link_id: str
    config: TableConfig


@dataclass(frozen=True, slots=True)
class StoredCounter:
    """A table's counter row: the state its next reading is applied to, and its seal."""

    state: TableState
    seal: str | None


class Tables:
    """Tables and counter rows, read and written through one connection."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    async def links_of(self, table_ids: Sequence[str]) -> dict[str, str]:
        """The link each of ``table_ids`` already plays on, for those that do."""
        rows = await self.conn.execute(
            select(TableRow.table_id, TableRow.link_id).where(TableRow.table_id.in_(table_ids))
        )
        return {table_id: link_id for table_id, link_id in rows.all()}

    async def add(
        self, link_id: str, tables: Sequence[tuple[TableConfig, str, str]], at_us: int
    ) -> None:
        """New tables of a link: (configuration, name, location) each."""
        for c, name, location in tables:
            await self.conn.execute(
                insert(TableRow).values(
                    table_id=c.table_id,
                    link_id=link_id,
                    name=name,
                    location=location,
                    denomination_cents=c.denomination_cents,
                    seats=c.seats,
                    max_credits_per_seat_round=c.max_credits_per_seat_round,
                    min_round_us=c.min_round_us,
                    created_at_us=at_us,
                    game=None if c.game is None else str(c.game),
                )
            )

    async def write_counters(self, rows: Sequence[Mapping[str, Any]], *, new: bool) -> None:
        """Counter rows (``codec.counter_fields`` with their ``seal``): ``new`` ones inserted,
        else updated in place."""
        if not rows:
            return
        conn = self.conn
        if new:
            await conn.execute(COUNTERS.insert(), list(rows))
        elif conn.dialect.name == "postgresql":
            # Every table of the floor changes every cycle: one statement over arrays beats a
            # thousand single-row updates.
            await conn.execute(
                _PG_COUNTER_UPDATE,
                {k: [r[k] for r in rows] for k in ("table_id", *_COUNTER_FIELDS)},
            )
        else:
            await conn.exec_driver_sql(
                _COUNTER_UPDATE_SQL,
                [_COUNTER_UPDATE_ROW(r) for r in rows],
            )

    async def of_links(self, link_ids: Sequence[str]) -> list[StoredTable]:
        rows = await self.conn.execute(
            select(
                TableRow.link_id,
                TableRow.table_id,
                TableRow.denomination_cents,
                TableRow.seats,
                TableRow.max_credits_per_seat_round,
                TableRow.min_round_us,
                TableRow.game,
            ).where(TableRow.link_id.in_(list(link_ids)))
        )
        out: list[StoredTable] = []
        for row in rows:
            link_id, table_id, denomination, seats, max_credits, min_round_us, game = row
            config = TableConfig(
                table_id=table_id,
                denomination_cents=denomination,
                seats=seats,
                max_credits_per_seat_round=max_credits,
                min_round_us=min_round_us,
                game=None if game is None else Game(game),
            )
            out.append(StoredTable(link_id, config))
        return out

    async def counters(self, tables: Sequence[TableConfig]) -> dict[str, StoredCounter]:
        """The counter rows of these tables, by table (a table without one is not listed)."""
        config = {c.table_id: c for c in tables}
        c = TableCounterRow
        rows = await self.conn.execute(
            select(
                c.table_id, c.poll_seq, c.credits, c.rounds, c.at_us, c.last_hit_seq,
                c.last_hit_round, c.last_hit_claim, c.last_hit_gone, c.hit_epoch, c.open_claims,
                c.hit_pending, c.online, c.out_of_play, c.seal,
            ).where(c.table_id.in_(list(config)))
        )  # fmt: skip
        out: dict[str, StoredCounter] = {}
        for row in rows:
            (
                tid, poll_seq, credits, rounds, at_us, hit_seq, hit_round, claim, gone, epoch,
                open_claims, hit_pending, online, out_of_play, seal,
            ) = row  # fmt: skip
            state = TableState(
                config=config[tid],
                poll_seq=poll_seq,
                credits=credits,
                rounds=rounds,
                at_us=at_us,
                last_hit_seq=hit_seq,
                last_hit_round=hit_round,
                last_hit_claim=claim_of(claim),
                last_hit_gone=gone,
                hit_epoch=epoch,
                open_claims=claims_of(open_claims),
                hit_pending=hit_pending,
                online=online,
                out_of_play=out_of_play,
            )
            out[tid] = StoredCounter(state, seal)
        return out
