"""The pages: the landing page, the technician's, dealer's, auditor's, commission's,
supervisor's and admin's pages: plain HTML, CSS and JavaScript files.

The pages hold no data of their own; their scripts sign in and call the JSON API, so what a
page shows is what the API says, role checks included.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

router = APIRouter(include_in_schema=False)

PAGES = Path(__file__).resolve().parent.parent / "static"


@cache
def _page(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


@router.get("/favicon.ico")
async def favicon() -> Response:
    # Browsers ask for it of their own accord: the pages' icon, never a 404 in their console.
    return Response(
        _page("favicon.svg"),
        media_type="image/svg+xml",
        headers={"Cache-Control": "public, max-age=86400"},
    )


@router.get("/", response_class=HTMLResponse)
async def home_page() -> HTMLResponse:
    # Everyone starts here: the floor's displays, a sign-in, then each role's own pages.
    return HTMLResponse(_page("home.html"))


@router.get("/tech", response_class=HTMLResponse)
async def tech_page() -> HTMLResponse:
    return HTMLResponse(_page("tech.html"))


@router.get("/dealer", response_class=HTMLResponse)
async def dealer_pick_page() -> HTMLResponse:
    return HTMLResponse(_page("dealer.html"))


@router.get("/dealer/{table_id}", response_class=HTMLResponse)
async def dealer_page(table_id: str) -> HTMLResponse:
    # The script reads the table from the address; nothing of the path is written into HTML.
    return HTMLResponse(_page("dealer.html"))


@router.get("/audit", response_class=HTMLResponse)
async def audit_page() -> HTMLResponse:
    return HTMLResponse(_page("audit.html"))


@router.get("/commission", response_class=HTMLResponse)
async def commission_page() -> HTMLResponse:
    return HTMLResponse(_page("commission.html"))


@router.get("/admin", response_class=HTMLResponse)
async def admin_page() -> HTMLResponse:
    return HTMLResponse(_page("admin.html"))


@router.get("/supervisor", response_class=HTMLResponse)
async def supervisor_page() -> HTMLResponse:
    return HTMLResponse(_page("supervisor.html"))
