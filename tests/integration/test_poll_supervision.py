"""No table stops silently: whatever ends a poll of a table on a real serial line (the port
refusing its settings, an error the adapter does not know, registers that cannot be decoded),
the table is marked offline with the reason, it is said once, and polling goes on with a
backoff until the table answers again."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

import link_adapters.profile_decoding as profile_decoding
from controller.core.hands import HandCategory
from controller.core.reducer import EntryKind
from controller.runtime import readiness
from controller.runtime.clock import SystemClock
from controller.storage.store import LedgerStore
from link_adapters.reading import TableRegisters
from tests.integration.harness import FloorHarness, LinkPlan, wait_until
from tests.serial_line import pty_refuses_parity

GW = "caribbean_stud"
POLLER_LOG = "controller.runtime.poller"


def line(tables: int, **bus: Any) -> LinkPlan:
    return LinkPlan("stud", GW, GW, tables=tables, rate_bp=8000, serial=True, bus_settings=bus)


@asynccontextmanager
async def polled_line(
    store: LedgerStore, plan: LinkPlan, caplog: pytest.LogCaptureFixture, **start: Any
) -> AsyncIterator[FloorHarness]:
    """``plan``'s tables on a pseudo-terminal, polled by a controller that takes a table
    offline after two failed polls, what it says captured from INFO up; stopped at the end
    (the harness's records stay readable)."""
    h = FloorHarness(store, (plan,), offline_after_failures=2)
    caplog.set_level(logging.INFO)
    try:
        await h.start_floor()
        await h.start_controller(**start)
        assert h.poller is not None
        yield h
    finally:
        await h.stop()


def device(h: FloorHarness) -> str:
    assert h.config is not None
    port = h.config.buses["stud"].params.port  # type: ignore[union-attr]
    assert isinstance(port, str)
    return port


def offline(h: FloorHarness, table_id: str) -> bool:
    assert h.runtime is not None
    return not h.runtime.memory.states["stud"].table(table_id).online


def online(h: FloorHarness, table_id: str) -> bool:
    assert h.runtime is not None
    ts = h.runtime.memory.states["stud"].table(table_id)
    return ts.online and ts.credits is not None


def polling(h: FloorHarness, table_id: str) -> bool:
    assert h.poller is not None
    task = h.poller._tasks.get(table_id)
    return task is not None and not task.done()


@dataclass
class Polling:
    """What ``/readyz`` reads of a controller that polls the harness's floor."""

    h: FloorHarness
    started: bool = True
    link_locks: None = None
    change_feed: None = None
    self_check: None = None
    clock: SystemClock = field(default_factory=SystemClock)

    @property
    def engine(self) -> Any:
        return self.h.store.engine

    @property
    def runtime(self) -> Any:
        return self.h.runtime

    @property
    def poller(self) -> Any:
        return self.h.poller

    def standing_by(self, link_id: str) -> bool:
        return False


def said(caplog: pytest.LogCaptureFixture, table_id: str, *words: str) -> int:
    """How many lines of the poller's log name the table and every one of ``words``."""
    return sum(
        1
        for r in caplog.records
        if r.name == POLLER_LOG
        and r.levelno >= logging.WARNING
        and f"table {table_id}" in r.getMessage()
        and all(w in r.getMessage() for w in words)
    )


async def test_a_serial_port_that_refuses_its_settings(
    store: LedgerStore, caplog: pytest.LogCaptureFixture
) -> None:
    # The operating system refuses the port's settings: a pseudo-terminal takes no parity bit
    # (EINVAL from tcsetattr, which pyserial lets out as termios.error), as an adapter that
    # cannot do a parity or baud rate refuses it.
    if not pty_refuses_parity():
        pytest.skip("this system's pseudo-terminals take a parity bit")
    async with polled_line(store, line(2, parity="E"), caplog, baselines=False) as h:
        port = device(h)
        assert h.poller is not None and h.runtime is not None
        await wait_until(lambda: offline(h, "stud-1") and offline(h, "stud-2"), 30)
        tp = h.poller.tables["stud-1"]
        await wait_until(lambda: tp.failures >= 4, 30)  # tried again, with a backoff
        assert polling(h, "stud-1") and polling(h, "stud-2")
        for table_id in ("stud-1", "stud-2"):
            problem = h.poller.tables[table_id].problem
            assert problem is not None and port in problem and "parity E" in problem, problem
            assert h.runtime.memory.states["stud"].table(table_id).credits is None
        assert tp.failed_by.get("link_down", 0) >= 4 and "unknown" not in tp.failed_by
        problems = await readiness.problems(Polling(h))  # type: ignore[arg-type]
        assert "every table is offline" in problems["link stud"], problems
    assert await h.entries(EntryKind.TABLE_OFFLINE, "stud-1") == 1
    # Named once for each table, with the port and the setting, not at every try.
    assert said(caplog, "stud-1", "offline", port, "parity E") == 1
    assert said(caplog, "stud-2", "offline", port, "parity E") == 1


async def test_an_error_the_adapter_does_not_know(
    store: LedgerStore, caplog: pytest.LogCaptureFixture
) -> None:
    async with polled_line(store, line(3), caplog) as h:
        assert h.poller is not None
        handle = h.poller.tables["stud-2"].handle
        read, exchange = handle.read, handle.exchange

        class StackSurprise(Exception):
            """Something under the adapter raised what it does not map."""

        async def surprising_read() -> TableRegisters:
            await read()  # the request really goes over the line
            raise StackSurprise("the serial stack lost its mind")

        async def surprising_exchange(**kwargs: Any) -> TableRegisters:
            await exchange(**kwargs)
            raise StackSurprise("the serial stack lost its mind")

        handle.read = surprising_read  # type: ignore[method-assign]
        handle.exchange = surprising_exchange  # type: ignore[method-assign]
        h.clock.resume()
        await wait_until(lambda: offline(h, "stud-2"), 30)
        tp = h.poller.tables["stud-2"]
        await wait_until(lambda: tp.failures >= 4, 30)
        assert polling(h, "stud-2")
        assert tp.problem is not None and "StackSurprise" in tp.problem, tp.problem
        assert "the serial stack lost its mind" in tp.problem
        # Its neighbours on the line are polled as before.
        before = h.poller.tables["stud-1"].polls
        await asyncio.sleep(0.5)
        assert h.poller.tables["stud-1"].polls - before >= 3
        handle.read, handle.exchange = read, exchange  # type: ignore[method-assign]
        await wait_until(lambda: online(h, "stud-2"), 30)
        h.clock.pause()
        await h.drained()
    await h.check_exact()
    assert await h.entries(EntryKind.TABLE_OFFLINE, "stud-2") == 1
    assert await h.entries(EntryKind.TABLE_ONLINE, "stud-2") == 1
    assert said(caplog, "stud-2", "StackSurprise", "the serial stack lost its mind") == 1


async def test_registers_the_profile_cannot_decode(
    store: LedgerStore, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with polled_line(store, line(2), caplog) as h:
        assert h.poller is not None and h.floor is not None

        def undecodable(code: int, version: Any = 1) -> Any:
            # A hand code the profile's table of codes has no entry for, looked up as a key.
            raise KeyError(f"hand code {code}")

        monkeypatch.setattr(profile_decoding, "hit_hand", undecodable)
        # A round dealt before the table takes side bets has no hit to decode.
        await h.taking_bets(h.plans[0], 2)
        h.floor.force_hand(GW, 2, 3, HandCategory.ROYAL_FLUSH)
        h.floor.play_round_now(GW, 2)
        await wait_until(lambda: offline(h, "stud-2"), 30)
        tp = h.poller.tables["stud-2"]
        await wait_until(lambda: tp.failures >= 4, 30)
        assert polling(h, "stud-2") and polling(h, "stud-1")
        assert tp.problem is not None and "KeyError" in tp.problem, tp.problem
        assert h.sim(h.plans[0], 2).hit_fifo  # the hit waits at the table, not acknowledged
        problems = await readiness.problems(Polling(h))  # type: ignore[arg-type]
        assert "KeyError: 'hand code" in problems["table stud-2"], problems
        monkeypatch.undo()
        await wait_until(lambda: online(h, "stud-2"), 30)
        problems = await readiness.problems(Polling(h))  # type: ignore[arg-type]
        assert "table stud-2" not in problems, problems
        await h.drained()
    await h.check_exact()  # the hit taken once, once it could be read
    assert await h.entries(EntryKind.JACKPOT_RESET) == 1
    assert said(caplog, "stud-2", "KeyError", "hand code") == 1


async def test_a_fault_after_the_table_answered(
    store: LedgerStore, caplog: pytest.LogCaptureFixture
) -> None:
    # The table answers at every poll and the poll still fails after: the polls it ends in a
    # row are counted all the same, so the table goes offline rather than flapping unseen.
    async with polled_line(store, line(2), caplog) as h:
        assert h.poller is not None and h.poller.per_table.committer is not None
        committer = h.poller.per_table.committer
        submit = committer.submit_nowait

        def refusing(reading: Any) -> Any:
            if reading.table_id == "stud-2":
                raise RuntimeError("the group commit is not taking readings")
            return submit(reading)

        committer.submit_nowait = refusing  # type: ignore[method-assign]
        h.clock.resume()
        await wait_until(lambda: offline(h, "stud-2"), 30)
        tp = h.poller.tables["stud-2"]
        await wait_until(lambda: tp.faults >= 4, 30)
        assert polling(h, "stud-2") and tp.failures >= 4
        assert tp.problem == "RuntimeError: the group commit is not taking readings"
        assert online(h, "stud-1")
        committer.submit_nowait = submit  # type: ignore[method-assign]
        await wait_until(lambda: online(h, "stud-2"), 30)
        assert tp.problem is None and tp.faults == 0
        h.clock.pause()
        await h.drained()
    await h.check_exact()
    assert await h.entries(EntryKind.TABLE_OFFLINE, "stud-2") == 1
    assert said(caplog, "stud-2", "the group commit is not taking readings") == 1
