"""The group committer: readings on their way are committed together, none waits forever."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from controller.engine import TableReading
from controller.poller import GroupCommitter


def reading(n: int) -> TableReading:
    return TableReading(table_id=f"t{n}", poll_seq=n, at_us=n, credits=n)


async def test_readings_of_polls_under_way_go_into_one_commit() -> None:
    batches: list[list[str]] = []

    async def apply(readings: Sequence[TableReading]) -> None:
        batches.append([r.table_id for r in readings])

    committer = GroupCommitter(apply, linger_s=30.0)
    committer.start()
    try:
        for _ in range(3):
            committer.expect()
        first = asyncio.create_task(committer.submit(reading(1), expected=True))
        await asyncio.sleep(0.01)  # the committer is awake and lingering for the others
        assert batches == []
        second = asyncio.create_task(committer.submit(reading(2), expected=True))
        await asyncio.sleep(0.01)
        committer.expected_none()  # the third poll failed: nothing more is on its way
        await asyncio.gather(first, second)
        assert batches == [["t1", "t2"]]
    finally:
        await committer.stop()


async def test_an_expected_reading_that_never_comes_delays_a_commit_only_briefly() -> None:
    batches: list[list[str]] = []

    async def apply(readings: Sequence[TableReading]) -> None:
        batches.append([r.table_id for r in readings])

    committer = GroupCommitter(apply, linger_s=0.05)
    committer.start()
    try:
        committer.expect()  # a poll that is stuck on a silent table
        async with asyncio.timeout(10):
            await committer.submit(reading(7))
        assert batches == [["t7"]]
    finally:
        await committer.stop()


async def test_a_failed_commit_reaches_every_waiter_and_the_next_batch_goes_on() -> None:
    calls = 0

    async def apply(readings: Sequence[TableReading]) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise OSError("disk full")

    committer = GroupCommitter(apply, linger_s=0.0)
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
