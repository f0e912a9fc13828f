"""What patrons see on the floor display, in a real browser: the paytables in words, the
levels, the property's name and colours, an idle animation that yields to reduced motion, no
table's technician state, and a screen filled at 1080p, 4K and portrait with nothing cut off.
Screenshots are kept in ``test-artifacts/``.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from playwright.async_api import Browser, Page

from controller.core.hands import HandCategory
from controller.roles import Role
from link_adapters.simulator.clock import VirtualClock
from tests.app.auth import headers_for
from tests.app.browser import pytestmark, shot
from tests.app.floor import settings_in, stepped_floor, web_floor
from tests.app.levels_floor import hold_five_levels
from tests.app.test_api_paperwork import REMOVAL
from tests.integration.harness import wait_until

__all__ = ["pytestmark"]

WAIT_MS = 30_000
PROPERTY = {
    "property_name": "Blue River Casino",
    "property_colour": "#1d3f6e",
    "property_accent": "#f0a030",
}
# What a technician reads of a table, and never a patron.
TECHNICIAN_WORDS = re.compile(
    r"technician|awaiting|approval|held|hit pending|hit_pending|out of play|out_of_play|"
    r"offline|unpolled|starting",
    re.I,
)
ENUM_NAME = re.compile(r"\b[A-Z]{2,}(?:_[A-Z]+)+\b")
SIZES = {"1080p": (1920, 1080), "4k": (3840, 2160), "portrait": (1080, 1920)}

# Every element of the page that shows something lies inside the viewport, the page scrolls
# in neither direction, and no amount, name or paytable is cut inside its own box.
LAYOUT_FAULTS = """() => {
  const faults = [];
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth || root.scrollHeight > root.clientHeight) {
    faults.push(`page ${root.scrollWidth}x${root.scrollHeight} in ${root.clientWidth}x${root.clientHeight}`);
  }
  const w = window.innerWidth, h = window.innerHeight;
  for (const el of document.body.querySelectorAll("*")) {
    if (el.tagName === "SCRIPT" || !el.getClientRects().length) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const where = `${el.tagName.toLowerCase()}#${el.id}.${el.className} "${(el.textContent || "").slice(0, 30)}"`;
    if (r.left < -0.5 || r.top < -0.5 || r.right > w + 0.5 || r.bottom > h + 0.5) {
      faults.push(`outside: ${where} ${JSON.stringify(r)}`);
    }
  }
  for (const el of document.querySelectorAll("#amount, .level-amount, #pays, #detail, .level-name, h1")) {
    if (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1) {
      faults.push(`cut: ${el.id || el.className} ${el.scrollWidth}x${el.scrollHeight} in ${el.clientWidth}x${el.clientHeight}`);
    }
  }
  return faults;
}"""


async def open_display(browser: Browser, url: str, size: tuple[int, int] = (1920, 1080)) -> Page:
    page = await browser.new_page(viewport={"width": size[0], "height": size[1]})
    await page.goto(url)
    await page.wait_for_function("() => document.body.dataset.live === 'live'", timeout=WAIT_MS)
    return page


async def pays_of(page: Page, game: str) -> dict[str, str]:
    rows = page.locator(f"#pays table[data-game='{game}'] tr")
    return {
        (await r.locator("th").text_content() or ""): (await r.locator("td").inner_text())
        for r in await rows.all()
    }


async def test_five_levels_two_paytables_and_the_property_fill_every_screen(
    tmp_path: Path, browser: Browser
) -> None:
    settings = settings_in(tmp_path).model_copy(update=PROPERTY)
    async with stepped_floor(tmp_path, VirtualClock(), settings=settings) as wf:
        await hold_five_levels(wf)
        for label, size in SIZES.items():
            page = await open_display(browser, f"{wf.base_url}/display/stud", size)
            await page.wait_for_function(
                "() => document.body.dataset.kind === 'levels' && "
                "document.querySelectorAll('#pays table').length === 2",
                timeout=WAIT_MS,
            )
            # The levels: level 1 large, the others as tiles, each with its name.
            assert await page.text_content("#headline") == "Grand Progressive"
            assert await page.text_content("#amount") == "$1,234,567.89"
            names = await page.locator("#levels .level-name").all_text_contents()
            assert names == ["Major", "Minor", "Mini", "Bonus Jackpot"]
            assert await page.locator("#levels .level-amount").all_text_contents() == [
                "$1,234,566.89",
                "$1,234,565.89",
                "$1,234,564.89",
                "$1,234,563.89",
            ]
            # Each game's paytable, named, its lines in words.
            captions = await page.locator("#pays caption").all_text_contents()
            assert captions == ["Caribbean Stud Poker", "Caribbean Draw Poker"]
            stud = await pays_of(page, "caribbean_stud")
            assert stud["Royal flush"].split("\n") == [
                "100% of the Grand Progressive",
                "+$500.00 to every other player",
            ]
            assert stud["Four of a kind"] == "100% of the Minor"
            assert stud["Flush"] == "10.5% of the Bonus Jackpot"
            assert stud["Straight"] == "$500.00"
            assert next(iter(stud)) == "Royal flush"  # best hand first
            draw = await pays_of(page, "caribbean_draw")
            assert draw["Full house"] == "$1,000.00"
            text = await page.inner_text("body")
            assert not ENUM_NAME.search(text), text
            # The property: its name over the link's, in the title once, and its colours.
            assert await page.text_content("#property") == "Blue River Casino"
            assert await page.title() == "Blue River Casino — stud"
            game = "Caribbean Stud Poker and Caribbean Draw Poker"
            assert await page.text_content("#game") == game
            colours = await page.evaluate(
                """() => [getComputedStyle(document.body).backgroundColor,
                          getComputedStyle(document.getElementById('amount')).color,
                          getComputedStyle(document.getElementById('property')).color]"""
            )
            assert colours == ["rgb(29, 63, 110)", "rgb(240, 160, 48)", "rgb(240, 160, 48)"]
            assert await page.evaluate(LAYOUT_FAULTS) == [], label
            await shot(page, f"display-five-levels-{label}")
            await page.close()


async def test_the_idle_animation_runs_and_stops_for_reduced_motion(
    tmp_path: Path, browser: Browser
) -> None:
    animations = """() => [
        getComputedStyle(document.getElementById('amount'), '::after').animationName,
        getComputedStyle(document.getElementById('amount'), '::before').animationName,
        getComputedStyle(document.querySelector('#pays th'), '::before').animationName,
    ]"""
    async with web_floor(tmp_path) as wf:
        page = await open_display(browser, f"{wf.base_url}/display/stud")
        await page.wait_for_selector("#pays th")
        assert await page.evaluate(animations) == ["sheen", "glow", "walk"]
        assert await page.evaluate(LAYOUT_FAULTS) == []
        await shot(page, "display-classic")
        await page.emulate_media(reduced_motion="reduce")
        assert await page.evaluate(animations) == ["none", "none", "none"]
        # The amount still counts up: only the idle motion is off.
        first = int(await page.get_attribute("#amount", "data-cents") or "0")
        await page.wait_for_function(
            f"() => Number(document.getElementById('amount').dataset.cents) > {first}",
            timeout=WAIT_MS,
        )


async def test_no_table_state_is_shown_to_patrons(tmp_path: Path, browser: Browser) -> None:
    async with (
        web_floor(tmp_path, rounds_per_second=4.0) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        page = await open_display(browser, f"{wf.base_url}/display/stud")
        tech = await headers_for(wf, Role.TECHNICIAN)
        r = await http.post("/api/v1/tables/stud-1/integrity-records", json=REMOVAL, headers=tech)
        assert r.status_code == 201, r.text
        wf.table("stud", 2).force_hand(4, HandCategory.ROYAL_FLUSH)
        await page.wait_for_function("() => document.body.dataset.mode === 'won'", timeout=WAIT_MS)
        await wait_until(
            lambda: (
                [s.state for s in wf.service.table_statuses("stud")]
                == ["out_of_play", "hit_pending"]
            )
        )
        # The feed still carries them (other pages read them); the page shows the win only.
        seq = int(await page.get_attribute("body", "data-seq") or "0")
        await page.wait_for_function(
            f"() => Number(document.body.dataset.seq) > {seq}", timeout=WAIT_MS
        )
        text = await page.inner_text("body")
        assert not TECHNICIAN_WORDS.search(text), text
        assert not TECHNICIAN_WORDS.search(await page.title())
        assert "Royal flush" in text and "seat 4" in text
        assert await page.locator("[data-table]").count() == 0
        await shot(page, "display-won-patron")
