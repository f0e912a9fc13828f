"""Several processes serving one floor on PostgreSQL see the same states.

The controller polls a simulated floor; two web processes (each a ``FloorService`` of its own,
with its own database connections, as ``progressive web`` runs it) serve displays. Every
display, on any process, shows the same meter, hit and table states; a command made in a web
process (a technician resetting a table, the commission approving a link) reaches the
controller; a web process whose listening connection is cut catches up on what it missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from sqlalchemy import text

from app.serve import Served, serve
from app.web import create_app
from controller.core import reducer
from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.runtime.service import FloorService
from controller.settings import Settings
from tests.app.auth import headers_for
from tests.app.floor import WebFloor, web_floor
from tests.integration.harness import PausableClock, wait_until

GW = "caribbean_stud"
LINKS = {"stud": (Game.CARIBBEAN_STUD, 2)}


@pytest.fixture
def db_kind() -> str:
    return "postgres"


def pg_settings(db_url: str, folder: Path) -> Settings:
    return Settings(
        database_url=db_url,
        ledger_key_file=folder / "progressive-ledger.key",
        demonstration=True,
    )


@dataclass
class WebProcess:
    service: FloorService
    served: Served

    @property
    def base_url(self) -> str:
        return self.served.base_url


@contextlib.asynccontextmanager
async def web_process(settings: Settings) -> AsyncIterator[WebProcess]:
    """What ``progressive web`` runs: the service without a floor, and the web app."""
    service = FloorService(settings)
    await service.start()
    try:
        async with serve(create_app(service), port=0) as served:
            yield WebProcess(service, served)
    finally:
        await service.stop()


@dataclass
class Display:
    """A display connected to one process; keeps the latest state it was sent."""

    name: str
    latest: dict[str, Any] = field(default_factory=dict)
    messages: int = 0
    # Each table's state as the same process tells a dealer (the displays' feed is public and
    # carries no table state).
    tables: dict[str, str] = field(default_factory=dict)


@contextlib.asynccontextmanager
async def display(
    base_url: str, link_id: str, name: str, dealer: dict[str, str] | None = None
) -> AsyncIterator[Display]:
    """A display's feed; with ``dealer``'s headers, the tables' states as well."""
    shown = Display(name)
    url = base_url.replace("http://", "ws://", 1) + f"/ws/links/{link_id}"

    async def read() -> None:
        async with websockets.connect(url) as ws:
            async for text_ in ws:
                shown.latest = json.loads(text_)
                shown.messages += 1

    async def tables() -> None:
        async with httpx.AsyncClient(base_url=base_url, headers=dealer) as http:
            while True:
                answer = await http.get("/api/v1/tables")
                answer.raise_for_status()
                shown.tables = {
                    t["table_id"]: t["state"] for t in answer.json() if t["link_id"] == link_id
                }
                await asyncio.sleep(0.05)

    tasks = [asyncio.create_task(read(), name=f"display {name}")]
    if dealer is not None:
        tasks.append(asyncio.create_task(tables(), name=f"tables at {name}"))
    try:
        await wait_until(lambda: shown.messages > 0 and (dealer is None or bool(shown.tables)))
        yield shown
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def table_states(shown: Display) -> dict[str, str]:
    return shown.tables


async def settled(wf: WebFloor) -> None:
    """Every round dealt has been read and committed by the controller."""
    poller = wf.service.poller
    assert poller is not None

    def caught_up() -> bool:
        state = wf.service.runtime.memory.states["stud"]
        for unit in (1, 2):
            sim = wf.table("stud", unit)
            if state.tables[f"stud-{unit}"].credits != sim.total_credits() % 2**32:
                return False
        return True

    await wait_until(caught_up)


async def baselined(wf: WebFloor) -> None:
    """The controller has its first reading of every table: rounds dealt from now on are
    credited. Dealt before it (a slow start on a busy machine), they would only make the
    baseline, and the meter would rightly not move."""
    states = wf.service.memory.states  # a new state each commit: read it each time
    await wait_until(
        lambda: all(states["stud"].tables[f"stud-{u}"].credits is not None for u in (1, 2))
    )


async def test_displays_on_every_process_show_the_same_states(db_url: str, tmp_path: Path) -> None:
    clock = PausableClock()
    clock.pause()  # rounds are dealt by the test, one at a time
    settings = pg_settings(db_url, tmp_path)
    # Polled as a floor is (every 500 ms, not the tests' 100 ms): a command at a web process
    # reads the link again and commits in less than one poll, and so is not overtaken.
    async with (
        web_floor(
            tmp_path,
            links=LINKS,
            settings=settings,
            sim_clock=clock.now_us,
            poll_interval_ms=500,
        ) as wf,  # fmt: skip
        web_process(settings) as w1,
        web_process(settings) as w2,
    ):
        dealer = await headers_for(wf, Role.DEALER)
        async with (
            display(wf.base_url, "stud", "controller", dealer) as d0,
            display(w1.base_url, "stud", "web 1", dealer) as d1,
            display(w2.base_url, "stud", "web 2", dealer) as d2,
        ):
            await _same_states_everywhere(wf, w1, w2, (d0, d1, d2))


