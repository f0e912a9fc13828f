"""The commission agent's page in Debian's Chromium: a rate change read and approved."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from app.security import Role
from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.paperwork.submissions import SubmissionDesk
from controller.rules.filing import Proposal, SubmissionKind
from tests.integration.harness import wait_until
from tests.web.browser import chromium, pytestmark, shot, signed_in
from tests.web.floor import web_floor

__all__ = ["pytestmark"]


async def test_a_commission_agent_approves_a_rate_change(tmp_path: Path) -> None:
    async with (
        chromium() as browser,
        web_floor(tmp_path, links={"stud": (Game.CARIBBEAN_STUD, 2)}) as wf,
    ):
        runtime = wf.service.runtime
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")
        wf.table("stud", 1).force_hand(2, HandCategory.ROYAL_FLUSH)
        await wait_until(lambda: runtime.states["stud"].jackpot_won_since_rate_set)
        row = await SubmissionDesk(runtime, notice_override="letter ED-9").file_change(
            link_id="stud",
            proposal=Proposal(kind=SubmissionKind.RATE_CHANGE, rate_bp=9000),
            filed_by="supervisor",
        )
        page = await signed_in(browser, wf, Role.COMMISSION_AGENT, "/commission")
        line = page.locator(f'tr[data-id="{row.submission_id}"]')
        await expect(line).to_contain_text("rate 90.00%")
        await expect(line).to_contain_text("filed")
        await line.locator("button.open").click()
        await expect(page.locator("#packet-json")).to_contain_text('"rate_bp": 9000')
        await expect(page.locator("#packet-json")).to_contain_text("pit 1, table 2")
        await page.click("#approve")
        await expect(page.locator("#message")).to_have_text(f"{row.submission_id} approved")
        await expect(line).to_contain_text("approved")
        await shot(page, "commission-approved")
        assert runtime.states["stud"].armed is not None
        assert runtime.states["stud"].rate_bp == 8000  # waits for the next jackpot reset
