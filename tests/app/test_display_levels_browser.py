"""The floor display of a link of levels and of a fixed-pay bonus, in a real browser.

The links are opened by the real reducer and held in the runtime's memory: the database
cannot hold a link of levels or a fixed-pay link until its columns exist (the floor's
``hold_in_memory``). Screenshots go to the test's own folder and to ``test-artifacts/``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from playwright.async_api import Browser, Page

from controller.core.games import Game
from controller.core.hands import HandCategory, parse_cards
from controller.core.reducer import HitClaim, TableReading, apply_readings, open_link
from link_adapters.simulator.clock import VirtualClock
from tests.app.browser import pytestmark, shot
from tests.app.floor import put_in_memory, stepped_floor
from tests.app.levels_floor import (
    FOUR_LEVELS,
    TRIGGER,
    hold_fixed_pay,
    hold_four_levels,
    pool_paytable,
)
from tests.controller.permissive_law import PERMISSIVE

__all__ = ["pytestmark"]

WON_L3 = """() => document.querySelector("li[data-level='L3']").classList.contains('won')"""
RESET_L3 = """() => document.querySelector("li[data-level='L3']").classList.contains('reset')"""

WAIT_MS = 30_000
# No Let It Ride link can be stored before the levels' columns exist: the bonus is held in
# memory on a Caribbean Draw link's tables.
LINKS = {"stud": (Game.CARIBBEAN_STUD, 2), "draw": (Game.CARIBBEAN_DRAW, 1)}


async def open_display(browser: Browser, url: str) -> Page:
    page = await browser.new_page(viewport={"width": 1920, "height": 1080})
    await page.goto(url)
    await page.wait_for_function("() => document.body.dataset.live === 'live'", timeout=WAIT_MS)
    return page


async def screenshot(page: Page, folder: Path, name: str) -> Path:
    path = folder / f"display-{name}.png"
    path.write_bytes(await page.screenshot(full_page=True))
    await shot(page, f"display-{name}")
    return path


async def test_a_link_of_four_levels_shows_every_amount_and_the_mystery_ceiling(
    tmp_path: Path, browser: Browser
) -> None:
    async with stepped_floor(tmp_path, VirtualClock(), links=LINKS) as wf:
        await hold_four_levels(wf)
        page = await open_display(browser, f"{wf.base_url}/display/stud")
        await page.wait_for_function(
            "() => document.body.dataset.kind === 'levels'", timeout=WAIT_MS
        )
        assert await page.text_content("#headline") == "Grand"
        assert await page.text_content("#amount") == "$10,000.00"
        tiles = page.locator("#levels li")
        assert await tiles.count() == 3
        names = [await t.text_content() for t in await page.locator("#levels .level-name").all()]
        assert names == ["Major", "Minor", "Mini"]
        amounts = [
            await t.text_content() for t in await page.locator("#levels .level-amount").all()
        ]
        assert amounts == ["$1,000.00", "$100.00", "$10.00"]
        mini = page.locator("li[data-level='L4']")
        assert await mini.locator(".level-must-hit").text_content() == "must hit by $50.00"
        assert await page.locator(".level-must-hit").count() == 1
        # The top level is the biggest on the screen, and each tile no bigger than the one before.
        sizes = await page.evaluate(
            """() => [document.getElementById('amount'),
                      ...document.querySelectorAll('#levels .level-amount')]
                     .map((e) => parseFloat(getComputedStyle(e).fontSize))"""
        )
        assert sizes[0] > sizes[1] >= sizes[2] >= sizes[3]
        text = await page.inner_text("body")
        assert "37.77" not in text  # the trigger is never shown
        assert "reserve" not in text.lower()  # nor the hidden meters
        await screenshot(page, tmp_path, "four-levels")


async def test_a_won_level_shows_its_won_amount_at_once(tmp_path: Path, browser: Browser) -> None:
    async with stepped_floor(tmp_path, VirtualClock(), links=LINKS) as wf:
        await hold_four_levels(wf)
        held = wf.service.runtime.memory.states["stud"]
        # The Minor won by four of a kind at stud-1 seat 3, by the real reducer, on a copy of
        # the link; its levels and its last win put in place of the floor's.
        at = wf.service.clock.now_us()
        pool = open_link(
            law=PERMISSIVE,  # the four levels have limits and a mystery Mini
            link_id="stud",
            game=Game.CARIBBEAN_STUD,
            rate_bp=0,
            reset_cents=0,
            paytable=pool_paytable(),
            tables=[ts.config for ts in held.tables.values()],
            at_us=at - 2_000_000,
            levels=FOUR_LEVELS,
            draws={3: [TRIGGER]},
        ).state
        first = TableReading(
            table_id="stud-1", poll_seq=1, at_us=at - 1_000_000, credits=0, rounds=0
        )
        pool = apply_readings(pool, [first]).state
        quads = HitClaim(
            table_seq=1, seat=3, hand=HandCategory.FOUR_OF_A_KIND, round=1,
            cards=parse_cards("9c 9d 9h 9s 2c"),
        )  # fmt: skip
        won = apply_readings(
            pool,
            [
                first._replace(
                    poll_seq=2, at_us=at, credits=10, rounds=1, head_hit=quads, pending_hits=1
                )
            ],
        ).state
        assert won.last_win is not None and won.last_win.level == "L3"
        await put_in_memory(
            wf,
            "stud",
            lambda now: replace(
                now, levels=won.levels, last_win=won.last_win, meter_units=won.meter_units
            ),
        )
        page = await open_display(browser, f"{wf.base_url}/display/stud")
        minor = page.locator("li[data-level='L3']")
        await page.wait_for_function(
            WON_L3,
            timeout=WAIT_MS,
        )
        assert await minor.locator(".level-name").text_content() == "Minor won!"
        cents = won.last_win.won_cents
        assert (
            await minor.locator(".level-amount").text_content()
            == f"${cents // 100:,}.{cents % 100:02d}"
        )
        detail = await page.text_content("#detail") or ""
        assert detail.startswith("Minor: ") and "seat 3" in detail and "Four of a kind" in detail
        # The other levels stay live; level 1 keeps its amount.
        assert await page.text_content("#headline") == "Grand"
        await screenshot(page, tmp_path, "level-won")
        await page.wait_for_function(
            RESET_L3,
            timeout=WAIT_MS,
        )
        assert await minor.locator(".level-amount").text_content() == "$100.00"
        await screenshot(page, tmp_path, "level-reset")


async def test_a_fixed_pay_bonus_shows_its_pays_and_never_a_jackpot(
    tmp_path: Path, browser: Browser
) -> None:
    async with stepped_floor(tmp_path, VirtualClock(), links=LINKS) as wf:
        await hold_fixed_pay(wf, "draw")
        page = await open_display(browser, f"{wf.base_url}/display/draw")
        await page.wait_for_function(
            "() => document.body.dataset.kind === 'fixed'", timeout=WAIT_MS
        )
        assert await page.text_content("#game") == "Let It Ride bonus"
        rows = page.locator("#pays tr")
        pays = {
            await r.locator("th").text_content(): await r.locator("td").text_content()
            for r in await rows.all()
        }
        assert pays["Royal flush"] == "$10,000.00"
        assert pays["Four of a kind"] == "$100.00"
        assert await page.is_hidden("#amount")
        text = await page.inner_text("body")
        assert not re.search(r"jackpot", text, re.I), text
        assert not re.search(r"progressive", text, re.I), text
        assert not re.search(r"jackpot|progressive", await page.title(), re.I)
        await screenshot(page, tmp_path, "fixed-pay")
