"""The API's documentation pages, Swagger UI at ``/docs`` and ReDoc at ``/redoc``, served by
the application itself from files it ships (``app/static/vendor``, versions and licences in
its README): a controller on a floor network with no way out still documents its API.

FastAPI's own pages are turned off (``docs_url=None``, ``redoc_url=None``): they load their
scripts and fonts from CDNs and start them with an inline script, which the pages' policy
refuses. These pages start theirs from ``/static/docs.js`` and ``/static/redoc.js``.
"""

from __future__ import annotations

import secrets
from functools import cache
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from app.security.headers import REDOC_PATH, redoc_policy

router = APIRouter(include_in_schema=False)

PAGES = Path(__file__).resolve().parent.parent / "static"
DOCS_URL = "/docs"
OAUTH2_REDIRECT_URL = "/docs/oauth2-redirect"
REDOC_URL = REDOC_PATH
# Where redoc.html takes the nonce of its answer (redoc.js hands it to ReDoc).
NONCE_MARK = "STYLE-NONCE"


@cache
def _page(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


@router.get(DOCS_URL, response_class=HTMLResponse)
async def swagger_ui() -> HTMLResponse:
    return HTMLResponse(_page("docs.html"))


@router.get(OAUTH2_REDIRECT_URL, response_class=HTMLResponse)
async def swagger_ui_oauth2_redirect() -> HTMLResponse:
    return HTMLResponse(_page("docs-oauth2-redirect.html"))


@router.get(REDOC_URL, response_class=HTMLResponse)
async def redoc() -> HTMLResponse:
    # ReDoc writes its styles into <style> elements as it renders: a nonce drawn for this
    # answer admits them (the security headers keep a route's own policy).
    nonce = secrets.token_urlsafe(18)
    return HTMLResponse(
        _page("redoc.html").replace(NONCE_MARK, nonce),
        headers={"Content-Security-Policy": redoc_policy(nonce), "Cache-Control": "no-store"},
    )
