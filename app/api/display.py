"""The floor displays: the page ``/display/{link_id}`` and its feed ``/ws/links/{link_id}``.

Both are public unless the installation requires display tokens (``display_requires_token``);
then ``?token=`` must carry a display device token or a signed-in person's token. The page is
plain HTML, CSS and JavaScript from ``app/static``; everything it shows comes from the feed
(``app.live`` documents the messages).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path as FilePath
from typing import Annotated

from fastapi import APIRouter, FastAPI, Path, Query, Request, WebSocket
from fastapi.responses import HTMLResponse
from starlette.websockets import WebSocketState

from app.api.deps import get_service, ws_service
from app.api.text_fields import IdText
from app.live import LiveHub
from app.security import display_access_ok

# Close codes of the feed, in the application range 4000-4999 (401 and 404 as in HTTP).
CLOSE_UNAUTHORIZED = 4401
CLOSE_UNKNOWN_LINK = 4404
# RFC 6455 1013 "try again later": the client did not keep up and may reconnect.
CLOSE_TOO_SLOW = 1013

TokenQuery = Annotated[
    str | None,
    Query(description="A display device token, when the installation requires one."),
]
LinkPath = Annotated[IdText, Path(description="The link's id", examples=["stud"])]


@asynccontextmanager
async def live_hub(app: FastAPI) -> AsyncIterator[None]:
    """One hub per process, started after the service and stopped before it."""
    hub = LiveHub(app.state.service)
    await hub.start()
    app.state.live_hub = hub
    try:
        yield
    finally:
        await hub.stop()


router = APIRouter(tags=["floor display"], lifespan=live_hub)


def _bearer(header: str | None) -> str | None:
    if header and header[:7].lower() == "bearer ":
        return header[7:].strip() or None
    return None


@router.websocket("/ws/links/{link_id}", name="link_feed")
async def link_feed(websocket: WebSocket, link_id: LinkPath, token: TokenQuery = None) -> None:
    """A snapshot of the link's display state, then every change; closes with 4401 when a
    token is required and not valid, 4404 for an unknown link."""
    service = ws_service(websocket)
    token = token or _bearer(websocket.headers.get("authorization"))
    # Accept first so that the close code reaches the page (a refused handshake is a bare 403).
    await websocket.accept()
    if not await display_access_ok(service, token):
        await websocket.close(CLOSE_UNAUTHORIZED, "a valid display token is required")
        return
    if link_id not in service.runtime.states:
        await websocket.close(CLOSE_UNKNOWN_LINK, f"no link {link_id[:60]!r}")
        return
    hub: LiveHub = websocket.app.state.live_hub
    ending = await hub.serve(link_id, websocket.send_text, websocket.receive)
    if ending == "dropped" and websocket.application_state is WebSocketState.CONNECTED:
        # Its buffer is full, so the close frame may never leave: do not wait for it.
        with contextlib.suppress(Exception):
            async with asyncio.timeout(1.0):
                await websocket.close(CLOSE_TOO_SLOW, "not keeping up; reconnect")


_PAGE = (FilePath(__file__).parent.parent / "static" / "display.html").read_text(encoding="utf-8")


def _message_page(status: int, title: str, text: str) -> HTMLResponse:
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>"
        '<link rel="stylesheet" href="/static/common.css">'
        '<link rel="stylesheet" href="/static/display.css"></head>'
        f'<body class="message"><main><h1>{html.escape(title)}</h1>'
        f"<p>{html.escape(text)}</p></main></body></html>"
    )
    return HTMLResponse(body, status_code=status)


@router.get(
    "/display/{link_id}",
    response_class=HTMLResponse,
    summary="The floor display of a link (a page for a TV on the floor)",
    responses={
        401: {"description": "the installation requires a display token"},
        404: {"description": "no such link"},
    },
)
async def display_page(
    request: Request, link_id: LinkPath, token: TokenQuery = None
) -> HTMLResponse:
    service = get_service(request)
    if not await display_access_ok(service, token or _bearer(request.headers.get("authorization"))):
        return _message_page(
            401,
            "Display token required",
            "This installation shows its jackpots to its own displays only: open this page "
            "with ?token= and the display's device token.",
        )
    if link_id not in service.runtime.states:
        return _message_page(404, "No such jackpot", f"There is no link {link_id!r}.")
    return HTMLResponse(_PAGE, headers={"Cache-Control": "no-cache"})
