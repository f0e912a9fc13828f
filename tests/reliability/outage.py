"""The database stopped for a minute during play, and what the controller does meanwhile.

A private PostgreSQL server (``tests.private_pg``: stopping the shared one is not allowed) holds
the ledger of a simulated floor of two links polled by the real controller (``FloorService``:
the poller, the link locks, the group commit) and served by the real web application. Play
goes on; a royal flush is forced shortly before the server is stopped and another while it is
down. The run checks, during the outage, that the tables are still polled and keep their
heartbeat (no side bet refused), that displays still get messages, marked degraded and showing
only recorded amounts, that ``/readyz`` says 503 naming the database, that the hit is held in
its table's FIFO, and that the log says it once rather than at every poll; and, once the server
is back, that everything wagered is on the meter to the unit, each hit taken once, the ledger
whole, the controller ready and not degraded. It measures how long recovery takes.

    python -m tests.reliability.outage [--outage-s 60]

runs it and prints the figures; ``tests/reliability/test_database_outage.py`` runs it under
pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import resource
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import websockets
from playwright.async_api import Browser, Page
from sqlalchemy import select

from app.serve import serve
from app.web import create_app
from controller.core.hands import HandCategory
from controller.core.money import displayed_cents
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.runtime.config_entries import FloorConfig
from controller.runtime.service import FloorService
from controller.settings import Settings
from controller.storage.database import make_engine
from controller.storage.models import HitRow, MeterEntryRow
from controller.storage.store import LedgerStore
from link_adapters.profile_files import load_profile
from link_adapters.register_map import COMMAND_HIT_PENDING
from tests.app.browser import CHROMIUM, chromium, shot
from tests.conftest import KEY, process_env
from tests.integration.harness import FloorHarness, LinkPlan
from tests.private_pg import private_postgres

PROFILES = Path(__file__).resolve().parents[2] / "link_adapters" / "profiles"

STUD = LinkPlan("stud", "caribbean_stud", "caribbean_stud", tables=2, rate_bp=8000)
LIR = LinkPlan("lir", "let_it_ride_bonus", "let_it_ride_bonus", tables=2, rate_bp=7500)
PLANS = (STUD, LIR)
WAIT_S = 60.0  # generous: the machine is shared

# The log during the outage may say it once per subject (the commits, the lock connection),
# then periodically: anything near one line per poll is a flood.
MAX_OUTAGE_LOG_LINES = 12


def two_request_profile(folder: Path) -> str:
    """The reference map, polled with a read and then a write (function 3, then 16) rather
    than one read/write request: the path where a table is written after its commit."""
    data = json.loads((PROFILES / "reference-v1.json").read_text())
    data["read_write"] = False
    path = folder / "reference-v1-two-requests.json"
    path.write_text(json.dumps(data))
    return str(path)


def with_profile(floor: FloorConfig, link_id: str, profile: str) -> FloorConfig:
    """The floor with the link's tables polled through ``profile`` (a name or a path)."""
    registers = load_profile(profile)
    return replace(
        floor,
        links=tuple(
            replace(link, tables=tuple(replace(t, profile=registers) for t in link.tables))
            if link.link_id == link_id
            else link
            for link in floor.links
        ),
    )


@dataclass
class Figures:
    outage_s: float
    backlog_committed_s: float = 0.0  # server accepting again -> everything wagered recorded
    ready_s: float = 0.0  # server accepting again -> /readyz 200
    degraded_cleared_s: float = 0.0  # server accepting again -> a display told not degraded
    log_lines: list[str] = field(default_factory=list)  # INFO and above during the outage
    cpu_s: float = 0.0  # this process's CPU time during the outage (simulator included)
    polls_during: int = 0  # answered polls of every table during the outage
    display_messages_during: int = 0
    display_gap_s: float = 0.0  # the longest a display went without a message, throughout
    credits_during: int = 0  # credits wagered during the outage (all tables)
    refused_during: int = 0  # side bets refused during the outage by tables not held
    held_tables: list[str] = field(default_factory=list)  # held for a hit recorded before
    hits: int = 0
    web_only_caught_up_s: float = 0.0  # server accepting again -> web process not degraded
    hit_before_stop: str = ""  # what became of the royal flush dealt just before the stop

    def lines(self) -> list[str]:
        return [
            f"outage: {self.outage_s:.0f} s with the database server stopped",
            f"polls answered during it: {self.polls_during}; display messages: "
            f"{self.display_messages_during} (longest silence {self.display_gap_s:.1f} s); "
            f"credits wagered: {self.credits_during}; "
            f"side bets refused by tables not held for a hit: {self.refused_during} "
            f"(held: {', '.join(self.held_tables) or 'none'})",
            f"log lines during it (INFO and above): {len(self.log_lines)}",
            *(f"    {line}" for line in self.log_lines),
            f"CPU time of the whole test process during it: {self.cpu_s:.1f} s "
            f"({100 * self.cpu_s / self.outage_s:.0f} % of one core)",
            f"after the server accepts connections again: backlog committed in "
            f"{self.backlog_committed_s:.2f} s, /readyz ready in {self.ready_s:.2f} s, "
            f"displays not degraded in {self.degraded_cleared_s:.2f} s, the web-only "
            f"process in {self.web_only_caught_up_s:.2f} s",
            f"hits recorded (each once): {self.hits}; the royal flush dealt just before the "
            f"stop was {self.hit_before_stop}",
        ]


