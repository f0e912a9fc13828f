"""Building links and readings for storage tests."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from controller.core.games import Game
from controller.core.hands import HandCategory, parse_cards
from controller.core.reducer import HitClaim, TableConfig, TableReading
from controller.runtime.links import LinkRuntime
from controller.storage.compaction import compact_link
from controller.storage.links import TableSpec
from controller.storage.store import LedgerStore
from tests.conftest import KEY, T0

ROYAL = parse_cards("As Ks Qs Js Ts")
DAY_US = 86_400 * 1_000_000


def table(table_id: str, denom: int = 100, location: str = "pit 1") -> TableSpec:
    return TableSpec(
        config=TableConfig(
            table_id=table_id,
            denomination_cents=denom,
            max_credits_per_seat_round=100,
            min_round_us=1_000_000,
        ),
        location=location,
    )


async def make_link(
    store: LedgerStore, link_id: str = "stud", tables: tuple[str, ...] = ("t1", "t2"), **kw: Any
) -> None:
    await store.create_link(
        link_id=link_id,
        name="Caribbean Stud bank",
        game=kw.pop("game", Game.CARIBBEAN_STUD),
        rate_bp=kw.pop("rate_bp", 8250),
        reset_cents=kw.pop("reset_cents", 10_000_00),
        tables=[table(t) for t in tables],
        at_us=T0,
        actor="test",
        **kw,
    )


class Poller:
    """Hands out readings the way a poller would: increasing poll sequence and time, a
    reading ``step_us`` after the one before."""

    def __init__(self, step_us: int = 1_000_000) -> None:
        self.seq: dict[str, int] = {}
        self.at = T0
        self.step_us = step_us

    def reading(self, table_id: str, credits: int, **kw: Any) -> TableReading:
        self.seq[table_id] = self.seq.get(table_id, 0) + 1
        self.at += self.step_us
        return TableReading(
            table_id=table_id, poll_seq=self.seq[table_id], at_us=self.at, credits=credits, **kw
        )

    def royal(self, table_id: str, credits: int, seq: int, seat: int = 3) -> TableReading:
        claim = HitClaim(
            table_seq=seq, seat=seat, hand=HandCategory.ROYAL_FLUSH, round=seq, cards=ROYAL
        )
        return self.reading(table_id, credits, pending_hits=1, head_hit=claim)


async def runtime(store: LedgerStore) -> LinkRuntime:
    rt = LinkRuntime(store)
    await rt.memory.load()
    return rt


async def drop_guards(conn: AsyncConnection) -> None:
    """What someone with database access could do: remove every trigger and check."""
    if conn.dialect.name == "postgresql":
        for t in (
            "meter_entries",
            "meter_blocks",
            "hits",
            "links",
            "anomalies",
            "corrections",
            "documents",
            "audit_log",
        ):
            await conn.execute(text(f"ALTER TABLE {t} DISABLE TRIGGER USER"))
        for ck in ("reduction_has_reason", "adds_up", "not_negative"):
            await conn.execute(
                text(f"ALTER TABLE meter_entries DROP CONSTRAINT ck_meter_entries_{ck}")
            )
        return
    await conn.execute(text("PRAGMA ignore_check_constraints = ON"))
    names = (
        await conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'"))
    ).scalars()
    for name in list(names):
        await conn.execute(text(f"DROP TRIGGER {name}"))


async def refuse_hits_of(conn: AsyncConnection, table_id: str) -> None:
    """Make the database itself refuse every hit of one table, as it would refuse a value it
    cannot hold: the commit carrying one fails, while it answers and takes everything else."""
    if conn.dialect.name == "postgresql":
        await conn.execute(
            text(
                "CREATE FUNCTION refuse_hits() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "RAISE EXCEPTION 'this hit is refused' USING ERRCODE = 'check_violation'; "
                "END $$"
            )
        )
        await conn.execute(
            text(
                "CREATE TRIGGER refuse_hits BEFORE INSERT ON hits FOR EACH ROW "
                f"WHEN (NEW.table_id = '{table_id}') EXECUTE FUNCTION refuse_hits()"
            )
        )
        return
    await conn.execute(
        text(
            f"CREATE TRIGGER refuse_hits BEFORE INSERT ON hits WHEN NEW.table_id = '{table_id}' "
            "BEGIN SELECT RAISE(ABORT, 'this hit is refused'); END"
        )
    )


async def accept_hits_again(conn: AsyncConnection) -> None:
    if conn.dialect.name == "postgresql":
        await conn.execute(text("DROP TRIGGER refuse_hits ON hits"))
        await conn.execute(text("DROP FUNCTION refuse_hits()"))
        return
    await conn.execute(text("DROP TRIGGER refuse_hits"))


async def compact(
    engine: AsyncEngine, link_id: str, *, most: int = 50, breaks: Sequence[int] = ()
) -> int:
    """Move the link's ordinary entries into blocks with the compactor, every day closed: a
    block holds at most ``most`` entries of one UTC day, and none on both sides of a moment
    of ``breaks``. The blocks made."""

    def day_end(at_us: int) -> int:
        end = (at_us // DAY_US + 1) * DAY_US
        later = breaks[bisect.bisect_right(breaks, at_us) :]
        return min([end, *later[:1]])

    done = await compact_link(engine, link_id, key=KEY, until_us=2**62, day_end=day_end, most=most)
    return done.blocks
