"""Crash consistency: the controller killed with SIGKILL again and again, the meter still exact.

    python -m tests.reliability.crash --kills 50 [--seed N]

A simulated floor (in this process, on a clock it can stop) deals three links; the controller
is a real ``progressive run`` process on PostgreSQL (a fresh schema of database ``test``). It
is killed with SIGKILL at random moments: during play, while it starts and takes its links
over, and right after a forced royal flush, straight flush or four of a kind is dealt (before
or while the hit is read, committed and acknowledged). Each time a new one is started. At the
end the dealers stop, the last controller drains and stops, and every link is compared with
the simulator's own record: the meter to the unit, every hit exactly once, the ledger whole
(``progressive ledger verify``, exit 0). Exit status 0 only when all of it holds.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from controller.core.hands import HandCategory
from controller.storage.database import make_engine
from controller.storage.store import LedgerStore
from link_adapters.register_map import COMMAND_HIT_PENDING
from tests.app.helpers import checking_account, commission_agent, progressive
from tests.conftest import KEY
from tests.integration.harness import FloorHarness, LinkPlan
from tests.integration.processes import Controller, controller_env, drained, floor_toml
from tests.integration.test_run_command import PASSWORD
from tests.reliability.exact import Comparison, SimTotals, compare, table_id

PLANS = (
    LinkPlan("stud", "caribbean_stud", "caribbean_stud", tables=2, rate_bp=8000),
    LinkPlan("draw", "caribbean_draw", "caribbean_draw", tables=2, rate_bp=7000),
    LinkPlan("lir", "let_it_ride_bonus", "let_it_ride_bonus", tables=2, rate_bp=6000),
)
FORCED = (HandCategory.ROYAL_FLUSH, HandCategory.STRAIGHT_FLUSH, HandCategory.FOUR_OF_A_KIND)
ROUNDS_PER_SECOND = 8
POLL_INTERVAL_MS = 100
HIT_KILL_WITHIN_S = 0.3  # a hit kill lands this soon after the round that dealt the hit


def kill_plan(kills: int) -> list[str]:
    """What each kill interrupts: every third a hit, some the start, the rest play."""
    plan = []
    for k in range(1, kills + 1):
        if k % 3 == 2:
            plan.append("hit")
        elif k % 5 == 0:
            plan.append("start")
        else:
            plan.append("play")
    return plan


@dataclass
class CrashReport:
    kills: int = 0
    kills_during_hits: int = 0
    kills_before_ack: int = 0  # of those, the hit was still unacknowledged in the table's FIFO
    kills_during_start: int = 0
    forced_hits: int = 0
    restart_to_polling_s: list[float] = field(default_factory=list)
    restart_to_http_s: list[float] = field(default_factory=list)  # of which, to /healthz
    duration_s: float = 0.0
    comparison: Comparison | None = None
    ledger_verify: tuple[int, str] = (-1, "")
    last_exit: tuple[int | None, str] = (None, "")

    @property
    def ok(self) -> bool:
        return (
            self.comparison is not None
            and self.comparison.ok
            and self.ledger_verify[0] == 0
            and self.last_exit[0] == 0
        )

    def lines(self) -> list[str]:
        times = self.restart_to_polling_s
        out = [
            f"kills: {self.kills} (during hits: {self.kills_during_hits}, of which "
            f"{self.kills_before_ack} before the table's hit was acknowledged; "
            f"during start-up: {self.kills_during_start})",
            f"forced hits: {self.forced_hits}",
        ]
        if self.comparison is not None:
            out += self.comparison.lines()
        if times:
            out.append(
                f"restart to polling: median {statistics.median(times):.2f} s, "
                f"max {max(times):.2f} s over {len(times)} restarts"
            )
            http = self.restart_to_http_s
            out.append(
                f"  of which process start to its first /healthz answer: median "
                f"{statistics.median(http):.2f} s, max {max(http):.2f} s"
            )
        code, text = self.ledger_verify
        out.append(f"ledger verify: exit {code}: {text.strip().splitlines()[-1:] or ''}")
        out.append(f"last controller stopped with exit {self.last_exit[0]}")
        out.append(f"total duration: {self.duration_s:.1f} s")
        out.append("VERDICT: " + ("PASS" if self.ok else "FAIL"))
        return out


class Technician:
    """Verifies the hits that hold a table and resets it, over the controller's API."""

    def __init__(self) -> None:
        self.auth: dict[str, str] = {}

    async def login(self, c: Controller) -> None:
        got = await c.http.post(
            "/api/v1/auth/token", data={"username": "tech", "password": PASSWORD}
        )
        got.raise_for_status()
        self.auth = {"Authorization": f"Bearer {got.json()['access_token']}"}

    async def release_held(self, c: Controller) -> int:
        await self.login(c)
        released = 0
        for p in PLANS:
            link = (await c.http.get(f"/api/v1/links/{p.link_id}", headers=self.auth)).json()
            held = [t["table_id"] for t in link["tables"] if t["hit_pending"]]
            if not held:
                continue
            hits = await c.http.get(f"/api/v1/links/{p.link_id}/hits", headers=self.auth)
            hits.raise_for_status()
            for hit in hits.json():
                if (
                    hit["table_id"] in held
                    and hit["status"] == "awarded"
                    and hit["paid_from"] == "meter"
                    and hit["verified_by"] is None
                ):
                    done = await c.http.post(
                        f"/api/v1/hits/{quote(hit['hit_id'], safe='')}/verify", headers=self.auth
                    )
                    done.raise_for_status()
            for tid in held:
                done = await c.http.post(f"/api/v1/tables/{tid}/reset", headers=self.auth)
                if done.status_code == 409:
                    continue  # a hit came in meanwhile: the next round of work takes it
                done.raise_for_status()
                released += 1
        return released


