"""The heavy work's threads: off the event loop, a few at once, the rest refused."""

from __future__ import annotations

import asyncio
import threading

import pytest

from controller.runtime.workers import Busy, Workers


async def test_steps_run_off_the_loop_and_past_the_queue_jobs_are_refused() -> None:
    workers = Workers(threads=1, waiting=1, retry_after_s=3)
    try:
        async with workers.job() as job:
            assert await job.run(threading.get_ident) != threading.get_ident()
        gate = threading.Event()
        started = asyncio.Event()

        async def slow() -> None:
            async with workers.job() as job:
                started.set()
                await job.run(gate.wait)

        first = asyncio.create_task(slow())
        await started.wait()
        second = asyncio.create_task(slow())  # admitted: waits for its turn
        await asyncio.sleep(0.05)
        assert workers.admitted == 2 and not second.done()
        with pytest.raises(Busy, match="ask again in 3 s") as busy:
            async with workers.job():
                pass
        assert busy.value.retry_after_s == 3

        # A request given up keeps its turn until its step in the thread is done.
        first.cancel()
        await asyncio.sleep(0.05)
        assert workers.admitted == 2
        gate.set()
        await asyncio.gather(first, second, return_exceptions=True)
        assert workers.admitted == 0
    finally:
        workers.close()
    with pytest.raises(Busy):
        async with workers.job():
            pass
