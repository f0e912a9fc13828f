"""Hot standby on PostgreSQL with real processes: two ``progressive run`` controllers for one
floor, the active one killed with SIGKILL (once at a random moment, once right after a royal
flush is dealt), the standby taking each link over before any table's heartbeat times out (5 s,
as the tables measure it), and the meter exact to the simulator's own record of every bet and
hit at the end."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from controller.access import users
from controller.core.hands import HandCategory
from controller.core.reducer import EntryKind
from controller.roles import Role
from controller.storage.database import make_engine
from controller.storage.store import LedgerStore
from tests.app.helpers import progressive
from tests.conftest import KEY
from tests.integration.harness import FloorHarness, LinkPlan, wait_until
from tests.integration.processes import Controller, controller_env, drained, floor_toml
from tests.integration.test_run_command import PASSWORD

STUD = LinkPlan("stud", "caribbean_stud", "caribbean_stud", tables=2, rate_bp=8000)
LIR = LinkPlan("lir", "let_it_ride_bonus", "let_it_ride_bonus", tables=2, rate_bp=6000)
PLANS = (STUD, LIR)


@pytest.fixture
def db_kind() -> str:
    return "postgres"


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[LedgerStore]:
    engine = make_engine(db_url)
    yield LedgerStore(engine, KEY)
    await engine.dispose()


async def test_the_standby_takes_over_and_the_meter_stays_exact(
    store: LedgerStore, db_url: str, tmp_path: Path
) -> None:
    rng = random.Random()
    h = FloorHarness(store, PLANS, rounds_per_second=8)
    await h.start_floor()
    assert h.floor is not None
    (tmp_path / "floor.toml").write_text(floor_toml(PLANS, h.floor.ports))
    env = controller_env(db_url)
    # The commission's agent, as two admins would have made it (the command line may not).
    await users.create_user(
        store.engine,
        username="agent",
        role=Role.COMMISSION_AGENT,
        password=PASSWORD,
        actor="admin",
        at_us=time.time_ns() // 1000,
    )

    controllers: list[Controller] = []

    async def run(name: str) -> Controller:
        c = await Controller.start(
            name, config=tmp_path / "floor.toml", env=env, cwd=tmp_path, plans=PLANS
        )
        controllers.append(c)
        return c

    tables = [h.sim(p, unit) for p in PLANS for unit in range(1, p.tables + 1)]

    def heard_since(table: Any, since_us: int) -> bool:
        now = h.clock.now_us()
        age = table.heartbeat_age_us(now)
        return age is not None and now - age > since_us

    async def taken_over_by(standby: Controller, killed_at_us: int, killed_sim_us: int) -> None:
        async with asyncio.timeout(30):
            # The state is another process's: asked over HTTP until it holds.
            while not await standby.drives_all_since(killed_at_us):  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        await wait_until(lambda: all(heard_since(t, killed_sim_us) for t in tables))
        # Each table, on its own clock, heard a fresh heartbeat from the standby before its
        # heartbeat timeout disabled the progressive: the takeover is the gap it saw.
        print(f"longest heartbeat gap: {max(t.heartbeat_gap_max_us for t in tables)} us")
        for t in tables:
            assert t.heartbeat_timeouts == 0
            assert t.heartbeat_gap_max_us < t.config.heartbeat_timeout_us

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
        killed_at, killed_sim = time.time_ns() // 1000, h.clock.now_us()
        await first.kill()
        await taken_over_by(second, killed_at, killed_sim)

        third = await run("third")
        assert {t["state"] for t in await third.tables()} == {"standby"}
        await asyncio.sleep(0.5 + rng.random())

        # Killed right after a royal flush is dealt, before or while it is taken.
        sim = h.sim(STUD, 2)
        h.floor.force_hand(STUD.gateway, 2, 3, HandCategory.ROYAL_FLUSH)
        async with asyncio.timeout(10):
            while not sim.hit_fifo:  # noqa: ASYNC110
                await asyncio.sleep(0.005)
        killed_at, killed_sim = time.time_ns() // 1000, h.clock.now_us()
        await second.kill()
        await taken_over_by(third, killed_at, killed_sim)

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