class Captured(logging.Handler):
    """The controller's and the web's log lines, while capturing."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.on = False
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if self.on:
            self.lines.append(f"{record.levelname} {record.name}: {record.getMessage()}")


@contextlib.contextmanager
def capture_logs() -> Any:
    handler = Captured()
    loggers = [logging.getLogger(name) for name in ("controller", "app", "link_adapters")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.removeHandler(handler)
            lg.setLevel(level)


async def until(condition: Callable[[], bool], within_s: float = WAIT_S) -> None:
    async with asyncio.timeout(within_s):
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.02)


class Display:
    """A floor display: a real WebSocket client keeping every message with when it came."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.messages: list[tuple[float, dict[str, Any]]] = []
        self._task: asyncio.Task[None] | None = None

    async def _read(self) -> None:
        async with websockets.connect(self.url) as ws:
            async for text in ws:
                self.messages.append((time.monotonic(), json.loads(text)))

    @contextlib.asynccontextmanager
    async def connected(self) -> AsyncIterator[Display]:
        self._task = asyncio.create_task(self._read(), name=f"display {self.url}")
        try:
            await until(lambda: bool(self.messages) or self._task is None or self._task.done())
            assert self.messages, "the display got no snapshot"
            yield self
        finally:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def since(self, t: float) -> list[dict[str, Any]]:
        return [m for at, m in self.messages if at >= t]

    def alive(self) -> None:
        assert self._task is not None and not self._task.done(), "the display was disconnected"


async def ledger_verify(url: str) -> tuple[int, str]:
    """``progressive ledger verify``, run as its own process."""
    env = process_env()
    env |= {"PROGRESSIVE_DATABASE_URL": url, "PROGRESSIVE_LEDGER_KEY": KEY.hex()}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app.cli", "ledger", "verify",
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    async with asyncio.timeout(WAIT_S):
        out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode()


async def run_outage(outage_s: float = 60.0) -> Figures:
    """The whole scenario; raises AssertionError naming what did not hold."""
    async with contextlib.AsyncExitStack() as stack:
        # The floor display page too, where Debian's Chromium is installed. Outermost: its
        # exit shuts the loop's thread pool down.
        browser = await stack.enter_async_context(chromium()) if CHROMIUM.exists() else None
        return await _run(outage_s, browser)


async def _run(outage_s: float, browser: Browser | None) -> Figures:
    figures = Figures(outage_s=outage_s)
    async with private_postgres() as pg:
        engine = make_engine(pg.url)
        h = FloorHarness(LedgerStore(engine, KEY), PLANS, rounds_per_second=5)
        try:
            await h.start_floor()
            assert h.config is not None and h.floor is not None
            # The Let It Ride link's tables are read, then written: both ways of polling.
            h.config = with_profile(h.config, LIR.link_id, two_request_profile(pg.folder))
            settings = Settings(
                database_url=pg.url,
                ledger_key=KEY.hex(),
                demonstration=True,
            )
            service = FloorService(settings, floor=h.config, migrate=True, retention_schedule=False)
            await service.start()
            stack = contextlib.AsyncExitStack()
            try:
                await ReviewDesk(FilingDesk(service.runtime)).approve_new_links(
                    reviewer="commission", role=Role.COMMISSION_AGENT
                )
                h.runtime = service.runtime
                # A web-only process on the same database (``progressive web``): it learns
                # of the controller's commits from the change feed.
                web_only = FloorService(settings, retention_schedule=False)
                await web_only.start()
                stack.push_async_callback(web_only.stop)
                async with (
                    serve(create_app(service), port=0) as served,
                    httpx.AsyncClient(base_url=served.base_url, timeout=30) as http,
                ):
                    ws = served.base_url.replace("http://", "ws://")
                    page = None
                    if browser is not None:
                        page = await browser.new_page(viewport={"width": 1920, "height": 1080})
                        await page.goto(f"{served.base_url}/display/stud")
                        # A function, not an expression: an expression still false at the
                        # first check is polled through eval, which the page's CSP refuses.
                        await page.wait_for_function(
                            "() => document.body.dataset.live === 'live'", timeout=WAIT_S * 1000
                        )
                    async with (
                        Display(f"{ws}/ws/links/stud").connected() as stud_display,
                        Display(f"{ws}/ws/links/lir").connected() as lir_display,
                    ):
                        await _scenario(
                            figures,
                            pg,
                            h,
                            (service, web_only),
                            http,
                            (stud_display, lir_display),
                            page,
                        )
                    if page is not None:
                        await page.close()
            finally:
                await stack.aclose()
                await service.stop()
            h.clock.pause()
            await h.check_exact()  # every credit on the meter, every hit taken exactly once
            async with engine.connect() as conn:
                figures.hits = len((await conn.execute(select(HitRow.hit_id))).all())
            code, out = await ledger_verify(pg.url)
            assert code == 0, f"ledger verify: {out}"
        finally:
            await h.stop()
            await engine.dispose()
    return figures


