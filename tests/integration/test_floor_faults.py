"""Faults on a polled floor, each ending with the meter exact to the simulator's own record."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import func, select

from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.core.money import MAX_AMOUNT_CENTS
from controller.core.reducer import EntryKind
from controller.storage.models import MeterEntryRow
from controller.storage.store import LedgerStore
from link_adapters.errors import LinkDown
from link_adapters.simulator.table_types import SimTableConfig
from tests.controller.storage.helpers import accept_hits_again, refuse_hits_of
from tests.integration.harness import FloorHarness, LinkPlan, wait_until

GW = "caribbean_stud"


def stud(tables: int = 2, **table: object) -> LinkPlan:
    cfg = SimTableConfig(game=Game.CARIBBEAN_STUD, **table) if table else None  # type: ignore[arg-type]
    return LinkPlan("stud", GW, GW, tables=tables, rate_bp=8000, table=cfg)


async def test_counters_wrapping_at_2_32(store: LedgerStore) -> None:
    h = FloorHarness(store, (stud(start_credits=2**32 - 25),))
    try:
        await h.start_floor()
        await h.start_controller()
        await h.play(3.0)
        await h.drained()
    finally:
        await h.stop()
    await h.check_exact()
    async with store.engine.connect() as conn:
        wrapped = await conn.scalar(
            select(func.count()).where(MeterEntryRow.explanation.like("%counter wrapped%"))
        )
    assert wrapped >= 1  # the wrap happened and was an ordinary contribution


async def test_a_table_power_cycled(store: LedgerStore) -> None:
    h = FloorHarness(store, (stud(),))
    try:
        await h.start_floor()
        await h.start_controller()
        await h.play(1.5)
        await h.drained()
        assert h.floor is not None
        h.floor.power_cycle(GW, 1)  # counters back to zero
        await h.play(1.5)
        await h.drained()
    finally:
        await h.stop()
    await h.check_exact()
    assert await h.entries(EntryKind.TABLE_COUNTER_RESET, "stud-1") == 1


async def test_a_hit_reported_while_the_controller_is_down(store: LedgerStore) -> None:
    h = FloorHarness(store, (stud(),))
    try:
        await h.start_floor()
        await h.start_controller()
        await h.play(1.0)
        await h.drained()
        await h.stop_controller()
        assert h.floor is not None
        h.floor.force_hand(GW, 2, 4, HandCategory.ROYAL_FLUSH)
        h.floor.play_round_now(GW, 2)
        await h.play(1.0)  # the floor plays on while nobody polls
        await h.start_controller()  # a new process: state from the database
        await h.play(1.0)
        await h.drained()
    finally:
        await h.stop()
    await h.check_exact()
    assert await h.entries(EntryKind.JACKPOT_RESET) == 1


async def test_a_restart_between_committing_a_hit_and_acknowledging_it(store: LedgerStore) -> None:
    h = FloorHarness(store, (stud(),))
    try:
        await h.start_floor()
        await h.start_controller()
        await h.play(0.5)
        await h.drained()
        assert h.floor is not None and h.poller is not None and h.runtime is not None

        handle = h.poller.tables["stud-1"].handle

        async def writes_never_arrive(*_: object, **__: object) -> None:
            raise LinkDown("the controller died before its write reached the table")

        handle.write = writes_never_arrive  # type: ignore[method-assign]
        handle.acknowledge = writes_never_arrive  # type: ignore[method-assign]
        h.floor.force_hand(GW, 1, 2, HandCategory.ROYAL_FLUSH)
        record = h.floor.play_round_now(GW, 1)
        royal = next(x for x in record.hits if x.hand is HandCategory.ROYAL_FLUSH)
        runtime = h.runtime
        await wait_until(
            lambda: runtime.memory.states["stud"].table("stud-1").last_hit_seq == royal.seq
        )
        await h.stop_controller()
        assert h.sim(h.plans[0], 1).head_hit.seq == royal.seq  # committed, never acknowledged
        await h.start_controller()
        await h.drained()  # the new controller acknowledges it without taking it again
    finally:
        await h.stop()
    await h.check_exact()
    assert await h.entries(EntryKind.AWARD) == 1
    assert await h.entries(EntryKind.JACKPOT_RESET) == 1


async def test_a_table_that_stops_answering_and_comes_back(store: LedgerStore) -> None:
    h = FloorHarness(store, (stud(tables=3),), offline_after_failures=2)
    try:
        await h.start_floor()
        await h.start_controller()
        assert h.floor is not None and h.poller is not None
        h.clock.resume()
        await asyncio.sleep(0.5)
        h.floor.set_silent(GW, 2, True)
        polls_before = h.poller.tables["stud-1"].polls
        await asyncio.sleep(1.5)
        polls_during = h.poller.tables["stud-1"].polls - polls_before
        h.floor.set_silent(GW, 2, False)
        await asyncio.sleep(0.5)
        h.clock.pause()
        await h.drained()
    finally:
        await h.stop()
    await h.check_exact()  # what it counted while silent is credited when it answers again
    assert await h.entries(EntryKind.TABLE_OFFLINE, "stud-2") == 1
    assert await h.entries(EntryKind.TABLE_ONLINE, "stud-2") == 1
    # Its neighbours on the same gateway kept most of their 40 ms poll rate meanwhile (about
    # 22 polls in the 1.5 s measured; about 5 when the silent table held the link every turn).
    assert polls_during >= 10, polls_during


async def test_one_silent_table_on_a_shared_serial_line(store: LedgerStore) -> None:
    line = LinkPlan("stud", GW, GW, tables=4, rate_bp=8000, serial=True)
    h = FloorHarness(store, (line,), offline_after_failures=2)
    try:
        await h.start_floor()
        await h.start_controller()
        assert h.floor is not None and h.poller is not None
        h.clock.resume()
        await asyncio.sleep(0.5)
        before = {t: h.poller.tables[t].polls for t in ("stud-1", "stud-3", "stud-4")}
        await asyncio.sleep(1.0)
        quiet_rate = {t: h.poller.tables[t].polls - before[t] for t in before}
        h.floor.set_silent(GW, 2, True)  # never answers, on the same wire as the others
        before = {t: h.poller.tables[t].polls for t in quiet_rate}
        await asyncio.sleep(1.0)
        silent_rate = {t: h.poller.tables[t].polls - before[t] for t in before}
        tries = h.poller.tables["stud-2"].failures  # every try since it went silent failed
        h.floor.set_silent(GW, 2, False)
        await asyncio.sleep(0.5)
        h.clock.pause()
        await h.drained()
    finally:
        await h.stop()
    await h.check_exact()
    assert await h.entries(EntryKind.TABLE_OFFLINE, "stud-2") == 1
    assert min(quiet_rate.values()) >= 5  # the line really is polled (about 37/s when idle)
    # The silent table costs the wire a timeout (150 ms) per try, and it is tried again only
    # after a backoff (0.5 s, then 1 s, ...): at most three tries in the second it was silent,
    # not one at every turn. Counted in tries, not as a rate, so a busy machine cannot fail it.
    # (Idle, the others keep about 70% of their rate; polled at every turn, about 11%.)
    assert 1 <= tries <= 3, tries
    assert min(silent_rate.values()) >= 3, (quiet_rate, silent_rate)


async def test_readings_that_cannot_be_recorded_are_credited_later(store: LedgerStore) -> None:
    """A commit that fails (the database briefly unwritable) loses nothing and stops no poll."""
    h = FloorHarness(store, (stud(),))
    try:
        await h.start_floor()
        await h.start_controller()
        assert h.runtime is not None and h.poller is not None
        commit = h.runtime.memory.store.commit
        failed = 0

        async def refused(*args: Any, **kwargs: Any) -> Any:
            nonlocal failed
            failed += 1
            raise OSError("disk I/O error")

        h.runtime.memory.store.commit = refused  # type: ignore[method-assign]
        await h.play(0.5)
        # The committer backs off after a failure (0.5 s, 1 s, ...): three tries, not one a poll.
        await wait_until(lambda: failed >= 3)
        h.runtime.memory.store.commit = commit  # type: ignore[method-assign]
        await h.play(0.5)
        await h.drained()
        assert all(not t.done() for t in h.poller._tasks.values())
        poller = h.poller
        # A table learns its reading was recorded at its next poll.
        await wait_until(lambda: all(not tp.commit_failing for tp in poller.tables.values()))
    finally:
        await h.stop()
    await h.check_exact()


async def test_a_hit_the_database_refuses_holds_only_its_table(store: LedgerStore) -> None:
    """A hit whose commit fails while the database takes everything else (here a trigger
    refuses it, as a column refuses a value it cannot hold): only its table is held, told to
    take no side bets, its hit left at the head of its FIFO; the other tables of its link and
    of the floor are recorded on. Once the cause is gone the held reading records, the table is
    released, and nothing was lost."""
    studs = stud()
    draw = LinkPlan("draw", "caribbean_draw", "caribbean_draw", tables=1, rate_bp=7500)
    h = FloorHarness(store, (studs, draw))
    try:
        await h.start_floor()
        await h.start_controller()
        assert h.runtime is not None and h.poller is not None and h.floor is not None
        runtime = h.runtime
        h.poller.per_table.unrecorded_retry_s = 0.2
        await h.play(0.5)
        await h.drained()
        async with store.engine.begin() as conn:
            await refuse_hits_of(conn, "stud-1")
        held = h.sim(studs, 1)
        h.floor.force_hand(GW, 1, 4, HandCategory.FOUR_OF_A_KIND)
        h.floor.play_round_now(GW, 1)
        await wait_until(lambda: "stud-1" in runtime.memory.unrecorded)
        seq = held.hit_fifo[0].seq
        await h.play(1.0)
        others = [h.sim(studs, 2), h.sim(draw, 1)]
        await wait_until(
            lambda: all(
                runtime.memory.states[link].table(tid).credits == sim.credits
                for link, tid, sim in (("stud", "stud-2", others[0]), ("draw", "draw-1", others[1]))
            )
        )
        await wait_until(lambda: held.command_bits & 1 == 1)  # bit0: no side bets taken
        assert [hit.seq for hit in held.hit_fifo][:1] == [seq]  # not acknowledged
        assert runtime.memory.states["stud"].table("stud-1").last_hit_seq != seq
        async with store.engine.begin() as conn:
            await accept_hits_again(conn)
        await wait_until(lambda: "stud-1" not in runtime.memory.unrecorded)
        await h.play(0.5)
        await h.drained()
        assert held.command_bits & 1 == 0
    finally:
        await h.stop()
    await h.check_exact()


async def test_a_meter_beyond_what_a_table_can_show_keeps_its_tables_polled(
    store: LedgerStore,
) -> None:
    """68 IAC 10-1-5(d) gives a meter no ceiling; a table shows at most 2**32 - 1 cents
    (register map v1, 103-104). Above that the table shows its most and is polled on."""
    h = FloorHarness(store, (stud(),))
    try:
        await h.start_floor()
        await h.start_controller()
        assert h.runtime is not None and h.poller is not None
        for _ in range(2):
            await h.runtime.commands.correct(
                "stud", delta_cents=MAX_AMOUNT_CENTS, category="transfer",
                reason="moved from a closed link", requested_by="ann", approved_by="bob",
            )  # fmt: skip
        assert h.runtime.memory.states["stud"].meter_cents > MAX_AMOUNT_CENTS
        tables = [h.sim(h.plans[0], unit) for unit in (1, 2)]
        await wait_until(lambda: all(t.meter_display_cents == MAX_AMOUNT_CENTS for t in tables))
        await h.play(0.5)
        await h.drained()
        assert all(not task.done() for task in h.poller._tasks.values())
    finally:
        await h.stop()
    await h.check_exact()
