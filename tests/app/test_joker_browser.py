"""/tech and /audit in Debian's Chromium while five aces made with the joker hold a Pai Gow
Poker table: the jackpot, the tables and the filters are shown, the joker is the card
"Joker" (never "J?"); verifying, the hand pay and the reset refresh the page and another open
tab; a list that cannot be loaded says so where it stands and keeps nothing of another link
under its heading. Screenshots go to test-artifacts/."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.async_api import Browser, Page, Route, expect

from controller.roles import Role
from tests.app.browser import pytestmark, shot, signed_in
from tests.app.joker_floor import joker_floor

__all__ = ["pytestmark"]

FIVE_ACES_FACES = ["A♠", "A♥", "A♦", "A♣", "Joker", "2♣", "3♦"]


async def _fail(route: Route) -> None:
    """The server's answer to a request it could not serve."""
    await route.fulfill(
        status=500,
        content_type="application/json",
        body='{"detail": "internal error: the request could not be answered"}',
    )


async def _faces(page: Page, selector: str) -> list[str]:
    return [t.strip() for t in await page.locator(selector).all_inner_texts()]


async def test_tech_shows_the_joker_and_refreshes_after_each_step(
    tmp_path: Path, browser: Browser
) -> None:
    async with joker_floor(tmp_path) as jf:
        five = jf.five_aces.hit_id
        page = await signed_in(browser, jf.wf, Role.TECHNICIAN, "/tech")
        card = page.locator(f'#holding [data-hit="{five}"]')
        await expect(card).to_be_visible()
        await expect(card.locator(".hand")).to_have_text("Five aces")
        await expect(card.locator(".card")).to_have_count(7)
        assert await _faces(page, f'#holding [data-hit="{five}"] .card') == FIVE_ACES_FACES
        await expect(card.locator(".card.joker")).to_have_attribute("title", "the joker")
        await expect(page.locator("#holding")).not_to_contain_text("?")
        await expect(page.locator("#holding-count")).to_have_text("2")  # and the royal
        await expect(page.locator('#tables tr[data-table="paigow-1"]')).to_contain_text(five)
        await expect(page.locator("#filter-link option")).to_have_text(
            ["every link", "caribbean", "paigow"]
        )
        await page.click("#quiet summary")
        four = page.locator(f'#quiet-log tr[data-hit="{jf.four_aces.hit_id}"]')
        await expect(four).to_contain_text("Four of a kind")
        await shot(page, "joker-tech-1-five-aces-hold-the-table")

        # A second tab, left open, follows what the first one does.
        other = await signed_in(browser, jf.wf, Role.TECHNICIAN, "/tech")
        await expect(other.locator(f'#holding [data-hit="{five}"]')).to_be_visible()

        await card.locator("button.verify").click()
        await expect(card.locator(".result.ok")).to_contain_text(f"Hit {five} verified")
        await expect(card.locator(".steps")).to_contain_text("✓ Verified by")
        await card.locator("button.pay").click()
        await expect(card.locator(".result.ok")).to_contain_text("Hand pay of $")
        await expect(card.locator(".steps")).to_contain_text(
            re.compile(r"✓ Hand pay of \$[\d,.]+ recorded")
        )
        await expect(other.locator(f'#holding [data-hit="{five}"] .steps')).to_contain_text(
            re.compile(r"✓ Hand pay of \$[\d,.]+ recorded")
        )
        await card.locator("button.reset-here").click()
        await expect(page.locator(f'#holding [data-hit="{five}"]')).to_have_count(0)
        await expect(page.locator("#holding-count")).to_have_text("1")
        await expect(page.locator("#message")).to_contain_text("Table paigow-1 reset")
        await expect(other.locator(f'#holding [data-hit="{five}"]')).to_have_count(0)
        await expect(other.locator("#holding-count")).to_have_text("1")
        await shot(page, "joker-tech-2-after-the-reset")

        # The work list of one link fails to load: the error stands where the list was, and
        # the other link's jackpot is not left under the heading; the tables still show.
        await page.route(re.compile(r".*/api/v1/hits/work\?.*link=caribbean.*"), _fail)
        await page.select_option("#filter-link", "caribbean")
        error = page.locator("#holding .load-error")
        await expect(error).to_have_text(
            "Could not load the hits waiting for a technician: internal error: the request "
            "could not be answered"
        )
        await expect(page.locator("#holding .hit")).to_have_count(0)
        await expect(page.locator("#holding-count")).to_have_text("?")
        await expect(page.locator('#tables tr[data-table="caribbean-1"]')).to_be_visible()
        await shot(page, "joker-tech-3-a-list-that-failed")
        await page.unroute(re.compile(r".*/api/v1/hits/work\?.*link=caribbean.*"))
        await expect(page.locator(f'#holding [data-hit="{jf.royal.hit_id}"]')).to_be_visible()
        await expect(error).to_have_count(0)


async def test_audit_shows_the_joker_and_no_other_links_hits(
    tmp_path: Path, browser: Browser
) -> None:
    async with joker_floor(tmp_path) as jf:
        page = await signed_in(browser, jf.wf, Role.AUDITOR, "/audit")
        hits = page.locator("#hits tbody")
        # The page opens on the first link with a meter: Caribbean Stud.
        await expect(page.locator("#link")).to_have_value("caribbean")
        await expect(hits.locator("tr", has_text=jf.royal.hit_id)).to_be_visible()

        await page.select_option("#link", "paigow")
        await page.click("#period button[type=submit]")
        await expect(page.locator("#hits-link")).to_contain_text("paigow")
        row = hits.locator("tr", has_text=jf.five_aces.hit_id)
        await expect(row).to_be_visible()
        assert await _faces(page, f"#hits tbody tr:has-text('{jf.five_aces.hit_id}') .card") == (
            FIVE_ACES_FACES
        )
        await expect(hits).not_to_contain_text("?")
        await expect(hits.locator("tr", has_text=jf.royal.hit_id)).to_have_count(0)
        await shot(page, "joker-audit-1-paigow-hits")

        # Back to Caribbean, then Pai Gow's hits fail to load: the error is shown under the
        # heading, and none of Caribbean's hits stay there.
        await page.select_option("#link", "caribbean")
        await page.click("#period button[type=submit]")
        await expect(hits.locator("tr", has_text=jf.royal.hit_id)).to_be_visible()
        await page.route(re.compile(r".*/api/v1/links/paigow/hits.*"), _fail)
        await page.select_option("#link", "paigow")
        await page.click("#period button[type=submit]")
        await expect(hits.locator(".load-error")).to_have_text(
            "Could not load the hits: internal error: the request could not be answered"
        )
        await expect(hits.locator("tr", has_text=jf.royal.hit_id)).to_have_count(0)
        await expect(page.locator("#hits-link")).to_contain_text("paigow")
        # The sections that did load are shown.
        await expect(page.locator("#recon-verdict [data-balanced]")).to_be_visible()
        await shot(page, "joker-audit-2-hits-failed")

        # The gaming day's hits of the reports section show the joker too.
        await page.select_option("#report-link", "paigow")
        day_row = page.locator(f'#report-hits tr[data-hit="{jf.five_aces.hit_id}"]')
        await expect(day_row).to_be_visible()
        assert (
            await _faces(page, f'#report-hits tr[data-hit="{jf.five_aces.hit_id}"] .card')
            == FIVE_ACES_FACES
        )
