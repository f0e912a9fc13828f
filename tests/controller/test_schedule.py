"""The service's waits on its schedules: a wait leaves no task of its own behind it."""

from __future__ import annotations

import asyncio

from controller.schedule import ScheduledJob, set_within


async def test_a_wait_is_set_or_times_out_in_the_callers_task() -> None:
    event = asyncio.Event()
    before = asyncio.all_tasks()
    waiting = asyncio.create_task(set_within(event, 30.0))
    await asyncio.sleep(0.05)
    # Only the waiter itself: nothing waits on the event in a task of its own.
    assert asyncio.all_tasks() - before == {waiting}
    event.set()
    assert await waiting is True
    assert await set_within(asyncio.Event(), 0.01) is False


class Counting(ScheduledJob):
    name = "counting"

    def __init__(self) -> None:
        super().__init__(first_run_s=0.01, interval_s=0.01)
        self.runs = 0
        self.thrice = asyncio.Event()

    async def run_once(self) -> None:
        self.runs += 1
        if self.runs == 3:
            self.thrice.set()


async def test_a_job_runs_on_its_schedule_and_stops_with_no_task_left() -> None:
    before = asyncio.all_tasks()
    job = Counting()
    job.start()
    await asyncio.wait_for(job.thrice.wait(), 10)
    # The schedule's own task, and no other between its runs.
    assert len(asyncio.all_tasks() - before) == 1
    await job.stop()
    assert not {t for t in asyncio.all_tasks() - before if not t.done()}
