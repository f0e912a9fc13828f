"""The technician's, dealer's and auditor's pages in Debian's Chromium, on a simulated floor.

A forced royal flush appears on /tech as a pending hit with its cards; the technician verifies
it, records the hand pay and resets the table, which goes back online. The dealer page shows
the seats whose side bets were accepted; the audit page draws the meter and verifies the
ledger. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NoReturn

from playwright.async_api import Browser, Locator, Page, expect

from controller.core.hands import HandCategory
from controller.core.reducer import HitClaim
from controller.roles import Role
from tests.app.browser import pytestmark, shot, signed_in
from tests.app.floor import WebFloor, web_floor
from tests.integration.harness import wait_until

__all__ = ["pytestmark", "shot", "signed_in"]


async def test_technician_verifies_pays_and_resets_a_royal_flush(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path) as wf:
        page = await signed_in(browser, wf, Role.TECHNICIAN, "/tech")
        row = page.locator('tr[data-table="stud-1"]')
        await expect(row.locator(".table-state")).to_have_text("online")

        wf.table("stud", 1).force_hand(3, HandCategory.ROYAL_FLUSH)
        hit = page.locator(".hit.holding").filter(has_text="Table stud-1, seat 3")
        await expect(hit).to_be_visible()
        await expect(hit.locator(".hand")).to_have_text("Royal flush")
        await expect(hit.locator(".card")).to_have_count(5)
        faces = await hit.locator(".card").all_text_contents()
        assert {f[-1] for f in faces} <= set("♠♥♦♣") and len({f[-1] for f in faces}) == 1
        assert sorted(f[:-1] for f in faces) == sorted(["A", "K", "Q", "J", "10"])
        await expect(row.locator(".table-state")).to_have_text("hit pending")
        await shot(page, "tech-1-pending-royal")

        await row.locator("button.reset").click()
        await expect(page.locator("#message")).to_contain_text(
            "cannot be reset before its hits are verified"
        )
        # Said next to the button too, the hit named a link to its card.
        await expect(row.locator(".result.bad")).to_contain_text("cannot be reset")
        await expect(row.locator(".result.bad a.hit-link")).to_have_count(1)

        await hit.locator("button.verify").click()
        await expect(page.locator("#message")).to_contain_text("verified: royal flush")
        await expect(hit.locator(".hit-status")).to_contain_text("verified by technician-")
        await hit.locator("button.pay").click()
        await expect(page.locator("#message")).to_contain_text("Hand pay of $")
        await shot(page, "tech-2-verified-and-paid")

        await row.locator("button.reset").click()
        await expect(page.locator("#message")).to_contain_text("Table stud-1 reset")
        await expect(row.locator(".table-state")).to_have_text("online")
        await expect(hit).to_have_count(0)
        await shot(page, "tech-3-table-back-online")
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")


async def test_technician_sees_why_a_table_is_offline(tmp_path: Path, browser: Browser) -> None:
    async with web_floor(tmp_path) as wf:
        page = await signed_in(browser, wf, Role.TECHNICIAN, "/tech")
        row = page.locator('tr[data-table="stud-2"]')
        await expect(row.locator(".table-state")).to_have_text("online")
        poller = wf.service.poller
        assert poller is not None
        handle = poller.tables["stud-2"].handle

        async def faulty(**_: object) -> NoReturn:
            raise LookupError("no decoder for register 108")

        handle.read = handle.exchange = faulty  # type: ignore[method-assign]
        await expect(row.locator(".table-state .state")).to_have_text("offline")
        await expect(row.locator(".poll-problem")).to_have_text(
            "LookupError: no decoder for register 108"
        )
        await shot(page, "tech-table-offline-with-its-reason")


async def royal_flush_without_cards(browser: Browser, wf: WebFloor) -> tuple[Page, Locator]:
    """/tech signed in as a technician, and the card of a royal flush entered by hand at
    stud-2, seat 4, whose table reported no cards."""
    page = await signed_in(browser, wf, Role.TECHNICIAN, "/tech")
    claim = HitClaim(table_seq=None, seat=4, hand=HandCategory.ROYAL_FLUSH, round=9)
    await wf.service.runtime.hits.enter("stud-2", claim, actor="tech")
    return page, page.locator(".hit").filter(has_text="Table stud-2, seat 4")


async def test_technician_enters_the_cards_a_table_did_not_report(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path) as wf:
        page, hit = await royal_flush_without_cards(browser, wf)
        await expect(hit).to_contain_text("the table reported no cards")
        await hit.locator(".cards-input").fill("Ah Ad Qh Jh Th")
        await hit.locator("button.verify").click()
        await expect(page.locator("#message")).to_contain_text(
            "make one pair, not the claimed royal flush"
        )
        await hit.locator(".cards-input").fill("Ah Kh Qh Jh Th")
        await hit.locator("button.verify").click()
        await expect(page.locator("#message")).to_contain_text("verified")
        await expect(hit.locator(".card")).to_have_count(0)
        await expect(hit.locator(".hit-status")).to_contain_text("verified by")
        await shot(page, "tech-4-cards-entered")


async def test_a_refresh_while_typing_keeps_the_cards_cursor_and_selection(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path) as wf:
        page, hit = await royal_flush_without_cards(browser, wf)
        cards = hit.locator(".cards-input")
        await cards.fill("Ah Ad Qh Jh Th")
        # The technician selects the second card to type over it...
        await cards.evaluate("(input) => input.setSelectionRange(3, 5)")
        # ...and another hit arrives: the list is drawn again under the cursor.
        other = HitClaim(table_seq=None, seat=2, hand=HandCategory.STRAIGHT_FLUSH, round=11)
        await wf.service.runtime.hits.enter("stud-1", other, actor="tech")
        await expect(page.locator(".hit").filter(has_text="Table stud-1, seat 2")).to_be_visible()
        assert await cards.evaluate(
            "(input) => [document.activeElement === input, input.value,"
            " input.selectionStart, input.selectionEnd]"
        ) == [True, "Ah Ad Qh Jh Th", 3, 5]
        await page.keyboard.type("Kh")
        await expect(cards).to_have_value("Ah Kh Qh Jh Th")
        await hit.locator("button.verify").click()
        await expect(page.locator("#message")).to_contain_text("verified")


async def test_dealer_sees_the_seats_with_side_bets(tmp_path: Path, browser: Browser) -> None:
    async with web_floor(tmp_path, rounds_per_second=0.5) as wf:
        page = await signed_in(browser, wf, Role.DEALER, "/dealer/lir-1")
        await expect(page.locator("#seats .seat")).to_have_count(7)

        async def page_matches_table() -> bool:
            status = wf.service.table_status("lir-1")
            shown_round = await page.locator("#round").text_content()
            shown = [int(s) for s in await page.locator("#seats .seat.bet").all_text_contents()]
            count = await page.locator("#count").text_content()
            return (
                shown_round == str(status.rounds)
                and shown == list(status.seats_with_bets)
                and count == str(len(status.seats_with_bets))
            )

        # The page refreshes every second and the table deals on: look until both agree.
        matched = False
        for _ in range(300):
            if await page_matches_table():
                matched = True
                break
            await page.wait_for_timeout(100)
        assert matched, "the dealer page never showed the table's round and seats with bets"
        await shot(page, "dealer-lir-1")

        picker = await browser.new_page()
        await picker.goto(wf.base_url + "/dealer")
        await expect(picker.locator("#login")).to_be_visible()


async def test_audit_page_draws_the_meter_and_verifies_the_ledger(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path) as wf:
        wf.table("stud", 1).force_hand(1, HandCategory.ROYAL_FLUSH)
        await wait_until(lambda: wf.service.table_status("stud-1").hit_pending)
        page = await signed_in(browser, wf, Role.AUDITOR, "/audit")
        await page.select_option("#link", "stud")
        # The last two minutes: the floor's whole life, spread over the chart's points.
        await page.evaluate(
            """() => {
                const local = (ms) => new Date(ms - new Date().getTimezoneOffset() * 60000)
                    .toISOString().slice(0, 19);
                document.getElementById("since").value = local(Date.now() - 120000);
                document.getElementById("until").value = local(Date.now() + 60000);
            }"""
        )
        await page.click("#period button[type=submit]")
        line = page.locator("#chart polyline.line")
        await expect(line).to_have_count(1)
        # The chart of the chosen period replaces the one the page opened with (whose whole
        # day puts the floor's short life in one point).
        await page.wait_for_function(
            "() => Number(document.querySelector('#chart polyline.line')"
            "?.getAttribute('data-points') || 0) >= 2"
        )
        award = page.locator("#reductions tbody tr").filter(has_text="royal flush")
        await expect(award).to_have_count(1)
        # The royal flush forced at stud-1 (the tables deal on: another hand of theirs may pay).
        royal = page.locator("#hits tbody tr").filter(has_text="stud-1#")
        await expect(royal.filter(has_text=re.compile("royal flush", re.I))).to_have_count(1)
        await expect(page.locator("#exports button.export")).to_have_count(6)
        await page.click("#verify-ledger")
        await expect(page.locator("#ledger-result")).to_contain_text("Whole:")
        await shot(page, "audit-stud")

        async with page.expect_download() as download_info:
            await page.locator("#exports button.export").first.click()
        download = await download_info.value
        assert download.suggested_filename.startswith("history_stud_")
