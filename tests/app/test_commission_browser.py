"""The commission agent's page in Debian's Chromium: a rate change read as a document, current
and proposed side by side with its notice period, and approved with a reason."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, expect

from app.demo_floor import CARIBBEAN_LEVELS, PAYTABLE
from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.pdf import letterhead_of
from controller.roles import Role
from controller.rules.filing import NoticeWaiver, Proposal, SubmissionKind
from tests.app.auth import headers_for
from tests.app.browser import pytestmark, shot, sideways_px, signed_in
from tests.app.floor import settings_in, web_floor
from tests.controller.permissive_law import KEY as PERMISSIVE_KEY
from tests.integration.harness import wait_until

__all__ = ["pytestmark"]


async def test_a_commission_agent_approves_a_rate_change(tmp_path: Path, browser: Browser) -> None:
    settings = settings_in(tmp_path).model_copy(
        update={
            "property_name": "Blue Heron Casino",
            "property_licence": "IGC-0042",
            "property_time_zone": "America/Indiana/Indianapolis",
        }
    )
    async with (
        web_floor(tmp_path, links={"stud": (Game.CARIBBEAN_STUD, 2)}, settings=settings) as wf,
    ):
        runtime = wf.service.runtime
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")
        wf.table("stud", 1).force_hand(2, HandCategory.ROYAL_FLUSH)
        await wait_until(lambda: runtime.memory.states["stud"].jackpot_won_since_rate_set)
        lh = letterhead_of(wf.service.settings)
        # No override: the 30 days of 68 IAC 10-1-4 apply.
        row = await FilingDesk(runtime, letterhead=lh).file_change(
            link_id="stud",
            proposal=Proposal(kind=SubmissionKind.RATE_CHANGE, rate_bp=9000),
            filed_by="supervisor",
        )
        filed_on, earliest = lh.day(row.filed_at_us), lh.day(row.effective_at_us)
        page = await signed_in(browser, wf, Role.COMMISSION_AGENT, "/commission")
        line = page.locator(f'tr[data-id="{row.submission_id}"]')
        await expect(line).to_contain_text("change of the rate of progression")
        await expect(line).to_contain_text("Rate of progression: 80.00 % → 90.00 %")
        await expect(line).to_contain_text("by supervisor")
        await expect(line).to_contain_text("awaiting review")
        await line.locator("button.open").click()
        terms = page.locator('[data-key="terms"]')
        changed = terms.locator("tr.changed")
        await expect(changed).to_have_count(1)
        await expect(changed).to_contain_text("Rate of progression")
        await expect(changed.locator("td.proposed")).to_have_text("90.00 %")
        await expect(terms.locator("tr:not(.changed)")).to_contain_text(["$1,000.00"])
        notice = page.locator('[data-key="notice"]')
        await expect(notice).to_contain_text(f"Filed on{filed_on}")
        await expect(notice).to_contain_text("30 days (68 IAC 10-1-4(1))")
        await expect(notice).to_contain_text(f"Earliest effective date{earliest}")
        paytable = page.locator('[data-key="paytable"]')
        await expect(paytable).to_contain_text("Royal flush")
        await expect(paytable).to_contain_text("1 in 649,740")
        await expect(page.locator("#doc-letterhead")).to_contain_text("Blue Heron Casino")
        main = await page.locator("#packet").inner_text()
        for raw in ("ROYAL_FLUSH", "_bp", "_us", "{", "+00:00"):
            assert raw not in main, raw
        await shot(page, "commission-pending")
        # A decision states its reason: approving without one is stopped in the page.
        await page.click("#approve")
        assert runtime.memory.states["stud"].armed is None
        await page.fill("#reason", "Par sheet checked; 30 days of notice given")
        await page.click("#approve")
        result = page.locator("#review-result")
        await expect(result).to_contain_text("Approved by commission-agent")
        await expect(page.locator("#approve")).to_be_disabled()
        decision = page.locator('[data-key="decision"]')
        await expect(decision).to_contain_text("Par sheet checked; 30 days of notice given")
        await expect(decision).to_contain_text(
            f"waits for the link's first jackpot reset on or after {earliest}"
        )
        await expect(line).to_contain_text("approved")
        await expect(line).to_contain_text("reason: Par sheet checked")
        await shot(page, "commission-approved")
        done = await FilingDesk(runtime).get(row.submission_id)
        assert done.review_reason == "Par sheet checked; 30 days of notice given"
        assert runtime.memory.states["stud"].armed is not None
        assert runtime.memory.states["stud"].rate_bp == 8000  # waits for the next jackpot reset


async def test_an_amendment_on_the_directors_waiver_is_approved_once_the_agent_confirms_it(
    tmp_path: Path,
    browser: Browser,
) -> None:
    """68 IAC 10-1-4(1): filed with the executive director's written direction, the rate
    change may take effect sooner than 30 days; the page shows the direction and approves
    only once the agent ticks that it was confirmed."""
    async with (
        web_floor(tmp_path, links={"stud": (Game.CARIBBEAN_STUD, 2)}) as wf,
    ):
        runtime = wf.service.runtime
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")
        wf.table("stud", 1).force_hand(2, HandCategory.ROYAL_FLUSH)
        await wait_until(lambda: runtime.memory.states["stud"].jackpot_won_since_rate_set)
        waiver = NoticeWaiver(
            given_by="J. Doe, Executive Director",
            reference="IGC letter 2026-114",
            given_on=date(2026, 1, 2),
            document_sha256="ab" * 32,
        )
        row = await FilingDesk(runtime).file_change(
            link_id="stud",
            proposal=Proposal(kind=SubmissionKind.RATE_CHANGE, rate_bp=9000),
            filed_by="supervisor",
            effective_at_us=wf.service.clock.now_us() + 3_600_000_000,
            waiver=waiver,
        )
        page = await signed_in(browser, wf, Role.COMMISSION_AGENT, "/commission")
        await page.locator(f'tr[data-id="{row.submission_id}"] button.open').click()
        said = page.locator("#waiver-text")
        await expect(said).to_contain_text("IGC letter 2026-114 of 2026-01-02")
        await expect(said).to_contain_text("J. Doe, Executive Director")
        await expect(said).to_contain_text("ab" * 32)
        await page.fill("#reason", "Director's letter on file")
        await page.click("#approve")  # not confirmed: stopped in the page
        message = await page.locator("#waiver-confirmed").evaluate("e => e.validationMessage")
        assert "confirm the executive director's direction" in message
        assert runtime.memory.states["stud"].armed is None
        await page.check("#waiver-confirmed")
        await page.click("#approve")
        await expect(page.locator("#review-result")).to_contain_text("Approved by")
        await shot(page, "commission-waiver-approved")
        assert runtime.memory.states["stud"].armed is not None


@pytest.mark.parametrize("size", [(1920, 1080), (390, 844)])
async def test_the_commission_page_keeps_to_the_screen(
    tmp_path: Path,
    size: tuple[int, int],
    browser: Browser,
) -> None:
    """A levels change of the demo's four-level link and a rate change, read at a desktop's
    and a phone's width: nothing scrolls sideways, and the rate change gives the long-run
    return at each rate."""
    # One simulated gateway per game: the link of levels deals Caribbean Draw here.
    links = {"caribbean": (Game.CARIBBEAN_DRAW, 1), "stud": (Game.CARIBBEAN_STUD, 1)}
    stud = [line for line in PAYTABLE if line["game"] == Game.CARIBBEAN_STUD.value]
    draw = [{**line, "game": Game.CARIBBEAN_DRAW.value} for line in stud]
    settings = {"caribbean": {"level": CARIBBEAN_LEVELS, "paytable": draw}}
    async with (
        web_floor(
            tmp_path,
            links=links,
            link_settings=settings,
            # The demo's levels have limits and a mystery Mini, which Indiana refuses.
            settings=settings_in(tmp_path).model_copy(update={"jurisdiction": PERMISSIVE_KEY}),
        ) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        runtime = wf.service.runtime
        sup = await headers_for(wf, Role.SUPERVISOR)
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")
        wf.table("stud", 1).force_hand(2, HandCategory.ROYAL_FLUSH)
        await wait_until(lambda: runtime.memory.states["stud"].jackpot_won_since_rate_set)
        levels = [
            {k: v for k, v in lv.items() if not k.startswith("mystery") and k != "hidden"}
            | {"rate": lv["share"]}
            for lv in CARIBBEAN_LEVELS
        ]
        for lv, given in zip(levels, CARIBBEAN_LEVELS, strict=True):
            del lv["share"]
            if "hidden" in given:
                lv["reserve"] = given["hidden"]
            if "mystery_floor" in given:
                lv["mystery"] = {"floor_cents": 50_00, "ceiling_cents": 80_00}
        levels[0]["reset"] = "$12,000"
        body = {"kind": "levels_change", "link_id": "caribbean", "levels": levels}
        filed = await http.post("/api/v1/submissions", json=body, headers=sup)
        assert filed.status_code == 201, filed.text
        body = {"kind": "rate_change", "link_id": "stud", "rate": "90%"}
        rate = await http.post("/api/v1/submissions", json=body, headers=sup)
        assert rate.status_code == 201, rate.text

        page = await signed_in(browser, wf, Role.COMMISSION_AGENT, "/commission", viewport=size)
        levels_row = page.locator(f'tr[data-id="{filed.json()["submission_id"]}"]')
        await expect(levels_row).to_contain_text("Grand")
        await shot(page, f"commission-list-{size[0]}")
        assert await sideways_px(page) == 0
        await levels_row.locator("button.open").click()
        await expect(page.locator("#doc-title")).to_contain_text(filed.json()["submission_id"])
        await shot(page, f"commission-levels-{size[0]}")
        assert await sideways_px(page) == 0

        rate_row = page.locator(f'tr[data-id="{rate.json()["submission_id"]}"]')
        await rate_row.locator("button.open").click()
        returns = page.locator('[data-key="returns"]')
        long_run = returns.locator("tr").filter(has_text="long-run return")
        await expect(long_run.first).to_contain_text("at a rate of 80.00 %")
        await expect(long_run.first).to_contain_text("at a rate of 90.00 %")
        await shot(page, f"commission-rate-{size[0]}")
        assert await sideways_px(page) == 0
