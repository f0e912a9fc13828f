"""The demo's floor displays in a real browser, on the default floor (Indiana's): the levels of
the mixed link, none with a limit or a "must hit by", and the fixed-pay links showing their
pays and never a jackpot."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from playwright.async_api import Browser, Page

from tests.app.browser import pytestmark, shot
from tests.conftest import process_env

__all__ = ["pytestmark"]

WAIT_MS = 30_000
NO_JACKPOT = re.compile(r"jackpot|progressive", re.IGNORECASE)


@asynccontextmanager
async def running_demo(folder: Path) -> AsyncIterator[str]:
    """``progressive demo`` in its own process until the block ends; its web address."""
    env = process_env()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app.cli", "demo", "--port", "0", "--seed", "5",
        "--round-seconds", "0.5", "--duration", "300",
        cwd=folder, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert proc.stdout is not None
    said: list[str] = []
    try:
        while True:
            line = (await proc.stdout.readline()).decode()
            assert line, "the demo stopped before serving:\n" + "".join(said)
            said.append(line)
            if "floor displays:" in line:
                url = line.split("floor displays:")[1].split(",")[0].strip()
                break
        base = url.rsplit("/display/", 1)[0]
        # Keep reading what it says, so its output never fills the pipe.
        drain = asyncio.create_task(proc.stdout.read())
        yield base
    finally:
        proc.send_signal(signal.SIGINT)
        await proc.wait()
    await drain
    assert proc.returncode == 0


async def open_display(browser: Browser, url: str, kind: str) -> Page:
    page = await browser.new_page(viewport={"width": 1920, "height": 1080})
    await page.goto(url)
    await page.wait_for_function("() => document.body.dataset.live === 'live'", timeout=WAIT_MS)
    await page.wait_for_function(f"() => document.body.dataset.kind === '{kind}'", timeout=WAIT_MS)
    return page


async def test_the_demo_displays_show_the_levels_and_the_fixed_pays(
    tmp_path: Path, browser: Browser
) -> None:
    async with running_demo(tmp_path) as base:
        page = await open_display(browser, f"{base}/display/caribbean", "levels")
        assert await page.text_content("#headline") == "Grand"
        game = "Caribbean Stud Poker and Caribbean Draw Poker"
        assert await page.text_content("#game") == game
        names = [await t.text_content() for t in await page.locator("#levels .level-name").all()]
        # A full house at Stud wins the Mini about once a minute at this pace: "Mini won!".
        assert [(n or "").removesuffix(" won!") for n in names] == ["Major", "Minor", "Mini"]
        # No mystery level under Indiana: no level says "must hit by".
        assert await page.locator("#levels .level-must-hit").count() == 0
        assert "must hit by" not in (await page.inner_text("#levels")).lower()
        text = await page.inner_text("body")
        assert "reserve" not in text.lower() and "overflow" not in text.lower()
        await shot(page, "demo-display-caribbean")

        page = await open_display(browser, f"{base}/display/paigow", "classic")
        assert "$5," in (await page.text_content("#amount") or "")
        await shot(page, "demo-display-paigow")

        for link_id, top in (("lir", "Royal flush"), ("sevens", "Three suited sevens")):
            page = await open_display(browser, f"{base}/display/{link_id}", "fixed")
            text = await page.inner_text("body")
            title = await page.title()
            assert await page.locator("tr th").first.text_content() == top, link_id
            assert not NO_JACKPOT.search(text) and not NO_JACKPOT.search(title), (link_id, text)
            await shot(page, f"demo-display-{link_id}")
