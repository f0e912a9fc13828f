"""The surveillance page in Debian's Chromium, on a floor whose table stud-1 really dealt three
royal flushes: the floor ranked with stud-1 first and alarming, the alert's sentence, the
table's royal flush row alarming and its chart drawn inline; the hits behind the alert for
those who read them; the chosen table and the scroll kept through a refresh; the alerts closed
since shown on asking; any other role told the page is not theirs."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
from playwright.async_api import Browser, Page, expect

from controller.roles import Role
from link_adapters.simulator.clock import VirtualClock
from tests.app.auth import headers_for
from tests.app.browser import pytestmark, shot, signed_in
from tests.app.floor import WebFloor, step, stepped_floor
from tests.app.test_surveillance import LINKS, deal_royal, watch

__all__ = ["pytestmark"]


async def _picture(page: Page, tmp_path: Path) -> None:
    """The whole page, kept with the test's files and with the other pages' pictures."""
    (tmp_path / "surveillance.png").write_bytes(await page.screenshot(full_page=True))
    await shot(page, "surveillance-alert")


async def _on_screen(page: Page, selector: str) -> float:
    """Where ``selector``'s top is on the screen: what a person sees stay or move."""
    top: float = await page.locator(selector).evaluate("e => e.getBoundingClientRect().top")
    return top


async def _alerting(wf: WebFloor, clock: VirtualClock) -> None:
    """An honest start, then three royal flushes at stud-1, and a look."""
    for _ in range(20):
        await step(wf, clock, 0.5)
    for seat in (1, 2, 3):
        await deal_royal(wf, clock, seat)
    await watch(wf).step(look_now=True)