async def _same_states_everywhere(
    wf: WebFloor,
    w1: WebProcess,
    w2: WebProcess,
    displays: tuple[Display, Display, Display],
) -> None:
    d0 = displays[0]
    runtime = wf.service.runtime

    def all_show(meter_cents: int) -> bool:
        return all(d.latest.get("meter_cents") == meter_cents for d in displays)

    await baselined(wf)
    start_cents = runtime.memory.states["stud"].meter_cents
    # One round at a time, each read before the next: a reading that found several rounds
    # dealt faster than a table can deal would be held for review, not credited.
    for _ in range(12):
        for unit in (1, 2):
            wf.sim.play_round_now(GW, unit)
        await settled(wf)
    played_cents = runtime.memory.states["stud"].meter_cents
    assert played_cents > start_cents  # side bets were made and credited
    await wait_until(lambda: all_show(played_cents))

    # A royal flush: every display shows the same win, from the controller's commit.
    wf.sim.force_hand(GW, 1, 3, HandCategory.ROYAL_FLUSH)
    wf.sim.play_round_now(GW, 1)
    await wait_until(lambda: d0.latest["display"]["mode"] == "won")
    won = d0.latest["display"]["won_cents"]
    assert won >= played_cents
    await wait_until(
        lambda: all(
            d.latest["display"]["won_cents"] == won
            and d.latest["display"]["winning_table"] == "stud-1"
            and table_states(d).get("stud-1") == "hit_pending"
            for d in displays
        )
    )

    # The technician verifies and resets the table at web process 1: the controller,
    # which drives the link, reads that commit and goes on from it.
    [hit] = await w1.service.runtime.hits.unverified("stud-1")
    await w1.service.runtime.hits.verify(hit.hit_id, actor="tech")
    await w1.service.runtime.hits.release_table("stud-1", actor="tech")
    await wait_until(lambda: all(table_states(d).get("stud-1") == "online" for d in displays))
    assert not runtime.memory.states["stud"].tables["stud-1"].hit_pending
    for _ in range(6):
        wf.sim.play_round_now(GW, 1)
    await settled(wf)
    after_cents = runtime.memory.states["stud"].meter_cents
    await wait_until(lambda: all_show(after_cents))

    # Web process 2 loses its listening connection while play goes on: it listens again
    # and reads what it missed.
    feed = w2.service.change_feed
    assert feed is not None and feed.connections == 1
    async with wf.service.engine.connect() as conn:
        ended = await conn.scalar(
            text("SELECT pg_terminate_backend(:pid)"), {"pid": await _listen_pid(w2)}
        )
    assert ended is True
    for _ in range(6):
        for unit in (1, 2):
            wf.sim.play_round_now(GW, unit)
        await settled(wf)
    final_cents = runtime.memory.states["stud"].meter_cents
    assert final_cents > after_cents
    await wait_until(lambda: feed.connections == 2)
    await wait_until(lambda: all_show(final_cents))
    await wait_until(lambda: shown(w2.service) == shown(wf.service))
    await wait_until(lambda: shown(w1.service) == shown(wf.service))
    async with httpx.AsyncClient(base_url=w2.base_url) as http:
        ready = await http.get("/readyz")
        metrics = (await http.get("/metrics")).text
    assert ready.status_code == 200, ready.text
    assert "progressive_change_feed_listening 1.0" in metrics
    assert f"progressive_change_feed_links_read_total {float(feed.links_read)}" in metrics
    assert feed.links_read > 0


def shown(service: FloorService) -> tuple[Any, ...]:
    """What the link's displays and pages are made of (the poll counts aside, which the
    controller commits at every poll)."""
    state = service.runtime.memory.states["stud"]
    tables = {
        tid: (ts.credits, ts.rounds, ts.hit_pending, ts.online, ts.open_claims)
        for tid, ts in state.tables.items()
    }
    return state.meter_units, state.last_win, state.jackpot_won_since_rate_set, tables


async def _listen_pid(w: WebProcess) -> int:
    feed = w.service.change_feed
    assert feed is not None
    conn = feed._conn
    assert conn is not None
    raw = await conn.get_raw_connection()
    pid: int = raw.driver_connection.get_server_pid()  # type: ignore[union-attr]
    return pid


async def test_an_approval_made_at_a_web_process_reaches_the_controller(
    db_url: str, tmp_path: Path
) -> None:
    settings = pg_settings(db_url, tmp_path)
    async with (
        web_floor(tmp_path, links=LINKS, settings=settings, approve=False) as wf,
        web_process(settings) as w1,
    ):
        dealer = await headers_for(wf, Role.DEALER)
        async with display(wf.base_url, "stud", "controller", dealer) as d0:
            await _approved_at_a_web_process(wf, w1, d0)


