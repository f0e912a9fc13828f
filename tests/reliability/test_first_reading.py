"""A table's first reading only sets its baseline; bets taken before that baseline is recorded
would sit under the next one, never credited. A soak run once ended with one table 61 credits
short of the simulator's record (every hit right, no anomaly): one way there is a first commit
that fails after the poll's single read/write request has already given the table its
heartbeat. That window is closed; a crash in it is the same case.

Here the first commit fails for a real reason: another controller moved the link's history on,
so this one's commit is stale and refused."""

from __future__ import annotations

from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.runtime.clock import SystemClock
from controller.runtime.links import LinkRuntime
from controller.runtime.poller import Poller
from controller.runtime.service import open_floor
from controller.storage.store import LedgerStore
from tests.conftest import KEY
from tests.integration.harness import FloorHarness, LinkPlan

STUD = LinkPlan("stud", "caribbean_stud", "caribbean_stud", tables=1, rate_bp=8000)


async def test_no_heartbeat_reaches_a_table_before_its_baseline_is_recorded(
    store: LedgerStore,
) -> None:
    h = FloorHarness(store, (STUD,))
    await h.start_floor()
    assert h.config is not None
    poller: Poller | None = None
    try:
        runtime = await open_floor(
            LedgerStore(store.engine, KEY), h.config, SystemClock(), demonstration=True
        )
        await ReviewDesk(FilingDesk(runtime)).approve_new_links(
            reviewer="commission", role=Role.COMMISSION_AGENT
        )
        other = LinkRuntime(LedgerStore(store.engine, KEY), SystemClock())
        await other.memory.load()
        await other.commands.table_offline("stud-1", reason="seen from another controller")

        poller = Poller(runtime, h.config)
        poller.build()
        await poller.start(link_ids=[])
        tp = poller.tables["stud-1"]
        assert tp.handle.profile.read_write  # the one-request profile, where the risk was
        table = h.sim(STUD, 1)

        await poller.per_table.poll_once(tp)  # the baseline's commit is refused: stale history
        assert runtime.memory.states["stud"].table("stud-1").credits is None
        assert table.heartbeat_value is None  # so the table still refuses progressive bets

        await poller.per_table.poll_once(
            tp
        )  # reloaded: this baseline is recorded, then the heartbeat
        assert runtime.memory.states["stud"].table("stud-1").credits is not None
        assert table.heartbeat_value is not None
    finally:
        if poller is not None:
            await poller.stop()
        await h.stop()