async def run_crash(
    db_url: str,
    workdir: Path,
    *,
    kills: int,
    seed: int,
    say: Callable[[str], None] = print,
) -> CrashReport:
    started = time.monotonic()
    rng = random.Random(seed)
    report = CrashReport()
    engine = make_engine(db_url)
    h = FloorHarness(
        LedgerStore(engine, KEY), PLANS, rounds_per_second=ROUNDS_PER_SECOND, seed=seed
    )
    controller: Controller | None = None
    started_here: list[Controller] = []  # every one is killed on the way out, whatever failed
    tech = Technician()
    try:
        await h.start_floor()
        assert h.floor is not None
        floor = h.floor
        config = workdir / "floor.toml"
        config.write_text(floor_toml(PLANS, floor.ports, POLL_INTERVAL_MS))
        env = controller_env(db_url)
        await commission_agent(db_url, "agent", PASSWORD)
        await checking_account(db_url, "tech", PASSWORD, role="technician")
        n = 0

        async def polling(c: Controller, spawned: float, spawned_us: int) -> float:
            async with asyncio.timeout(120):  # generous: the process start is within it
                # The state is another process's: asked over HTTP until it holds.
                while not await c.drives_all_since(spawned_us):  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
            return time.monotonic() - spawned

        async def launch(wait_polling: bool) -> Controller:
            nonlocal n
            n += 1
            spawned_us = time.time_ns() // 1000
            spawned = time.monotonic()
            c = await Controller.start(
                f"controller-{n:03d}", config=config, env=env, cwd=workdir, plans=PLANS
            )
            started_here.append(c)
            report.restart_to_http_s.append(time.monotonic() - spawned)
            if wait_polling:
                took = await polling(c, spawned, spawned_us)
                report.restart_to_polling_s.append(took)
                if await tech.release_held(c):
                    say("  technician: held tables verified and reset")
            return c

        controller = await launch(wait_polling=False)
        await approve_new_links(controller)
        h.clock.resume()
        first_spawn_us = time.time_ns() // 1000
        async with asyncio.timeout(60):
            while not await controller.drives_all_since(first_spawn_us):  # noqa: ASYNC110
                await asyncio.sleep(0.05)

        plan = kill_plan(kills)
        for k, what in enumerate(plan, start=1):
            assert controller is not None
            if what == "play":
                wait = rng.uniform(0.2, 2.5)
                await asyncio.sleep(wait)
                moment = f"during play, {wait:.2f} s after polling resumed"
            elif what == "start":
                wait = rng.uniform(0.0, 0.6)
                await asyncio.sleep(wait)
                moment = f"during start-up, {wait:.2f} s after it first answered /healthz"
                report.kills_during_start += 1
            else:
                moment = await deal_a_hit(h, rng, report)
            await controller.kill()
            say(f"kill {k}/{kills}: {moment}")
            report.kills += 1
            controller = None
            next_is_start = k < len(plan) and plan[k] == "start"
            controller = await launch(wait_polling=not next_is_start)
            if not next_is_start:
                say(
                    f"  restarted, polling every table after {report.restart_to_polling_s[-1]:.2f} s"
                )

        await asyncio.sleep(1.0)
        h.clock.pause()  # the dealers stop; wait until everything dealt is committed
        await asyncio.sleep(0.5)  # a dealer that fell behind deals what was due before
        await drained(h, h.store, within_s=60)
        last, controller = controller, None
        report.last_exit = await last.stop()
        sim = SimTotals()
        sim.fold(PLANS, floor.records())
        report.comparison = await compare(engine, PLANS, sim)
        code, out, err = await progressive("ledger", "verify", db_url=db_url, cwd=workdir)
        report.ledger_verify = (code, out + err)
    finally:
        for c in started_here:
            if c.proc.returncode is None:
                await c.kill()
        await h.stop()
        await engine.dispose()
        report.duration_s = time.monotonic() - started
    return report


