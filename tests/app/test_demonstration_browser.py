"""Demonstration mode and the jurisdiction as people see them, in Debian's Chromium: on a floor
display (read from across the floor, nothing of it off the screen) and on the staff pages;
and a floor that is no demonstration shows its jurisdiction and no banner."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, Page, expect

from controller.roles import Role
from tests.app.browser import pytestmark, shot, signed_in
from tests.app.floor import WebFloor, settings_in, web_floor

__all__ = ["pytestmark"]

LAW = "Jurisdiction: Indiana (68 IAC 10)"
SAID = "DEMONSTRATION MODE (PROGRESSIVE_DEMONSTRATION)"
WAIT_MS = 30_000


async def _display(browser: Browser, wf: WebFloor, link_id: str) -> Page:
    page = await browser.new_page(viewport={"width": 1920, "height": 1080})
    await page.goto(f"{wf.base_url}/display/{link_id}")
    await page.wait_for_function("() => document.body.dataset.live === 'live'", timeout=WAIT_MS)
    return page


async def _on_screen(page: Page, selector: str) -> None:
    box = await page.locator(selector).bounding_box()
    assert box is not None, selector
    assert box["y"] >= 0 and box["y"] + box["height"] <= 1080, (selector, box)
    assert box["x"] >= 0 and box["x"] + box["width"] <= 1920, (selector, box)


async def test_a_demonstration_is_stated_on_the_displays_and_the_staff_pages(
    tmp_path: Path,
    browser: Browser,
) -> None:
    settings = settings_in(tmp_path).model_copy(update={"demonstration": True})
    async with web_floor(tmp_path, settings=settings) as wf:
        page = await _display(browser, wf, "stud")
        banner = page.locator("#demonstration")
        await expect(banner).to_be_visible()
        # A patron's display says what the floor is, never the setting that makes it so.
        await expect(banner).to_contain_text("DEMONSTRATION MODE: this installation opens")
        await expect(banner).not_to_contain_text("PROGRESSIVE_DEMONSTRATION")
        await expect(banner).to_contain_text("link stud was opened in demonstration mode")
        await expect(page.locator("#jurisdiction")).to_have_text(LAW)
        await expect(page.locator("body")).to_have_attribute("data-demonstration", "yes")
        # Across the foot of the screen, with the amount still there above it.
        for selector in ("#demonstration", "#jurisdiction", "#amount"):
            await _on_screen(page, selector)
        await shot(page, "demonstration-display")
        await page.close()

        # The landing page, signed out, and a staff page once signed in.
        page = await browser.new_page(viewport={"width": 1400, "height": 1000})
        await page.goto(wf.base_url + "/")
        await expect(page.locator("#demonstration")).to_contain_text(SAID)
        await expect(page.locator("#jurisdiction")).to_have_text(LAW)
        # A page anyone may open names no link; each link's card says it from the API.
        await expect(page.locator("#demonstration")).not_to_contain_text("stud")
        card = page.locator('#links a.card[data-link="stud"] .demonstration')
        await expect(card).to_have_text("Opened in demonstration mode")
        await page.close()
        page = await signed_in(browser, wf, Role.TECHNICIAN, "/tech")
        banner = page.locator("#demonstration")
        await expect(banner).to_be_visible()
        await expect(banner).to_contain_text("links of this floor were opened in demonstration")
        await expect(page.locator("#jurisdiction")).to_have_text(LAW)
        await shot(page, "demonstration-tech")
        await page.close()


async def test_a_floor_that_is_no_demonstration_states_its_jurisdiction_alone(
    tmp_path: Path,
    browser: Browser,
) -> None:
    # Its links are filed with their notice periods, so they wait for their dates unapproved.
    live = settings_in(tmp_path).model_copy(update={"demonstration": False})
    async with web_floor(tmp_path, settings=live, approve=False) as wf:
        page = await _display(browser, wf, "lir")
        await expect(page.locator("#jurisdiction")).to_have_text(LAW)
        await expect(page.locator("#demonstration")).to_be_hidden()
        await expect(page.locator("body")).to_have_attribute("data-demonstration", "no")
        await _on_screen(page, "#jurisdiction")
        await page.close()
        page = await signed_in(browser, wf, Role.AUDITOR, "/audit")
        await expect(page.locator("#jurisdiction")).to_have_text(LAW)
        await expect(page.locator("#demonstration")).to_be_hidden()
        await page.close()