async def test_surveillance_sees_stud_1_out_of_line_and_its_royal_flushes(
    tmp_path: Path, browser: Browser
) -> None:
    clock = VirtualClock()
    async with (
        stepped_floor(tmp_path, clock, links=LINKS) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        await _alerting(wf, clock)
        eye = await headers_for(wf, Role.SURVEILLANCE)
        alerts = (await http.get("/api/v1/surveillance/alerts", headers=eye)).json()
        (day,) = [a for a in alerts if a["scope"] == "table" and a["window"] == "gaming_day"]
        floor = (await http.get("/api/v1/surveillance/floor", headers=eye)).json()

        page = await signed_in(browser, wf, Role.SURVEILLANCE, "/surveillance")
        ranks = page.locator("#floor li.rank")
        await expect(ranks.first).to_have_attribute("data-table", "stud-1")
        await expect(ranks.first).to_have_class(re.compile(r"\balarming\b"))
        await expect(ranks.first.locator(".badge")).to_have_text("ALERT")
        await expect(ranks.first).to_contain_text("Royal flush: 3 seen")
        await expect(ranks.first).to_contain_text(floor["tables"][0]["worst"]["luck"])
        await expect(ranks.nth(1)).to_have_attribute("data-table", "stud-2")
        threshold = page.locator("#threshold")
        await expect(threshold).to_contain_text(
            f"An alert is raised at {floor['threshold_luck'].removesuffix(' by luck')} per test"
        )
        await expect(threshold).to_contain_text(
            f"about 0.1 false alarms a month over {floor['tests_per_month']:,} tests"
        )

        # The alert, in its own words, with the window it was seen in.
        row = page.locator(f'#alerts li.alert-row[data-alert="{day["alert_id"]}"]')
        await expect(row.locator(".text")).to_have_text(day["text"])
        await expect(row.locator(".window")).to_have_text("Gaming day")
        await expect(page.locator("#alert-count")).to_have_text(str(len(alerts)))

        # The table: its royal flush row alarming in every window, the chart inline.
        await ranks.first.locator("button").click()
        await expect(page.locator("#table-title")).to_contain_text("stud-1")
        royal = page.locator('#lines tr[data-line="ROYAL_FLUSH"]')
        await expect(royal).to_have_class(re.compile(r"\balarming\b"))
        cell = royal.locator('td[data-window="gaming_day"]')
        await expect(cell).to_have_class(re.compile(r"\balarm\b"))
        await expect(cell.locator(".seen")).to_have_text("3")
        await expect(page.locator('#lines tr[data-line="FLUSH"] td.alarm')).to_have_count(0)
        await expect(page.locator('#lines tr[data-line="late_bets"]')).to_be_visible()
        for seat in ("1", "2", "3"):
            seen = page.locator(f'#seats tr[data-seat="{seat}"] td.cell .seen').first
            await expect(seen).to_have_text("1")
        chart = page.locator('#charts figure[data-line="ROYAL_FLUSH"] svg')
        await expect(chart).to_be_visible()
        await expect(chart).to_contain_text("3 seen")
        await expect(chart.locator("polyline")).to_have_count(2)
        assert (await chart.bounding_box() or {}).get("width", 0) > 300

        # The hold reports: the gaming day's from its start, fetched with the token.
        hold = page.locator('#hold-reports button[data-period="gaming_day"][data-format="csv"]')
        href = await hold.get_attribute("data-href") or ""
        assert href.startswith("/api/v1/surveillance/hold-report.csv?"), href
        gaming_day = next(w for w in floor["windows"] if w["window"] == "gaming_day")
        assert parse_qs(urlsplit(href).query)["since"] == [gaming_day["since"]]
        async with page.expect_request(lambda r: "/hold-report.csv" in r.url) as asked:
            await hold.click()
        assert (await asked.value).headers["authorization"].startswith("Bearer ")

        await _picture(page, tmp_path)

        # The hits behind the alert: the three royal flushes, with their cards.
        await row.locator("button.behind-hits").click()
        await expect(row.locator(".behind.hits tr.this-line")).to_have_count(3)

        # Another table chosen, the screen scrolled: a refresh keeps both, and the panel open.
        await page.locator('#floor li[data-table="stud-2"] button').click()
        await expect(page.locator("#table-title")).to_contain_text("stud-2")
        await page.locator("#seats").scroll_into_view_if_needed()
        before = await _on_screen(page, "#seats")
        async with page.expect_response(lambda r: r.url.endswith("/surveillance/floor")):
            await page.evaluate("refresh()")
        await expect(page.locator("#table-title")).to_contain_text("stud-2")
        await expect(page.locator('#floor li[data-table="stud-2"]')).to_have_class(
            re.compile(r"\bchosen\b")
        )
        await expect(row.locator(".behind.hits")).to_be_visible()
        assert await _on_screen(page, "#seats") == before
        await page.close()

        # An auditor reads the hits behind it: the three royal flushes, with their cards.
        page = await signed_in(browser, wf, Role.AUDITOR, "/surveillance")
        row = page.locator(f'#alerts li.alert-row[data-alert="{day["alert_id"]}"]')
        await row.locator("button.behind-hits").click()
        hits = row.locator(".behind.hits tr.this-line")
        await expect(hits).to_have_count(3)
        await expect(hits.first.locator(".card")).to_have_count(5)
        await row.locator("button.behind-history").click()
        await expect(row.locator(".behind.history")).to_contain_text("jackpot award")

        # A day on, the shift's and the gaming day's alerts close: shown when asked for.
        later = wf.service.now_us() + 26 * 3600 * 1_000_000
        watch(wf).now_us = lambda: later
        await watch(wf).step(look_now=True)
        await page.check("#show-closed")
        closed = page.locator('#closed-alerts article.alert.closed[data-scope="table"]')
        await expect(closed.locator(".badge")).to_have_text("CLOSED")
        await expect(closed.locator("li.alert-row .window")).to_have_text(["Shift", "Gaming day"])
        await page.close()


async def test_a_dealer_is_told_the_page_is_not_theirs(tmp_path: Path, browser: Browser) -> None:
    clock = VirtualClock()
    async with stepped_floor(tmp_path, clock, links=LINKS) as wf:
        page = await signed_in(browser, wf, Role.DEALER, "/surveillance")
        notice = page.get_by_role("alert").filter(has_text="This page is for surveillance")
        await expect(notice).to_contain_text("a dealer")
        await expect(page.locator("#work")).to_be_hidden()
        await shot(page, "surveillance-not-allowed")