async def approve_new_links(c: Controller) -> None:
    """The floor's commission agent lets its new links play (68 IAC 10-1-3(c)(4))."""
    login = await c.http.post(
        "/api/v1/auth/token", data={"username": "agent", "password": PASSWORD}
    )
    login.raise_for_status()
    auth = {"Authorization": f"Bearer {login.json()['access_token']}"}
    for s in (await c.http.get("/api/v1/submissions", headers=auth)).json():
        approved = await c.http.post(
            f"/api/v1/submissions/{s['submission_id']}/approve", headers=auth
        )
        approved.raise_for_status()


async def deal_a_hit(h: FloorHarness, rng: random.Random, report: CrashReport) -> str:
    """Force a paying hand at a table that takes bets; return once it is dealt, a moment
    later, so the kill lands while the controller reads, commits or acknowledges it."""
    assert h.floor is not None
    now = h.clock.now_us()
    open_tables = [
        (p, u)
        for p in PLANS
        for u in range(1, p.tables + 1)
        if not h.sim(p, u).command_bits & COMMAND_HIT_PENDING
        and not h.sim(p, u).progressive_disabled(now)
    ]
    if not open_tables:
        raise RuntimeError("no table takes progressive bets: every one is held")
    p, u = rng.choice(open_tables)
    table: Any = h.sim(p, u)
    hand = FORCED[report.forced_hits % len(FORCED)]
    seat = rng.randint(1, 5)
    before = table.next_hit_seq
    h.floor.force_hand(p.gateway, u, seat, hand)
    async with asyncio.timeout(20):
        while table.next_hit_seq == before:  # noqa: ASYNC110
            await asyncio.sleep(0.002)
    forced_seq = next(x.seq for x in reversed(table.all_hits()) if x.seat == seat)
    report.forced_hits += 1
    report.kills_during_hits += 1
    delay = rng.uniform(0.0, HIT_KILL_WITHIN_S)
    await asyncio.sleep(delay)
    waiting = any(x.seq == forced_seq for x in table.hit_fifo)
    if waiting:
        report.kills_before_ack += 1
    state = "not yet acknowledged" if waiting else "already acknowledged"
    return (
        f"{delay * 1000:.0f} ms after a {hand.name.lower().replace('_', ' ')} was dealt at "
        f"{table_id(p, u)} seat {seat} (hit {forced_seq}, {state})"
    )


async def main_async(kills: int, seed: int) -> int:
    import tempfile

    from tests.conftest import fresh_schema

    def say(line: str) -> None:
        print(line, flush=True)

    say(f"crash consistency: {kills} kills, seed {seed}")
    with tempfile.TemporaryDirectory(prefix="crash-") as tmp:
        async with fresh_schema("crash") as url:
            report = await run_crash(url, Path(tmp), kills=kills, seed=seed, say=say)
    for line in report.lines():
        say(line)
    return 0 if report.ok else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    sys.exit(asyncio.run(main_async(args.kills, seed)))


if __name__ == "__main__":
    main()
