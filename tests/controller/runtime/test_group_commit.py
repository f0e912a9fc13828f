"""The group committer: readings on their way are committed together, none waits forever."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from controller.core.reducer import TableReading
from controller.runtime.group_commit import GroupCommitter, NotRecording, commit_linger_s
from controller.storage.errors import StaleState


def reading(n: int) -> TableReading:
    return TableReading(table_id=f"t{n}", poll_seq=n, at_us=n, credits=n)


async def test_readings_within_the_window_go_into_one_commit() -> None:
    batches: list[list[str]] = []

    async def apply(readings: Sequence[TableReading]) -> None:
        batches.append([r.table_id for r in readings])

    committer = GroupCommitter(apply, linger_s=0.2)
    committer.start()
    try:
        first = asyncio.create_task(committer.submit(reading(1)))
        await asyncio.sleep(0)
        second = asyncio.create_task(committer.submit(reading(2)))
        await asyncio.gather(first, second)
        await committer.submit(reading(3))  # a new window
        assert batches == [["t1", "t2"], ["t3"]]
    finally:
        await committer.stop()


def test_the_window_is_a_small_share_of_the_shortest_poll_interval() -> None:
    assert commit_linger_s([1000, 1000]) == 0.050
    assert commit_linger_s([250, 1000]) == 0.0125
    assert commit_linger_s([0]) == 0.005  # a serial line polled as fast as it goes
    assert commit_linger_s([60_000]) == 0.050


async def test_a_failed_commit_reaches_every_waiter_and_the_next_batch_goes_on() -> None:
    calls = 0

    async def apply(readings: Sequence[TableReading]) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise OSError("disk full")

    committer = GroupCommitter(apply, linger_s=0.0, retry_min_s=0.0)
    committer.start()
    try:
        results = await asyncio.gather(
            committer.submit(reading(1)), committer.submit(reading(2)), return_exceptions=True
        )
        assert all(isinstance(r, OSError) for r in results)
        await committer.submit(reading(3))
        assert calls == 2
    finally:
        await committer.stop()


async def test_after_a_failed_commit_the_database_is_left_alone_until_the_retry_time() -> None:
    calls = 0
    down = True

    async def apply(readings: Sequence[TableReading]) -> None:
        nonlocal calls
        calls += 1
        if down:
            raise OSError("connection refused")

    committer = GroupCommitter(apply, linger_s=0.0, retry_min_s=0.3, retry_max_s=0.3)
    committer.start()
    try:
        with pytest.raises(OSError):
            await committer.submit(reading(1))
        assert committer.problem == "OSError: connection refused"
        # Within the backoff: refused at once, the database not tried.
        with pytest.raises(NotRecording):
            await committer.submit(reading(2))
        assert calls == 1
        down = False
        async with asyncio.timeout(10):
            while True:
                try:
                    await committer.submit(reading(3))
                    break
                except NotRecording:
                    await asyncio.sleep(0.05)
        assert calls == 2
        assert committer.problem is None and committer.failing_since is None
    finally:
        await committer.stop()


async def test_a_link_moved_on_by_another_process_is_no_outage() -> None:
    calls = 0

    async def apply(readings: Sequence[TableReading]) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise StaleState("link stud: its history moved on since it was loaded")

    committer = GroupCommitter(apply, linger_s=0.0, retry_min_s=30.0, retry_max_s=30.0)
    committer.start()
    try:
        with pytest.raises(StaleState):
            await committer.submit(reading(1))
        assert committer.failing_since is None and committer.problem is None
        await committer.submit(reading(2))  # tried at once: the database answers
        assert calls == 2
    finally:
        await committer.stop()


async def test_stopping_commits_what_was_handed_in() -> None:
    batches: list[list[str]] = []

    async def apply(readings: Sequence[TableReading]) -> None:
        batches.append([r.table_id for r in readings])

    committer = GroupCommitter(apply, linger_s=30.0)  # a window far longer than the test
    committer.start()
    handed = committer.submit_nowait(reading(4))
    await asyncio.sleep(0)
    await committer.stop()
    assert handed.done() and not handed.cancelled() and handed.exception() is None
    assert batches == [["t4"]]
