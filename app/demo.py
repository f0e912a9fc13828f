"""``progressive demo``: a floor of simulated tables played through the real controller.

Three links (Caribbean Stud, Caribbean Draw, Let It Ride bonus) with four tables each, on an
embedded SQLite file in the current folder. Each simulated table deals real shuffled cards
and reports its counters and hit FIFO the way a table controller does; the controller polls
them once a second through the same runtime, engine and ledger as production, acknowledges
hits once they are committed, and keeps the heartbeat. A demo technician releases a held
table after a short while. Stopping and starting again resumes from the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from controller.clock import SystemClock
from controller.engine import HitClaim, LinkState, Outcome, TableConfig, TableReading, display_frame
from controller.games import Game
from controller.hands import HandCategory
from controller.money import format_cents
from controller.runtime import LinkRuntime
from controller.settings import Settings, load_ledger_key
from controller.storage.database import make_engine, upgrade
from controller.storage.store import LedgerStore, TableSpec
from link_adapters.simulator.table import COMMAND_HIT_PENDING, SimTable, SimTableConfig

US = 1_000_000


@dataclass(frozen=True, slots=True)
class DemoLink:
    link_id: str
    name: str
    game: Game
    rate_bp: int
    reset_cents: int
    denomination_cents: int


LINKS = (
    DemoLink("stud", "Caribbean Stud progressive", Game.CARIBBEAN_STUD, 8000, 10_000_00, 100),
    DemoLink("draw", "Caribbean Draw progressive", Game.CARIBBEAN_DRAW, 7500, 5_000_00, 100),
    DemoLink("lir", "Let It Ride bonus", Game.LET_IT_RIDE_BONUS, 6500, 1_000_00, 100),
)
TABLES_PER_LINK = 4


@dataclass(slots=True)
class DemoOptions:
    folder: Path
    round_seconds: float = 2.0
    jackpot_every_s: float = 180.0
    release_after_s: float = 15.0
    seed: int | None = None
    duration_s: float | None = None  # stop by itself after this long (tests)


class DemoFloor:
    def __init__(
        self, runtime: LinkRuntime, options: DemoOptions, say: Callable[[str], None]
    ) -> None:
        self.rt = runtime
        self.options = options
        self.say = say
        self.clock = SystemClock()
        self.rng = random.Random(options.seed)
        self.tables: dict[str, SimTable] = {}
        self.poll_seq: dict[str, int] = {}
        self.next_round_us: dict[str, int] = {}
        self.held_since: dict[str, int] = {}
        self.heartbeat = 0
        runtime.listeners.append(self._on_outcome)

    def build_tables(self) -> None:
        now = self.clock.now_us()
        for spec in LINKS:
            state = self.rt.states[spec.link_id]
            for table_id, ts in sorted(state.tables.items()):
                # Resume the simulated controller where the database left its counters.
                cfg = SimTableConfig(
                    game=spec.game,
                    start_credits=ts.credits or 0,
                    start_rounds=ts.rounds or 0,
                    start_hit_seq=ts.last_hit_seq,
                    heartbeat_timeout_us=10 * US,
                )
                table = SimTable(cfg, random.Random(self.rng.getrandbits(64)))
                table.heartbeat(1, now)
                self.tables[table_id] = table
                self.poll_seq[table_id] = ts.poll_seq
                self.next_round_us[table_id] = now + self.rng.randrange(
                    int(self.options.round_seconds * US)
                )

    def _on_outcome(self, o: Outcome) -> None:
        state = o.state
        for h in o.hits:
            if h.status == "awarded":
                where = "from the meter" if h.paid_from == "meter" else "at the table"
                self.say(
                    f"  HIT  {state.link_id}/{h.table_id} seat {h.claim.seat}: "
                    f"{h.claim.hand.label}, {format_cents(h.award_cents)} paid {where}"
                )
            else:
                self.say(f"  REFUSED  {h.table_id} seat {h.claim.seat}: {h.refusal}")
        for ev in o.events:
            if ev.kind == "jackpot_reset":
                reset = format_cents(state.reset_cents)
                self.say(f"  {state.link_id}: jackpot won, meter reset to {reset}")

    def _play(self, now: int) -> None:
        for table_id, table in self.tables.items():
            while self.next_round_us[table_id] <= now:
                table.play_round(self.next_round_us[table_id])
                jitter = self.rng.uniform(0.7, 1.3)
                self.next_round_us[table_id] += int(self.options.round_seconds * jitter * US)

    def _reading(self, table_id: str, now: int) -> TableReading:
        table = self.tables[table_id]
        head = table.head_hit
        claim = None
        if head is not None:
            claim = HitClaim(
                table_seq=head.seq,
                seat=head.seat,
                hand=head.hand,
                round=head.round,
                cards=head.cards,
            )
        self.poll_seq[table_id] += 1
        return TableReading(
            table_id=table_id,
            poll_seq=self.poll_seq[table_id],
            at_us=now,
            credits=table.credits,
            rounds=table.rounds,
            pending_hits=len(table.hit_fifo),
            head_hit=claim,
        )

    async def cycle(self) -> None:
        now = self.clock.now_us()
        self._play(now)
        await self.rt.apply_readings([self._reading(t, now) for t in self.tables])
        # After the commit: acknowledge what was taken, keep the heartbeat, mirror the holds.
        self.heartbeat = (self.heartbeat + 1) % 65536
        for link_id, state in self.rt.states.items():
            for table_id, ts in state.tables.items():
                table = self.tables[table_id]
                head = table.head_hit
                if head is not None and head.seq <= ts.last_hit_seq:
                    table.acknowledge(head.seq)
                table.heartbeat(self.heartbeat, now)
                table.set_command_bits(COMMAND_HIT_PENDING if ts.hit_pending else 0)
                table.set_meter_display(state.meter_cents)
                if ts.hit_pending:
                    since = self.held_since.setdefault(table_id, now)
                    if now - since >= self.options.release_after_s * US:
                        for hit in await self.rt.unverified_hits(table_id):
                            await self.rt.verify_hit(hit.hit_id, actor="demo technician")
                        await self.rt.release_table(table_id, actor="demo technician")
                        self.held_since.pop(table_id, None)
                        self.say(
                            f"  {link_id}/{table_id} verified and reset by the demo technician"
                        )
                else:
                    self.held_since.pop(table_id, None)

    def force_jackpot(self) -> None:
        candidates = [t for t in self.tables if not t.startswith("lir")]
        table_id = self.rng.choice(candidates)
        seat = self.rng.randint(1, 7)
        self.tables[table_id].force_hand(seat, HandCategory.ROYAL_FLUSH)
        self.say(f"  (demo: the next round at {table_id} deals a royal flush to seat {seat})")

    def board(self) -> str:
        now = self.clock.now_us()
        parts = []
        for spec in LINKS:
            state: LinkState = self.rt.states[spec.link_id]
            frame = display_frame(state, now_us=now)
            label = {"live": "", "won": " WON", "reset": " reset"}[frame.mode]
            held = sum(1 for ts in state.tables.values() if ts.hit_pending)
            parts.append(
                f"{spec.link_id} {format_cents(frame.amount_cents):>13}{label}"
                + (f" ({held} held)" if held else "")
            )
        return " | ".join(parts)


async def ensure_links(store: LedgerStore, at_us: int) -> None:
    existing = set(await store.link_ids())
    for spec in LINKS:
        if spec.link_id in existing:
            continue
        tables = [
            TableSpec(
                config=TableConfig(
                    table_id=f"{spec.link_id}-{n}",
                    denomination_cents=spec.denomination_cents,
                    max_credits_per_seat_round=1,
                    min_round_us=50_000,  # the demo deals far faster than a real dealer
                ),
                name=f"{spec.game.label} table {n}",
                location=f"pit 1, table {n}",
            )
            for n in range(1, TABLES_PER_LINK + 1)
        ]
        await store.create_link(
            link_id=spec.link_id,
            name=spec.name,
            game=spec.game,
            rate_bp=spec.rate_bp,
            reset_cents=spec.reset_cents,
            tables=tables,
            at_us=at_us,
            actor="demo",
        )


async def run_demo(options: DemoOptions, say: Callable[[str], None] = print) -> None:
    db_path = options.folder / "progressive-demo.db"
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{db_path}",
        ledger_key_file=options.folder / "progressive-demo.key",
    )
    key = load_ledger_key(settings, create=True)
    engine = make_engine(settings.database_url)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, stop.set)
        loop.add_signal_handler(signal.SIGTERM, stop.set)
    try:
        await upgrade(engine)
        store = LedgerStore(engine, key)
        await store.check_key()
        await ensure_links(store, SystemClock().now_us())
        rt = LinkRuntime(store)
        await rt.load()
        floor = DemoFloor(rt, options, say)
        floor.build_tables()
        say(
            f"progressive demo: {len(floor.tables)} simulated tables on 3 links, database {db_path}"
        )
        say(
            "  check the history:  PROGRESSIVE_DATABASE_URL="
            + settings.database_url
            + f" PROGRESSIVE_LEDGER_KEY_FILE={settings.ledger_key_file} progressive ledger verify"
        )
        say("  Ctrl-C stops; running it again resumes where it stopped.")
        started = loop.time()
        next_jackpot = started + min(options.jackpot_every_s, 30.0)
        last_board = 0.0
        while not stop.is_set():
            await floor.cycle()
            now = loop.time()
            if now >= next_jackpot:
                floor.force_jackpot()
                next_jackpot = now + options.jackpot_every_s
            if now - last_board >= 5.0:
                say(floor.board())
                last_board = now
            if options.duration_s is not None and now - started >= options.duration_s:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=1.0)
        say(floor.board())
        say("stopped; every committed entry is in the database")
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)
        await engine.dispose()
