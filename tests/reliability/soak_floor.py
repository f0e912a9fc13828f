"""A soak's floor: simulated tables in a process of their own (``floor_process``), polled by the
real ``FloorService`` in this one, and what every soak does around it.

As it runs, the tables' rounds are folded into running totals (``take``) and a technician
verifies and resets every table a jackpot holds (``technician``), as on the floor. At the end
the dealers stop and everything dealt is committed (``drain``), then ``check`` holds the
database against the simulator's record: the meter exact to the unit and every hit once
(``tests.reliability.exact``), no anomaly, ``ledger verify`` whole, each link's reconciliation
over the whole run balanced.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import func, select

from controller.core.reducer import EntryKind
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.reconciliation import reconciliation
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.runtime.clock import SystemClock
from controller.runtime.config import parse_floor_config
from controller.runtime.config_entries import FloorConfig
from controller.runtime.link_locks import CHECK_TIMEOUT_S
from controller.runtime.service import FloorService
from controller.settings import Settings
from controller.storage.models import MeterEntryRow
from controller.storage.verify import verify_ledger
from tests.conftest import KEY
from tests.integration.harness import SERIAL_BAUD, LinkPlan
from tests.reliability.exact import Comparison, SimTotals, compare, table_id
from tests.reliability.floor_process import FloorAddresses, FloorProcess, Taken

__all__ = ["EndChecks", "SoakFloor", "floor_config"]

# The register map shows one hit at a time, so a table's FIFO empties at one hit per poll. Let
# It Ride bonus tables dealt at 50 rounds a second queue some 7 hits a second: polled every
# 200 ms their FIFOs grew all run long. Every 100 ms keeps ahead of them.
POLL_INTERVAL_MS = 100
TIMEOUT_MS = 1000
# An RS-485 line at 115,200 baud answers a block read in a few milliseconds; a loaded machine
# may take a few hundred.
SERIAL_TIMEOUT_MS = 500
DRAIN_STALL_S = 30.0  # once the dealers stop, a drain that does not move this long failed
OFFLINE_AFTER_FAILURES = 3


def floor_config(plans: tuple[LinkPlan, ...], at: FloorAddresses) -> FloorConfig:
    return parse_floor_config({
        "controller": {"offline_after_failures": OFFLINE_AFTER_FAILURES},
        "bus": [
            {"name": p.link_id, "kind": "rtu", "device": at.devices[p.gateway],
             "baudrate": SERIAL_BAUD, "timeout_ms": SERIAL_TIMEOUT_MS, "retries": 0}
            if p.serial else
            {"name": p.link_id, "kind": "tcp", "host": "127.0.0.1", "port": at.ports[p.gateway],
             "timeout_ms": TIMEOUT_MS, "retries": 0}
            for p in plans
        ],
        "link": [
            {"id": p.link_id, "game": p.game, "rate": f"{p.rate_bp / 100}%", "reset": "$1,000",
             "table": [{"id": table_id(p, u), "bus": p.link_id, "unit": u,
                        "location": f"pit 1, table {u}",
                        # Rounds come every 20 ms here, not every minute: a counter jump is
                        # judged against that pace, not a real table's.
                        "poll_interval_ms": POLL_INTERVAL_MS, "min_round_ms": 1,
                        "max_credits_per_seat": 1}
                       for u in range(1, p.tables + 1)]}
            for p in plans
        ],
    })  # fmt: skip


class FenceCount(logging.Handler):
    """Counts the times the lock connection did not answer and every link was given up."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "every link is given up" in record.getMessage():
            self.count += 1


