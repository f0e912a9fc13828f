"""The links a failed check of the software holds, kept in the database: a new controller finds
them inoperable, whatever its own check says, until two people recover each; the ledger's
verification is not broken by a hold; a process driving a held link on PostgreSQL hears of the
hold at once; and a store whose software fails seals nothing."""

from __future__ import annotations

import asyncio

import pytest

from controller.core import reducer
from controller.runtime.change_feed import ChangeFeed
from controller.runtime.links import LinkRuntime
from controller.storage.errors import SoftwareFailed
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from tests.conftest import KEY, T0
from tests.controller.storage.helpers import Poller, make_link, runtime
from tests.integration.harness import wait_until

WHY = "the software self-check failed at 2026-01-01 00:00:00 UTC (app/web.py differs)"


async def test_a_hold_is_kept_until_two_people_recover_the_link(store: LedgerStore) -> None:
    await make_link(store)
    await make_link(store, "draw", tables=("d1",))
    rt = await runtime(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0, rounds=0), p.reading("t2", 0, rounds=0)])

    held = rt.memory.hold_for_software("app/web.py differs", WHY)
    assert held == ["draw", "stud"] and rt.memory.software_held == {"draw": WHY, "stud": WHY}
    assert rt.memory.wagering_hold("stud", T0) == f"inoperable: {WHY}"
    # Nothing is sealed by this process now, whatever asks.
    with pytest.raises(SoftwareFailed, match="nothing is written"):
        await store.commit([_offline(rt)])
    written = await store.record_self_check(
        at_us=T0, actor="controller", after={"result": "failed"}, hold=rt.memory.software_held
    )
    assert written == ["draw", "stud"]
    rt.memory.software_holds_written(written)
    # Written once, with its first reason.
    assert (
        await store.record_self_check(
            at_us=T0, actor="controller", after={"result": "failed"}, hold={"stud": "later"}
        )
        == []
    )

    # A new controller, whose own software passes, finds them held.
    again = await runtime(LedgerStore(store.engine, KEY))
    assert again.memory.software_fault is None
    assert again.memory.inoperable == {"draw": WHY, "stud": WHY}
    # A hold is no break of the history or of the state it resumes from.
    assert (await verify_ledger(store.engine, KEY)).ok

    rt.memory.software_passes()
    await rt.commands.recover("stud", reason="release files put back", by="ann", approved_by="bob")
    assert rt.memory.is_inoperable("stud") is None and rt.memory.is_inoperable("draw") == WHY
    again = await runtime(LedgerStore(store.engine, KEY))
    assert again.memory.inoperable == {"draw": WHY}


def _offline(rt: LinkRuntime) -> reducer.Outcome:
    """An outcome that would seal an entry: a table going offline."""
    return reducer.table_offline(
        rt.memory.states["stud"], table_id="t1", at_us=T0 + 10**7, reason="x"
    )


@pytest.mark.parametrize("db_kind", ["postgres"])
async def test_the_process_driving_a_held_link_hears_of_it_at_once(store: LedgerStore) -> None:
    await make_link(store)
    driver = await runtime(LedgerStore(store.engine, KEY))
    feed = ChangeFeed(store.engine, driver, drives=lambda _: True, gather_s=0.01)
    await feed.start()
    try:
        await wait_until(lambda: feed.listening)
        await asyncio.sleep(0.1)
        assert driver.memory.inoperable == {}
        await store.record_self_check(
            at_us=T0, actor="controller", after={"result": "failed"}, hold={"stud": WHY}
        )
        await wait_until(lambda: driver.memory.is_inoperable("stud") == WHY, within_s=10)
    finally:
        await feed.stop()
