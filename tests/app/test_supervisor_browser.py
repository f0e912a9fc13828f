"""The supervisor's page in Debian's Chromium: a rate change checked as it is typed, filed,
approved by the commission and followed to its effect; a held counter jump reviewed; a page
that tells any other role it is not theirs."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from playwright.async_api import Browser, expect

from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.roles import Role
from controller.rules.progression import RATE_CLAUSE
from tests.app.auth import headers_for
from tests.app.browser import pytestmark, shot, signed_in
from tests.app.floor import WebFloor, hold_anomaly, web_floor
from tests.integration.harness import wait_until

__all__ = ["pytestmark"]

STUD_ONLY = {"stud": (Game.CARIBBEAN_STUD, 2)}


async def _rate_may_change(wf: WebFloor) -> None:
    """The stud link's jackpot won once, so that its rate may change (68 IAC 10-1-1.1(d))."""
    await wait_until(lambda: wf.service.table_status("stud-1").state == "online")
    wf.table("stud", 1).force_hand(2, HandCategory.ROYAL_FLUSH)
    await wait_until(lambda: wf.service.runtime.memory.states["stud"].jackpot_won_since_rate_set)


async def test_a_supervisor_files_a_rate_change_checked_as_typed(
    tmp_path: Path, browser: Browser
) -> None:
    async with (
        web_floor(tmp_path, links=STUD_ONLY) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        runtime = wf.service.runtime
        await _rate_may_change(wf)
        page = await signed_in(browser, wf, Role.SUPERVISOR, "/supervisor")
        await expect(page.locator("#kind")).to_have_value("rate_change")
        await expect(page.locator("#filing")).to_contain_text("now 80.00 %")
        file = page.get_by_role("button", name="File the submission")
        ready = page.locator("#check-state")

        # A bare number is never ready to file: 6000 is not taken for $6,000, nor 85 for 85 %.
        await page.locator("#kind").select_option("reset_change")
        reset = page.get_by_label("Proposed reset amount")
        await reset.fill("6000")
        await expect(page.locator('#filing .problem[data-for="reset"]')).to_have_text(
            "'6000' needs its unit: write an amount like $1,234.56"
        )
        await expect(file).to_be_disabled()
        await expect(ready).not_to_contain_text("ready to file")
        await reset.fill("$6000")
        await expect(page.locator("#filing .reads")).to_have_text("reads as $6,000.00")
        await expect(ready).to_have_text("no problem found: ready to file")
        await shot(page, "supervisor-reset-reads-as")
        await page.locator("#kind").select_option("rate_change")
        rate = page.get_by_label("Proposed rate of progression")
        problem = page.locator('#filing .problem[data-for="rate"]')
        await rate.fill("85")
        await expect(problem).to_have_text("'85' needs its unit: write a percentage like 82.5%")
        await expect(file).to_be_disabled()
        await expect(page.locator("#filing .reads")).to_be_empty()

        await rate.fill("55%")
        await expect(problem).to_contain_text("rate of progression 55% is outside 60% to 100%")
        await expect(problem.locator(".clause")).to_have_text(RATE_CLAUSE)
        await expect(file).to_be_disabled()
        await shot(page, "supervisor-rate-refused")

        await rate.fill("82.5%")
        await expect(problem).to_be_empty()
        await expect(file).to_be_enabled()
        await expect(page.locator("#filing .reads")).to_have_text("reads as 82.5%")
        await expect(page.locator("#effective-now")).to_contain_text("takes effect from")
        await file.click()
        await expect(page.locator("#file-result")).to_contain_text("Filed sub-")
        row = page.locator("#submissions tbody tr").first
        await expect(row).to_contain_text("Rate change")
        await expect(row).to_contain_text("80.00 %")
        await expect(row).to_contain_text("82.50 %")
        await expect(row.locator("[data-state]")).to_have_attribute("data-state", "filed")
        await shot(page, "supervisor-filed")
        sid = await row.get_attribute("data-id")
        assert sid is not None

        # The commission's page is being redone; its review goes through the API here.
        agent = await headers_for(wf, Role.COMMISSION_AGENT)
        ok = await http.post(f"/api/v1/submissions/{sid}/approve", headers=agent)
        assert ok.status_code == 200, ok.text
        await page.reload()
        await expect(row.locator("[data-state]")).to_have_attribute("data-state", "approved")
        await expect(row).to_contain_text("next jackpot reset")
        wf.table("stud", 2).force_hand(1, HandCategory.ROYAL_FLUSH)
        await wait_until(lambda: runtime.memory.states["stud"].rate_bp == 8250)
        await page.reload()
        await expect(row.locator("[data-state]")).to_have_attribute("data-state", "effective")
        await expect(row).to_contain_text("effective since")
        await shot(page, "supervisor-effective")


async def test_a_rate_change_is_filed_with_the_directors_waiver(
    tmp_path: Path, browser: Browser
) -> None:
    """68 IAC 10-1-4(1): the director's written direction, typed with the change, is checked
    as typed (its document's SHA-256 named under the waiver) and filed with the change."""
    async with (
        web_floor(tmp_path, links=STUD_ONLY) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        await _rate_may_change(wf)
        page = await signed_in(browser, wf, Role.SUPERVISOR, "/supervisor")
        await page.get_by_label("Proposed rate of progression").fill("85%")
        await page.locator("#waiver summary").click()
        await page.fill("#waiver-by", "J. Doe, Executive Director")
        await page.fill("#waiver-reference", "IGC letter 2026-114")
        await page.fill("#waiver-date", "2026-01-02")
        await page.fill("#waiver-sha256", "a letter")
        problem = page.locator('#filing .problem[data-for="waiver"]')
        await expect(problem).to_contain_text("SHA-256")
        file = page.get_by_role("button", name="File the submission")
        await expect(file).to_be_disabled()
        await page.fill("#waiver-sha256", "AB" * 32)
        await expect(problem).to_be_empty()
        await expect(page.locator("#check-state")).to_have_text("no problem found: ready to file")
        await expect(file).to_be_enabled()
        await file.click()
        await expect(page.locator("#file-result")).to_contain_text("Filed sub-")
        await shot(page, "supervisor-waiver-filed")
        # The submission the page says it filed (the list below may not show it yet).
        said = await page.locator("#file-result").inner_text()
        found = re.search(r"Filed (sub-[\w-]+)", said)
        assert found, said
        auditor = await headers_for(wf, Role.AUDITOR)
        filed = (await http.get(f"/api/v1/submissions/{found[1]}", headers=auditor)).json()
        assert filed["waiver"] == {
            "given_by": "J. Doe, Executive Director",
            "reference": "IGC letter 2026-114",
            "given_on": "2026-01-02",
            "document_sha256": "ab" * 32,
        }


async def test_a_supervisor_approves_a_held_anomaly_with_a_reason(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path, links=STUD_ONLY) as wf:
        await hold_anomaly(wf, "stud-1@jump")
        page = await signed_in(browser, wf, Role.SUPERVISOR, "/supervisor")
        card = page.locator('.anomaly[data-id="stud-1@jump"]')
        await expect(card).to_contain_text(
            "Table stud-1 (link stud): 500 credits held, worth $400.00"
        )
        await expect(card).to_contain_text("counter went from 10 to 510")
        approve = card.get_by_role("button", name="Approve: add $400.00")
        await approve.click()
        result = card.get_by_role("status")
        await expect(result).to_have_text("Give the reason first.")
        await card.get_by_label("reason for stud-1@jump").fill("dealer counted 500 credits")
        await approve.click()
        await expect(result).to_have_text("Approved: $400.00 added to the stud meter.")
        await expect(approve).to_be_disabled()
        await expect(page.locator("#message")).to_be_hidden()
        await shot(page, "supervisor-anomaly-approved")
        async with httpx.AsyncClient(base_url=wf.base_url) as http:
            auditor = await headers_for(wf, Role.AUDITOR)
            [a] = (await http.get("/api/v1/anomalies", headers=auditor)).json()
        assert (a["status"], a["review_reason"]) == ("approved", "dealer counted 500 credits")


async def test_another_role_is_told_the_page_is_not_theirs(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path, links=STUD_ONLY) as wf:
        page = await signed_in(browser, wf, Role.AUDITOR, "/supervisor")
        notice = page.get_by_role("alert").filter(has_text="This page is for supervisors")
        await expect(notice).to_contain_text("an auditor")
        await expect(page.locator("#work")).to_be_hidden()
        await shot(page, "supervisor-not-allowed")


async def test_a_paytable_change_and_a_correction_with_its_document(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path, links=STUD_ONLY) as wf:
        page = await signed_in(browser, wf, Role.SUPERVISOR, "/supervisor")
        await page.locator("#kind").select_option("paytable_change")
        flush = page.locator('#paytable tr[data-hand="FLUSH"]')
        await expect(flush.locator("td.hand")).to_have_text("Flush")
        amount = flush.locator('[data-field="paytable.4.amount"]')
        await amount.fill("$75.001")
        problem = flush.locator(".problem")
        await expect(problem).to_contain_text("fraction of a cent")
        file = page.get_by_role("button", name="File the submission")
        await expect(file).to_be_disabled()
        await amount.fill("$75.00")
        await expect(problem).to_be_empty()
        await expect(file).to_be_enabled()
        await shot(page, "supervisor-paytable")
        await file.click()
        row = page.locator("#submissions tbody tr").first
        await expect(row).to_contain_text("Flush: $75.00")
        await expect(row).to_contain_text("Royal flush: 100.00 % of the meter")

        await page.get_by_label("Change of the meter").fill("-$12.50")
        await page.get_by_label("Reason", exact=True).fill("meter ran on a faulty sensor")
        await page.set_input_files(
            "#correction-document",
            files=[{"name": "slip.txt", "mimeType": "text/plain", "buffer": b"slip 42"}],
        )
        await page.get_by_role("button", name="Ask for the correction").click()
        await expect(page.locator("#correction-result")).to_have_text(
            "Asked: -$12.50 on stud, waiting for a second person."
        )
        asked = page.locator("#corrections tbody tr").first
        await expect(asked).to_contain_text("-$12.50")
        await expect(asked).to_contain_text("a malfunction fixed")
        await expect(asked).to_contain_text("waiting for a second person")
        await shot(page, "supervisor-correction")
