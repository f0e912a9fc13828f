"""The API's documentation pages work with no way out of the machine: Swagger UI at ``/docs``
and ReDoc at ``/redoc`` render the API in Debian's Chromium while every request not to the
application's own origin is refused and recorded, under the pages' Content-Security-Policy.
"""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, ConsoleMessage, Page, Request, Route, expect

from controller.core.games import Game
from tests.app.browser import ARTIFACTS, pytestmark
from tests.app.floor import web_floor

__all__ = ["pytestmark"]

WAIT_MS = 60_000
ONE_LINK = {"stud": (Game.CARIBBEAN_STUD, 1)}
# An operation of the API, as both pages must show it.
OPERATION = "Every link with its current amount and tables"
UNKNOWN_FEATURE = "Error with Permissions-Policy header: Unrecognized feature"
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`);
});
"""


class Offline:
    """A page that may reach only ``origin``: anything else is aborted and recorded."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.blocked: list[str] = []
        self.console: list[str] = []
        self.served: list[str] = []

    async def route(self, route: Route) -> None:
        url = route.request.url
        if url == self.origin or url.startswith(self.origin + "/"):
            self.served.append(url)
            await route.continue_()
        else:
            self.blocked.append(url)
            await route.abort("blockedbyclient")

    def request(self, request: Request) -> None:
        # Requests the router does not see (a worker's, a navigation elsewhere) are still
        # requests: anything not to the origin, nor page-made data, counts as leaving.
        url = request.url
        local = url.startswith((self.origin + "/", "data:", "blob:"))
        if not local and url not in self.blocked:
            self.blocked.append(url)

    def keep(self, message: ConsoleMessage) -> None:
        # Chromium's note on a Permissions-Policy feature it does not know is about the
        # header every answer carries (the policy names features for other browsers too),
        # not about the page.
        text = message.text
        if message.type in ("error", "warning") and not text.startswith(UNKNOWN_FEATURE):
            self.console.append(text)

    async def open(self, browser: Browser, path: str) -> Page:
        page = await browser.new_page(viewport={"width": 1400, "height": 1000})
        await page.add_init_script(RECORD_VIOLATIONS)
        await page.route("**/*", self.route)
        page.on("request", self.request)
        page.on("console", self.keep)
        page.on("pageerror", lambda exc: self.console.append(f"page error {exc}"))
        await page.goto(self.origin + path)
        return page


async def view(page: Page, name: str) -> None:
    """What a reader sees first (the whole of ReDoc's page is tens of thousands of pixels)."""
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"{name}.png").write_bytes(await page.screenshot())


async def _violations(page: Page) -> list[str]:
    found: list[str] = await page.evaluate("window.__violations")
    return found


async def test_swagger_ui_and_redoc_render_the_api_with_nothing_from_elsewhere(
    tmp_path: Path,
    browser: Browser,
) -> None:
    async with web_floor(tmp_path, links=ONE_LINK) as wf:
        net = Offline(wf.base_url)

        docs = await net.open(browser, "/docs")
        await expect(
            docs.locator(".opblock-summary-description", has_text=OPERATION)
        ).to_be_visible(timeout=WAIT_MS)
        await expect(docs.locator(".info .title")).to_contain_text("Progressive jackpot controller")
        # An operation opens and shows its responses, from the description alone.
        await docs.locator(".opblock-summary", has_text=OPERATION).first.click()
        await expect(docs.locator(".opblock.is-open .responses-wrapper")).to_be_visible()
        # Tried out: the request goes to the application itself and its answer is shown.
        opened = docs.locator(".opblock.is-open")
        await opened.get_by_role("button", name="Try it out").click()
        await opened.get_by_role("button", name="Execute").click()
        await expect(
            opened.locator(".live-responses-table td.response-col_status:not(.col_header)")
        ).to_contain_text("200", timeout=WAIT_MS)
        await expect(opened.locator(".live-responses-table")).to_contain_text('"link_id": "stud"')
        await opened.scroll_into_view_if_needed()
        await view(docs, "docs-swagger-ui")
        docs_violations = await _violations(docs)

        redoc = await net.open(browser, "/redoc")
        await expect(redoc.get_by_role("heading", name=OPERATION)).to_be_visible(timeout=WAIT_MS)
        await expect(redoc.locator("h1").first).to_contain_text("Progressive jackpot controller")
        # The search runs (ReDoc's search index lives in a worker).
        await redoc.get_by_placeholder("Search...").fill("current amount")
        await expect(redoc.locator("[data-role='search:results'] li").first).to_be_visible(
            timeout=WAIT_MS
        )
        await view(redoc, "docs-redoc")
        redoc_violations = await _violations(redoc)

        assert not net.blocked, f"requests that would have left the machine: {net.blocked}"
        assert not docs_violations + redoc_violations, docs_violations + redoc_violations
        csp = [line for line in net.console if "Content Security Policy" in line]
        assert not csp, "\n".join(csp)
        assert not net.console, "\n".join(net.console)
        served = {url.removeprefix(wf.base_url) for url in net.served}
        assert {
            "/static/vendor/swagger_ui/swagger-ui-bundle.js",
            "/static/vendor/swagger_ui/swagger-ui.css",
            "/static/vendor/redoc/redoc.standalone.js",
            "/openapi.json",
        } <= served, served
