"""The pages: the landing page, the technician's, dealer's, auditor's, surveillance's,
commission's, supervisor's and admin's pages: plain HTML, CSS and JavaScript files.

The pages hold no data of their own; their scripts sign in and call the JSON API, so what a
page shows is what the API says, role checks included.
"""

from __future__ import annotations

import html
from functools import cache
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.api.deps import get_service
from controller.rules.statement import Statement

router = APIRouter(include_in_schema=False)

PAGES = Path(__file__).resolve().parent.parent / "static"


@cache
def _page(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


def stated(page: str, statement: Statement) -> str:
    """``page`` stating the law it is served under: demonstration mode in a banner at its head
    (``#demonstration``, hidden when it does not apply: a display's script shows it if its
    feed comes to say so) and the jurisdiction at its foot (``#jurisdiction``). Every page and
    floor display is served through here, so none is seen without them."""
    words = statement.demonstration
    banner = (
        '<div class="demonstration-banner" id="demonstration" role="alert"'
        + (" hidden>" if words is None else ">")
        + html.escape(words or "")
        + "</div>"
    )
    foot = (
        '<footer class="law-statement" id="jurisdiction">Jurisdiction: '
        f"{html.escape(statement.jurisdiction)}</footer>"
    )
    opened = page.index(">", page.index("<body")) + 1
    closed = page.rindex("</body>")
    return page[:opened] + banner + page[opened:closed] + foot + page[closed:]


def _served(request: Request, name: str) -> HTMLResponse:
    """A page, stating the installation's jurisdiction and, when it applies, demonstration
    mode. Anyone may open a page: it names no link (the floor's data is the API's to give, the
    link answers say which were opened in demonstration mode)."""
    return HTMLResponse(stated(_page(name), get_service(request).statement().unnamed()))


@router.get("/favicon.ico")
async def favicon() -> Response:
    # Browsers ask for it of their own accord: the pages' icon, never a 404 in their console.
    return Response(
        _page("favicon.svg"),
        media_type="image/svg+xml",
        headers={"Cache-Control": "public, max-age=86400"},
    )


@router.get("/", response_class=HTMLResponse)
async def home_page(request: Request) -> HTMLResponse:
    # Everyone starts here: the floor's displays, a sign-in, then each role's own pages.
    return _served(request, "home.html")


@router.get("/tech", response_class=HTMLResponse)
async def tech_page(request: Request) -> HTMLResponse:
    return _served(request, "tech.html")


@router.get("/dealer", response_class=HTMLResponse)
async def dealer_pick_page(request: Request) -> HTMLResponse:
    return _served(request, "dealer.html")


@router.get("/dealer/{table_id}", response_class=HTMLResponse)
async def dealer_page(request: Request, table_id: str) -> HTMLResponse:
    # The script reads the table from the address; nothing of the path is written into HTML.
    return _served(request, "dealer.html")


@router.get("/audit", response_class=HTMLResponse)
async def audit_page(request: Request) -> HTMLResponse:
    return _served(request, "audit.html")


@router.get("/surveillance", response_class=HTMLResponse)
async def surveillance_page(request: Request) -> HTMLResponse:
    return _served(request, "surveillance.html")


@router.get("/commission", response_class=HTMLResponse)
async def commission_page(request: Request) -> HTMLResponse:
    return _served(request, "commission.html")


@router.get("/admin", response_class=HTMLResponse)
async def admin_page(request: Request) -> HTMLResponse:
    return _served(request, "admin.html")


@router.get("/supervisor", response_class=HTMLResponse)
async def supervisor_page(request: Request) -> HTMLResponse:
    return _served(request, "supervisor.html")