@dataclass
class EndChecks:
    comparison: Comparison | None = None
    ledger_entries: int = 0
    ledger_problems: list[str] = field(default_factory=list)
    reconciliation: dict[str, tuple[int, list[str]]] = field(default_factory=dict)
    offline_events: int = 0  # a table that did not answer three polls in a row
    lock_fences: int = 0
    undrained: list[str] = field(default_factory=list)  # tables behind when the drain gave up

    @property
    def reconciled(self) -> bool:
        return bool(self.reconciliation) and all(
            diff == 0 and not problems for diff, problems in self.reconciliation.values()
        )

    @property
    def ok(self) -> bool:
        return (
            self.comparison is not None
            and self.comparison.ok
            and not self.ledger_problems
            and self.ledger_entries > 0
            and self.reconciled
            and not self.undrained
        )

    def lines(self) -> list[str]:
        out = [] if self.comparison is None else self.comparison.lines()
        for line in self.undrained:
            out.append(f"NOT DRAINED: {line}")
        out.append(
            f"tables gone offline ({OFFLINE_AFTER_FAILURES} polls failed in a row) and back: "
            f"{self.offline_events}"
        )
        out.append(
            f"lock connection fences (no answer within {CHECK_TIMEOUT_S:g} s, every link given "
            f"up and taken back): {self.lock_fences}"
        )
        out.append(
            f"ledger verify: {self.ledger_entries} entries, "
            + ("whole" if not self.ledger_problems else f"BROKEN: {self.ledger_problems[:3]}")
        )
        for link_id, (diff, problems) in sorted(self.reconciliation.items()):
            out.append(
                f"reconciliation {link_id}: difference {diff} units"
                + (f", problems: {problems}" if problems else ", balanced")
            )
        return out


