"""The floor display in a real browser (Debian's Chromium driven by Playwright).

A floor of simulated tables is polled by the real controller; the page at
``/display/{link_id}`` must count up as the tables bet, show a royal flush's won amount and
winning table at once and then alternate with the reset amount, and say plainly that it is
not live when the tables stop answering. Screenshots are kept in ``test-artifacts/``.
"""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, Page

from controller.core.hands import HandCategory
from tests.app.browser import pytestmark, shot
from tests.app.floor import web_floor
from tests.integration.harness import wait_until

__all__ = ["pytestmark"]

WAIT_MS = 30_000


async def open_display(browser: Browser, url: str) -> Page:
    page = await browser.new_page(viewport={"width": 1920, "height": 1080})
    await page.goto(url)
    await page.wait_for_function("() => document.body.dataset.live === 'live'", timeout=WAIT_MS)
    return page


async def shown_cents(page: Page) -> int:
    return int(await page.get_attribute("#amount", "data-cents") or "0")


async def screenshot(page: Page, name: str) -> None:
    await shot(page, f"display-{name}")


def dollars(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"


async def test_the_display_counts_up_as_the_tables_bet(tmp_path: Path, browser: Browser) -> None:
    async with web_floor(tmp_path, rounds_per_second=4.0) as wf:
        page = await open_display(browser, f"{wf.base_url}/display/stud")
        assert await page.text_content("#game") == "Caribbean Stud Poker"
        first = await shown_cents(page)
        assert first >= 100_000
        await screenshot(page, "live")
        # Count-ups are drawn frame by frame: wait for an amount between two targets.
        await page.wait_for_function(
            """() => {
                const a = document.getElementById('amount');
                window.__between = window.__between
                    || (a.dataset.target !== a.dataset.cents ? Number(a.dataset.cents) : 0);
                return window.__between > 0;
            }""",
            timeout=WAIT_MS,
            polling="raf",
        )
        await page.wait_for_function(
            f"() => Number(document.getElementById('amount').dataset.cents) > {first + 500}",
            timeout=WAIT_MS,
        )
        later = await shown_cents(page)
        assert later > first
        text = await page.text_content("#amount")
        assert text is not None and text.startswith("$")
        assert await page.get_attribute("body", "data-mode") == "live"
        await screenshot(page, "counted-up")


async def test_a_royal_flush_shows_the_win_then_alternates_with_the_reset_amount(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path, rounds_per_second=4.0) as wf:
        page = await open_display(browser, f"{wf.base_url}/display/stud")
        wf.table("stud", 2).force_hand(4, HandCategory.ROYAL_FLUSH)
        await page.wait_for_function("() => document.body.dataset.mode === 'won'", timeout=WAIT_MS)
        win = wf.service.runtime.memory.states["stud"].last_win
        assert win is not None and win.table_id == "stud-2"
        assert await page.text_content("#amount") == dollars(win.won_cents)
        assert await page.text_content("#headline") == "Jackpot won!"
        detail = await page.text_content("#detail") or ""
        assert "stud-2" in detail
        assert "seat 4" in detail and "Royal flush" in detail
        await screenshot(page, "won")

        await page.wait_for_function(
            "() => document.body.dataset.mode === 'reset'", timeout=WAIT_MS
        )
        # The link plays on from its reset amount while the winning table waits.
        reset_shown = await shown_cents(page)
        assert 100_000 <= reset_shown <= wf.service.runtime.memory.states["stud"].meter_cents
        assert await page.text_content("#headline") == "Jackpot now"
        assert dollars(win.won_cents) in (await page.text_content("#detail") or "")
        await screenshot(page, "reset")

        await page.wait_for_function("() => document.body.dataset.mode === 'won'", timeout=WAIT_MS)
        assert await page.text_content("#amount") == dollars(win.won_cents)
        # The winning table is held for a technician: the feed says so, the page does not.
        assert "technician" not in (await page.inner_text("body")).lower()
        await screenshot(page, "won-again")


async def test_the_display_says_it_is_not_live_when_the_tables_stop(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path) as wf:
        page = await open_display(browser, f"{wf.base_url}/display/lir")
        assert await page.is_hidden("#banner")
        await wf.sim.stop()
        await page.wait_for_function(
            "() => document.body.dataset.live === 'stale'", timeout=WAIT_MS
        )
        assert await page.is_visible("#banner")
        assert "NOT LIVE" in (await page.text_content("#banner") or "")
        # The amount fades out (a CSS transition) rather than staying as if live.
        await page.wait_for_function(
            "() => Number(getComputedStyle(document.getElementById('amount')).opacity) < 0.5",
            timeout=WAIT_MS,
        )
        # Which tables stopped is for the technicians; patrons read only that it is not live.
        await wait_until(
            lambda: all(s.state == "offline" for s in wf.service.table_statuses("lir"))
        )
        assert "offline" not in (await page.inner_text("body")).lower()
        await screenshot(page, "stale")


async def test_the_display_reconnects_after_the_connection_drops(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path) as wf:
        page = await open_display(browser, f"{wf.base_url}/display/stud")
        seq = int(await page.get_attribute("body", "data-seq") or "0")
        # The network goes away: nothing arrives, so the page must say it is not live.
        await page.context.set_offline(True)
        await page.wait_for_function(
            "() => document.body.dataset.live === 'stale'", timeout=WAIT_MS
        )
        await page.context.set_offline(False)
        await page.wait_for_function(
            f"() => document.body.dataset.live === 'live' && Number(document.body.dataset.seq) > {seq}",
            timeout=WAIT_MS,
        )
