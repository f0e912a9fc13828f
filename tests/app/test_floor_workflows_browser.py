"""The floor's workflows end to end in Debian's Chromium, on a busy floor (hundreds of fixed
pays waiting for a technician, a royal flush holding a Caribbean Stud table): a supervisor
files a rate change from the landing page and a commission agent approves it on theirs; an
auditor prints the royal flush's jackpot slip and the link's gaming-day report. Screenshots
at a desk's size go to test-artifacts/."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import httpx
from playwright.async_api import Browser, Page, expect

from controller.core.money import format_cents
from controller.roles import Role
from controller.rules.progression import RATE_CLAUSE
from controller.storage.hits import HitRecord
from tests.app.auth import headers_for, new_user
from tests.app.browser import downloaded_pdf, pytestmark, role_words, shot, signed_in
from tests.app.busy_floor import busy_floor
from tests.pdf_text import keep_pdf, pdf_text

__all__ = ["pytestmark"]

# A royal flush's cards as the paper writes them: "As Ks Qs Js Ts", one suit.
ROYAL_FACES = r"A([shdc]) K\1 Q\1 J\1 T\1"
# The row under which a list of hits folds its fixed pays paid at the table.
FOLDED = "Show the {n} fixed pays paid at the table ({total} in all)"


async def test_a_supervisor_files_a_rate_change_and_a_commission_agent_approves_it(
    tmp_path: Path,
    browser: Browser,
) -> None:
    async with busy_floor(tmp_path, fixed_pays=300) as bf:
        runtime = bf.wf.service.runtime
        # 68 IAC 10-1-1.1(d): the royal flush holding stud-1 was won since the rate was set.
        assert runtime.memory.states["stud"].jackpot_won_since_rate_set

        # The supervisor signs in on the landing page and follows its card.
        name, password = await new_user(bf.wf, Role.SUPERVISOR)
        page = await browser.new_page(viewport={"width": 1400, "height": 1000})
        await page.goto(bf.base_url + "/")
        await page.fill("#login-username", name)
        await page.fill("#login-password", password)
        await page.click("#login-form button[type=submit]")
        card = page.locator('#main-pages a.card[href="/supervisor"]')
        await expect(card).to_be_visible()
        await shot(page, "flow-1-landing-supervisor")
        await card.click()
        await page.wait_for_url(bf.base_url + "/supervisor")
        await expect(page.locator("#who")).to_have_text(f"{name} ({role_words(Role.SUPERVISOR)})")

        await page.locator("#link").select_option("stud")
        await page.locator("#kind").select_option("rate_change")
        await expect(page.locator("#filing")).to_contain_text("now 80.00 %")
        await expect(page.locator("#filing")).to_contain_text("a jackpot was won since it was set")
        rate = page.get_by_label("Proposed rate of progression")
        problem = page.locator('#filing .problem[data-for="rate"]')
        file = page.get_by_role("button", name="File the submission")
        await rate.fill("105%")
        await expect(problem).to_contain_text("rate of progression 105% is outside 60% to 100%")
        await expect(problem.locator(".clause")).to_have_text(RATE_CLAUSE)
        await expect(file).to_be_disabled()
        await shot(page, "flow-2-supervisor-rate-refused")

        await rate.fill("85%")
        await expect(problem).to_be_empty()
        await expect(file).to_be_enabled()
        await file.click()
        await expect(page.locator("#file-result")).to_contain_text("Filed sub-")
        mine = page.locator("#submissions tbody tr").first
        await expect(mine).to_contain_text("Rate change")
        await expect(mine).to_contain_text("80.00 %")
        await expect(mine).to_contain_text("85.00 %")
        await expect(mine.locator("[data-state]")).to_have_attribute("data-state", "filed")
        # Filed at the property's time, in the words the commission reads it in.
        await expect(mine.locator("td").first).to_have_text(
            re.compile(r"^\d{1,2} [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d UTC$")
        )
        await shot(page, "flow-3-supervisor-filed")
        sid = await mine.get_attribute("data-id")
        assert sid is not None

        # A commission agent, another person, reads it as a document and approves it.
        agent = await signed_in(browser, bf.wf, Role.COMMISSION_AGENT, "/commission")
        line = agent.locator(f'#submissions tr[data-id="{sid}"]')
        await expect(line).to_contain_text("Rate of progression: 80.00 % → 85.00 %")
        await expect(line).to_contain_text(f"by {name}")
        await expect(line).to_contain_text("awaiting review")
        await line.get_by_role("button", name="Read").click()
        changed = agent.locator('[data-key="terms"] tr.changed')
        await expect(changed).to_have_count(1)
        await expect(changed).to_contain_text("Rate of progression")
        await expect(changed).to_contain_text("80.00 %")
        await expect(changed.locator("td.proposed")).to_have_text("85.00 %")
        await shot(agent, "flow-4-commission-reading")
        await agent.fill("#reason", "Par sheet checked against the floor's own")
        await agent.get_by_role("button", name="Approve").click()
        result = agent.locator("#review-result")
        await expect(result).to_contain_text("Approved by commission-agent-")
        # The decision is said beside the buttons it was made with.
        approve_box = await agent.locator("#approve").bounding_box()
        result_box = await result.bounding_box()
        assert approve_box is not None and result_box is not None
        assert abs(result_box["y"] - approve_box["y"]) < approve_box["height"], (
            approve_box,
            result_box,
        )
        await expect(agent.locator("#approve")).to_be_disabled()
        await expect(line).to_contain_text("approved")
        await expect(line).to_contain_text("reason: Par sheet checked")
        await shot(agent, "flow-5-commission-approved")
        assert runtime.memory.states["stud"].armed is not None

        # Back on the supervisor's page, the submission is approved.
        await page.reload()
        mine = page.locator(f'#submissions tbody tr[data-id="{sid}"]')
        await expect(mine.locator("[data-state]")).to_have_attribute("data-state", "approved")
        await expect(mine).to_contain_text("next jackpot reset")
        await shot(page, "flow-6-supervisor-approved")


async def _audit_prints(page: Page, held: HitRecord, slip_name: str) -> str | None:
    """On /audit: the royal flush's row among the day's hits, its slip (kept as ``slip_name``)
    and the link's gaming-day report. The slip's text when pdftotext is at hand."""
    amount = format_cents(held.award_cents)
    reports = page.locator("#reports")
    await reports.locator("#report-link").select_option("stud")
    row = reports.locator(f'#report-hits tr[data-hit="{held.hit_id}"]')
    await expect(row).to_contain_text("royal flush")
    await expect(row).to_contain_text(amount)
    await expect(row.locator(".card")).to_have_count(5)
    await expect(row).to_be_visible()

    slip = await downloaded_pdf(page, row.locator("button.slip"))
    keep_pdf(slip_name, slip)
    day = await downloaded_pdf(page, reports.locator("button.gaming-day").first)
    keep_pdf("flow-gaming-day.pdf", day)
    await expect(page.locator("#message")).to_be_hidden()
    slip_text, day_text = pdf_text(slip), pdf_text(day)
    if slip_text is None or day_text is None:
        return None
    assert f"Jackpot slip: {amount}, royal flush" in slip_text, slip_text
    assert held.hit_id in slip_text, slip_text
    assert re.search(r"^Table\s+stud-1$", slip_text, re.MULTILINE), slip_text
    assert re.search(rf"^Cards as dealt\s+{ROYAL_FACES}$", slip_text, re.MULTILINE), slip_text
    assert re.search(rf"^Amount\s+{re.escape(amount)}$", slip_text, re.MULTILINE), slip_text

    assert "Gaming day report" in day_text, day_text
    assert re.search(
        rf"stud-1, {held.seat}\s+royal flush\s+{ROYAL_FACES}\s+\S+\s+{re.escape(amount)}"
        r"\s+meter",
        day_text,
    ), day_text
    assert re.search(r"^Opening meter\s+\$[\d,]+\.\d\d\s", day_text, re.MULTILINE), day_text
    assert re.search(r"^Closing meter\s+\$[\d,]+\.\d\d\s", day_text, re.MULTILINE), day_text
    return slip_text


async def test_an_auditor_prints_the_jackpot_slip_and_the_gaming_day_report(
    tmp_path: Path,
    browser: Browser,
) -> None:
    async with busy_floor(tmp_path, fixed_pays=300) as bf:
        runtime = bf.wf.service.runtime
        (held,) = await runtime.hits.unverified(bf.held_table)
        at_table = [h for h in await runtime.hits.of_link("stud") if h.paid_from == "table"]
        assert len(at_table) == bf.fixed_pays
        total = format_cents(sum(h.award_cents for h in at_table))
        folded_words = FOLDED.format(n=bf.fixed_pays, total=total)
        page = await signed_in(browser, bf.wf, Role.AUDITOR, "/audit")
        reports = page.locator("#reports")
        # The page opens on the link with a meter, not on the fixed-pay one; its hits show
        # the royal flush, the fixed pays folded.
        await expect(page.locator("#link")).to_have_value("stud")
        await expect(reports.locator("#report-link")).to_have_value("stud")
        hits = page.locator("#hits tbody")
        await expect(hits.locator("tr:not([hidden])").filter(has_text="royal flush")).to_have_count(
            1
        )
        await expect(hits.locator("button.fold")).to_have_text(folded_words)

        # While the jackpot still holds its table: the slip says it waits.
        text = await _audit_prints(page, held, "flow-slip-held.pdf")
        if text is not None:
            assert re.search(r"^Verified by\s+not verified$", text, re.MULTILINE), text
            assert re.search(r"^Table reset by\s+not yet reset$", text, re.MULTILINE), text
        # The hundreds of fixed pays paid at the table are folded under one row, counted, so
        # the jackpot and the exports after the list stay within reach.
        fold = reports.locator("#report-hits button.fold")
        await expect(fold).to_have_text(folded_words)
        folded = reports.locator("#report-hits tbody tr[data-hit][hidden]")
        await expect(folded).to_have_count(bf.fixed_pays)
        height = await page.evaluate("document.documentElement.scrollHeight")
        assert height < 6000, height
        await reports.scroll_into_view_if_needed()
        await shot(page, "flow-7-audit-reports-held")
        await fold.click()
        await expect(folded).to_have_count(0)
        await expect(reports.locator("#report-hits tbody tr[data-hit]")).to_have_count(
            1 + bf.fixed_pays
        )
        await expect(fold).to_have_text(re.compile(r"^Hide the \d+ fixed pays"))
        await fold.click()
        await expect(folded).to_have_count(bf.fixed_pays)

        # A technician verifies the royal flush and resets its table; the slip says who.
        async with httpx.AsyncClient(base_url=bf.base_url) as http:
            tech = await headers_for(bf.wf, Role.TECHNICIAN)
            done = await http.post(
                f"/api/v1/hits/{quote(held.hit_id, safe='')}/verify", headers=tech
            )
            assert done.status_code == 200, done.text
            done = await http.post(f"/api/v1/tables/{bf.held_table}/reset", headers=tech)
            assert done.status_code == 200, done.text
        await page.reload()
        text = await _audit_prints(page, held, "flow-slip-reset.pdf")
        if text is not None:
            assert re.search(r"^Verified by\s+technician-", text, re.MULTILINE), text
            assert re.search(r"^Table reset by\s+technician-", text, re.MULTILINE), text
        await reports.scroll_into_view_if_needed()
        await shot(page, "flow-8-audit-reports-reset")