class SoakFloor:
    """The floor's process and the service polling it (see the module docstring).

    ``start`` starts both and lets the new links play; the dealers deal once ``resume`` is
    asked of ``floor``. ``stop`` stops the service and the floor's process, whatever state
    they are in. ``migrate`` migrates the database first (an empty SQLite file).
    """

    def __init__(
        self,
        db_url: str,
        plans: tuple[LinkPlan, ...],
        *,
        rate: float,
        seed: int,
        say: Callable[[str], None] = print,
        migrate: bool = False,
    ) -> None:
        self.db_url = db_url
        self.plans = plans
        self.say = say
        self.migrate = migrate
        self.floor = FloorProcess(plans, rate, seed, baudrate=SERIAL_BAUD)
        self.service: FloorService | None = None
        self.addresses: FloorAddresses | None = None
        self.sim = SimTotals()
        self.live: dict[str, tuple[int, int]] = {}  # table id -> (credit counter, hits queued)
        self.hits_dealt = 0
        self.released = 0  # technician resets of held tables
        # The technician's requests that failed (the database away): tried again next time.
        self.technician_failures = 0
        self.technician_slowest_s = 0.0  # the longest a held table's reset took
        self.table_ids = [table_id(p, u) for p in plans for u in range(1, p.tables + 1)]
        self.tid_of = {
            (p.gateway, u): table_id(p, u) for p in plans for u in range(1, p.tables + 1)
        }
        self.link_of = {table_id(p, u): p.link_id for p in plans for u in range(1, p.tables + 1)}
        self._fences = FenceCount()

    @property
    def running(self) -> FloorService:
        assert self.service is not None, "start() first"
        return self.service

    async def start(self) -> FloorAddresses:
        logging.getLogger("controller.runtime.link_locks").addHandler(self._fences)
        self.addresses = await self.floor.start()
        settings = Settings(database_url=self.db_url, ledger_key=KEY.hex(), demonstration=True)
        self.service = FloorService(
            settings,
            floor=floor_config(self.plans, self.addresses),
            clock=SystemClock(),
            migrate=self.migrate,
            retention_schedule=False,
        )
        await self.service.start()
        # The floor's own commission agent lets its new links play (68 IAC 10-1-3(c)(4)).
        await ReviewDesk(FilingDesk(self.service.runtime)).approve_new_links(
            reviewer="commission", role=Role.COMMISSION_AGENT
        )
        return self.addresses

    async def stop(self) -> None:
        logging.getLogger("controller.runtime.link_locks").removeHandler(self._fences)
        if self.service is not None:
            await self.service.stop()
        await self.floor.stop()

    async def take(self) -> int:
        """Fold the rounds dealt since the last take; returns how many."""
        before = self.sim.rounds
        taken: Taken = await self.floor.ask("take")
        for key, (part, hits, credits, queued) in taken.items():
            tid = self.tid_of[key]
            self.sim.add(tid, part)
            self.hits_dealt += hits
            self.live[tid] = (credits, queued)
        return self.sim.rounds - before

    async def technician(self) -> int:
        """Verify and reset every table a jackpot holds; returns how many were reset."""
        runtime = self.running.runtime
        released = 0
        for tid in self.table_ids:
            if not runtime.memory.states[self.link_of[tid]].table(tid).hit_pending:
                continue
            began = time.monotonic()
            try:
                for hit in await runtime.hits.unverified(tid):
                    await runtime.hits.verify(hit.hit_id, actor="tech")
                await runtime.hits.release_table(tid, actor="tech")
            except Exception as exc:  # the database away: the technician comes back later
                self.technician_failures += 1
                if self.technician_failures == 1 or self.technician_failures % 100 == 0:
                    self.say(f"technician at {tid}: {type(exc).__name__}: {exc}")
                continue
            finally:
                self.technician_slowest_s = max(self.technician_slowest_s, time.monotonic() - began)
            released += 1
        self.released += released
        return released

    def behind(self) -> list[str]:
        """The tables whose counters and hits the controller has not all committed yet."""
        memory = self.running.runtime.memory
        out = []
        for tid in self.table_ids:
            ts = memory.states[self.link_of[tid]].table(tid)
            credits, queued = self.live[tid]
            if queued or ts.credits != credits or ts.open_claims:
                out.append(
                    f"{tid}: controller at {ts.credits} credits, table at {credits}, hits "
                    f"queued {queued}, open claims {len(ts.open_claims)}, held "
                    f"{ts.hit_pending}, online {ts.online}"
                )
        return out

    async def drain(self) -> list[str]:
        """Stop the dealers and wait until everything dealt is committed; the tables still
        behind when nothing moved for ``DRAIN_STALL_S`` (none when drained)."""
        await self.floor.ask("pause")
        memory = self.running.runtime.memory
        progress_at = time.monotonic()
        last_state: tuple[int, ...] = ()
        while True:
            # A dealer that fell behind still deals the rounds due before the pause.
            fresh = await self.take()
            await self.technician()
            behind = self.behind()
            # The table shows one hit at a time: a FIFO filled faster than the polls empty
            # it drains at one hit per poll. Waiting is right while it moves.
            state = (*(self.live[tid][1] for tid in sorted(self.live)), self.sim.rounds)
            if state != last_state:
                last_state, progress_at = state, time.monotonic()
            if not fresh and not behind:
                return []
            if time.monotonic() - progress_at > DRAIN_STALL_S:
                fifos = await self.floor.ask("fifos")
                behind += [
                    f"{tid}: table FIFO head {fifo[:-1]} of {fifo[-1]}; controller last "
                    f"hit {ts.last_hit_seq} round {ts.last_hit_round}, open {ts.open_claims}"
                    for key, fifo in fifos.items()
                    if fifo[-1]
                    for tid in [self.tid_of[key]]
                    for ts in [memory.states[self.link_of[tid]].table(tid)]
                ]
                self.say(f"not drained, nothing moved for {DRAIN_STALL_S:g} s: {behind}")
                return behind
            await asyncio.sleep(0.2)

    async def check(self, undrained: list[str]) -> EndChecks:
        """The database against the simulator's record, once drained."""
        checks = EndChecks(undrained=undrained, lock_fences=self._fences.count)
        kept: dict[tuple[str, int], list[tuple[int, str]]] = await self.floor.ask("hits")
        for key, hits in kept.items():
            self.sim.hits += [(self.tid_of[key], seq, hand) for seq, hand in hits]
        until_us = time.time_ns() // 1000 + 1
        engine = self.running.engine
        checks.comparison = await compare(engine, self.plans, self.sim)
        async with engine.connect() as conn:
            checks.offline_events = int(
                await conn.scalar(
                    select(func.count()).where(MeterEntryRow.kind == str(EntryKind.TABLE_OFFLINE))
                )
                or 0
            )
        verified = await verify_ledger(engine, KEY)
        checks.ledger_entries = verified.entries
        checks.ledger_problems = [str(p) for p in verified.problems]
        for p in self.plans:
            total, _weeks = await reconciliation(engine, p.link_id, 0, until_us)
            checks.reconciliation[p.link_id] = (total.difference_units, list(total.problems))
        return checks
