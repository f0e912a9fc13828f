"""The audit page's chart opens on data, in Debian's Chromium: a floor whose rounds were
played three days ago (its clock set back, then forward to now) opens on the day up to the
link's newest entry, says so, and draws the meter there rather than an empty last day."""

from __future__ import annotations

import time
from pathlib import Path

from playwright.async_api import Browser, expect

from controller.core.games import Game
from controller.roles import Role
from controller.runtime.clock import SystemClock
from tests.app.browser import pytestmark, shot, signed_in
from tests.app.floor import web_floor
from tests.integration.harness import wait_until

__all__ = ["pytestmark"]

DAY_US = 86_400 * 1_000_000
STUD = {"stud": (Game.CARIBBEAN_STUD, 1)}


async def test_the_chart_opens_on_the_links_latest_activity(
    tmp_path: Path, browser: Browser
) -> None:
    behind = [3 * DAY_US]
    clock = SystemClock(wall_us=lambda: time.time_ns() // 1_000 - behind[0])
    async with (
        web_floor(tmp_path, links=STUD, clock=clock, sim_autodeal=False) as wf,
    ):
        state = wf.service.runtime.memory.states["stud"]
        reset_units = state.meter_units
        while wf.service.runtime.memory.states["stud"].meter_units == reset_units:
            wf.play_round_now("stud", 1)
            await wait_until(
                lambda: wf.service.table_status("stud-1").rounds == wf.table("stud", 1).rounds
            )
        played_us = wf.service.runtime.memory.states["stud"].last_at_us
        # The floor's clock catches up with the wall clock: the rounds are three days old.
        behind[0] = 0
        assert wf.service.clock.now_us() - played_us > 2 * DAY_US

        page = await signed_in(browser, wf, Role.AUDITOR, "/audit")
        note = page.locator("#window-note")
        await expect(note).to_contain_text("No entries in the last 24 hours")
        await expect(note).to_contain_text("most recent activity")
        line = page.locator("#chart polyline.line")
        await expect(line).to_have_count(1)
        assert int(await line.get_attribute("data-points") or 0) >= 1
        await expect(page.locator("#chart")).not_to_contain_text("no meter entries")
        # The period chosen is in the inputs, ending just after the newest entry.
        until_ms = await page.evaluate("new Date(document.getElementById('until').value).getTime()")
        assert 0 <= until_ms * 1000 - played_us <= 2 * 60 * 1_000_000, (until_ms, played_us)
        await shot(page, "audit-window-latest-activity")

        # A period chosen by hand is shown as chosen, and said so.
        await page.evaluate(
            """() => {
                const local = (ms) => new Date(ms - new Date().getTimezoneOffset() * 60000)
                    .toISOString().slice(0, 19);
                document.getElementById("since").value = local(Date.now() - 3600000);
                document.getElementById("until").value = local(Date.now());
            }"""
        )
        await page.click("#period button[type=submit]")
        await expect(page.locator("#chart")).to_contain_text("no meter entries")
        await expect(note).not_to_contain_text("most recent activity")
        await page.click("#latest")
        await expect(line).to_have_count(1)
        await expect(note).to_contain_text("most recent activity")
