"""The paperwork on the pages, in Debian's Chromium, on a simulated floor.

A technician takes a table out of play with the fields of 68 IAC 10-1-6.2(b), records what was
done to it and its verification, and returns it to play; the audit page reconciles the link
for the period, balanced to the unit, and a second supervisor approves a correction there.
Screenshots go to test-artifacts/.
"""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, Page, expect

from controller.paperwork.corrections import CorrectionCategory
from controller.roles import Role
from tests.app.browser import pytestmark, shot, signed_in
from tests.app.floor import web_floor
from tests.integration.harness import wait_until

__all__ = ["pytestmark", "shot", "signed_in"]


async def test_technician_takes_a_table_out_of_play_and_returns_it(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path) as wf:
        page = await signed_in(browser, wf, Role.TECHNICIAN, "/tech")
        row = page.locator('tr[data-table="stud-2"]')
        await expect(row.locator(".table-state")).to_have_text("online")
        await row.locator("button.remove").click()
        form = page.locator("#remove-form")
        await expect(page.locator("#remove-table")).to_have_text("stud-2")
        await form.locator("[name=device_type]").fill("Caribbean Stud table controller")
        await form.locator("[name=manufacturer_serial_number]").fill("SN-2")
        await form.locator("[name=commission_registration_number]").fill("IGC-2")
        await form.locator("[name=malfunction_reason]").fill("seat 3 bet sensor counts twice")
        await form.locator("[name=complainant_name]").fill("A. Patron")
        await form.locator("[name=complaint_nature]").fill("bet counted twice")
        await form.locator("button[type=submit]").click()
        await expect(page.locator("#message")).to_contain_text("stud-2 is out of play")
        await expect(row.locator(".table-state")).to_have_text("out of play")
        await expect(page.locator("#remove")).to_be_hidden()
        record = page.locator('.record[data-table="stud-2"]')
        await expect(record).to_contain_text("seat 3 bet sensor counts twice")
        await wait_until(lambda: wf.service.table_status("stud-2").state == "out_of_play")
        await shot(page, "paperwork-1-out-of-play")

        # Not before it is repaired and verified (68 IAC 10-1-6.2(a)).
        await record.locator("button.return").click()
        await expect(page.locator("#message")).to_contain_text("after a remedial action")
        await record.locator(".action-description").fill("replaced the seat 3 sensor")
        await record.locator(".employee-name").fill("T. Tech")
        await record.locator(".employee-signature").fill("T.T.")
        await record.locator(".employee-licence").fill("L-1")
        await record.locator("button.record-action").click()
        await expect(record.locator(".actions-done")).to_contain_text("replaced the seat 3 sensor")
        await record.locator(".verification").fill("100 rounds dealt, each bet counted once")
        await record.locator("button.verify-record").click()
        await expect(record.locator(".verified")).to_contain_text("each bet counted once")
        await shot(page, "paperwork-2-repaired-and-verified")

        await record.locator("button.return").click()
        await expect(page.locator("#message")).to_contain_text("stud-2 returned to play")
        await expect(record).to_have_count(0)
        await expect(row.locator(".table-state")).to_have_text("online")
        await expect(row.locator("button.remove")).to_be_visible()
        await shot(page, "paperwork-3-back-in-play")


async def _last_minutes(page: Page) -> None:
    await page.select_option("#link", "stud")
    await page.evaluate(
        """() => {
            const local = (ms) => new Date(ms - new Date().getTimezoneOffset() * 60000)
                .toISOString().slice(0, 19);
            document.getElementById("since").value = local(Date.now() - 120000);
            document.getElementById("until").value = local(Date.now() + 60000);
        }"""
    )
    await page.click("#period button[type=submit]")


async def test_audit_page_reconciles_and_a_second_supervisor_approves(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path) as wf:
        runtime = wf.service.runtime
        await wait_until(lambda: runtime.memory.states["stud"].meter_units > 1_000_00 * 10_000)
        request_id = await wf.service.corrections.ask(
            link_id="stud", delta_cents=-25, category=CorrectionCategory.MALFUNCTION,
            reason="meter ran on after a sensor fault", requested_by="supervisor-a",
            document=b"%PDF-1.4 service report", document_name="report.pdf",
            document_type="application/pdf",
        )  # fmt: skip

        auditor = await signed_in(browser, wf, Role.AUDITOR, "/audit")
        await _last_minutes(auditor)
        tables = auditor.locator("#recon-tables tbody tr[data-table]")
        # The page first shows its first link's report: wait for the one asked for.
        await expect(
            auditor.locator('#recon-tables tbody tr[data-table^="stud-"]').first
        ).to_be_visible()
        await expect(auditor.locator("#recon-verdict .balanced")).to_contain_text(
            "Balanced to the unit"
        )
        await expect(auditor.locator("#recon-verdict .difference")).to_have_count(0)
        shown = await tables.evaluate_all("rows => rows.map((r) => r.dataset.table)")
        assert set(shown) <= {f"stud-{n}" for n in (1, 2, 3, 4)}
        await expect(auditor.locator("#recon-exports button.recon-export")).to_have_count(2)
        # An auditor sees the request but cannot decide it.
        req = auditor.locator(f'tr[data-request="{request_id}"]')
        await expect(req.locator(".request-status")).to_have_text("pending")
        await expect(req.locator("button.approve")).to_have_count(0)
        await shot(auditor, "paperwork-4-reconciliation-balanced")

        supervisor = await signed_in(browser, wf, Role.SUPERVISOR, "/audit")
        await _last_minutes(supervisor)
        req = supervisor.locator(f'tr[data-request="{request_id}"]')
        await req.locator("button.approve").click()
        await expect(supervisor.locator("#message")).to_contain_text("approved and applied")
        await expect(req.locator(".request-status")).to_contain_text("approved by supervisor-")
        await _last_minutes(supervisor)
        corrections_line = supervisor.locator('#recon tr[data-line="corrections"]')
        await expect(corrections_line).to_contain_text("-$0.25")
        await expect(supervisor.locator("#recon-verdict .balanced")).to_be_visible()
        await shot(supervisor, "paperwork-5-correction-approved")
