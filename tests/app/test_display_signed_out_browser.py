"""A display whose token is revoked says so and stops, in a real browser: the page shows why
it was signed out rather than reconnecting silently with a token that will never work."""

from __future__ import annotations

from pathlib import Path

import httpx
from playwright.async_api import Browser

from controller.core.games import Game
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.browser import pytestmark, shot
from tests.app.floor import settings_in, web_floor

__all__ = ["pytestmark"]

WAIT_MS = 30_000


async def test_a_revoked_display_shows_it_is_signed_out(tmp_path: Path, browser: Browser) -> None:
    settings = settings_in(tmp_path).model_copy(update={"display_requires_token": True})
    async with (
        web_floor(tmp_path, settings=settings, links={"stud": (Game.CARIBBEAN_STUD, 1)}) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        admin = await headers_for(wf, Role.ADMIN, "root")
        made = (await http.post("/api/v1/device-tokens", headers=admin, json={"name": "p1"})).json()
        page = await browser.new_page(viewport={"width": 1920, "height": 1080})
        opened: list[str] = []
        page.on("websocket", lambda ws: opened.append(ws.url))
        await page.goto(f"{wf.base_url}/display/stud?token={made['token']}")
        await page.wait_for_function("() => document.body.dataset.live === 'live'", timeout=WAIT_MS)
        revoke = f"/api/v1/device-tokens/{made['token_id']}/revoke"
        assert (await http.post(revoke, headers=admin)).status_code == 200
        await page.wait_for_function(
            "() => document.getElementById('banner').textContent.startsWith('Signed out')",
            timeout=5_000,
        )
        banner = await page.text_content("#banner")
        assert banner == (
            "Signed out: token revoked — open this display again with a valid display token"
        )
        assert await page.evaluate("document.body.dataset.live") == "stale"
        await shot(page, "display-signed-out")
        # It stops: no new connection with a token that will not be let in again.
        await page.wait_for_timeout(3_000)
        assert len(opened) == 1
