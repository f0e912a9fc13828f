"""Hot standby on PostgreSQL with real processes: two ``progressive run`` controllers for one
floor, the active one killed with SIGKILL (once at a random moment, once right after a royal
flush is dealt), the standby taking each link over within five seconds, and the meter exact to
the simulator's own record of every bet and hit at the end."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from controller.engine import EntryKind
from controller.hands import HandCategory
from controller.storage.database import make_engine
from controller.storage.store import LedgerStore
from tests.app.helpers import progressive
from tests.conftest import KEY
from tests.integration.harness import FloorHarness, LinkPlan
from tests.integration.test_run_command import PASSWORD, free_port

STUD = LinkPlan("stud", "caribbean_stud", "caribbean_stud", tables=2, rate_bp=8000)
LIR = LinkPlan("lir", "let_it_ride_bonus", "let_it_ride_bonus", tables=2, rate_bp=6000)
PLANS = (STUD, LIR)
TAKEOVER_S = 5.0  # the longest a link may go undriven after its controller dies


@pytest.fixture
def db_kind() -> str:
    return "postgres"


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[LedgerStore]:
    engine = make_engine(db_url)
    yield LedgerStore(engine, KEY)
    await engine.dispose()


def floor_toml(ports: dict[str, int]) -> str:
    lines = ["[controller]", "offline_after_failures = 3"]
    for p in PLANS:
        lines += [
            "[[bus]]", f'name = "{p.link_id}"', 'kind = "tcp"', 'host = "127.0.0.1"',
            f"port = {ports[p.gateway]}", "timeout_ms = 300", "retries = 0",
        ]  # fmt: skip
    for p in PLANS:
        lines += [
            "[[link]]", f'id = "{p.link_id}"', f'game = "{p.game}"',
            f'rate = "{p.rate_bp / 100}%"', 'reset = "$1,000"',
        ]  # fmt: skip
        for u in range(1, p.tables + 1):
            lines += [
                "[[link.table]]", f'id = "{p.link_id}-{u}"', f'bus = "{p.link_id}"',
                f"unit = {u}", "poll_interval_ms = 100", "min_round_ms = 10",
            ]  # fmt: skip
    return "\n".join(lines) + "\n"


class Controller:
    """One ``progressive run`` process and its web address."""

    def __init__(self, name: str, proc: asyncio.subprocess.Process, port: int, log: Path) -> None:
        self.name = name
        self.proc = proc
        self.http = httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5)
        self.log = log

    async def up(self) -> None:
        async with asyncio.timeout(30):
            while True:
                assert self.proc.returncode is None, self.log.read_text()
                try:
                    if (await self.http.get("/healthz")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.2)

    async def tables(self) -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = []
        for p in PLANS:
            got += (await self.http.get(f"/api/v1/links/{p.link_id}")).json()["tables"]
        return got

    async def drives_all_since(self, since_us: int) -> bool:
        """Every table is driven here and has answered this process since ``since_us``."""
        try:
            tables = await self.tables()
        except httpx.TransportError:
            return False
        return all(
            t["state"] != "standby" and (t["last_answer_us"] or 0) > since_us for t in tables
        )

    async def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        await self.proc.wait()
        await self.http.aclose()

    async def stop(self) -> tuple[int | None, str]:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGINT)
            await asyncio.wait_for(self.proc.wait(), timeout=20)
        await self.http.aclose()
        return self.proc.returncode, self.log.read_text()


async def test_the_standby_takes_over_and_the_meter_stays_exact(
    store: LedgerStore, db_url: str, tmp_path: Path
) -> None:
    rng = random.Random()
    h = FloorHarness(store, PLANS, rounds_per_second=8)
    await h.start_floor()
    assert h.floor is not None
    (tmp_path / "floor.toml").write_text(floor_toml(h.floor.ports))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROGRESSIVE_")}
    env |= {
        "PROGRESSIVE_DATABASE_URL": db_url,
        "PROGRESSIVE_LEDGER_KEY": KEY.hex(),
        # The executive director allowed this floor to play at once (68 IAC 10-1-3(c)).
        "PROGRESSIVE_NOTICE_OVERRIDE": "test floor, played at once",
    }
    agent = ("users", "add", "agent", "--role", "commission_agent", "--password-stdin")
    code, _, err = await progressive(*agent, db_url=db_url, cwd=tmp_path, stdin=PASSWORD)
    assert code == 0, err

    controllers: list[Controller] = []

    async def run(name: str) -> Controller:
        port = free_port()
        log = tmp_path / f"{name}.log"
        with log.open("wb") as out:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "app.cli", "run", "--config", str(tmp_path / "floor.toml"),
                "--port", str(port), env=env, cwd=tmp_path, stdout=out, stderr=out,
            )  # fmt: skip
        c = Controller(name, proc, port, log)
        controllers.append(c)
        await c.up()
        return c

    async def taken_over_by(standby: Controller, killed_at_us: int) -> float:
        started = time.monotonic()
        async with asyncio.timeout(30):
            # The state is another process's: asked over HTTP until it holds.
            while not await standby.drives_all_since(killed_at_us):  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        return time.monotonic() - started

    try:
        # The first creates the links and files them; the second finds them and stands by.
        first = await run("first")
        second = await run("second")
        ready = (await second.http.get("/readyz")).json()
        assert ready["status"] == "ready"
        assert set(ready["notes"]) == {"link stud", "link lir"}
        assert {t["state"] for t in await second.tables()} == {"standby"}

        login = await first.http.post(
            "/api/v1/auth/token", data={"username": "agent", "password": PASSWORD}
        )
        auth = {"Authorization": f"Bearer {login.json()['access_token']}"}
        for s in (await first.http.get("/api/v1/submissions", headers=auth)).json():
            approved = await first.http.post(
                f"/api/v1/submissions/{s['submission_id']}/approve", headers=auth
            )
            assert approved.status_code == 200, approved.text
        h.clock.resume()
        await asyncio.sleep(1.0 + rng.random() * 2.0)
        assert await first.drives_all_since(0)

        # Killed at a random moment of play.
        killed_at = time.time_ns() // 1000
        await first.kill()
        took = await taken_over_by(second, killed_at)
        print(f"takeover after a kill at a random moment: {took:.2f} s")
        assert took < TAKEOVER_S

        third = await run("third")
        assert {t["state"] for t in await third.tables()} == {"standby"}
        await asyncio.sleep(0.5 + rng.random())

        # Killed right after a royal flush is dealt, before or while it is taken.
        sim = h.sim(STUD, 2)
        h.floor.force_hand(STUD.gateway, 2, 3, HandCategory.ROYAL_FLUSH)
        async with asyncio.timeout(10):
            while not sim.hit_fifo:  # noqa: ASYNC110
                await asyncio.sleep(0.005)
        killed_at = time.time_ns() // 1000
        await second.kill()
        took = await taken_over_by(third, killed_at)
        print(f"takeover after a kill right after a royal flush: {took:.2f} s")
        assert took < TAKEOVER_S

        await asyncio.sleep(1.0)
        h.clock.pause()  # the dealers stop; wait until everything dealt is committed
        await drained(h, store)
    finally:
        results = [await c.stop() for c in controllers]
        await h.stop()
    code, log = results[-1]
    assert code == 0, log
    assert "driving the links whose lock this controller holds (none yet)" in log  # started last
    await h.check_exact()
    assert await h.entries(EntryKind.JACKPOT_RESET) >= 1  # the royal flush, taken once
    code, out, err = await progressive("ledger", "verify", db_url=db_url, cwd=tmp_path)
    assert code == 0 and "ledger whole" in out, err


async def drained(h: FloorHarness, store: LedgerStore) -> None:
    """Every table's counters and hits read and committed, as the database says."""
    async with asyncio.timeout(20):
        while True:
            done = True
            for p in PLANS:
                state = await store.load_link(p.link_id)
                for u in range(1, p.tables + 1):
                    table = h.sim(p, u)
                    ts = state.table(h.table_id(p, u))
                    if table.hit_fifo or ts.credits != table.credits or ts.open_claims:
                        done = False
            if done:
                return
            await asyncio.sleep(0.1)
