"""The history export over blocks of closed days, against the same history kept as rows and
a bare fetch of those rows, in the same run.

Builds two links with the same ``--entries`` entries over ``--days`` days straight from the
ledger module: one kept as rows, one with each day's contributions in a block (a row of its
own between days, as a table coming online). Times, each the best of ``--repeat`` runs (the
first warms the caches): a bare streamed SELECT of the rows, the CSV export of the link of
rows, the CSV export of the link of blocks. Then the peak memory (tracemalloc) of the export
of the blocks over the whole period against over its first quarter: constant memory is a
ratio near 1.

    python -m bench.bench_export_blocks [--entries 200000] [--days 365] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path

from sqlalchemy import select

from bench._pg import scratch_schema
from controller.core.ledger import GENESIS, SealedEntry, seal
from controller.core.reducer import EntryKind, MeterEvent
from controller.paperwork.export import ExportKind, export
from controller.storage.blocks import pack
from controller.storage.database import make_engine, upgrade
from controller.storage.entries import ENTRIES, SEALED_COLUMNS, Entries

KEY = b"benchmark ledger key, 32 bytes!!"
T0 = 1_767_225_600_000_000
DAY_US = 86_400_000_000


def history(link_id: str, entries: int, days: int) -> list[SealedEntry]:
    per_day = entries // days
    step = DAY_US // per_day
    events: list[MeterEvent] = []
    meter = 0
    for day in range(days):
        for n in range(per_day):
            credits = 1 + n % 7
            delta = 0 if n == 0 else 825_000 * credits
            events.append(
                MeterEvent(
                    EntryKind.TABLE_ONLINE if n == 0 else EntryKind.CONTRIBUTION,
                    T0 + day * DAY_US + n * step,
                    meter,
                    delta,
                    f"table T{n % 40}: {credits} credits x 100c x 8250 bp",
                    f"T{n % 40}",
                    details=f'{{"credits":{credits},"denomination_cents":100,"rate_bp":8250}}',
                )
            )
            meter += delta
    return seal(KEY, link_id, events, last_seq=0, last_hash=GENESIS)


async def load(url: str, entries: int, days: int) -> None:
    engine = make_engine(url)
    await upgrade(engine)
    rows, blocked = history("rows", entries, days), history("blocks", entries, days)
    async with engine.begin() as conn:
        stored = Entries(conn)
        await stored.append(rows)
        await stored.append([e for e in blocked if e.kind != EntryKind.CONTRIBUTION])
        day: list[SealedEntry] = []
        for e in blocked:
            if e.kind != EntryKind.CONTRIBUTION:
                if day:
                    await stored.add_block(pack(day))
                day = []
            else:
                day.append(e)
        if day:
            await stored.add_block(pack(day))
    await engine.dispose()


class Sink(io.StringIO):
    def write(self, text: str) -> int:
        return len(text)


async def best(repeat: int, run: Callable[[], Awaitable[object]]) -> float:
    out = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        await run()
        out = min(out, time.perf_counter() - start)
    return out


async def measure(url: str, label: str, entries: int, days: int, repeat: int) -> None:
    engine = make_engine(url)
    until = T0 + days * DAY_US
    entries = entries // days * days  # as ``history`` makes them

    async def bare() -> None:
        async with engine.connect() as conn:
            result = await conn.stream(
                select(*SEALED_COLUMNS)
                .where(ENTRIES.c.link_id == "rows", ENTRIES.c.at_us >= T0)
                .order_by(ENTRIES.c.seq)
                .execution_options(yield_per=5_000)
            )
            async for _ in result.partitions():
                pass

    def exporting(link_id: str, until_us: int = until) -> Callable[[], Awaitable[int]]:
        async def run() -> int:
            return await export(
                engine, Sink(), kind=ExportKind.HISTORY, fmt="csv", since_us=T0,
                until_us=until_us, link_id=link_id,
            )  # fmt: skip

        return run

    bare_s = await best(repeat, bare)
    rows_s = await best(repeat, exporting("rows"))
    blocks_s = await best(repeat, exporting("blocks"))
    peaks = []
    for until_us in (T0 + days // 4 * DAY_US, until):
        tracemalloc.start()
        await exporting("blocks", until_us)()
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    await engine.dispose()
    print(
        f"{label:10s} bare fetch {entries / bare_s:>9,.0f} entries/s   export of rows "
        f"{entries / rows_s:>9,.0f} entries/s ({rows_s / bare_s:.2f}x the fetch)   export of "
        f"blocks {entries / blocks_s:>9,.0f} entries/s ({blocks_s / rows_s:.2f}x the rows')   "
        f"peak memory, whole period against a quarter: {peaks[1] / 1e6:.1f} MB / "
        f"{peaks[0] / 1e6:.1f} MB = {peaks[1] / peaks[0]:.2f}x"
    )


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=200_000)
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = ap.parse_args()
    async with scratch_schema() as (url, _):
        await load(url, args.entries, args.days)
        await measure(url, "postgresql", args.entries, args.days, args.repeat)
    with tempfile.TemporaryDirectory() as d:
        url = f"sqlite+aiosqlite:///{Path(d) / 'bench.db'}"
        await load(url, args.entries, args.days)
        await measure(url, "sqlite", args.entries, args.days, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
