"""Five years of a floor's meter history at full size, on PostgreSQL.

68 IAC 10-6-5(d) asks for five years of meter history. This builds one: a floor of links of
four levels (a hidden share on the first, limits with overflow meters on the others) and of
fixed pays (Let It Ride bonus), opened through the controller five years and two days ago,
then ``--entries`` entries over every gaming day since, as such a floor writes them:
contributions moving every meter of a pool, registered bonus bets, fixed pays paid at the
table, tables dropping offline and answering again. Every entry is sealed with the ledger's
own code from its link's real chain head; closed gaming days are packed into blocks as the
controller's compaction packs them (``controller.storage.blocks``), the day still open stays
rows; each link's row is written back with its new head and meters, sealed, so the
controller loads the floor as its own. Signed checkpoints cover every chain.

Then, while a small live floor is polled by the controller in a process of its own (its
commits are the heartbeat; the worst gap between two is shown), it measures:

- bytes per entry on PostgreSQL (tables, indexes, TOAST), against the same entries kept a
  row each (the layout before blocks), measured on a sample in the same run;
- ``ledger verify`` with the checkpoints, entries/s on both cores;
- a year's history export streamed to a file, entries/s and the process's peak memory;
- a gaming day's report and a five-year reconciliation;
- the retention purge of the one gaming day past the five-year mark;

and projects each to 550 million entries (300 tables, 50 rounds an hour, 20 hours a day,
five years).

    python -m bench.bench_history_years [--entries 50000000] [--workers 2] [--links 12]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import json
import multiprocessing
import os
import random
import resource
import sys
import tempfile
import time
import zoneinfo
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from datetime import time as clock_time
from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bench._pg import PG_DSN, scratch_schema
from controller.core.ledger import (
    ENTRY_COLUMNS,
    Checkpoint,
    SealedEntry,
    canonical_details,
    entry_bytes,
    seal,
)
from controller.core.money import contribution_units, format_cents
from controller.core.reducer import EntryKind, LinkState, MeterEvent
from controller.paperwork.checkpoints import parse_checkpoints, sign_line
from controller.periods import FloorCalendar
from controller.roles import Role
from controller.rules.jurisdictions import NEW_JERSEY
from controller.runtime.clock import FixedClock
from controller.runtime.config import parse_floor_config
from controller.runtime.service import open_floor
from controller.storage.blocks import BLOCK_FORM, pack, runs
from controller.storage.codec import link_fields
from controller.storage.compaction import BLOCK_MOST
from controller.storage.database import make_engine, upgrade
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger

KEY = b"benchmark ledger key, 32 bytes!!"
# The checkpoint key: signs the checkpoints and, as the controller's compaction does, the blocks.
SIGNING = Ed25519PrivateKey.from_private_bytes(b"benchmark checkpoint key, 32 b!!")
HOUR = 3_600_000_000
DAY = 24 * HOUR
YEARS = 5
FLOOR_ENTRIES = 550_000_000  # 300 tables x 50 rounds an hour x 20 hours x 365 days x 5 years
CALENDAR = FloorCalendar(
    clock_time(6), (clock_time(6), clock_time(14), clock_time(22)), zoneinfo.ZoneInfo("UTC")
)
BLOCK_COLUMNS = (
    "link_id", "first_seq", "last_seq", "first_at_us", "last_at_us", "entries", "form", "body",
    "runs", "seal", "signature",
)  # fmt: skip

# Four levels as floors run them without a mystery: 80 % of every wager in all.
_OVER = {"above_limit": "overflow"}
LEVELS = [
    {"name": "Grand", "reset": "$10,000", "share": "40%", "hidden": "8%"},
    {"name": "Major", "reset": "$1,000", "share": "12%", "limit": "$3,000", **_OVER},
    {"name": "Minor", "reset": "$100", "share": "10%", "limit": "$300", **_OVER},
    {"name": "Mini", "reset": "$20", "share": "10%", "limit": "$60", **_OVER},
]
PAYTABLE = [
    {"hand": "ROYAL_FLUSH", "pays": "100%", "level": 1},
    {"hand": "STRAIGHT_FLUSH", "pays": "100%", "level": 2},
    {"hand": "FOUR_OF_A_KIND", "pays": "100%", "level": 3},
    {"hand": "FULL_HOUSE", "pays": "100%", "level": 4},
    {"hand": "FLUSH", "pays": "$50"},
]


def floor_toml(links: int, tables: int) -> dict[str, Any]:
    """Two links of levels to every link of fixed pays, ``tables`` tables each."""
    bus_rows = []
    link_rows = []
    for i in range(links):
        name = f"h{i:02d}"
        fixed = i % 3 == 2
        bus_rows.append({"name": name, "kind": "tcp", "host": "127.0.0.1", "port": 1})
        link: dict[str, Any] = {
            "id": name,
            "game": "let_it_ride_bonus" if fixed else "caribbean_stud",
            "table": [
                {"id": f"{name}-{u}", "bus": name, "unit": u, "location": f"pit {name}"}
                for u in range(1, tables + 1)
            ],
        }
        if fixed:
            link |= {"rate": "61.37%", "reset": "$10,000"}
        else:
            link |= {"level": LEVELS, "paytable": PAYTABLE}
        link_rows.append(link)
    return {"bus": bus_rows, "link": link_rows}


@dataclass(slots=True)
class LinkSpec:
    link_id: str
    fixed: bool
    tables: list[str]
    entries: int
    head: tuple[int, str, int]  # seq, seal, meter
    meters: dict[str, int]  # a link of levels' meters by key
    level_bp: list[tuple[str, int]]  # (key, rate bp): where each wager's share goes
    limits: dict[str, int]  # key -> units
    rate_bp: int
    days: list[int]  # each gaming day's start, oldest first; the last is still open
    schema: str
    every: int  # a checkpoint every this many entries
    seed: int
    now_us: int  # when the history is built: no entry after it


@dataclass(slots=True)
class Built:
    link_id: str
    last: tuple[int, str, int]
    meters: dict[str, int]
    kinds: Counter[str]
    checkpoints: list[dict[str, Any]]
    blocks: int
    rows: int


_CREDITS = (1, 1, 2, 2, 3, 4, 5, 6, 7)
_ROUNDS = (1, 1, 1, 2)


def _events_of_day(
    spec: LinkSpec,
    rng: random.Random,
    start: int,
    n: int,
    meters: dict[str, int],
    total: list[int],
) -> list[MeterEvent]:
    """One gaming day's ``n`` entries of a link, over twenty hours of play. The details are
    written as ``canonical_details`` writes them (keys in order, no spaces): made by hand
    here, for speed, and checked against it now and then."""
    out: list[MeterEvent] = []
    # Twenty hours of play; the day still open only until now.
    play = min(20 * HOUR, max(HOUR, spec.now_us - start - HOUR - 60_000_000))
    step = play // max(1, n)
    pool_bp = sum(bp for _, bp in spec.level_bp)
    tables = spec.tables
    rate = spec.rate_bp
    for i in range(n):
        at = start + HOUR + i * step + rng.randrange(step)
        r = rng.random()
        tid = tables[int(r * 7919) % len(tables)]
        if r < 1 / 5_000:  # a table drops off and answers again
            out.append(
                MeterEvent(
                    EntryKind.TABLE_OFFLINE, at, total[0], 0,
                    f"table {tid} stopped answering: 3 polls failed", tid,
                )
            )  # fmt: skip
            continue
        bits = rng.getrandbits(20)
        credits = _CREDITS[bits % 9]
        rounds = _ROUNDS[(bits >> 4) % 4]
        seats = 1 + (bits >> 6) % 127
        if spec.fixed:
            if r > 1 - 1 / 30:  # a fixed pay, paid at the table
                cents = (400, 800, 2_500, 5_000, 7_500)[bits % 5]
                out.append(
                    MeterEvent(
                        EntryKind.PAID_AT_TABLE, at, 0, 0,
                        f"hit: table {tid} seat {1 + seats % 7}, {format_cents(cents)} paid at "
                        "the table",
                        tid, hit_id=f"{tid}#{at // 1000}",
                    )
                )  # fmt: skip
                continue
            details = (
                f'{{"credits":{credits},"denomination_cents":100,"rounds":{rounds},'
                f'"seats":{seats}}}'
            )
            out.append(
                MeterEvent(
                    EntryKind.BETS_REGISTERED, at, 0, 0,
                    f"table {tid}: {credits} bonus bets of $1.00", tid, details=details,
                )
            )  # fmt: skip
            continue
        units = contribution_units(credits=credits, denomination_cents=100, rate_bp=pool_bp)
        moves: dict[str, tuple[int, int]] = {}
        left = units
        shares = []
        for key, bp in spec.level_bp:
            share = units * bp // pool_bp
            left -= share
            shares.append([key, share])
        shares[0][1] += left  # what integer shares leave, to the first level
        for key, share in shares:
            was = meters.get(key, 0)
            limit = spec.limits.get(key)
            if limit is not None and was + share > limit:
                over = was + share - max(limit, was)
                share -= over
                okey = key + ".overflow"
                owas = meters.get(okey, 0)
                moves[okey] = (owas, over)
                meters[okey] = owas + over
            if share:
                moves[key] = (was, share)
                meters[key] = was + share
        before = total[0]
        total[0] += units
        split = ",".join(f'"{k}":[{w},{u}]' for k, (w, u) in sorted(moves.items()))
        details = (
            f'{{"credits":{credits},"denomination_cents":100,"meters":{{{split}}},'
            f'"rate_bp":{rate},"rounds":{rounds},"seats":{seats}}}'
        )
        out.append(
            MeterEvent(
                EntryKind.CONTRIBUTION, at, before, units,
                f"table {tid}: {credits} credits x 100c x {rate} bp over 4 levels", tid,
                details=details,
            )
        )  # fmt: skip
    if out and out[-1].details != "{}":
        d = out[-1].details
        assert isinstance(d, str) and canonical_details(json.loads(d)) == d, d
    return out


def build_link(spec: LinkSpec) -> Built:
    """A link's five years, written into the scratch schema (a worker process's work)."""
    return asyncio.run(_build_link(spec))


async def _build_link(spec: LinkSpec) -> Built:
    rng = random.Random(spec.seed)
    conn = await asyncpg.connect(PG_DSN, server_settings={"search_path": spec.schema})
    seq, prev, meter = spec.head
    meters = dict(spec.meters)
    total = [meter]
    kinds: Counter[str] = Counter()
    cps: list[dict[str, Any]] = []
    digest = hashlib.sha256()
    cp_from = seq
    blocks = rows = 0
    per_day, extra = divmod(spec.entries, len(spec.days))
    try:
        for d, start in enumerate(spec.days):
            n = per_day + (1 if d < extra else 0)
            events = _events_of_day(spec, rng, start, n, meters, total)
            sealed = seal(KEY, spec.link_id, events, last_seq=seq, last_hash=prev)
            for e in sealed:
                kinds[e.kind] += 1
                digest.update(entry_bytes(e))
                if e.seq - cp_from >= spec.every:
                    cps.append(
                        {
                            "seq": e.seq,
                            "hash": e.hash,
                            "meter_units": e.meter_after_units,
                            "at_us": e.at_us,
                            "prev_seq": cp_from,
                            "digest": digest.hexdigest(),
                        }
                    )
                    digest = hashlib.sha256()
                    cp_from = e.seq
            if sealed:
                seq, prev = sealed[-1].seq, sealed[-1].hash
            still_open = d == len(spec.days) - 1
            packed: set[int] = set()
            records = []
            if not still_open:
                for run in runs(sealed, most=BLOCK_MOST):
                    # Checked and sealed as the controller's compaction does it.
                    block = pack(run, KEY, SIGNING)
                    r = block.range
                    records.append(
                        (
                            spec.link_id,
                            r.first_seq,
                            r.last_seq,
                            r.first_at_us,
                            r.last_at_us,
                            r.entries,
                            BLOCK_FORM,
                            block.body,
                            block.runs,
                            block.seal,
                            block.signature,
                        )
                    )
                    packed.update(e.seq for e in run)
            if records:
                await conn.copy_records_to_table(
                    "meter_blocks", records=records, columns=BLOCK_COLUMNS
                )
                blocks += len(records)
            loose = [e for e in sealed if e.seq not in packed]
            if loose:
                await conn.copy_records_to_table(
                    "meter_entries", records=loose, columns=ENTRY_COLUMNS
                )
                rows += len(loose)
        if cp_from < seq:
            cps.append(
                {
                    "seq": seq,
                    "hash": prev,
                    "meter_units": total[0],
                    "at_us": spec.days[-1],
                    "prev_seq": cp_from,
                    "digest": digest.hexdigest(),
                }
            )
    finally:
        await conn.close()
    return Built(spec.link_id, (seq, prev, total[0]), meters, kinds, cps, blocks, rows)


def _final_state(state: LinkState, built: Built) -> LinkState:
    """The link's state at its new head: every level's meters where its entries left them."""
    m = built.meters
    levels = tuple(
        replace(
            lv,
            meter_units=m.get(f"L{i + 1}", lv.meter_units),
            reserve_units=m.get(f"L{i + 1}.reserve", lv.reserve_units),
            overflow_units=m.get(f"L{i + 1}.overflow", lv.overflow_units),
        )
        for i, lv in enumerate(state.levels)
    )
    return replace(state, meter_units=built.last[2], levels=levels)


async def _write_heads(
    store: LedgerStore, states: dict[str, LinkState], built: list[Built]
) -> None:
    """Each link row at its new head, sealed as the controller seals it."""
    async with store.engine.begin() as conn:
        for b in built:
            state = _final_state(states[b.link_id], b)
            seq, h, _ = b.last
            fields = link_fields(state)
            seal_ = store.book.seal_link(state, seq, h, fields=fields)
            await conn.exec_driver_sql(
                "UPDATE links SET meter_units = $1, levels = $2, last_seq = $3, last_hash = $4, "
                "state_seal = $5 WHERE link_id = $6",
                (state.meter_units, fields["levels"], seq, h, seal_, b.link_id),
            )


def _signed(built: list[Built], folder: Path) -> tuple[list[Any], Path]:
    key = SIGNING
    lines = [
        sign_line(key, Checkpoint(link_id=b.link_id, **cp)) for b in built for cp in b.checkpoints
    ]
    text = ("\n".join(lines) + "\n").encode()
    read = parse_checkpoints(text, key.public_key(), "bench")
    assert not read.problems, read.problems[:3]
    path = folder / "checkpoints.jsonl"
    path.write_bytes(text)
    return read.checkpoints, path


async def _size(schema: str) -> tuple[int, int]:
    conn = await asyncpg.connect(PG_DSN, server_settings={"search_path": schema})
    try:
        await conn.execute("VACUUM ANALYZE meter_entries")
        await conn.execute("VACUUM ANALYZE meter_blocks")
        total = 0
        for t in ("meter_entries", "meter_blocks"):
            total += await conn.fetchval(f"SELECT pg_total_relation_size('{schema}.{t}')")
        entries = await conn.fetchval(
            "SELECT (SELECT count(*) FROM meter_entries) + "
            "(SELECT coalesce(sum(entries), 0) FROM meter_blocks)"
        )
        return int(total), int(entries)
    finally:
        await conn.close()


async def _rows_sample(schema: str, n: int) -> float:
    """Bytes per entry of ``n`` of the history's entries kept a row each (before blocks)."""
    conn = await asyncpg.connect(PG_DSN, server_settings={"search_path": schema})
    try:
        await conn.execute("DROP TABLE IF EXISTS rows_sample")  # a run stopped half-way
        await conn.execute(
            "CREATE TABLE rows_sample (LIKE meter_entries INCLUDING DEFAULTS "
            "INCLUDING CONSTRAINTS INCLUDING INDEXES)"
        )
        bodies = await conn.fetch(
            "SELECT link_id, body FROM meter_blocks ORDER BY first_at_us DESC LIMIT $1",
            max(1, n // 4000),
        )
        from controller.storage.blocks import decode

        records: list[SealedEntry] = []
        for r in bodies:
            records.extend(decode(r["link_id"], bytes(r["body"])))
            if len(records) >= n:
                break
        records = records[:n]
        await conn.copy_records_to_table("rows_sample", records=records, columns=ENTRY_COLUMNS)
        await conn.execute("VACUUM ANALYZE rows_sample")
        size = await conn.fetchval(f"SELECT pg_total_relation_size('{schema}.rows_sample')")
        await conn.execute("DROP TABLE rows_sample")
        return size / len(records)
    finally:
        await conn.close()


async def _sqlite_sizes(schema: str, n: int) -> tuple[float, float]:
    """Bytes per entry on SQLite of ``n`` of the history's entries: kept as the blocks they
    are in, and the same entries a row each (each a fresh, migrated, vacuumed file)."""
    from controller.storage.blocks import decode

    conn = await asyncpg.connect(PG_DSN, server_settings={"search_path": schema})
    try:
        blocks = await conn.fetch(
            "SELECT * FROM meter_blocks ORDER BY first_at_us DESC LIMIT $1", max(1, n // 2000)
        )
    finally:
        await conn.close()
    sizes = []
    with tempfile.TemporaryDirectory() as tmp:
        for kept in ("blocks", "rows"):
            path = Path(tmp) / f"{kept}.db"
            engine = make_engine(f"sqlite+aiosqlite:///{path}")
            await upgrade(engine)
            entries = 0
            async with engine.begin() as c:
                for b in blocks:
                    if kept == "blocks":
                        await c.exec_driver_sql(
                            f"INSERT INTO meter_blocks ({', '.join(BLOCK_COLUMNS)}) "
                            f"VALUES ({', '.join('?' * len(BLOCK_COLUMNS))})",
                            tuple(b[k] for k in BLOCK_COLUMNS),
                        )
                        entries += b["entries"]
                        continue
                    rows = decode(b["link_id"], bytes(b["body"]))
                    await c.exec_driver_sql(
                        f"INSERT INTO meter_entries ({', '.join(ENTRY_COLUMNS)}) "
                        f"VALUES ({', '.join('?' * len(ENTRY_COLUMNS))})",
                        [tuple(e) for e in rows],
                    )
                    entries += len(rows)
            async with engine.connect() as c:
                await c.exec_driver_sql("VACUUM")
            await engine.dispose()
            empty = Path(tmp) / "empty.db"
            if not empty.exists():
                e2 = make_engine(f"sqlite+aiosqlite:///{empty}")
                await upgrade(e2)
                await e2.dispose()
            sizes.append((path.stat().st_size - empty.stat().st_size) / entries)
    return sizes[0], sizes[1]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class RssWatch:
    """The process's resident memory, sampled every 50 ms while a phase runs."""

    def __init__(self) -> None:
        self.peak = 0.0
        self._task: asyncio.Task[None] | None = None

    @staticmethod
    def now_mb() -> float:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    async def _run(self) -> None:
        while True:
            self.peak = max(self.peak, self.now_mb())
            await asyncio.sleep(0.05)

    def __enter__(self) -> RssWatch:
        self.start = self.now_mb()
        self.peak = self.start
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def _build(
    args: argparse.Namespace, url: str, schema: str, folder: Path, days: list[int]
) -> list[Any]:
    engine = make_engine(url)
    await upgrade(engine)
    store = LedgerStore(engine, KEY, law=NEW_JERSEY)
    floor = parse_floor_config(floor_toml(args.links, args.tables), source="bench")
    clock = FixedClock(days[0] + HOUR // 2)
    runtime = await open_floor(store, floor, clock, demonstration=True)
    from controller.paperwork.filing_desk import FilingDesk
    from controller.paperwork.submissions import ReviewDesk

    await ReviewDesk(FilingDesk(runtime)).approve_new_links(
        reviewer="commission", role=Role.COMMISSION_AGENT
    )
    states = dict(runtime.memory.states)
    specs = []
    per_link = args.entries // args.links
    for i, (link_id, state) in enumerate(sorted(states.items())):
        head = store.book.heads[link_id]
        level_bp: list[tuple[str, int]] = []
        limits: dict[str, int] = {}
        meters: dict[str, int] = {}
        for j, lv in enumerate(state.levels):
            key = f"L{j + 1}"
            level_bp.append((key, lv.config.rate_bp))
            if lv.config.reserve_bp:
                level_bp.append((key + ".reserve", lv.config.reserve_bp))
            if lv.config.limit_cents is not None:
                limits[key] = lv.config.limit_cents * 10_000
            meters[key] = lv.meter_units
        specs.append(
            LinkSpec(
                link_id, not state.levels, sorted(state.tables), per_link,
                (head[0], head[1], state.meter_units), meters, level_bp, limits,
                state.rate_bp, days, schema, args.checkpoint_every, 1000 + i,
                int(time.time() * 1_000_000),
            )
        )  # fmt: skip
    t0 = time.perf_counter()
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(args.workers, mp_context=spawn) as pool:
        built = list(pool.map(build_link, specs))
    build_s = time.perf_counter() - t0
    await _write_heads(store, states, built)
    await engine.dispose()
    kinds: Counter[str] = Counter()
    for b in built:
        kinds.update(b.kinds)
    n = sum(kinds.values())
    print(
        f"built {n:,} entries in {build_s:,.0f} s ({n / build_s:,.0f} entries/s): "
        + ", ".join(f"{k} {v / n:.1%}" for k, v in kinds.most_common())
    )
    print(f"  {sum(b.blocks for b in built):,} blocks, {sum(b.rows for b in built):,} rows")
    return built


def live_floor(url: str, folder: str, tables: int) -> None:
    """A small floor polled by the controller for as long as the measurements run, in a
    process of its own (a worker of ``multiprocessing``): its commits are the heartbeat.
    Stops when ``folder``/stop appears; writes each commit's time to ``folder``/commits."""
    asyncio.run(_live_floor(url, Path(folder), tables))


async def _live_floor(url: str, folder: Path, tables: int) -> None:
    from bench._floor import Bus, floor_config, simulator_process
    from controller.core.games import Game
    from controller.paperwork.filing_desk import FilingDesk
    from controller.paperwork.submissions import ReviewDesk
    from controller.runtime.clock import SystemClock
    from controller.runtime.poller import Poller

    bus = Bus("live", Game.CARIBBEAN_STUD, tables)
    async with simulator_process(folder, [bus], rounds_per_second=0.5, seed=7) as sim:
        floor = floor_config(
            [replace(bus, port=sim.ports["live"])], poll_interval_ms=1000, min_round_ms=1000
        )
        engine = make_engine(url)
        store = LedgerStore(engine, KEY, law=NEW_JERSEY)
        runtime = await open_floor(store, floor, SystemClock(), demonstration=True)
        await ReviewDesk(FilingDesk(runtime)).approve_new_links(
            reviewer="commission", role=Role.COMMISSION_AGENT
        )
        commits: list[float] = []
        apply = runtime.readings.apply

        async def timed(readings: Any) -> Any:
            done = await apply(readings)
            commits.append(time.time())
            return done

        setattr(runtime.readings, "apply", timed)  # noqa: B010
        poller = Poller(runtime, floor)
        poller.build()
        await poller.start()
        (folder / "started").touch()
        while not (folder / "stop").exists():  # noqa: ASYNC110 (another process says stop)
            await asyncio.sleep(0.2)
        await poller.stop()
        await engine.dispose()
    (folder / "commits").write_text(json.dumps(commits))


class Heartbeat:
    """The live floor's process, and the worst gap between its commits in each phase."""

    def __init__(self, url: str, tables: int) -> None:
        self.folder = Path(tempfile.mkdtemp())
        self.proc = multiprocessing.get_context("spawn").Process(
            target=live_floor, args=(url, str(self.folder), tables)
        )
        self.phases: list[tuple[str, float, float]] = []

    async def __aenter__(self) -> Heartbeat:
        self.proc.start()
        for _ in range(1200):
            if (self.folder / "started").exists() or not self.proc.is_alive():
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(5)  # the floor's first readings baseline its tables
        return self

    def phase(self, name: str, t0: float) -> None:
        self.phases.append((name, t0, time.time()))

    async def __aexit__(self, *exc: object) -> None:
        (self.folder / "stop").touch()
        self.proc.join(60)
        commits = self.folder / "commits"
        if not commits.exists():
            print("the live floor did not report its commits")
            return
        times = json.loads(commits.read_text())
        print(f"the live floor ({len(times):,} commits) meanwhile, worst gap between two:")
        for name, a, b in self.phases:
            inside = [t for t in times if a <= t <= b]
            edges = [a, *inside, b]
            gap = max(y - x for x, y in itertools.pairwise(edges))
            print(f"  {name}: {gap:.2f} s ({len(inside):,} commits)")


async def _measure(
    args: argparse.Namespace,
    url: str,
    schema: str,
    folder: Path,
    signed: list[Any],
    days: list[int],
) -> None:
    size, counted = await _size(schema)
    per_entry = size / counted
    print(f"bytes per entry on PostgreSQL: {per_entry:.1f}")
    before = await _rows_sample(schema, args.rows_sample)
    print(
        f"  the same entries a row each (the layout before blocks; {args.rows_sample:,} "
        f"sampled): {before:.1f} bytes per entry, {before / per_entry:.1f}x as much"
    )
    print(
        f"  {FLOOR_ENTRIES:,} entries: {FLOOR_ENTRIES * per_entry / 1e9:,.0f} GB "
        f"(a row each: {FLOOR_ENTRIES * before / 1e9:,.0f} GB)"
    )
    in_blocks, in_rows = await _sqlite_sizes(schema, args.rows_sample)
    print(
        f"bytes per entry on SQLite ({args.rows_sample:,} entries sampled): {in_blocks:.1f} in "
        f"blocks, {in_rows:.1f} a row each ({in_rows / in_blocks:.1f}x as much)"
    )
    async with Heartbeat(url, args.live_tables) as beat:
        await _timed_phases(args, url, schema, folder, signed, days, counted, beat)


async def _timed_phases(
    args: argparse.Namespace,
    url: str,
    schema: str,
    folder: Path,
    signed: list[Any],
    days: list[int],
    counted: int,
    beat: Heartbeat,
) -> None:
    engine = make_engine(url)
    w0 = time.time()
    t0 = time.perf_counter()
    report = await verify_ledger(
        engine, KEY, checkpoints=signed, public_key=SIGNING.public_key(), workers=args.workers
    )
    beat.phase("verify", w0)
    verify_s = time.perf_counter() - t0
    assert report.ok, report.problems[:3]
    rate = report.entries / verify_s
    print(
        f"ledger verify with {report.checkpoints:,} signed checkpoints: {report.entries:,} "
        f"entries in {verify_s:,.0f} s, {rate:,.0f} entries/s on {args.workers} cores; "
        f"{FLOOR_ENTRIES:,} entries: {FLOOR_ENTRIES / rate / 60:,.1f} min (target 15); "
        f"{report.sealed:,} entries checked through their blocks' seals, the rest one by one; "
        f"{report.digests_by_block_seal:,} checkpoints' digests stood for by block seals"
    )
    # The baseline, in the same run: one link's chain checked entry by entry, as before blocks
    # were sealed, against the same link through its blocks' seals.
    one = [args.one_link]
    w0, t0 = time.time(), time.perf_counter()
    whole = await verify_ledger(engine, KEY, link_ids=one, workers=args.workers, every_seal=True)
    every_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    fast = await verify_ledger(
        engine, KEY, link_ids=one, public_key=SIGNING.public_key(), workers=args.workers
    )
    fast_s = time.perf_counter() - t0
    assert whole.ok and fast.ok and whole.entries == fast.entries
    print(
        f"link {args.one_link}'s {whole.entries:,} entries: every seal {every_s:,.1f} s "
        f"({whole.entries / every_s:,.0f} entries/s), through blocks' seals {fast_s:,.1f} s "
        f"({fast.entries / fast_s:,.0f} entries/s): {every_s / fast_s:.1f}x"
    )
    beat.phase("verify, one link twice", w0)
    from controller.paperwork.export import ExportKind, export

    year_from, year_to = days[len(days) // 2], days[len(days) // 2 + 365]
    out = folder / "year.csv"
    w0 = time.time()
    with RssWatch() as mem, out.open("w") as f:
        t0 = time.perf_counter()
        rows = await export(
            engine,
            f,
            kind=ExportKind.HISTORY,
            fmt="csv",
            since_us=year_from,
            until_us=year_to,
            link_id=args.one_link,
        )
        export_s = time.perf_counter() - t0
    beat.phase("a year's export", w0)
    print(
        f"a year's history export of link {args.one_link} (csv, "
        f"{out.stat().st_size / 1e9:.2f} GB): {rows:,} entries in "
        f"{export_s:,.0f} s, {rows / export_s:,.0f} entries/s; memory {mem.start:.0f} MB at "
        f"start, {mem.peak:.0f} MB at most; a floor's year ({FLOOR_ENTRIES // 5:,} entries): "
        f"{FLOOR_ENTRIES // 5 / (rows / export_s) / 60:,.0f} min"
    )
    out.unlink()
    from controller.paperwork.floor_reports import floor_report
    from controller.paperwork.reconciliation import reconciliation
    from controller.periods import FloorPeriod

    link_ids = sorted({cp.checkpoint.link_id for cp in signed})
    day = CALENDAR.day(days[-2])
    period = FloorPeriod(day, None, days[-2], days[-1])
    w0, t0 = time.time(), time.perf_counter()
    for link_id in link_ids:
        await floor_report(engine, link_id, period, link_name=link_id)
    day_s = time.perf_counter() - t0
    beat.phase("gaming-day report", w0)
    print(f"a gaming day's report of every link ({len(link_ids)} links): {day_s:,.1f} s")
    w0, t0 = time.time(), time.perf_counter()
    total, weeks = await reconciliation(engine, args.one_link, days[0], days[-1] + DAY)
    assert not total.problems, total.problems[:3]
    n = len(weeks)
    rec_s = time.perf_counter() - t0
    reconciled = counted // len(link_ids)  # the link's share of the history
    beat.phase("five-year reconciliation", w0)
    print(
        f"five-year reconciliation of link {args.one_link} ({n:,} weeks, about "
        f"{reconciled:,} entries): {rec_s:,.0f} s, {reconciled / rec_s:,.0f} entries/s; "
        f"{FLOOR_ENTRIES:,} entries: {FLOOR_ENTRIES / (reconciled / rec_s) / 60:,.0f} min"
    )
    from controller.paperwork.retention import run_retention
    from controller.runtime.clock import SystemClock
    from controller.runtime.links import LinkRuntime

    store = LedgerStore(engine, KEY, law=NEW_JERSEY)
    runtime = LinkRuntime(store, SystemClock())
    await runtime.memory.load()
    w0, t0 = time.time(), time.perf_counter()
    purged = await run_retention(runtime, meter_years=YEARS, integrity_years=YEARS)
    purge_s = time.perf_counter() - t0
    beat.phase("retention purge", w0)
    removed = sum(m["counts"]["meter_entries"] for m in purged.links.values())
    print(
        f"retention purge at the five-year mark: {removed:,} entries of {len(purged.links)} "
        f"links removed in {purge_s:,.1f} s"
    )
    report = await verify_ledger(engine, KEY, workers=args.workers)
    assert report.ok, report.problems[:3]
    await engine.dispose()


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=50_000_000)
    ap.add_argument("--links", type=int, default=12)
    ap.add_argument("--tables", type=int, default=25, help="tables per link")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--checkpoint-every", type=int, default=2_000, help="a busy link's minute")
    ap.add_argument("--rows-sample", type=int, default=500_000)
    ap.add_argument("--live-tables", type=int, default=16, help="tables polled meanwhile")
    ap.add_argument(
        "--one-link", default="h00", help="the link whose year is exported and reconciled"
    )
    ap.add_argument("--keep", metavar="SCHEMA", help="build into this schema and keep it")
    ap.add_argument("--reuse", metavar="SCHEMA", help="measure a schema built with --keep")
    args = ap.parse_args()
    now = int(time.time() * 1_000_000)
    today = CALENDAR.day(now)
    first_day = today - timedelta(days=YEARS * 365 + 2)
    days = [
        CALENDAR.day_start(first_day + timedelta(days=i))
        for i in range((today - first_day).days + 1)
    ]
    print(
        f"floor: {args.links} links ({args.links - args.links // 3} of four levels, "
        f"{args.links // 3} of fixed pays) x {args.tables} tables; {args.entries:,} entries "
        f"over {len(days):,} gaming days; {args.workers} worker processes"
    )
    folder = Path(tempfile.mkdtemp())
    schema = args.reuse or args.keep
    if schema is None:
        async with scratch_schema() as (url, schema):
            built = await _build(args, url, schema, folder, days)
            signed, _ = _signed(built, folder)
            await _measure(args, url, schema, folder, signed, days)
        return 0
    url = PG_DSN.replace("postgresql://", "postgresql+asyncpg://", 1) + f"?search_path={schema}"
    kept = Path(tempfile.gettempdir()) / f"{schema}-checkpoints.json"
    if args.reuse is None:
        admin = await asyncpg.connect(PG_DSN)
        await admin.execute(f'CREATE SCHEMA "{schema}"')
        await admin.close()
        built = await _build(args, url, schema, folder, days)
        kept.write_text(json.dumps([[b.link_id, b.checkpoints] for b in built]))
        print(f"kept: schema {schema}; measure with --reuse {schema}")
        return 0
    built = [
        Built(link_id, (0, "", 0), {}, Counter(), cps, 0, 0)
        for link_id, cps in json.loads(kept.read_text())
    ]
    signed, _ = _signed(built, folder)
    await _measure(args, url, schema, folder, signed, days)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
