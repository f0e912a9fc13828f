"""PostgreSQL stopped for 30 seconds during play (the minute: ``python -m
tests.reliability.outage --outage-s 60``): polling and displays go on (degraded), hits
are held, nothing is lost, ``/readyz`` says not ready meanwhile. The scenario and its checks
are in ``tests.reliability.outage``; run with ``-s`` to see the figures it measures."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.storage.store import LedgerStore
from link_adapters.register_map import COMMAND_HIT_PENDING
from tests.conftest import IN_CI
from tests.integration.harness import FloorHarness, wait_until
from tests.private_pg import available
from tests.reliability.outage import STUD, run_outage, two_request_profile, with_profile

OUTAGE_S = 30.0


async def test_half_a_minute_without_the_database_loses_nothing_and_pays_no_hit_twice() -> None:
    problem = available()
    if problem is not None:
        if IN_CI:
            pytest.fail(f"a private PostgreSQL server is needed: {problem}", pytrace=False)
        pytest.skip(f"a private PostgreSQL server is needed: {problem}")
    figures = await run_outage(OUTAGE_S)
    print("\n" + "\n".join(figures.lines()))


@pytest.mark.parametrize("one_request", [True, False], ids=["read-write", "read-then-write"])
async def test_a_fenced_link_keeps_its_tables_alive_and_records_nothing(
    store: LedgerStore, one_request: bool, tmp_path: Path
) -> None:
    """What a controller does with a link between losing its lock connection and the
    database answering again: reads and heartbeats only; then it stops, or takes it back."""
    h = FloorHarness(store, (STUD,), rounds_per_second=8)
    try:
        await h.start_floor()
        assert h.config is not None
        if not one_request:
            h.config = with_profile(h.config, STUD.link_id, two_request_profile(tmp_path))
        await h.start_controller()
        assert h.poller is not None and h.runtime is not None
        poller, runtime = h.poller, h.runtime
        await h.play(0.5)
        await h.drained()
        lifted = False
        poller.fence_link("stud", until=lambda: lifted)
        assert not poller.polling("stud")
        assert poller.recording_problem("stud") is not None
        recorded = {tid: ts.credits for tid, ts in runtime.memory.states["stud"].tables.items()}
        sims = [h.sim(STUD, u) for u in (1, 2)]
        credits = [t.credits for t in sims]
        h.clock.resume()
        await wait_until(lambda: any(t.credits > c for t, c in zip(sims, credits, strict=True)))
        # A poll under way when the link was fenced may write one more heartbeat: three
        # rounds of new heartbeats come from fenced polls, which read the new bets too.
        for _ in range(3):
            beats = [t.heartbeat_value for t in sims]
            await wait_until(
                lambda beats=beats: all(
                    t.heartbeat_value != b for t, b in zip(sims, beats, strict=True)
                )
            )
        # The tables bet on, heard from and kept alive; nothing of it recorded.
        assert {
            tid: ts.credits for tid, ts in runtime.memory.states["stud"].tables.items()
        } == recorded
        # (a table held for a hit refuses side bets whatever its heartbeat)
        assert not any(
            t.progressive_disabled(h.clock.now_us())
            for t in sims
            if not t.command_bits & COMMAND_HIT_PENDING
        )

        h.clock.pause()
        # The database answers and the link was not taken back: its tables are left alone.
        lifted = True
        await wait_until(
            lambda: (
                not any(
                    tp.link_id == "stud"
                    for tp in poller.tables.values()
                    if tp.entry.config.table_id in poller._tasks
                )
            )
        )
        # Taken back: resumed from what is recorded, everything bet meanwhile credited.
        poller.start_link("stud")
        assert poller.polling("stud") and poller.recording_problem("stud") is None
        await h.play(0.5)
        await h.drained()
    finally:
        await h.stop()
    await h.check_exact()
