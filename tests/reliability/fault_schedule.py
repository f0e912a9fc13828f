"""The fault soak's faults: what they are, when they come, and making them happen.

Three kinds (``KINDS``), each on a timeline of its own so that kinds also overlap
(``fault_schedule``): the serial line's port refusing its settings, a gateway switched off,
the database away. ``Injector`` begins and ends each at its time; ``Injected`` keeps what
became of its tables (``table_watch`` fills that in).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from controller.core.games import Game
from tests.integration.harness import LinkPlan
from tests.reliability.database_faults import DatabaseFault
from tests.reliability.exact import table_id
from tests.reliability.soak import GAMES
from tests.reliability.soak_floor import SoakFloor
from tests.serial_line import SettingsRefusal

__all__ = [
    "DATABASE_DOWN",
    "GATEWAY_OFF",
    "KINDS",
    "LINE",
    "SERIAL_REFUSED",
    "Fault",
    "Injected",
    "Injector",
    "fault_plans",
    "fault_schedule",
    "refusing_settings",
]

SERIAL_REFUSED: Final = "serial port refuses its settings"
GATEWAY_OFF: Final = "gateway switched off"
DATABASE_DOWN: Final = "database away"
KINDS: Final = (SERIAL_REFUSED, GATEWAY_OFF, DATABASE_DOWN)
LINE: Final = "rs485"  # the serial line's gateway


def fault_plans(tables: int) -> tuple[LinkPlan, ...]:
    """A link of ``tables`` tables per game on TCP, and one of Caribbean Stud on the line."""
    tcp = tuple(
        LinkPlan(link_id, game.value, game.value, tables=tables, rate_bp=rate_bp)
        for link_id, game, rate_bp in GAMES
    )
    line = LinkPlan(
        "line", LINE, Game.CARIBBEAN_STUD.value, tables=tables, rate_bp=8000, serial=True
    )
    return (*tcp, line)


@dataclass(frozen=True)
class Fault:
    kind: str  # one of KINDS
    target: str  # the gateway (a serial refusal, a gateway off); "database"
    at_s: float  # after the warm-up
    for_s: float


def fault_schedule(
    plans: Sequence[LinkPlan],
    run_s: float,
    *,
    seed: int,
    hold_s: tuple[float, float] = (5.0, 60.0),
    gap_s: tuple[float, float] = (30.0, 180.0),
) -> list[Fault]:
    """Faults of each kind on a timeline of its own (so kinds also overlap): each held for a
    time drawn from ``hold_s``, the next of its kind after a gap drawn from ``gap_s``, every
    one lifted by ``run_s``. The kinds start 20 s apart; gateways are switched off in turn."""
    rng = random.Random(seed)
    lines = [p.gateway for p in plans if p.serial]
    gateways = [p.gateway for p in plans if not p.serial] + lines
    targets = {SERIAL_REFUSED: lines, GATEWAY_OFF: gateways, DATABASE_DOWN: ["database"]}
    out = []
    for k, kind in enumerate(KINDS):
        t, turn = 20.0 * k, 0
        while targets[kind]:
            hold = rng.uniform(*hold_s)
            if t + hold > run_s:
                break
            out.append(Fault(kind, targets[kind][turn % len(targets[kind])], t, hold))
            turn += 1
            t += hold + rng.uniform(*gap_s)
    return sorted(out, key=lambda f: f.at_s)


@dataclass
class Injected:
    """A fault as it happened: when it began and ended (wall clock, µs), the tables it
    touches, how long until they were shown for it and until they were back after it."""

    fault: Fault
    tables: tuple[str, ...]
    began_us: int | None = None
    ended_us: int | None = None
    shown_s: float | None = None  # begun -> every table shown offline (/readyz: the database)
    back_s: float | None = None  # ended -> every table answering and recorded again
    masked: bool = False  # another fault took all its tables before they were back


class Injector:
    """Begins and ends each fault of the schedule at its time."""

    def __init__(
        self,
        soak: SoakFloor,
        database: DatabaseFault,
        refusal: SettingsRefusal,
        schedule: Sequence[Fault],
    ) -> None:
        self.soak = soak
        self.database = database
        self.refusal = refusal
        assert soak.addresses is not None
        self.devices = soak.addresses.devices
        self.tables_of = {
            p.gateway: tuple(table_id(p, u) for u in range(1, p.tables + 1)) for p in soak.plans
        }
        # What became of each fault, in the schedule's order (the watch fills in the rest).
        self.records = [Injected(f, self.affected(f)) for f in schedule]

    def affected(self, fault: Fault) -> tuple[str, ...]:
        if fault.kind == DATABASE_DOWN:
            return tuple(self.soak.table_ids)
        return self.tables_of[fault.target]

    async def run(self) -> None:
        records = self.records
        events = sorted(
            [(i.fault.at_s, 1, n) for n, i in enumerate(records)]
            + [(i.fault.at_s + i.fault.for_s, 0, n) for n, i in enumerate(records)]
        )
        t0 = time.monotonic()
        for at_s, begins, n in events:
            await asyncio.sleep(max(0.0, t0 + at_s - time.monotonic()))
            i = records[n]
            if begins:
                await self.begin(i.fault)
                i.began_us = self.soak.running.now_us()
            else:
                await self.end(i.fault)
                i.ended_us = self.soak.running.now_us()
            self.soak.say(
                f"{'+' if begins else '-'} {at_s:7.1f} s {i.fault.kind} ({i.fault.target})"
                + (f" for {i.fault.for_s:.0f} s" if begins else "")
            )

    async def begin(self, fault: Fault) -> None:
        if fault.kind == SERIAL_REFUSED:
            # The adapter pulled out and another put in that cannot do the line's settings.
            self.refusal.refuse(self.devices[fault.target])
            await self.soak.floor.ask("replug", fault.target)
        elif fault.kind == GATEWAY_OFF:
            await self.soak.floor.ask("switch off", fault.target)
        else:
            await self.database.begin()

    async def end(self, fault: Fault) -> None:
        if fault.kind == SERIAL_REFUSED:
            self.refusal.accept(self.devices[fault.target])
        elif fault.kind == GATEWAY_OFF:
            await self.soak.floor.ask("switch on", fault.target)
        else:
            await self.database.end()


@contextlib.contextmanager
def refusing_settings() -> Iterator[SettingsRefusal]:
    refusal = SettingsRefusal()
    refusal.install()
    try:
        yield refusal
    finally:
        refusal.uninstall()
