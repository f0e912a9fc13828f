"""The pages work in Debian's Chromium under the Content-Security-Policy, and it is enforced.

Each page is opened, signed in where it asks for it and used until its scripts have shown
data; any CSP violation the browser reports (event or console) fails the test. Then an inline
script is slipped into a page: the browser must refuse to run it.
"""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, ConsoleMessage, Page, expect

from controller.core.games import Game
from controller.roles import Role
from tests.app.auth import new_user
from tests.app.browser import pytestmark, role_words
from tests.app.floor import WebFloor, web_floor

__all__ = ["pytestmark"]

WAIT_MS = 30_000
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`);
});
"""


async def _open(browser: Browser, url: str, console: list[str]) -> Page:
    page = await browser.new_page(viewport={"width": 1400, "height": 1000})
    await page.add_init_script(RECORD_VIOLATIONS)

    def keep(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            console.append(f"{url}: {message.text}")

    page.on("console", keep)
    page.on("pageerror", lambda exc: console.append(f"{url}: page error {exc}"))
    await page.goto(url)
    return page


async def _sign_in(page: Page, wf: WebFloor, role: Role) -> None:
    name, password = await new_user(wf, role)
    await page.fill("#login-username", name)
    await page.fill("#login-password", password)
    await page.click("#login-form button[type=submit]")
    await expect(page.locator("#who")).to_have_text(f"{name} ({role_words(role)})", timeout=WAIT_MS)


async def _violations(page: Page) -> list[str]:
    found: list[str] = await page.evaluate("window.__violations")
    return found


async def test_the_pages_work_under_the_policy_and_inline_script_is_refused(
    tmp_path: Path,
    browser: Browser,
) -> None:
    console: list[str] = []
    problems: list[str] = []
    async with (
        web_floor(tmp_path, links={"stud": (Game.CARIBBEAN_STUD, 2)}) as wf,
    ):
        display = await _open(browser, f"{wf.base_url}/display/stud", console)
        # The amount arrives over the feed's WebSocket: connect-src admits it.
        await display.wait_for_function(
            "() => document.body.dataset.live === 'live'", timeout=WAIT_MS
        )
        problems += await _violations(display)

        for path, role in (
            ("/tech", Role.TECHNICIAN),
            ("/audit", Role.AUDITOR),
            ("/surveillance", Role.SURVEILLANCE),
            ("/commission", Role.COMMISSION_AGENT),
            ("/dealer", Role.DEALER),
            ("/dealer/stud-1", Role.DEALER),
            ("/admin", Role.ADMIN),
            ("/", Role.SUPERVISOR),
        ):
            page = await _open(browser, wf.base_url + path, console)
            await _sign_in(page, wf, role)
            await page.wait_for_load_state("networkidle", timeout=WAIT_MS)
            problems += [f"{path}: {v}" for v in await _violations(page)]
            await page.close()

        # An inline script, as an injection would add one: not run, and reported.
        await display.evaluate(
            """() => {
              const s = document.createElement("script");
              s.textContent = "window.__ran = true";
              document.body.appendChild(s);
            }"""
        )
        await display.wait_for_function("() => window.__violations.length > 0", timeout=WAIT_MS)
        assert await display.evaluate("window.__ran === undefined")
        (refused,) = await _violations(display)
        assert refused.startswith("script-src"), refused
        await display.close()

    assert not problems, "\n".join(problems)
    csp_console = [c for c in console if "Content Security Policy" in c]
    # The one refusal expected is the inline script slipped in above.
    assert len(csp_console) == 1 and "/display/stud" in csp_console[0], "\n".join(console)
