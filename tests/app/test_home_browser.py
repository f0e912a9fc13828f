"""The landing page in Debian's Chromium: the floor's displays with their amounts for anyone,
and once signed in, each role's own page first, every card leading to a page that loads
with the sign-in carried over."""

from __future__ import annotations

from pathlib import Path

from fastapi.routing import APIRoute
from playwright.async_api import Browser, Page, expect

from app.web import create_app
from controller.roles import Role
from tests.app.auth import new_user
from tests.app.browser import pytestmark, role_words, shot
from tests.app.floor import WebFloor, web_floor

__all__ = ["pytestmark"]

# Each role's own page, as the landing page offers it first.
FIRST = {
    Role.TECHNICIAN: "/tech",
    Role.SUPERVISOR: "/supervisor",
    Role.AUDITOR: "/audit",
    Role.SURVEILLANCE: "/surveillance",
    Role.COMMISSION_AGENT: "/commission",
    Role.ADMIN: "/admin",
    Role.DEALER: "/dealer",
}


async def _sign_in_home(browser: Browser, wf: WebFloor, role: Role) -> tuple[Page, str]:
    name, password = await new_user(wf, role)
    page = await browser.new_page(viewport={"width": 1400, "height": 1000})
    await page.goto(wf.base_url + "/")
    await page.fill("#login-username", name)
    await page.fill("#login-password", password)
    await page.click("#login-form button[type=submit]")
    await expect(page.locator("#who")).to_have_text(f"{name} ({role_words(role)})")
    return page, name


async def test_home_shows_the_displays_and_each_roles_work_first(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path) as wf:
        page = await browser.new_page(viewport={"width": 1400, "height": 1000})
        await page.goto(wf.base_url + "/")
        stud = page.locator('#links a.card[data-link="stud"]')
        await expect(stud).to_have_attribute("href", "/display/stud")
        await expect(page.locator('#links a.card[data-link="lir"]')).to_be_visible()
        await expect(stud.locator(".amount")).to_contain_text("$")
        await expect(page.locator("#login-form")).to_be_visible()
        await expect(page.locator("#work")).to_be_hidden()
        # Polled: the amount follows the meter as the tables play.
        first = await stud.locator(".amount").inner_text()
        await expect(stud.locator(".amount")).not_to_have_text(first, timeout=20_000)
        await shot(page, "home-1-signed-out")
        await stud.click()
        await page.wait_for_url(wf.base_url + "/display/stud")
        await page.wait_for_function("() => document.body.dataset.live === 'live'")
        await page.close()

        served = _pages(wf)
        for role, own in FIRST.items():
            page, name = await _sign_in_home(browser, wf, role)
            main = page.locator("#main-pages a.card")
            await expect(main.first).to_have_attribute("href", own)
            await expect(page.locator("#greeting")).to_contain_text(name)
            text = await page.locator("main").inner_text()
            assert "_" not in text.replace(name, ""), text
            if role is Role.SUPERVISOR:
                await shot(page, "home-2-supervisor")
            cards = await page.locator("#work a.card").evaluate_all(
                "cards => cards.map((c) => c.getAttribute('href'))"
            )
            for href in cards:
                if href not in served:
                    continue  # a page this build does not serve yet
                await page.goto(wf.base_url + "/")
                await page.locator(f'#work a.card[href="{href}"]').click()
                await page.wait_for_url(wf.base_url + href)
                # The sign-in goes along: the page opens on its work, not on a sign-in.
                await expect(page.locator("#who")).to_have_text(f"{name} ({role_words(role)})")
                await expect(page.locator("#login")).to_be_hidden()
            await page.close()

        page, _ = await _sign_in_home(browser, wf, Role.DISPLAY)
        await expect(page.locator("#work")).to_be_hidden()
        await expect(page.locator('#links a.card[data-link="stud"]')).to_be_visible()
        await page.close()

        page, _ = await _sign_in_home(browser, wf, Role.ADMIN)
        await shot(page, "home-3-admin")
        await page.click("#sign-out")
        await expect(page.locator("#work")).to_be_hidden()
        await expect(page.locator("#login-form")).to_be_visible()
        await expect(page.locator("#greeting")).to_have_text("The floor's jackpots, live")


def _pages(wf: WebFloor) -> set[str]:
    """The page paths the application serves (the landing page's cards may name the page of
    a role that this build does not serve yet)."""
    return {r.path for r in create_app(wf.service).routes if isinstance(r, APIRoute)}
