"""The API's documentation pages over plain HTTP: the application serves them and every file
they load, each under the security headers, with a policy that runs only the site's own
scripts and names nothing elsewhere; FastAPI's own CDN pages are gone."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from fastapi import routing

from app.security.headers import DOCS_POLICY, STATIC, redoc_policy
from app.web import create_app
from controller.core.games import Game
from tests.app.floor import web_floor
from tests.app.test_security_headers import header_problems

ONE_LINK = {"stud": (Game.CARIBBEAN_STUD, 1)}
PAGES = ("/docs", "/redoc", "/docs/oauth2-redirect")
CONTENT_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".png": "image/png",
}


def directives(policy: str) -> dict[str, str]:
    return dict(part.strip().split(" ", 1) for part in policy.split(";"))


def assets_of(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/[^"]+)"', html)


async def test_the_pages_and_every_file_they_load_are_served_here(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=ONE_LINK) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        problems: list[str] = []
        assets: set[str] = set()
        for path in PAGES:
            page = await http.get(path)
            assert page.status_code == 200, (path, page.status_code)
            assert page.headers["content-type"].startswith("text/html")
            problems += header_problems(f"GET {path} (200)", page)
            # Nothing on the page comes from elsewhere, and no script is written into it.
            assert "http://" not in page.text and "https://" not in page.text, path
            assert not re.search(r"<script(?![^>]*\bsrc=)", page.text), path
            assert not re.search(r"\son[a-z]+=", page.text), path
            found = assets_of(page.text)
            assert found and all(a.startswith("/static/") for a in found), found
            assets.update(found)
        assert {
            "/static/vendor/swagger_ui/swagger-ui-bundle.js",
            "/static/vendor/swagger_ui/swagger-ui.css",
            "/static/vendor/swagger_ui/oauth2-redirect.js",
            "/static/vendor/swagger_ui/favicon-32x32.png",
            "/static/vendor/redoc/redoc.standalone.js",
            "/static/docs.js",
            "/static/redoc.js",
        } == assets
        for asset in sorted(assets):
            answer = await http.get(asset)
            assert answer.status_code == 200, asset
            suffix = Path(asset).suffix
            assert answer.headers["content-type"].startswith(CONTENT_TYPES[suffix]), asset
            assert answer.content == (STATIC / asset.removeprefix("/static/")).read_bytes()
            problems += header_problems(f"GET {asset} (200)", answer)
        description = await http.get("/openapi.json")
        assert description.status_code == 200
        assert description.json()["info"]["title"] == "Progressive jackpot controller"
        assert not problems, "\n".join(problems)


async def test_the_policies_admit_only_what_each_page_needs(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=ONE_LINK) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        docs = await http.get("/docs")
        assert docs.headers["content-security-policy"] == DOCS_POLICY
        swagger = directives(DOCS_POLICY)
        assert swagger["script-src"] == swagger["style-src"] == "'self'"
        assert "worker-src" not in swagger
        first, second = await http.get("/redoc"), await http.get("/redoc")
        nonces = []
        for answer in (first, second):
            policy = answer.headers["content-security-policy"]
            found = re.search(r"'nonce-([A-Za-z0-9_-]+)'", policy)
            assert found is not None, policy
            nonces.append(found.group(1))
            assert f'data-style-nonce="{found.group(1)}"' in answer.text
            assert policy == redoc_policy(found.group(1))
            assert answer.headers["cache-control"] == "no-store"  # a nonce is for one answer
        assert nonces[0] != nonces[1]
        redoc = directives(first.headers["content-security-policy"])
        assert redoc["script-src"] == "'self'" and redoc["worker-src"] == "blob:"
        assert redoc["default-src"] == "'none'" and redoc["connect-src"] == "'self'"
        for policy in (DOCS_POLICY, first.headers["content-security-policy"]):
            assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
            assert "http" not in policy, policy  # no host anywhere: nothing from elsewhere


def test_fastapis_own_documentation_pages_are_off(tmp_path: Path) -> None:
    from controller.runtime.service import FloorService
    from controller.settings import Settings

    app = create_app(FloorService(Settings(database_url="sqlite+aiosqlite://")))
    assert app.docs_url is None and app.redoc_url is None
    assert app.openapi_url == "/openapi.json"
    paths = [route.path for route in routing.iter_route_contexts(app.routes)]
    for path in PAGES:
        assert paths.count(path) == 1, path
    vendor = (STATIC / "vendor" / "README.md").read_text(encoding="utf-8")
    assert "swagger-ui-dist" in vendor and "5.35.0" in vendor and "Apache-2.0" in vendor
    assert "`redoc`" in vendor and "2.5.4" in vendor and "MIT" in vendor
    for licence in ("swagger_ui/LICENSE", "swagger_ui/NOTICE", "redoc/LICENSE"):
        assert (STATIC / "vendor" / licence).is_file(), licence
