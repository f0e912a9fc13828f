"""The admin's page in Debian's Chromium: accounts made (a refused password told at its field),
disabled and enabled; a supervisor's account asked for by one admin and confirmed by another;
a display token shown once and revoked after a confirmation; and the audit log of all of it,
in words. And the software self-check: its last result, a check now, a failure naming the
file and the links it holds."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, Page, expect

from controller.core.games import Game
from controller.roles import Role
from tests.app.browser import pytestmark, shot, signed_in
from tests.app.floor import settings_in, web_floor
from tests.app.test_self_check import as_if_edited, manifest_copy

__all__ = ["pytestmark"]

STUD = {"stud": (Game.CARIBBEAN_STUD, 1)}


async def _create(page: Page, username: str, role: str, password: str | None) -> None:
    await page.fill("#new-username", username)
    await page.select_option("#new-role", role)
    if password is not None:
        await page.fill("#new-password", password)
    await page.click("#create-user button[type=submit]")


async def test_admin_makes_accounts_and_display_tokens_and_reads_the_log(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path, links=STUD) as wf:
        page = await signed_in(browser, wf, Role.ADMIN, "/admin")
        me = (await page.locator("#who").inner_text()).split(" ")[0]

        # A common password is refused, and the refusal stands under the password field.
        await _create(page, "dee.dealer", "dealer", "password123")
        await expect(page.locator("#new-password-note")).to_contain_text("most common")
        await expect(page.locator('#users tr[data-user="dee.dealer"]')).to_have_count(0)
        await shot(page, "admin-1-password-refused")
        await _create(page, "dee.dealer", "dealer", "a long own passphrase")
        await expect(page.locator("#create-result")).to_contain_text("Created dee.dealer, dealer")
        await expect(page.locator("#new-password-note")).to_have_text("")
        pat = page.locator('#users tr[data-user="dee.dealer"]')
        await expect(pat).to_contain_text("dealer")
        await expect(pat).to_contain_text("active")

        await pat.locator("button.disable").click()
        await expect(pat.locator(".result")).to_contain_text("Disabled")
        await expect(pat).to_contain_text("disabled")
        await pat.locator("button.enable").click()
        await expect(pat.locator(".result")).to_contain_text("Enabled again")
        await pat.locator("button.reset").click()
        await expect(pat.locator(".result")).to_contain_text("One-time code (shown this once)")

        # A supervisor's account: no password field; one admin asks, another confirms.
        await page.select_option("#new-role", "supervisor")
        await expect(page.locator("#new-password")).to_be_hidden()
        await _create(page, "sam.super", "supervisor", None)
        await expect(page.locator("#create-result")).to_contain_text("a second admin confirms it")
        await expect(page.locator("#create-result code")).to_have_count(1)
        request = page.locator("#requests tr").filter(has_text="sam.super")
        await expect(request).to_contain_text("new account: sam.super as supervisor")
        await expect(request.locator("button.confirm")).to_have_count(0)
        await shot(page, "admin-2-accounts")

        other = await signed_in(browser, wf, Role.ADMIN, "/admin")
        request2 = other.locator("#requests tr").filter(has_text="sam.super")
        await request2.locator("button.confirm").click()
        await expect(request2.locator(".result")).to_contain_text(
            "Second half of the one-time code"
        )
        sam = other.locator('#users tr[data-user="sam.super"]')
        await expect(sam).to_contain_text("waiting for its person to choose a password")
        await other.close()

        # A display token: shown once with its display address, then revoked after asking.
        await page.fill("#token-name", "")
        await page.click("#create-token button[type=submit]")
        await expect(page.locator("#token-name-note")).not_to_have_text("")
        await page.fill("#token-name", "pit 1 stud display")
        await page.click("#create-token button[type=submit]")
        token = await page.locator("#new-token").inner_text()
        assert token.startswith("pdt_"), token
        await expect(page.locator("#new-token-url")).to_have_text(
            f"{wf.base_url}/display/stud?token={token}"
        )
        await shot(page, "admin-3-token-once")
        display = await browser.new_page(viewport={"width": 1400, "height": 1000})
        await display.goto(await page.locator("#new-token-url").inner_text())
        await display.wait_for_function("() => document.body.dataset.live === 'live'")
        await display.close()

        await page.reload()
        device = page.locator("#tokens tr").filter(has_text="pit 1 stud display")
        await expect(device).to_contain_text("in use")
        assert token not in await page.content()
        await device.locator("button.revoke").click()
        await expect(device).to_contain_text("Its display stops showing amounts at once")
        await device.locator("button.confirm-revoke").click()
        await expect(device.locator(".result")).to_contain_text("Revoked")
        await expect(device).to_contain_text("revoked")
        await expect(device.locator("button.revoke")).to_have_count(0)

        # The log, newest first, in words.
        await page.click("#log-filter button[type=submit]")
        log = page.locator("#audit-log tbody tr")
        await expect(log.first).to_contain_text("revoked a display token")
        for words in ("created an account", "disabled an account", "made a display token"):
            await expect(log.filter(has_text=words).first).to_be_visible()
        await expect(log.filter(has_text="created a link")).to_have_count(1)
        whole = await page.locator("#audit-log").inner_text()
        assert "FLUSH" not in whole and "caribbean_stud" not in whole, whole
        await page.select_option("#log-action", "device_token.revoke")
        await expect(log).to_have_count(1)
        await expect(log.first).to_contain_text(me)
        await page.select_option("#log-action", "")
        await page.fill("#log-who", me)
        await expect(log.filter(has_text="created an account")).to_have_count(1)
        text = await page.locator("#audit-log").inner_text()
        assert "_us" not in text and "{" not in text and "device_token" not in text, text
        await shot(page, "admin-4-audit-log")


async def test_admin_sees_the_software_check_and_runs_it_now(
    tmp_path: Path,
    tree_manifest: Path,
    browser: Browser,
) -> None:
    manifest = manifest_copy(tree_manifest, tmp_path)
    settings = settings_in(tmp_path).model_copy(update={"manifest_file": manifest})
    async with web_floor(tmp_path, links=STUD, settings=settings) as wf:
        page = await signed_in(browser, wf, Role.ADMIN, "/admin", username="ann")
        await expect(page.locator("#software-state")).to_have_text("passed")
        await expect(page.locator("#software-when")).to_contain_text("at start")
        await expect(page.locator("#software-manifest")).to_contain_text(str(manifest))
        await page.click("#software-check")
        await expect(page.locator("#software-result")).to_contain_text("Checked now: all")
        await expect(page.locator("#software-when")).to_contain_text("asked by ann")

        as_if_edited(manifest)  # as an edit of app/web.py would make it differ
        await page.click("#software-check")
        await expect(page.locator("#software-state")).to_have_text("FAILED")
        await expect(page.locator("#software-result")).to_contain_text(
            "app/web.py differs from the manifest"
        )
        row = page.locator('#software-mismatches tr[data-file="app/web.py"]')
        await expect(row).to_contain_text("differs from the manifest")
        await expect(page.locator('#software-links tr[data-link="stud"]')).to_contain_text(
            "recover the link with two people"
        )
        await shot(page, "admin-5-software-check-failed")
        checks = page.locator("#audit-log tbody tr").filter(
            has_text="checked the installed software against its manifest"
        )
        await expect(checks).to_have_count(2)
        await expect(checks.first).to_contain_text("result: failed")
