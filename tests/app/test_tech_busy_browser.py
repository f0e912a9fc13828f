"""/tech on a busy floor, in Debian's Chromium: three hundred fixed pays wait for a technician
and a royal flush from the meter holds a Caribbean Stud table. The royal is at the top, loud,
whatever the other work; the table that waits links to it; the technician verifies it, the
reset is refused next to the table's button until a second person signs it off, then the
table is reset. Screenshots at a desk's size and a phone's go to test-artifacts/."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.async_api import Browser, Page, expect

from controller.roles import Role
from tests.app.browser import pytestmark, shot, signed_in
from tests.app.busy_floor import busy_floor
from tests.integration.harness import wait_until

__all__ = ["pytestmark"]


async def _top(page: Page, selector: str) -> float:
    box = await page.locator(selector).bounding_box()
    assert box is not None, selector
    return float(box["y"])


async def test_the_jackpot_comes_first_and_is_signed_off_by_a_second_person(
    tmp_path: Path,
    browser: Browser,
) -> None:
    async with (
        busy_floor(tmp_path, fixed_pays=300, second_signature_from_cents=500_00) as bf,
    ):
        page = await signed_in(browser, bf.wf, Role.TECHNICIAN, "/tech")
        royal = page.locator(f'#holding [data-hit="{bf.held_hit_id}"]')
        await expect(royal).to_be_visible()
        await expect(page.locator("#holding .hit")).to_have_count(1)
        await expect(royal.locator(".hand")).to_have_text("Royal flush")
        await expect(royal.locator(".amount")).to_have_text(
            re.compile(r"^\$\d{1,3}(,\d{3})*\.\d\d$")
        )
        await expect(royal.locator(".badge")).to_have_text("Jackpot holds table stud-1")
        await expect(royal.locator(".waiting")).to_have_text(re.compile(r"^waiting \d+ (s|min)$"))
        await expect(page.locator("#holding-count")).to_have_text("1")
        await expect(page.locator("#other-count")).to_have_text(
            f"{bf.fixed_pays} (the newest 50 shown)"
        )
        await expect(page.locator("#other .hit.fixed")).to_have_count(50)
        assert await _top(page, "#holding") < await _top(page, "#other")
        # A fixed pay is a quiet line: no badge, no big amount, no steps.
        fixed = page.locator("#other .hit.fixed").first
        await expect(fixed.locator(".badge, .amount, .steps")).to_have_count(0)
        await expect(fixed).to_contain_text("fixed pay")

        # The log of fixed pays nobody waits for: there, collapsed, plain rows when opened.
        await expect(page.locator("#quiet-count")).to_have_text(str(bf.quiet_pays))
        assert await page.locator("#quiet").get_attribute("open") is None
        await expect(page.locator("#quiet-log")).to_be_hidden()
        await shot(page, "tech-busy-1-jackpot-first")

        # Sound is off until asked for, and the choice is remembered.
        await expect(page.locator("#sound")).to_have_attribute("aria-pressed", "false")
        await page.click("#sound")
        await expect(page.locator("#sound")).to_have_text("Sound: on")
        await page.reload()
        await expect(page.locator("#sound")).to_have_attribute("aria-pressed", "true")
        await expect(royal).to_be_visible()

        # Filters: by link, by table, by kind, counted.
        await page.select_option("#filter-link", "lir")
        await expect(page.locator("#holding")).to_contain_text("No table is held")
        await expect(page.locator("#holding-count")).to_have_text("0")
        await page.select_option("#filter-link", "stud")
        await page.select_option("#filter-table", "stud-2")
        await expect(page.locator("#other .hit.fixed")).to_have_count(7)
        assert set(await page.locator("#other .hit").evaluate_all(
            "cards => cards.map(c => c.dataset.table)"
        )) == {"stud-2"}  # fmt: skip
        await page.select_option("#filter-table", "")
        await page.select_option("#filter-kind", "mystery")
        await expect(page.locator("#other-count")).to_have_text("0")
        await page.click("#filter-clear")
        await expect(royal).to_be_visible()

        # The held table names the hit it waits on; the reset's refusal is said next to its
        # button, with a link that brings the hit into view.
        row = page.locator('#tables tr[data-table="stud-1"]')
        await expect(row.locator(".waits-on a.hit-link")).to_have_text(bf.held_hit_id)
        await row.locator("button.reset").click()
        refusal = row.locator(".result.bad")
        await expect(refusal).to_contain_text("cannot be reset before its hits are verified")
        await refusal.locator("a.hit-link").click()
        await expect(royal).to_have_class(re.compile(r"\bflash\b"))
        await expect(royal).to_be_in_viewport()

        await royal.locator("button.verify").click()
        await expect(royal.locator(".result.ok")).to_contain_text("verified: royal flush")
        await expect(royal.locator(".steps li.done")).to_contain_text(["Verified by technician-"])
        # The verifier is not offered the second signature: told who gives it instead.
        await expect(royal.locator("button.sign-off")).to_have_count(0)
        await expect(royal.locator(".sign-wait")).to_contain_text("a supervisor signs it off")
        await row.locator("button.reset").click()
        await expect(refusal).to_contain_text("signed off by a second person")
        await expect(refusal.locator("a.hit-link")).to_have_text(bf.held_hit_id)
        await shot(page, "tech-busy-2-reset-refused-until-signed")

        # A supervisor signs, on their own page.
        second = await signed_in(browser, bf.wf, Role.SUPERVISOR, "/tech")
        theirs = second.locator(f'#holding [data-hit="{bf.held_hit_id}"]')
        await theirs.locator("button.sign-off").click()
        await expect(theirs.locator(".result.ok")).to_contain_text("signed off")
        await expect(theirs.locator(".steps")).to_contain_text("Signed off by supervisor-")

        await expect(royal.locator("button.sign-off")).to_have_count(0)
        await row.locator("button.reset").click()
        await expect(row.locator(".result.ok")).to_contain_text("Table stud-1 reset")
        await expect(page.locator("#holding .hit")).to_have_count(0)
        await wait_until(lambda: bf.wf.service.table_status("stud-1").state == "online")

        await page.click("#quiet summary")
        await expect(page.locator("#quiet-log tbody tr")).to_have_count(min(20, bf.quiet_pays))
        await expect(page.locator("#quiet-log tbody tr").first).to_contain_text("Two pair")
        await shot(page, "tech-busy-3-reset-and-quiet-log")


async def test_an_overdue_jackpot_says_so_and_fits_a_phone(
    tmp_path: Path, browser: Browser
) -> None:
    async with (
        busy_floor(tmp_path, fixed_pays=300, escalate_after_minutes=10) as bf,
    ):
        page = await signed_in(browser, bf.wf, Role.TECHNICIAN, "/tech")
        royal = page.locator(f'#holding [data-hit="{bf.held_hit_id}"]')
        await expect(royal).to_be_visible()
        await expect(royal.locator(".overdue-mark")).to_be_hidden()
        await page.clock.install()
        await page.clock.fast_forward("11:00")
        await expect(royal).to_have_class(re.compile(r"\boverdue\b"))
        await expect(royal.locator(".overdue-mark")).to_have_text("Overdue")
        await expect(royal.locator(".waiting")).to_have_text(re.compile(r"^waiting 1[01] min$"))
        await page.set_viewport_size({"width": 420, "height": 900})
        await expect(royal).to_be_visible()
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= 420, width  # nothing pushes the page sideways
        await shot(page, "tech-busy-4-overdue-phone")
        await page.set_viewport_size({"width": 1400, "height": 1000})
        await shot(page, "tech-busy-5-overdue-desk")
