"""Debian's Chromium driven by Playwright for the page tests, and what they share.

Never a browser download: the tests use /usr/bin/chromium and skip when it is absent (CI
installs it). Screenshots are kept in test-artifacts/ at the repository root.

A test process starts Playwright's driver and launches Chromium once (``shared_chromium`` in
tests/app/conftest.py, some two seconds a test saved) on the session's event loop, where a
module that takes ``pytestmark`` from here runs its tests. A test asks for ``browser``: each
page it opens there is in a browser context of its own (cookies, storage), and every context
is closed at the test's end, so no test sees what another left. ``chromium()`` is a driver
and a browser of one's own, for code that does not run on that loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from playwright.async_api import Browser, Locator, Page, async_playwright, expect

from controller.roles import Role
from tests.app.auth import new_user
from tests.app.floor import WebFloor
from tests.pdf_text import ARTIFACTS

CHROMIUM = Path("/usr/bin/chromium")

# How long an assertion on a page waits for it to hold: Playwright's 5 s is less than a page
# takes to draw a busy floor's lists on a loaded two-core machine running four test
# processes with their browsers. A page is judged on what it shows, not how fast (bench/).
expect.set_options(timeout=15_000)

NEEDS_CHROMIUM = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed"
)
ON_THE_SHARED_LOOP = pytest.mark.asyncio(loop_scope="session")

pytestmark = [NEEDS_CHROMIUM, ON_THE_SHARED_LOOP]


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    try:
        async with launched_chromium() as browser:
            yield browser
    finally:
        # Playwright's driver runs blocking calls on the loop's default executor; its thread
        # is joined here rather than left for the loop's close.
        await asyncio.get_running_loop().shutdown_default_executor()


@asynccontextmanager
async def launched_chromium() -> AsyncIterator[Browser]:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            yield browser
        finally:
            await browser.close()


def role_words(role: Role) -> str:
    """A role as the pages name it to people (``Api.roleName``): "commission agent"."""
    return role.value.replace("_", " ")


async def signed_in(
    browser: Browser,
    wf: WebFloor,
    role: Role,
    path: str,
    *,
    viewport: tuple[int, int] = (1400, 1000),
    username: str | None = None,
) -> Page:
    name, password = await new_user(wf, role, username)
    page = await browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    await page.goto(wf.base_url + path)
    await page.fill("#login-username", name)
    await page.fill("#login-password", password)
    await page.click("#login-form button[type=submit]")
    await expect(page.locator("#who")).to_have_text(f"{name} ({role_words(role)})")
    return page


async def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    # Written here rather than by Playwright, whose writer would start the loop's thread pool.
    (ARTIFACTS / f"{name}.png").write_bytes(await page.screenshot(full_page=True))


async def downloaded_pdf(page: Page, button: Locator) -> bytes:
    """The PDF a click on ``button`` downloads."""
    async with page.expect_download() as info:
        await button.click()
    data = _read(await (await info.value).path())
    assert data.startswith(b"%PDF"), data[:40]
    return data


async def sideways_px(page: Page) -> int:
    """How far the page scrolls sideways: 0 when everything keeps to the window's width."""
    return int(await page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))


def _read(path: str | Path) -> bytes:
    return Path(path).read_bytes()
