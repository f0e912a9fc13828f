"""One reading that cannot be recorded holds only its table; the rest of the floor is recorded.

On real SQLite and PostgreSQL: the database refuses what one table's reading carries (a
trigger refusing its hits, as a column refuses a value it cannot hold), or the engine cannot
apply it, or a paytable filed before amounts were bounded pays more than any amount may be.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from controller.core.games import Game, Paytable, PaytableLine
from controller.core.hands import HandCategory, parse_cards
from controller.core.reducer import HitClaim
from controller.runtime.links import LinkRuntime
from controller.storage.models import HitRow, TableCounterRow
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from tests.conftest import KEY, T0
from tests.controller.storage.helpers import (
    Poller,
    accept_hits_again,
    make_link,
    refuse_hits_of,
    runtime,
)

FLUSH = parse_cards("2s 5s 8s Js Ks")


async def two_links(store: LedgerStore, **stud: Any) -> LinkRuntime:
    await make_link(store, "stud", ("t1", "t2"), **stud)
    await make_link(store, "draw", ("d1",), game=Game.CARIBBEAN_DRAW)
    return await runtime(store)


async def counters(store: LedgerStore) -> dict[str, int | None]:
    async with store.engine.connect() as conn:
        rows = await conn.execute(select(TableCounterRow.table_id, TableCounterRow.credits))
        return {tid: credits for tid, credits in rows}


async def hits_of(store: LedgerStore, table_id: str) -> list[Any]:
    async with store.engine.connect() as conn:
        return list((await conn.execute(select(HitRow).where(HitRow.table_id == table_id))).all())


async def test_a_reading_the_database_refuses_holds_only_its_table(store: LedgerStore) -> None:
    rt = await two_links(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0), p.reading("t2", 0), p.reading("d1", 0)])
    async with store.engine.begin() as conn:
        await refuse_hits_of(conn, "t1")
    royal = p.royal("t1", 10, seq=1)
    await rt.readings.apply([royal, p.reading("t2", 5), p.reading("d1", 7)])
    assert list(rt.memory.unrecorded) == ["t1"] and "refused" in rt.memory.unrecorded["t1"]
    assert await counters(store) == {"t1": 0, "t2": 5, "d1": 7}
    assert rt.memory.wagering_hold("stud", T0, table_id="t1") is not None
    assert rt.memory.wagering_hold("stud", T0, table_id="t2") is None
    # Held: its readings are left out of every cycle, the others' are recorded.
    await rt.readings.apply([p.royal("t1", 12, seq=1), p.reading("t2", 6), p.reading("d1", 9)])
    assert await counters(store) == {"t1": 0, "t2": 6, "d1": 9}
    # Tried alone while the cause lasts: still held, nothing recorded.
    assert not await rt.readings.retry_unrecorded(p.royal("t1", 12, seq=1))
    assert "t1" in rt.memory.unrecorded and await hits_of(store, "t1") == []
    async with store.engine.begin() as conn:
        await accept_hits_again(conn)
    assert await rt.readings.retry_unrecorded(p.royal("t1", 14, seq=1))
    assert rt.memory.unrecorded == {}
    assert [h.table_seq for h in await hits_of(store, "t1")] == [1]
    assert (await counters(store))["t1"] == 14
    assert rt.memory.states["stud"].table("t1").hit_pending  # the jackpot waits for a technician
    assert (await verify_ledger(store.engine, KEY)).ok


async def test_a_reading_the_engine_cannot_apply_holds_only_its_table(store: LedgerStore) -> None:
    rt = await two_links(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0), p.reading("t2", 0), p.reading("d1", 0)])
    await rt.readings.apply([p.reading("t1", 2**32), p.reading("t2", 3), p.reading("d1", 4)])
    assert list(rt.memory.unrecorded) == ["t1"] and "unsigned 32-bit" in rt.memory.unrecorded["t1"]
    assert await counters(store) == {"t1": 0, "t2": 3, "d1": 4}
    assert await rt.readings.retry_unrecorded(p.reading("t1", 8))
    assert await counters(store) == {"t1": 8, "t2": 3, "d1": 4}


async def test_a_paytable_filed_before_the_bounds_refuses_the_claim_and_stops_nothing(
    store: LedgerStore,
) -> None:
    """A fixed pay of 2**63 cents (no column holds it) approved before amounts were bounded:
    the claim is recorded refused, its table held for people, every other reading recorded."""
    unbounded = Paytable(
        Game.CARIBBEAN_STUD,
        (
            PaytableLine(hand=HandCategory.ROYAL_FLUSH, percent_bp=10_000),
            PaytableLine(hand=HandCategory.FLUSH, fixed_cents=2**63),
        ),
    )
    rt = await two_links(store, paytable=unbounded)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0), p.reading("t2", 0), p.reading("d1", 0)])
    claim = HitClaim(table_seq=1, seat=2, hand=HandCategory.FLUSH, round=1, cards=FLUSH)
    flush = p.reading("t1", 1, pending_hits=1, head_hit=claim)
    await rt.readings.apply([flush, p.reading("t2", 5), p.reading("d1", 7)])
    assert rt.memory.unrecorded == {}
    [hit] = await hits_of(store, "t1")
    assert hit.status == "refused" and "above the most any amount may be" in hit.refusal
    assert rt.memory.states["stud"].table("t1").hit_pending
    assert await counters(store) == {"t1": 1, "t2": 5, "d1": 7}
    async with store.engine.connect() as conn:
        assert await conn.scalar(select(func.count()).select_from(HitRow)) == 1
    assert (await verify_ledger(store.engine, KEY)).ok
