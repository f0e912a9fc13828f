"""Ledger appends into PostgreSQL, batched per poll cycle, against bare asyncpg inserts.

A floor of tables (default 20 links x 50 tables) contributes at every poll cycle. Measured in
the same run, over the same sealed rows:

* append: ``LedgerStore.commit`` of one cycle's outcomes: seal, claim each link's chain head,
  insert the entries and update the tables' counters, one transaction per cycle;
* full poll path: the same plus the engine turning readings into outcomes
  (``LinkReadings.apply``), reported for context;
* baseline: a bare asyncpg ``executemany`` of the same entry rows into a table of the same
  shape, one transaction per cycle.

Target: appends at least 10,000 entries/s and within 3x of the bare insert.

    python -m bench.bench_ledger_append [--links 20] [--tables 50] [--cycles 40]
"""

from __future__ import annotations

import argparse
import asyncio
import time

import asyncpg

from bench._pg import PG_DSN, scratch_schema
from controller.core import reducer
from controller.core.games import Game
from controller.core.ledger import ENTRY_COLUMNS, SealedEntry
from controller.core.reducer import Outcome, TableConfig, TableReading
from controller.runtime.links import LinkRuntime
from controller.storage.database import make_engine, upgrade
from controller.storage.links import TableSpec
from controller.storage.store import LedgerStore

KEY = b"benchmark ledger key, 32 bytes!!"
T0 = 1_767_225_600_000_000


async def floor(url: str, links: int, tables: int) -> tuple[LedgerStore, list[str]]:
    engine = make_engine(url, pool_size=2)
    await upgrade(engine)
    store = LedgerStore(engine, KEY)
    await store.check_key()
    table_ids: list[str] = []
    for li in range(links):
        specs = [
            TableSpec(
                config=TableConfig(
                    table_id=f"L{li}T{ti}",
                    denomination_cents=100,
                    max_credits_per_seat_round=10,
                    min_round_us=1_000_000,
                )
            )
            for ti in range(tables)
        ]
        table_ids += [t.config.table_id for t in specs]
        await store.create_link(
            link_id=f"L{li}",
            name=f"link {li}",
            game=Game.CARIBBEAN_STUD,
            rate_bp=8250,
            reset_cents=10_000_00,
            tables=specs,
            at_us=T0,
            actor="bench",
        )
    return store, table_ids


def cycle(table_ids: list[str], n: int) -> list[TableReading]:
    return [
        TableReading(table_id=t, poll_seq=n, at_us=T0 + n * 1_000_000, credits=n * 3 + (i % 5))
        for i, t in enumerate(table_ids)
    ]


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--links", type=int, default=20)
    ap.add_argument("--tables", type=int, default=50, help="tables per link")
    ap.add_argument("--cycles", type=int, default=40)
    args = ap.parse_args()
    cycles = range(2, args.cycles + 2)

    async with scratch_schema() as (url, schema):
        # 1. Appends: the engine's outcomes are computed first; only the commits are timed.
        store, table_ids = await floor(url, args.links, args.tables)
        rt = LinkRuntime(store)
        await rt.memory.load()
        await rt.readings.apply(cycle(table_ids, 1))  # baselines
        states = dict(rt.memory.states)
        planned: list[list[Outcome]] = []
        for n in cycles:
            by_link: dict[str, list[TableReading]] = {}
            for r in cycle(table_ids, n):
                by_link.setdefault(rt.memory.table_link[r.table_id], []).append(r)
            outs = []
            for lid, rs in sorted(by_link.items()):
                o = reducer.apply_readings(states[lid], rs)
                states[lid] = o.state
                outs.append(o)
            planned.append(outs)
        sealed: list[list[SealedEntry]] = []
        start = time.perf_counter()
        for outs in planned:
            sealed.append(await store.commit(outs))
        append_s = time.perf_counter() - start
        await store.engine.dispose()
        entries = sum(len(b) for b in sealed)

    async with scratch_schema() as (url, schema):
        # 2. The full poll path on a fresh floor: engine and commit, cycle by cycle.
        store2, table_ids = await floor(url, args.links, args.tables)
        rt2 = LinkRuntime(store2)
        await rt2.memory.load()
        await rt2.readings.apply(cycle(table_ids, 1))
        start = time.perf_counter()
        for n in cycles:
            await rt2.readings.apply(cycle(table_ids, n))
        full_s = time.perf_counter() - start
        await store2.engine.dispose()

        # 3. Baseline: the same sealed rows, bare asyncpg.
        rows = [[e.as_tuple() for e in batch] for batch in sealed]
        conn = await asyncpg.connect(PG_DSN, server_settings={"search_path": schema})
        await conn.execute("CREATE TABLE bare_entries (LIKE meter_entries INCLUDING ALL)")
        cols = ", ".join(ENTRY_COLUMNS)
        marks = ", ".join(f"${i}" for i in range(1, len(ENTRY_COLUMNS) + 1))
        sql = f"INSERT INTO bare_entries ({cols}) VALUES ({marks})"
        start = time.perf_counter()
        for batch in rows:
            async with conn.transaction():
                await conn.executemany(sql, batch)
        bare_s = time.perf_counter() - start
        await conn.close()

    rate = entries / append_s
    ratio = append_s / bare_s
    print(
        f"floor: {args.links} links x {args.tables} tables, {args.cycles} poll cycles, "
        f"{entries:,} entries"
    )
    print(f"bare asyncpg executemany of the same rows:        {entries / bare_s:>9,.0f} entries/s")
    print(
        f"ledger append (seal+heads+entries+counters, 1 tx): {rate:>9,.0f} entries/s  "
        f"ratio {ratio:.2f}x"
    )
    print(
        f"full poll path (engine + the above):               {entries / full_s:>9,.0f} entries/s  "
        f"ratio {full_s / bare_s:.2f}x"
    )
    ok = rate >= 10_000 and ratio <= 3.0
    print(
        ("PASS" if ok else "FAIL") + f": append {rate:,.0f} entries/s (target >= 10,000), "
        f"{ratio:.2f}x the bare insert (target <= 3x)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
