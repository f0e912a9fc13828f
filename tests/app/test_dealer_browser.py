"""The dealer's page in Debian's Chromium: a dealer chooses a table, deals there and signs out
of it; another dealer sees who deals at each table and takes one over, which the first
dealer's page follows; a supervisor signs out a dealer who left without."""

from __future__ import annotations

from pathlib import Path

import httpx
from playwright.async_api import Browser, expect

from controller.core.games import Game
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.browser import pytestmark, shot, signed_in
from tests.app.floor import web_floor

__all__ = ["pytestmark"]

STUD_ONLY = {"stud": (Game.CARIBBEAN_STUD, 2)}
NO_DEALER = "No dealer signed in at this table"


async def test_a_dealer_deals_signs_out_and_another_takes_the_table_over(
    tmp_path: Path, browser: Browser
) -> None:
    async with (
        web_floor(tmp_path, links=STUD_ONLY) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        ann = await signed_in(browser, wf, Role.DEALER, "/dealer", username="ann.dealer")
        stud_1 = ann.locator('#table-list a[data-table="stud-1"]')
        await expect(stud_1).to_contain_text("No dealer")
        await stud_1.click()
        await expect(ann.locator("#title")).to_have_text("Dealer: table stud-1")
        dealing = ann.locator("#dealing-now")
        await expect(dealing).to_have_text(NO_DEALER)
        await expect(ann.locator("#stop-dealing")).to_be_hidden()

        await ann.get_by_role("button", name="Deal at this table").click()
        await expect(dealing).to_contain_text("Dealing: ann.dealer since ")
        await expect(ann.locator("#deal-here")).to_be_hidden()
        turn = await wf.service.dealers.dealing_at("stud-1")
        assert turn is not None and turn.dealer == "ann.dealer"
        await shot(ann, "dealer-dealing")

        await ann.get_by_role("button", name="Sign out of this table").click()
        await expect(dealing).to_have_text(NO_DEALER)
        assert await wf.service.dealers.dealing_at("stud-1") is None
        await ann.get_by_role("button", name="Deal at this table").click()
        await expect(dealing).to_contain_text("Dealing: ann.dealer since ")

        # Bob sees who deals at each table, and takes stud-1 over.
        bob = await signed_in(browser, wf, Role.DEALER, "/dealer", username="bob.dealer")
        await expect(bob.locator('#table-list a[data-table="stud-1"]')).to_contain_text(
            "Dealing: ann.dealer"
        )
        await expect(bob.locator('#table-list a[data-table="stud-2"]')).to_contain_text("No dealer")
        await shot(bob, "dealer-pick-with-dealers")
        await bob.locator('#table-list a[data-table="stud-1"]').click()
        await expect(bob.locator("#dealing-now")).to_contain_text("Dealing: ann.dealer since ")
        await bob.get_by_role("button", name="Deal at this table").click()
        await expect(bob.locator("#dealing-now")).to_contain_text("Dealing: bob.dealer since ")
        await expect(bob.get_by_role("button", name="Sign out of this table")).to_be_visible()
        # Ann's page follows: Bob deals, and she may deal here again.
        await expect(dealing).to_contain_text("Dealing: bob.dealer since ")
        await expect(ann.locator("#deal-here")).to_be_visible()
        await expect(ann.locator("#stop-dealing")).to_be_hidden()
        await shot(ann, "dealer-taken-over")

        # Bob leaves without signing out: a supervisor signs him out.
        sue = await signed_in(browser, wf, Role.SUPERVISOR, "/dealer/stud-1", username="sue.super")
        await expect(sue.locator("#deal-here")).to_be_hidden()
        await sue.get_by_role("button", name="Sign bob.dealer out of this table").click()
        await expect(sue.locator("#dealing-now")).to_have_text(NO_DEALER)
        await expect(bob.locator("#dealing-now")).to_have_text(NO_DEALER)

        auditor = await headers_for(wf, Role.AUDITOR)
        turns = (await http.get("/api/v1/tables/stud-1/dealers", headers=auditor)).json()
        assert [(t["dealer"], t["signed_out_by"]) for t in turns] == [
            ("bob.dealer", "sue.super"),
            ("ann.dealer", "bob.dealer"),
            ("ann.dealer", "ann.dealer"),
        ]
