"""``ledger verify`` throughput, against a bare fetch of the same rows in the same run.

Builds a sealed history of ``--entries`` entries over ``--links`` links straight from the
ledger module (COPY into PostgreSQL, executemany into SQLite), then times
``verify_ledger`` on each database and, as the baseline, a bare streamed SELECT of the
same columns through the same engine; each is the best of ``--repeat`` runs, the first of
which warms the caches. Verify is timed twice: the chains alone, and checked against signed
checkpoints (one every ``--checkpoint-every`` entries of a link, as a busy link's minute),
which digests every entry once more.

Target: at least 200,000 entries/s, with checkpoints.

    python -m bench.bench_ledger_verify [--entries 1000000] [--links 8] [--repeat 3]
        [--checkpoint-every 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import asyncpg
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import insert, select

from bench._pg import PG_DSN, scratch_schema
from controller.core.games import Game, default_paytable
from controller.core.ledger import (
    ENTRY_COLUMNS,
    GENESIS,
    Checkpoint,
    SealedEntry,
    SignedCheckpoint,
    digest_of,
    seal,
)
from controller.core.reducer import EntryKind, MeterEvent
from controller.paperwork.checkpoints import parse_checkpoints, sign_line
from controller.storage.database import make_engine, upgrade
from controller.storage.models import LinkRow, MeterEntryRow, PaytableRow
from controller.storage.verify import verify_ledger

KEY = b"benchmark ledger key, 32 bytes!!"
T0 = 1_767_225_600_000_000


def history(entries: int, links: int) -> dict[str, list[SealedEntry]]:
    per_link = entries // links
    out: dict[str, list[SealedEntry]] = {}
    for li in range(links):
        events = [MeterEvent(EntryKind.LINK_OPENED, T0, 0, 10_000_000_000, "link opened")]
        meter = 10_000_000_000
        for n in range(1, per_link):
            units = 825_000 * (1 + n % 7)
            events.append(
                MeterEvent(
                    EntryKind.CONTRIBUTION,
                    T0 + n * 1000,
                    meter,
                    units,
                    f"table L{li}T{n % 50}: {1 + n % 7} credits x 100c x 8250 bp",
                    f"L{li}T{n % 50}",
                    details=f'{{"credits":{1 + n % 7},"denomination_cents":100,"rate_bp":8250}}',
                )
            )
            meter += units
        out[f"L{li}"] = seal(KEY, f"L{li}", events, last_seq=0, last_hash=GENESIS)
    return out


def checkpoints(chains: dict[str, list[SealedEntry]], every: int) -> list[SignedCheckpoint]:
    """Signed checkpoints every ``every`` entries of each chain and at its head, read back
    through the same parser the command uses."""
    key = Ed25519PrivateKey.generate()
    lines = []
    for link_id, entries in chains.items():
        prev = 0
        ends = [*range(every, len(entries), every), len(entries)]
        for end in ends:
            last = entries[end - 1]
            cp = Checkpoint(
                link_id=link_id,
                seq=last.seq,
                hash=last.hash,
                meter_units=last.meter_after_units,
                at_us=last.at_us,
                prev_seq=prev,
                digest=digest_of(entries[prev:end]),
            )
            lines.append(sign_line(key, cp))
            prev = end
    read = parse_checkpoints(("\n".join(lines) + "\n").encode(), key.public_key(), "bench")
    assert not read.problems
    return read.checkpoints


async def load(url: str, chains: dict[str, list[SealedEntry]], schema: str | None) -> None:
    engine = make_engine(url)
    await upgrade(engine)
    async with engine.begin() as conn:
        pt = (
            await conn.execute(
                insert(PaytableRow)
                .values(
                    link_id="-",
                    game=str(Game.CARIBBEAN_STUD),
                    lines=json.dumps(default_paytable(Game.CARIBBEAN_STUD).to_dicts()),
                    created_at_us=T0,
                )
                .returning(PaytableRow.paytable_id)
            )
        ).scalar_one()
        for link_id, entries in chains.items():
            last = entries[-1]
            await conn.execute(
                insert(LinkRow).values(
                    link_id=link_id,
                    name=link_id,
                    game=str(Game.CARIBBEAN_STUD),
                    rate_bp=8250,
                    reset_cents=10_000_00,
                    meter_units=last.meter_after_units,
                    hit_policy="split",
                    jackpot_won_since_rate_set=False,
                    paytable_id=pt,
                    last_win=None,
                    last_seq=last.seq,
                    last_hash=last.hash,
                    created_at_us=T0,
                )
            )
    if schema is not None:
        conn2 = await asyncpg.connect(PG_DSN, server_settings={"search_path": schema})
        for entries in chains.values():
            await conn2.copy_records_to_table(
                "meter_entries", records=entries, columns=ENTRY_COLUMNS
            )
        await conn2.execute("ANALYZE meter_entries")
        await conn2.close()
    else:
        async with engine.begin() as conn:
            for entries in chains.values():
                await conn.execute(MeterEntryRow.__table__.insert(), [e.as_row() for e in entries])
    await engine.dispose()


async def measure(
    url: str, label: str, n: int, repeat: int, signed: list[SignedCheckpoint]
) -> tuple[float, float]:
    """Best of ``repeat`` runs each of the bare fetch and of verify, without and with the
    checkpoints (the first run warms caches). Returns the entries/s with checkpoints."""
    engine = make_engine(url)
    cols = [getattr(MeterEntryRow, c) for c in ENTRY_COLUMNS]
    bare_s = verify_s = signed_s = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        async with engine.connect() as conn:
            result = await conn.stream(
                select(*cols)
                .order_by(MeterEntryRow.link_id, MeterEntryRow.seq)
                .execution_options(yield_per=20_000)
            )
            fetched = 0
            async for batch in result.partitions(20_000):
                fetched += len(batch)
        bare_s = min(bare_s, time.perf_counter() - start)
        start = time.perf_counter()
        report = await verify_ledger(engine, KEY)
        verify_s = min(verify_s, time.perf_counter() - start)
        assert report.ok and report.entries == n == fetched, (report.problems, report.entries)
        start = time.perf_counter()
        report = await verify_ledger(engine, KEY, checkpoints=signed)
        signed_s = min(signed_s, time.perf_counter() - start)
        assert report.ok and report.checkpoints == len(signed), report.problems
    await engine.dispose()
    print(
        f"{label:10s} bare fetch {n / bare_s:>10,.0f} entries/s   verify {n / verify_s:>10,.0f} "
        f"entries/s ({verify_s / bare_s:.2f}x)   with {len(signed):,} checkpoints "
        f"{n / signed_s:>10,.0f} entries/s ({signed_s / bare_s:.2f}x the fetch, "
        f"{signed_s / verify_s:.2f}x verify alone)"
    )
    return n / signed_s, signed_s / bare_s


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=1_000_000)
    ap.add_argument("--links", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    ap.add_argument("--checkpoint-every", type=int, default=2000)
    args = ap.parse_args()
    chains = history(args.entries, args.links)
    signed = checkpoints(chains, args.checkpoint_every)
    n = sum(len(c) for c in chains.values())
    rates = []
    async with scratch_schema() as (url, schema):
        await load(url, chains, schema)
        rates.append((await measure(url, "postgresql", n, args.repeat, signed))[0])
    with tempfile.TemporaryDirectory() as d:
        url = f"sqlite+aiosqlite:///{Path(d) / 'bench.db'}"
        await load(url, chains, None)
        rates.append((await measure(url, "sqlite", n, args.repeat, signed))[0])
    ok = min(rates) >= 200_000
    print(
        ("PASS" if ok else "FAIL")
        + f": slowest verify with checkpoints {min(rates):,.0f} entries/s (target >= 200,000)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
