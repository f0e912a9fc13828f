"""Every fault at once on a busy floor, for a while, and the meters still exact.

Three links on Modbus TCP, each behind a misbehaving gateway (tests/modbus_faults.py), and
one RS-485 line on a pseudo-terminal pair; counters start just below 2**32 and wrap during
the run; tables deal ten rounds a second. While they deal, a seeded schedule injects, again
and again: gateways that stop mid-poll and come back, garbage answers, answers slower than
the timeout, a unit on the serial line that never answers, tables power-cycled (counters back
to zero), forced jackpot hands (two while the controller is stopped, then restarted), and
the controller's wall clock stepping backwards (minutes, and once an hour) while it polls;
once, a table loses power just below 2**32, where a restarted counter looks like a wrap.

At the end: every meter exact to the unit against the simulator's own record, every hit taken
exactly once, nothing held as an anomaly, `progressive ledger verify` whole, each link's history
times never going backwards, and the healthy units of the serial line polled many times as
often as the dead one, which timed out.

``FAULTS_SECONDS`` sets the length of the faulted run (15 by default, to keep the suite short;
docs/RELIABILITY.md gives 60 s runs); the figures are
printed (``pytest -s``).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import time
from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import func, select

from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.core.reducer import EntryKind
from controller.core.verification import HitWorkRefused
from controller.runtime.clock import SystemClock
from controller.runtime.poller import Poller
from controller.storage.models import HitRow, MeterEntryRow
from controller.storage.store import LedgerStore
from link_adapters.simulator.table_types import SimTableConfig
from tests.app.helpers import progressive
from tests.integration.harness import FloorHarness, LinkPlan, wait_until

U32 = 2**32
SECONDS = float(os.environ.get("FAULTS_SECONDS", "15"))
ROUNDS_PER_SECOND = 10
SLOW_S = 0.5  # the TCP timeout is 0.3 s
DEAD = ("bus", 2)  # the serial unit that never answers
MIN = 60_000_000
HOUR = 60 * MIN
# The clock steps back at these shares of the run, by these amounts.
CLOCK_STEPS = ((0.15, 2 * MIN), (0.35, HOUR), (0.55, 5 * MIN), (0.8, 30_000_000))
# The controller is stopped at these shares of the run and a jackpot is dealt meanwhile.
RESTARTS = (0.3, 0.65)


def plan(
    link_id: str, game: Game, tables: int, below_wrap: int, *, serial: bool = False
) -> LinkPlan:
    return LinkPlan(
        link_id,
        link_id,
        game.value,
        tables=tables,
        rate_bp=8000,
        # A table in service has dealt many rounds: after a restart its round counter is far
        # below where it was, which is how a restart of a small credits counter shows.
        # The counters start as far below the wrap as a 30 s run deals, scaled to this run's
        # length, so that they wrap during it however long it is.
        table=SimTableConfig(
            game=game,
            start_credits=U32 - max(60, round(below_wrap * SECONDS / 30)),
            start_rounds=1_000_000,
        ),
        serial=serial,
    )


PLANS = (
    plan("stud", Game.CARIBBEAN_STUD, 4, 600),
    plan("draw", Game.CARIBBEAN_DRAW, 4, 1_500),
    plan("lir", Game.LET_IT_RIDE_BONUS, 3, 300),
    plan("bus", Game.CARIBBEAN_STUD, 4, 900, serial=True),
)
TCP = [p for p in PLANS if not p.serial]
BUS = next(p for p in PLANS if p.serial)


class SteppedWall:
    """The controller host's wall clock, which the test sets back; the tables' clocks are
    their own and do not move with it."""

    def __init__(self) -> None:
        self.offset_us = 0

    def now_us(self) -> int:
        return time.time_ns() // 1_000 + self.offset_us


@dataclass
class Tally:
    faults: Counter[str] = field(default_factory=Counter)
    polls: int = 0
    poll_errors: int = 0
    poll_timeouts: int = 0
    bus_healthy: Counter[str] = field(default_factory=Counter)  # polls in the dead window
    bus_dead: int = 0
    bus_dead_timeouts: int = 0
    clocks: list[SystemClock] = field(default_factory=list)


async def test_every_fault_at_once_on_a_busy_floor(store: LedgerStore, db_url: str) -> None:
    rng = random.Random(20261122)
    wall = SteppedWall()
    tally = Tally()

    def controller_clock() -> SystemClock:
        clock = SystemClock(wall_us=wall.now_us)
        tally.clocks.append(clock)
        return clock

    h = FloorHarness(
        store,
        PLANS,
        rounds_per_second=ROUNDS_PER_SECOND,
        seed=11,
        offline_after_failures=3,
        controller_clock=controller_clock,
        faulty_gateways=True,
    )
    dead_window: dict[str, int] | None = None  # polls per bus table at the window's start

    def poll_counts() -> dict[str, int]:
        assert h.poller is not None
        return {tid: tp.polls for tid, tp in h.poller.tables.items()}

    def close_dead_window() -> None:
        nonlocal dead_window
        if dead_window is None or h.poller is None:
            return
        assert h.poller is not None
        for u in range(1, BUS.tables + 1):
            tid = h.table_id(BUS, u)
            tp = h.poller.tables[tid]
            if u == DEAD[1]:
                tally.bus_dead += tp.polls - dead_window[tid]
                tally.bus_dead_timeouts += tp.timeouts - dead_window[f"{tid}/timeouts"]
            else:
                tally.bus_healthy[tid] += tp.polls - dead_window[tid]
        dead_window = None

    def open_dead_window() -> None:
        nonlocal dead_window
        assert h.poller is not None
        dead_window = poll_counts()
        for tid, tp in h.poller.tables.items():
            dead_window[f"{tid}/timeouts"] = tp.timeouts

    def count_polls(poller: Poller) -> None:
        for tp in poller.tables.values():
            tally.polls += tp.polls
            tally.poll_errors += tp.errors
            tally.poll_timeouts += tp.timeouts

    async def stop_controller() -> None:
        if h.poller is not None:
            was_open = dead_window is not None
            close_dead_window()
            poller = h.poller
            await h.stop_controller()
            count_polls(poller)
            if was_open:
                dead_window_pending.append(True)

    async def start_controller() -> None:
        await h.start_controller()
        if dead_window_pending:
            dead_window_pending.clear()
            open_dead_window()

    dead_window_pending: list[bool] = []
    downs: list[asyncio.Task[None]] = []

    async def gateway_down_then_back(link_id: str) -> None:
        gateway = h.gateways[link_id]
        gateway.stop_next = True
        try:
            async with asyncio.timeout(5):
                await gateway.stopped.wait()
        except TimeoutError:  # no request came (its tables backing off): stop it anyway
            gateway.stop_next = False
            tally.faults["stopped_idle"] += 1
            await gateway.stop()
        await asyncio.sleep(rng.uniform(0.3, 1.5))
        await gateway.come_back()

    async def power_cycle(p: LinkPlan, unit: int) -> bool:
        """Counters back to zero, once everything the table counted has been read (what a
        table counts after its last reading and before it loses power is lost with it)."""
        assert h.floor is not None and h.runtime is not None
        if (p, unit) in cycled or (p, unit) == (BUS, DEAD[1]):
            # Restarted twice within a few rounds, a table's counters could read forwards
            # both: no register tells that apart from play. Once per table.
            return False
        runtime = h.runtime
        tid = h.table_id(p, unit)
        table = h.sim(p, unit)
        h.clock.pause()
        try:
            await wait_until(
                lambda: runtime.memory.states[p.link_id].table(tid).credits == table.credits, 3.0
            )
        except TimeoutError:
            return False  # its gateway is down or it is backing off: another time
        else:
            h.floor.power_cycle(p.gateway, unit)
            cycled.add((p, unit))
            return True
        finally:
            h.clock.resume()

    async def technician() -> None:
        """Verify and reset the tables held for a hit, as the floor's technician would."""
        assert h.runtime is not None
        runtime = h.runtime
        for state in list(runtime.memory.states.values()):
            for tid, ts in state.tables.items():
                if ts.hit_pending:
                    for hit in await runtime.hits.unverified(tid):
                        await runtime.hits.verify(hit.hit_id, actor="technician")
                    try:
                        await runtime.hits.release_table(tid, actor="technician")
                    except HitWorkRefused:
                        # A hit the table reported meanwhile waits for its verification:
                        # the next round of the technician's.
                        continue
                    tally.faults["tables_released"] += 1

    forced: list[tuple[str, int]] = []
    cycled: set[tuple[LinkPlan, int]] = set()
    loop = asyncio.get_running_loop()
    try:
        await h.start_floor()
        await h.start_controller()
        assert h.floor is not None
        h.clock.resume()
        started = loop.time()
        steps = list(CLOCK_STEPS)
        restarts = list(RESTARTS)
        dead_from, dead_until = 0.05 * SECONDS, 0.9 * SECONDS
        while (elapsed := loop.time() - started) < SECONDS:
            share = elapsed / SECONDS
            if dead_window is None and not tally.faults["dead_unit"] and elapsed >= dead_from:
                h.floor.set_silent(BUS.gateway, DEAD[1], True)
                tally.faults["dead_unit"] += 1
                open_dead_window()
            if tally.faults["dead_unit"] and dead_window is not None and elapsed >= dead_until:
                close_dead_window()
                h.floor.set_silent(BUS.gateway, DEAD[1], False)
            if steps and share >= steps[0][0]:
                _, back = steps.pop(0)
                wall.offset_us -= back
                tally.faults["clock_step_back"] += 1
                # Seen by the running controller's clock before anything else happens (a
                # restart right after would start a clock that never knew the time before).
                await wait_until(
                    lambda: (
                        sum(c.steps_back for c in tally.clocks) >= tally.faults["clock_step_back"]
                    ),
                    10.0,
                )
            if restarts and share >= restarts[0]:
                restarts.pop(0)
                await stop_controller()
                p = rng.choice([PLANS[0], PLANS[1], BUS])
                unit = rng.choice([u for u in range(1, p.tables + 1) if (p, u) != (BUS, DEAD[1])])
                h.floor.force_hand(p.gateway, unit, rng.randint(1, 7), HandCategory.ROYAL_FLUSH)
                h.floor.play_round_now(p.gateway, unit)
                forced.append((p.link_id, unit))
                tally.faults["hit_while_controller_down"] += 1
                await asyncio.sleep(rng.uniform(0.3, 1.0))  # the floor plays on
                await start_controller()
                tally.faults["controller_restart"] += 1
            if not tally.faults["power_cycle_below_wrap"]:
                # Once, a table that loses power just below 2**32: its counter seems to wrap.
                near = [
                    (p, u)
                    for p in PLANS
                    for u in range(1, p.tables + 1)
                    if 0 < U32 - h.sim(p, u).credits <= 60
                ]
                if near and await power_cycle(*near[0]):
                    tally.faults["power_cycle_below_wrap"] += 1
            kind = rng.choices(
                ["stop", "garbage", "slow", "power_cycle", "hit", "technician", "none"],
                weights=[2, 3, 3, 2, 2, 2, 2],
            )[0]
            gp = rng.choice(TCP)
            gateway = h.gateways[gp.link_id]
            if kind == "stop" and gateway.up and not gateway.stop_next:
                downs.append(asyncio.create_task(gateway_down_then_back(gp.link_id)))
            elif kind == "garbage":
                gateway.garbage_next += rng.randint(1, 4)
            elif kind == "slow":
                gateway.slow_next.extend([SLOW_S] * rng.randint(1, 3))
            elif kind == "power_cycle":
                p = rng.choice(PLANS)
                unit = rng.randint(1, p.tables)
                if await power_cycle(p, unit):
                    tally.faults["power_cycle"] += 1
            elif kind == "hit":
                p = rng.choice(PLANS)
                unit = rng.randint(1, p.tables)
                hand = rng.choice([HandCategory.ROYAL_FLUSH, HandCategory.STRAIGHT_FLUSH])
                seat = rng.randint(1, 7)
                try:
                    h.floor.force_hand(p.gateway, unit, seat, hand)
                except ValueError:  # Let It Ride: one forced seat per round
                    pass
                else:
                    tally.faults["forced_hit"] += 1
            elif kind == "technician":
                await technician()
            await asyncio.sleep(rng.uniform(0.2, 0.6))

        # Every fault ends: the gateways come back, the dead unit answers, the floor stops
        # dealing; then everything dealt must be read and committed.
        for gateway in h.gateways.values():
            gateway.garbage_next = 0
            gateway.slow_next.clear()
            gateway.stop_next = False
        await asyncio.gather(*downs)
        for gateway in h.gateways.values():
            if not gateway.up:
                await gateway.come_back()
        close_dead_window()
        h.floor.set_silent(BUS.gateway, DEAD[1], False)
        h.clock.pause()
        await h.drained(within_s=90)
        duration = loop.time() - started
        await stop_controller()
    finally:
        for task in downs:
            task.cancel()
        await asyncio.gather(*downs, return_exceptions=True)
        await h.stop()

    await h.check_exact()
    code, out, err = await progressive("ledger", "verify", db_url=db_url)
    assert code == 0, (out, err)

    for gateway in h.gateways.values():
        tally.faults.update(gateway.injected)
    async with store.engine.connect() as conn:
        hits = await conn.scalar(select(func.count()).select_from(HitRow))
        jackpots = int(
            await conn.scalar(
                select(func.count()).where(MeterEntryRow.kind == str(EntryKind.JACKPOT_RESET))
            )
            or 0
        )
        rows = (
            await conn.execute(
                select(MeterEntryRow.link_id, MeterEntryRow.seq, MeterEntryRow.at_us).order_by(
                    MeterEntryRow.link_id, MeterEntryRow.seq
                )
            )
        ).all()
    # The history's times never go backwards within a link's chain.
    for link_id, entries in itertools.groupby(rows, key=lambda r: r[0]):
        times = [r[2] for r in entries]
        backwards = [(a, b) for a, b in itertools.pairwise(times) if b < a]
        assert not backwards, (link_id, backwards[:3])
    steps_seen = sum(c.steps_back for c in tally.clocks)
    assert steps_seen == tally.faults["clock_step_back"], (steps_seen, tally.faults)
    assert max(c.largest_step_back_us for c in tally.clocks) >= HOUR - 1_000_000

    # Every kind of fault really happened.
    for kind in (
        "power_cycle",
        "power_cycle_below_wrap",
        "forced_hit",
        "hit_while_controller_down",
        "controller_restart",
    ):
        assert tally.faults[kind] >= 1, tally.faults
    assert tally.faults["stopped_mid_poll"] >= 1, tally.faults
    assert tally.faults["slow_answer"] >= 1, tally.faults
    assert sum(n for k, n in tally.faults.items() if k.startswith("garbage:")) >= 1, tally.faults
    assert jackpots >= len(forced)  # the jackpots dealt while the controller was down, and more
    power_cycles = tally.faults["power_cycle"] + tally.faults["power_cycle_below_wrap"]
    assert await h.entries(EntryKind.TABLE_COUNTER_RESET) >= power_cycles
    async with store.engine.connect() as conn:
        wraps = int(
            await conn.scalar(
                select(func.count()).where(MeterEntryRow.explanation.like("%counter wrapped%"))
            )
            or 0
        )
    assert wraps >= 1

    # The serial line: the dead unit timed out and went offline, the others kept polling.
    dead_tid = h.table_id(BUS, DEAD[1])
    assert await h.entries(EntryKind.TABLE_OFFLINE, dead_tid) >= 1
    assert tally.bus_dead_timeouts >= 1
    for tid, polls in tally.bus_healthy.items():
        assert polls >= 5 * max(1, tally.bus_dead), (tid, polls, tally.bus_dead)

    print(
        f"\nfaults under load: {duration:.1f} s, {tally.polls} polls "
        f"({tally.poll_errors} failed, {tally.poll_timeouts} timed out), {hits} hits "
        f"({jackpots} jackpot resets), {wraps} counter wraps, "
        f"clock steps back handled {steps_seen} "
        f"(largest {max(c.largest_step_back_us for c in tally.clocks) / 1e6:.0f} s)\n"
        f"serial line, dead-unit window: healthy {dict(tally.bus_healthy)}, "
        f"dead {tally.bus_dead} polls ({tally.bus_dead_timeouts} timed out)\n"
        f"faults injected: {dict(sorted(tally.faults.items()))}"
    )
