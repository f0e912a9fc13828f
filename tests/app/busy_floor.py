"""A busy floor for the pages: hundreds of fixed pays waiting for a technician, a royal flush
paid from the meter holding a Caribbean Stud table, and a log of small fixed pays that wait
for no one.

Everything is dealt by the simulated tables and read by the real poller into the real SQLite
ledger (``web_floor``): the tables deal only when told (a virtual clock, no dealing of their
own), and every seat of a round is forced, so the floor is the same every run and is built in
seconds. A held table takes no side bets, so one round per table is all it can bring: the
fixed pays are spread over as many Caribbean Stud tables as they need, seven a table.

    async with busy_floor(tmp_path, fixed_pays=300) as bf:
        bf.held_table, bf.held_hit_id, bf.base_url
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, select

from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.storage.models import HitRow
from link_adapters.simulator.clock import VirtualClock
from tests.app.floor import WebFloor, settings_in, web_floor
from tests.integration.harness import wait_until

SEATS = 7
# Fixed pays of the Caribbean Stud paytable ($50, $100, $500): every one reaches the amount
# from which a fixed pay waits for a technician on this floor. Seven hands of one deck, in an
# order in which each finds its cards among those the seats before it left.
_FL, _FH, _FOUR = HandCategory.FLUSH, HandCategory.FULL_HOUSE, HandCategory.FOUR_OF_A_KIND
FIXED_HANDS = (_FL, _FL, _FL, _FL, _FH, _FH, _FOUR)
# From $10 a fixed pay waits for a technician: the Let It Ride bonus's two pair ($4) does
# not, and makes the quiet log.
TECHNICIAN_FROM_CENTS = 10_00


@dataclass
class BusyFloor:
    wf: WebFloor
    clock: VirtualClock
    held_table: str  # the Caribbean Stud table held by the royal flush
    held_hit_id: str  # the royal flush, paid from the meter
    fixed_pay_tables: tuple[str, ...]  # the tables held by the fixed pays
    fixed_pays: int  # fixed pays waiting for a technician
    quiet_pays: int  # fixed pays under the amount: nobody waits for them

    @property
    def base_url(self) -> str:
        return self.wf.base_url


def _tables_for(fixed_pays: int) -> int:
    return -(-fixed_pays // SEATS)


async def _count(wf: WebFloor, *where: object) -> int:
    async with wf.service.engine.connect() as conn:
        found = await conn.scalar(select(func.count()).select_from(HitRow).where(*where))  # type: ignore[arg-type]
    return int(found or 0)


def _read(wf: WebFloor, link_id: str, unit: int) -> bool:
    """The controller has read every round and taken every hit the table dealt."""
    table = wf.table(link_id, unit)
    status = wf.service.table_status(f"{link_id}-{unit}")
    return not table.hit_fifo and status.rounds == table.rounds


@contextlib.asynccontextmanager
async def busy_floor(
    folder: Path,
    *,
    fixed_pays: int = 300,
    quiet_pays: int = 12,
    second_signature_from_cents: int = 100_000_00,
    escalate_after_minutes: int = 10,
) -> AsyncIterator[BusyFloor]:
    """The floor: ``stud-1`` held by a royal flush from the meter, ``fixed_pays`` fixed pays
    (rounded up to whole rounds of seven seats) on ``stud-2`` onwards, and up to
    ``quiet_pays`` two pairs at the Let It Ride bonus tables that wait for no one."""
    stud_tables = 1 + _tables_for(fixed_pays)
    links = {"stud": (Game.CARIBBEAN_STUD, stud_tables), "lir": (Game.LET_IT_RIDE_BONUS, 2)}
    settings = settings_in(folder).model_copy(
        update={
            "fixed_pay_technician_from": TECHNICIAN_FROM_CENTS,
            "second_signature_from": second_signature_from_cents,
            "escalate_after_minutes": escalate_after_minutes,
        }
    )
    clock = VirtualClock()
    async with web_floor(
        folder,
        links=links,
        seed=11,
        settings=settings,
        sim_clock=clock.now_us,
        sim_autodeal=False,
        poll_interval_ms=50,
    ) as wf:
        await wait_until(
            lambda: not any(t.progressive_disabled(clock.now_us()) for t in wf.sim.tables.values())
        )
        # The jackpot first: the oldest hit holding a table, as on a floor where it has
        # waited while the fixed pays piled up.
        royal = wf.table("stud", 1)
        royal.force_hand(3, HandCategory.ROYAL_FLUSH)
        wf.play_round_now("stud", 1)
        await wait_until(lambda: wf.service.table_status("stud-1").hit_pending)
        (held,) = await wf.service.runtime.hits.unverified("stud-1")

        left = fixed_pays
        units = range(2, stud_tables + 1)
        for unit in units:
            table = wf.table("stud", unit)
            for seat in range(1, min(SEATS, left) + 1):
                table.force_hand(seat, FIXED_HANDS[seat - 1])
            left -= SEATS
            wf.play_round_now("stud", unit)
        quiet = 0
        for n in range(quiet_pays):
            # A bigger hand dealt to another seat holds the table: go on at the other one.
            open_units = [u for u in (1, 2) if not wf.service.table_status(f"lir-{u}").hit_pending]
            if not open_units:
                break
            unit = open_units[n % len(open_units)]
            wf.table("lir", unit).force_hand(1, HandCategory.TWO_PAIR)
            wf.play_round_now("lir", unit)
            await wait_until(lambda unit=unit: _read(wf, "lir", unit))  # type: ignore[misc]
            quiet += 1
        await wait_until(
            lambda: (
                all(_read(wf, "stud", u) for u in units)
                and all(wf.service.table_status(f"stud-{u}").hit_pending for u in units)
            ),
            within_s=60,
        )
        waiting = await _count(
            wf, HitRow.needs_technician.is_(True), HitRow.paid_from == "table",
            HitRow.link_id == "stud",
        )  # fmt: skip
        assert waiting >= fixed_pays, waiting  # unforced seats may have hit too
        quiet_found = await _count(wf, HitRow.needs_technician.is_(False))
        assert quiet_found >= quiet, (quiet_found, quiet)
        yield BusyFloor(
            wf=wf,
            clock=clock,
            held_table="stud-1",
            held_hit_id=held.hit_id,
            fixed_pay_tables=tuple(f"stud-{u}" for u in units),
            fixed_pays=waiting,
            quiet_pays=quiet_found,
        )
