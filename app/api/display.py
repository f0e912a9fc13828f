"""The floor displays: the page ``/display/{link_id}`` and its feed ``/ws/links/{link_id}``.

Both are public unless the installation requires display tokens (``display_requires_token``);
then ``?token=`` must carry a display device token or a signed-in person's token. The page is
plain HTML, CSS and JavaScript from ``app/static``; everything it shows comes from the feed
(``app.live`` documents the messages).

The feed is opened by this server's own pages: a browser's handshake from another site's
page (its ``Origin``) is refused before it is accepted (1008, an HTTP 403), and one address
holds at most ``ws_max_per_address`` feeds at once (past it, 1013 "try again later"), so no
page elsewhere and no single machine can take the connections the floor's displays need.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path as FilePath
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, FastAPI, Path, Request, WebSocket
from fastapi.responses import HTMLResponse
from starlette.websockets import WebSocketState

from app.api.deps import get_service, ws_service
from app.api.pages import stated
from app.api.text_fields import IdText
from app.live import LiveHub
from app.security.authentication import (
    Principal,
    TokenQuery,
    TokenRefused,
    authority,
    display_access_ok,
)
from app.security.feed_access import FeedAccess
from controller.runtime.service import FloorService
from controller.settings import Settings
from controller.storage.errors import NotFound

# Close codes of the feed, in the application range 4000-4999 (401 and 404 as in HTTP). A
# 4401's reason says why in a few words ("signed out: token revoked"), for the display to show.
CLOSE_UNAUTHORIZED = 4401
CLOSE_UNKNOWN_LINK = 4404
# RFC 6455 1013 "try again later": the client did not keep up and may reconnect, or its
# address holds as many feeds as it may.
CLOSE_TOO_SLOW = 1013
CLOSE_TOO_MANY = 1013
# RFC 6455 1008 "policy violation": before the handshake is accepted, sent as an HTTP 403.
CLOSE_FOREIGN_ORIGIN = 1008
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def _origin(text: str) -> tuple[str, str, int] | None:
    """``("https", "host", 443)`` of an Origin, or None when it is not a web origin ("null")."""
    try:
        parts = urlsplit(text.strip().lower())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return parts.scheme, parts.hostname, port or _DEFAULT_PORTS[parts.scheme]


class DisplayDoor:
    """Who may open a display feed: which origins, and how many at once from one address."""

    def __init__(self, settings: Settings) -> None:
        self.allowed = {o for o in map(_origin, settings.allowed_origins) if o is not None}
        self.require_origin = settings.ws_require_origin
        self.max_per_address = settings.ws_max_per_address
        self.open: Counter[str] = Counter()
        self.refused: Counter[str] = Counter({"origin": 0, "too_many": 0})

    def origin_ok(self, origin: str | None, host: str | None) -> bool:
        """The handshake comes from this server's own page (the Origin names the Host the
        client addressed), from a listed origin, or from no page at all (no Origin)."""
        if origin is None:
            ok = not self.require_origin
        else:
            found = _origin(origin)
            own = _origin(f"{found[0]}://{host}") if found is not None and host else None
            ok = found is not None and (found == own or found in self.allowed)
        if not ok:
            self.refused["origin"] += 1
        return ok

    def enter(self, address: str) -> bool:
        """Count a feed of ``address`` in, unless it holds as many as it may."""
        if self.open[address] >= self.max_per_address:
            self.refused["too_many"] += 1
            return False
        self.open[address] += 1
        return True

    def leave(self, address: str) -> None:
        self.open[address] -= 1
        if self.open[address] <= 0:
            del self.open[address]


LinkPath = Annotated[IdText, Path(description="The link's id", examples=["stud"])]


@asynccontextmanager
async def live_hub(app: FastAPI) -> AsyncIterator[None]:
    """One hub per process, started after the service and stopped before it."""
    hub = LiveHub(app.state.service)
    await hub.start()
    app.state.live_hub = hub
    app.state.display_door = DisplayDoor(app.state.service.settings)
    app.state.feed_access = access = FeedAccess(authority(app.state.service))
    try:
        yield
    finally:
        await hub.stop()
        await access.stop()


router = APIRouter(tags=["floor display"], lifespan=live_hub)


def _bearer(header: str | None) -> str | None:
    if header and header[:7].lower() == "bearer ":
        return header[7:].strip() or None
    return None


@router.websocket("/ws/links/{link_id}", name="link_feed")
async def link_feed(websocket: WebSocket, link_id: LinkPath, token: TokenQuery = None) -> None:
    """A snapshot of the link's display state, then every change; closes with 4401 when a
    token is required and not valid, or stops being valid while the feed is open, 4404 for an
    unknown link."""
    service = ws_service(websocket)
    door: DisplayDoor = websocket.app.state.display_door
    if not door.origin_ok(websocket.headers.get("origin"), websocket.headers.get("host")):
        # Before accepting: a page of another site learns nothing, not even a close code.
        await websocket.close(CLOSE_FOREIGN_ORIGIN, "this feed is for this server's pages")
        return
    # The socket's own peer: a forwarded-for header is whatever the client chose to write.
    address = websocket.client.host if websocket.client is not None else "unknown"
    # Accept first so that the close code reaches the page (a refused handshake is a bare 403).
    await websocket.accept()
    if not door.enter(address):
        await websocket.close(CLOSE_TOO_MANY, "too many displays from this address; try later")
        return
    try:
        await _feed(websocket, service, link_id, token)
    finally:
        door.leave(address)


async def _feed(
    websocket: WebSocket, service: FloorService, link_id: str, token: str | None
) -> None:
    token = token or _bearer(websocket.headers.get("authorization"))
    principal: Principal | None = None
    if service.settings.display_requires_token:
        if not token:
            await websocket.close(CLOSE_UNAUTHORIZED, "a valid display token is required")
            return
        try:
            principal = await authority(service).principal(token)
        except TokenRefused as exc:
            await websocket.close(CLOSE_UNAUTHORIZED, f"signed out: {exc.why}")
            return
    if not _on_floor(service, link_id):
        await websocket.close(CLOSE_UNKNOWN_LINK, f"no link {link_id[:60]!r}")
        return
    hub: LiveHub = websocket.app.state.live_hub
    serving = hub.serve(link_id, websocket.send_text, websocket.receive)
    if principal is None:
        ending = await serving
    else:
        # The token is checked again while the feed is open: revoked, disabled, another role
        # or expired, the feed ends as a new request with it would be refused.
        access: FeedAccess = websocket.app.state.feed_access
        feed = asyncio.create_task(serving, name=f"display {link_id} feed")
        refused = asyncio.create_task(access.until_refused(principal))
        try:
            done, _ = await asyncio.wait((feed, refused), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (feed, refused):
                task.cancel()
            await asyncio.gather(feed, refused, return_exceptions=True)
        if feed not in done:
            await _close_quickly(
                websocket, CLOSE_UNAUTHORIZED, f"signed out: {refused.result().why}"
            )
            return
        ending = feed.result()
    if ending == "dropped":
        await _close_quickly(websocket, CLOSE_TOO_SLOW, "not keeping up; reconnect")


def _on_floor(service: FloorService, link_id: str) -> bool:
    """Whether the link is one of this floor's (``Records.known_link``)."""
    try:
        service.records.known_link(link_id)
    except NotFound:
        return False
    return True


async def _close_quickly(websocket: WebSocket, code: int, reason: str) -> None:
    # Its buffer may be full, so the close frame may never leave: do not wait for it.
    if websocket.application_state is not WebSocketState.CONNECTED:
        return
    with contextlib.suppress(Exception):
        async with asyncio.timeout(1.0):
            await websocket.close(code, reason)


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
    if not _on_floor(service, link_id):
        return _message_page(404, "No such jackpot", f"There is no link {link_id!r}.")
    # The jurisdiction, and demonstration mode when the installation runs in it or the link
    # was opened in it; the feed says the same, and the page follows it.
    return HTMLResponse(
        stated(_PAGE, service.statement(link_id).for_patrons()),
        headers={"Cache-Control": "no-cache"},
    )
