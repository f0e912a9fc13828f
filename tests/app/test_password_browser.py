"""A person with a one-time code chooses their own password on the sign-in form of a page, in
Debian's Chromium: the code signs in to nothing else, the new password to everything."""

from __future__ import annotations

from pathlib import Path

import httpx
from playwright.async_api import Browser, expect

from controller.core.games import Game
from controller.roles import Role
from tests.app.auth import headers_for, new_user
from tests.app.browser import pytestmark, shot
from tests.app.floor import web_floor

__all__ = ["pytestmark"]


async def test_a_reset_person_chooses_their_password_on_the_page(
    tmp_path: Path, browser: Browser
) -> None:
    async with (
        web_floor(tmp_path, links={"stud": (Game.CARIBBEAN_STUD, 1)}) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        admin = await headers_for(wf, Role.ADMIN, "root")
        second = await headers_for(wf, Role.ADMIN, "ann")
        await new_user(wf, Role.TECHNICIAN, "tina.tech")
        # A technician checks others' work: her reset is asked by one admin, confirmed by another.
        reset = await http.post("/api/v1/users/tina.tech/reset", headers=admin)
        assert reset.status_code == 202, reset.text
        confirmed = await http.post(
            f"/api/v1/account-requests/{reset.json()['request_id']}/confirm", headers=second
        )
        assert confirmed.status_code == 200, confirmed.text
        code = f"{reset.json()['code_first_half']} {confirmed.json()['code_second_half']}"

        page = await browser.new_page(viewport={"width": 1200, "height": 800})
        await page.goto(wf.base_url + "/tech")
        await page.fill("#login-username", "tina.tech")
        await page.fill("#login-password", code)
        await page.click("#login-form button[type=submit]")
        await expect(page.locator("#login-message")).to_contain_text("choose a password")
        chosen = page.locator("#login-new-password")
        await expect(chosen).to_be_visible()
        await shot(page, "password-1-code-accepted-choose-one")
        await chosen.fill("aaaaaaaaaa")
        await page.click("#login-form button[type=submit]")
        await expect(page.locator("#login-message")).to_contain_text("may not repeat")
        await chosen.fill("tina's own passphrase")
        await page.click("#login-form button[type=submit]")
        await expect(page.locator("#who")).to_have_text("tina.tech (technician)")
        await expect(chosen).to_be_hidden()

        signed = await http.post(
            "/api/v1/auth/token",
            data={"username": "tina.tech", "password": "tina's own passphrase"},
        )
        assert signed.status_code == 200


async def test_a_new_commission_agent_sets_a_password_on_the_page(
    tmp_path: Path, browser: Browser
) -> None:
    """Two admins make the agent; the agent's first sign-in, on a phone, is told in the page's
    own words to choose a password there, never to call the API."""
    async with (
        web_floor(tmp_path, links={"stud": (Game.CARIBBEAN_STUD, 1)}) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        ann = await headers_for(wf, Role.ADMIN, "ann")
        bob = await headers_for(wf, Role.ADMIN, "bob")
        asked = await http.post(
            "/api/v1/users", headers=ann, json={"username": "cara", "role": "commission_agent"}
        )
        assert asked.status_code == 202, asked.text
        confirmed = await http.post(
            f"/api/v1/account-requests/{asked.json()['request_id']}/confirm", headers=bob
        )
        assert confirmed.status_code == 200, confirmed.text
        code = f"{asked.json()['code_first_half']} {confirmed.json()['code_second_half']}"

        page = await browser.new_page(viewport={"width": 390, "height": 844})
        await page.goto(wf.base_url + "/commission")
        await page.fill("#login-username", "cara")
        await page.fill("#login-password", code)
        await page.click("#login-form button[type=submit]")
        said = page.locator("#login-message")
        await expect(said).to_contain_text("choose a password of your own")
        await expect(said).not_to_contain_text("/api/")
        await expect(page.locator("#login-form button[type=submit]")).to_have_text(
            "Set password and sign in"
        )
        await page.locator("#login-new-password").fill("cara's own passphrase")
        await shot(page, "password-2-commission-agent-chooses-phone")
        await page.click("#login-form button[type=submit]")
        await expect(page.locator("#who")).to_have_text("cara (commission agent)")
        await expect(page.locator("#login-form button[type=submit]")).to_have_text("Sign in")
