"""Simulator -> Modbus TCP -> poller -> engine -> ledger, checked against the simulator's own
record of every bet and hit, on SQLite and PostgreSQL."""

from __future__ import annotations

from controller.core.hands import HandCategory
from controller.core.reducer import EntryKind
from controller.storage.store import LedgerStore
from tests.integration.harness import FloorHarness, LinkPlan

STUD = LinkPlan("stud", "caribbean_stud", "caribbean_stud", tables=3, rate_bp=8250)
LIR = LinkPlan("lir", "let_it_ride_bonus", "let_it_ride_bonus", tables=2, rate_bp=6137)


async def test_the_meter_matches_the_simulators_own_record(store: LedgerStore) -> None:
    h = FloorHarness(store, (STUD, LIR))
    try:
        await h.start_floor()
        await h.start_controller()
        assert h.floor is not None and h.runtime is not None
        h.floor.force_hand("caribbean_stud", 2, 3, HandCategory.ROYAL_FLUSH)
        await h.play(3.0)
        await h.drained()
        assert h.poller is not None
        for bus, link in h.poller.links.items():
            # The reference profile reads and writes in one request: one request per poll,
            # except each table's first, a read and then a write once its baseline is recorded,
            # and one more for each hit acknowledged (a write of its own).
            tables = [tp for tp in h.poller.tables.values() if tp.entry.bus == bus]
            polls = sum(tp.polls + tp.acknowledged for tp in tables) + len(tables)
            assert polls - 3 <= link.stats.requests <= polls, (bus, polls, link.stats)
    finally:
        await h.stop()
    await h.check_exact()
    assert await h.entries(EntryKind.JACKPOT_RESET) == 1
    assert h.runtime.memory.states["stud"].jackpot_won_since_rate_set
