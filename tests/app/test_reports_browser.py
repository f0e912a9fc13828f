"""An auditor prints a jackpot slip and a gaming-day report from /audit, in Debian's Chromium.

The floor is one small function (``_floor_with_a_jackpot``), so a busier floor can take its
place. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from playwright.async_api import Browser, expect

from controller.core.hands import HandCategory
from controller.roles import Role
from link_adapters.simulator.clock import VirtualClock
from tests.app.browser import downloaded_pdf, pytestmark, shot, signed_in
from tests.app.floor import WebFloor, stepped_floor
from tests.integration.harness import wait_until
from tests.pdf_text import keep_pdf, pdf_text

__all__ = ["pytestmark"]


@contextlib.asynccontextmanager
async def _floor_with_a_jackpot(tmp_path: Path) -> AsyncIterator[tuple[WebFloor, str]]:
    """A floor with one jackpot won (a royal flush at stud-1, paid from the meter, its table
    held): the floor and the hit's id."""
    async with stepped_floor(tmp_path, VirtualClock()) as wf:
        wf.service.settings = wf.service.settings.model_copy(
            update={
                "property_name": "Riverside Casino",
                "property_licence": "IGC-0042",
                "property_time_zone": "America/Indiana/Indianapolis",
            }
        )
        wf.table("stud", 1).force_hand(3, HandCategory.ROYAL_FLUSH)
        wf.play_round_now("stud", 1)
        await wait_until(lambda: wf.service.table_status("stud-1").hit_pending)
        (hit,) = [
            h for h in await wf.service.runtime.hits.of_link("stud") if h.table_id == "stud-1"
        ]
        yield wf, hit.hit_id


async def test_auditor_prints_the_jackpot_slip_and_the_gaming_day_report(
    tmp_path: Path, browser: Browser
) -> None:
    async with _floor_with_a_jackpot(tmp_path) as (wf, hit_id):
        page = await signed_in(browser, wf, Role.AUDITOR, "/audit")
        reports = page.locator("#reports")
        await expect(reports.locator("#report-zone")).to_have_text("(America/Indiana/Indianapolis)")
        await reports.locator("#report-link").select_option("stud")
        row = reports.locator(f'#report-hits tr[data-hit="{hit_id}"]')
        await expect(row).to_contain_text("royal flush")
        await expect(row.locator(".card")).to_have_count(5)
        await reports.scroll_into_view_if_needed()
        await shot(page, "reports-1-audit-reports")

        slip = await downloaded_pdf(page, row.locator("button.slip"))
        if (text := pdf_text(slip, layout=False)) is not None:
            assert hit_id in text and "Riverside Casino" in text and "IGC-0042" in text
            assert "Times are in America/Indiana/Indianapolis" in text

        day = await downloaded_pdf(page, reports.locator("button.gaming-day").first)
        if (text := pdf_text(day, layout=False)) is not None:
            assert "Gaming day report" in text and "royal flush" in text
            assert "Prepared by" in text and "Reviewed by" in text
        keep_pdf("reports-slip.pdf", slip)
        keep_pdf("reports-gaming-day.pdf", day)
        keep_pdf(
            "reports-week.pdf", await downloaded_pdf(page, reports.locator("button.week").first)
        )
        await expect(page.locator("#message")).to_be_hidden()