async def _scenario(
    figures: Figures,
    pg: Any,
    h: FloorHarness,
    services: tuple[FloorService, FloorService],
    http: httpx.AsyncClient,
    displays: tuple[Display, Display],
    page: Page | None,
) -> None:
    outage_s = figures.outage_s
    service, web_only = services
    assert h.floor is not None
    poller = service.poller
    assert poller is not None
    runtime = service.runtime
    tables = {(p, u): h.sim(p, u) for p in PLANS for u in range(1, p.tables + 1)}

    await until(lambda: all(tp.last_ok_us for tp in poller.tables.values()))
    assert (await http.get("/readyz")).status_code == 200
    h.clock.resume()
    await asyncio.sleep(2.0)

    # A royal flush shortly before the outage: dealt, then the server stops at once, while
    # the hit may still be on its way to the database.
    before = h.sim(STUD, 1)
    h.floor.force_hand(STUD.gateway, 1, 2, HandCategory.ROYAL_FLUSH)
    await until(lambda: bool(before.hit_fifo))
    before_seq = before.hit_fifo[0].seq

    with capture_logs() as log:
        log.on = True
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        polls0 = sum(tp.polls - tp.errors for tp in poller.tables.values())
        rounds0 = {k: len(t.records) for k, t in tables.items()}
        await pg.stop("fast")
        stopped = time.monotonic()
        figures.hit_before_stop = (
            "recorded before the stop"
            if (runtime.memory.states["stud"].table("stud-1").last_hit_seq or 0) >= before_seq
            else "held through the outage"
        )

        # Told at once: not ready, the database named; displays marked degraded.
        async def not_ready() -> dict[str, Any]:
            answer = await http.get("/readyz")
            assert answer.status_code == 503, answer.text
            problems: dict[str, Any] = answer.json()["problems"]
            assert "database" in problems, problems
            return problems

        await not_ready()
        for d in displays:
            await until(lambda d=d: any(m["degraded"] for m in d.since(stopped)), 10)
        # The web-only process: not hearing of the controller's commits, says so too.
        await until(lambda: web_only.degraded("stud") and web_only.degraded("lir"), 30)
        assert "database" in await web_only.readiness()

        if page is not None:
            # The page says so over the last recorded amount, dimmed.
            await page.wait_for_function(
                "() => document.body.dataset.live === 'degraded'", timeout=WAIT_S * 1000
            )
            banner = await page.text_content("#banner") or ""
            assert banner.startswith("DELAYED"), banner
            await shot(page, "display-database-outage")

        # A royal flush during the outage: held in the table's FIFO, not acknowledged.
        during = h.sim(LIR, 2)
        h.floor.force_hand(LIR.gateway, 2, 1, HandCategory.ROYAL_FLUSH)
        await until(lambda: bool(during.hit_fifo))
        held_seq = during.hit_fifo[0].seq
        lir_committed = runtime.memory.states["lir"].table("lir-2").last_hit_seq

        checked = 0
        beats = {k: t.heartbeat_value for k, t in tables.items()}
        while time.monotonic() - stopped < outage_s:
            await asyncio.sleep(min(1.0, max(0.0, outage_s - (time.monotonic() - stopped))))
            # Polling goes on: every table answered within the last two seconds and was given
            # a new heartbeat since the last look; none refuses side bets unless it is held
            # for a hit recorded before the outage (68 IAC 10-6-5: held until verified).
            wall_us = service.clock.now_us()
            for tp in poller.tables.values():
                assert tp.last_ok_us is not None and wall_us - tp.last_ok_us < 2_000_000, (
                    tp.entry.config.table_id
                )
            for k, t in tables.items():
                assert t.heartbeat_value != beats[k], f"no heartbeat for {k}"
                beats[k] = t.heartbeat_value
                if not t.command_bits & COMMAND_HIT_PENDING:
                    assert not t.progressive_disabled(h.clock.now_us()), k
            # The hit is held: still at the head of its table's FIFO, no award taken.
            assert during.hit_fifo and during.hit_fifo[0].seq == held_seq
            assert runtime.memory.states["lir"].table("lir-2").last_hit_seq == lir_committed
            for d in displays:
                d.alive()
            await not_ready()
            checked += 1
        assert checked >= min(10, int(outage_s) - 2), checked

        log.on = False
        figures.cpu_s = (
            resource.getrusage(resource.RUSAGE_SELF).ru_utime
            + resource.getrusage(resource.RUSAGE_SELF).ru_stime
            - cpu0.ru_utime
            - cpu0.ru_stime
        )
        figures.polls_during = sum(tp.polls - tp.errors for tp in poller.tables.values()) - polls0
        figures.log_lines = list(log.lines)
        figures.held_tables = sorted(
            f"{p.link_id}-{u}"
            for (p, u), t in tables.items()
            if t.command_bits & COMMAND_HIT_PENDING
        )
        figures.credits_during = sum(
            r.credits for k, t in tables.items() for r in t.records[rounds0[k] :]
        )
        figures.refused_during = sum(
            len(r.refused_seats)
            for k, t in tables.items()
            if not t.command_bits & COMMAND_HIT_PENDING
            for r in t.records[rounds0[k] :]
        )

    # What the displays got during the outage: messages all along, marked degraded once the
    # failure was seen, and only amounts the meter history holds.
    for d in displays:
        during_msgs = d.since(stopped)
        figures.display_messages_during += len(during_msgs)
        gaps = [b - a for (a, _), (b, _) in zip(d.messages, d.messages[1:], strict=False)]
        figures.display_gap_s = max(figures.display_gap_s, *gaps)
        assert figures.display_gap_s < 10.0, "a display went without a message"
        degraded_from = next(i for i, m in enumerate(during_msgs) if m["degraded"])
        assert all(m["degraded"] for m in during_msgs[degraded_from:]), "degraded cleared early"
        assert len(during_msgs[degraded_from:]) >= outage_s / 4  # heartbeats every 2 s

    assert figures.refused_during == 0, "a table refused side bets: its heartbeat stopped"
    assert figures.credits_during > 0
    assert len(figures.log_lines) <= MAX_OUTAGE_LOG_LINES, figures.log_lines
    problems_line = " | ".join(figures.log_lines)
    assert "cannot be recorded" in problems_line or "lock connection failed" in problems_line

    # The server comes back.
    await pg.start()
    back = time.monotonic()
    owed = {(p.link_id, u): t.credits for (p, u), t in tables.items()}

    def backlog_committed() -> bool:
        return all(
            (runtime.memory.states[link_id].table(f"{link_id}-{u}").credits or 0) >= credits
            for (link_id, u), credits in owed.items()
        ) and not any(service.degraded(link_id) for link_id in ("stud", "lir"))

    await until(backlog_committed)
    figures.backlog_committed_s = time.monotonic() - back
    async with asyncio.timeout(WAIT_S):
        # Another process's view, asked over HTTP until it holds.
        while (await http.get("/readyz")).status_code != 200:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    figures.ready_s = time.monotonic() - back
    for d in displays:
        await until(lambda d=d: any(not m["degraded"] for m in d.since(back)))
    await until(lambda: not web_only.degraded("stud") and not web_only.degraded("lir"))
    figures.web_only_caught_up_s = time.monotonic() - back
    figures.degraded_cleared_s = max(
        next(at for at, m in d.messages if at >= back and not m["degraded"]) - back
        for d in displays
    )

    if page is not None:
        await page.wait_for_function(
            "() => document.body.dataset.live === 'live'", timeout=WAIT_S * 1000
        )

    # The held hit taken exactly once, after the server came back.
    await until(lambda: not during.hit_fifo or during.hit_fifo[0].seq != held_seq)
    assert (runtime.memory.states["lir"].table("lir-2").last_hit_seq or 0) >= held_seq

    # Play a little more, then stop dealing and let everything be read and committed.
    await asyncio.sleep(1.0)
    h.clock.pause()
    await h.drained()
    # The web-only process shows what the controller recorded.
    await until(
        lambda: all(
            web_only.runtime.memory.states[lid].meter_units
            == runtime.memory.states[lid].meter_units
            for lid in ("stud", "lir")
        )
    )

    # Every meter amount a display showed during the outage is one the history holds.
    async with service.engine.connect() as conn:
        rows = (
            await conn.execute(select(MeterEntryRow.link_id, MeterEntryRow.meter_after_units))
        ).all()
    recorded = {(link_id, displayed_cents(units)) for link_id, units in rows}
    for d in displays:
        for m in d.since(stopped):
            if m["degraded"]:
                assert (m["link_id"], m["meter_cents"]) in recorded, m


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outage-s", type=float, default=60.0)
    args = parser.parse_args()
    figures = asyncio.run(run_outage(args.outage_s))
    print("\n".join(figures.lines()))


if __name__ == "__main__":
    main()