async def _approved_at_a_web_process(wf: WebFloor, w1: WebProcess, d0: Display) -> None:
    poller = wf.service.poller
    assert poller is not None
    assert set(table_states(d0).values()) == {"awaiting_approval"}
    # Polled only to be told to take no side bets (bit0), nothing recorded.
    await wait_until(lambda: all(t.command_bits & 1 for t in wf.sim.tables.values()))
    states = wf.service.runtime.memory.states["stud"].tables.values()
    assert all(ts.credits is None for ts in states)
    [approved] = await ReviewDesk(FilingDesk(w1.service.runtime)).approve_new_links(
        reviewer="agent", role=Role.COMMISSION_AGENT
    )
    assert approved == "stud"
    await wait_until(lambda: all(tp.last_ok_us for tp in poller.tables.values()))
    await wait_until(lambda: set(table_states(d0).values()) <= {"online", "unpolled"})


async def test_a_slow_command_at_a_web_process_is_not_overtaken_by_the_polls(
    db_url: str, tmp_path: Path
) -> None:
    """The controller commits the link at every poll (every 100 ms here) while a command at
    a web process takes longer than that to decide and write (a loaded machine): overtaken
    once, the command waits for the link's turn, and the controller's claims give way until
    it has committed. Without the turn every try of the command was overtaken."""
    settings = pg_settings(db_url, tmp_path)
    async with (
        web_floor(tmp_path, links=LINKS, settings=settings) as wf,
        web_process(settings) as w1,
    ):
        memory = wf.service.runtime.memory
        await wait_until(
            lambda: all(t.credits is not None for t in memory.states["stud"].tables.values())
        )
        tries = 0

        async def slow(conn: Any) -> None:
            nonlocal tries
            tries += 1
            await asyncio.sleep(0.6)  # several polls of the controller

        reset = memory.states["stud"].reset_cents + 1_00
        o = await w1.service.runtime.commands.command(
            "stud",
            lambda s, at: reducer.change_reset_amount(s, reset_cents=reset, at_us=at, by="sup"),
            actor="sup",
            action="link.reset_amount",
            target="link:stud",
            extra=slow,
        )
        assert o.state.reset_cents == reset
        assert tries == 2  # overtaken once, then its turn
        # The controller reads the command's commit and goes on recording the floor.
        await wait_until(lambda: memory.states["stud"].reset_cents == reset)
        seq = memory.store.head_seq("stud")
        await wait_until(lambda: (memory.store.head_seq("stud") or 0) > (seq or 0))


async def test_a_web_process_reads_again_what_it_missed_while_not_listening(
    db_url: str, tmp_path: Path
) -> None:
    settings = pg_settings(db_url, tmp_path)
    async with (
        web_floor(tmp_path, links=LINKS, settings=settings, approve=False) as wf,
        web_process(settings) as w1,
    ):
        feed = w1.service.change_feed
        assert feed is not None
        await feed.stop()  # deaf: as while its connection is down
        await ReviewDesk(FilingDesk(wf.service.runtime)).approve_new_links(
            reviewer="agent", role=Role.COMMISSION_AGENT
        )
        await wait_until(lambda: {s.state for s in wf.service.table_statuses("stud")} <= {"online"})
        assert {s.state for s in w1.service.table_statuses("stud")} == {"awaiting_approval"}
        await feed.start()  # listening again: it reads the paperwork and the link again
        await wait_until(lambda: {s.state for s in w1.service.table_statuses("stud")} <= {"online"})
        assert feed.connections == 2


async def test_progressive_web_needs_postgresql_and_serves(db_url: str, tmp_path: Path) -> None:
    async def run(*args: str, database_url: str) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "app.cli", *args, "--database-url", database_url,
            cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip

    refused = await run("web", database_url=f"sqlite+aiosqlite:///{tmp_path / 'p.db'}")
    _, err = await refused.communicate()
    assert refused.returncode != 0
    assert "needs PostgreSQL" in err.decode()

    clock = PausableClock()
    clock.pause()
    settings = pg_settings(db_url, tmp_path)
    async with web_floor(tmp_path, links=LINKS, settings=settings, sim_clock=clock.now_us) as wf:
        proc = await run("web", "--port", "0", database_url=db_url)
        try:
            assert proc.stderr is not None
            async with asyncio.timeout(120):  # a new interpreter's imports, on a busy machine
                first = (await proc.stderr.readline()).decode()
                line = (await proc.stderr.readline()).decode()
            # The law it runs under comes first, then where it serves.
            assert first == "jurisdiction: Indiana (68 IAC 10)\n", first
            assert "serving 1 links on http://127.0.0.1:" in line, line
            base_url = line.split(" on ", 1)[1].split(",", 1)[0]
            async with httpx.AsyncClient(base_url=base_url) as http:
                ready = await http.get("/readyz")
                page = await http.get("/display/stud")
            assert ready.status_code == 200, ready.text
            assert page.status_code == 200
            async with display(base_url, "stud", "web process") as shown:
                for _ in range(10):
                    for unit in (1, 2):
                        wf.sim.play_round_now(GW, unit)
                await settled(wf)
                meter_cents = wf.service.runtime.memory.states["stud"].meter_cents
                await wait_until(lambda: shown.latest.get("meter_cents") == meter_cents)
        finally:
            proc.terminate()
            async with asyncio.timeout(30):
                await proc.wait()
    assert proc.returncode == 0
