"""The headers every response carries: the content security policy, the other security
headers, and the bound on request bodies (``SecurityHeaders``)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from controller.paperwork.documents import MAX_DOCUMENT_BYTES

__all__ = [
    "COMMON_HEADERS",
    "DOCS_PATHS",
    "DOCS_POLICY",
    "MAX_REQUEST_BYTES",
    "PAGE_POLICY",
    "STATIC",
    "SecurityHeaders",
    "headers_for_path",
]

STATIC = Path(__file__).parent.parent / "static"
# The API's own documentation pages load Swagger UI and ReDoc from their CDN with an inline
# start-up script; they show no data, so they get a looser policy than everything else.
DOCS_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc"})
# The largest request body: a supporting document and the form fields around it.
MAX_REQUEST_BYTES = MAX_DOCUMENT_BYTES + 64 * 1024


def _style_attribute_hashes(folder: Path) -> list[str]:
    """CSP hashes of the ``style="..."`` attributes of the pages, which the policy names one by
    one rather than admitting every inline style."""
    found: set[str] = set()
    for page in sorted(folder.glob("*.html")):
        for value in re.findall(r'\bstyle="([^"]*)"', page.read_text(encoding="utf-8")):
            digest = base64.b64encode(hashlib.sha256(value.encode("utf-8")).digest()).decode()
            found.add(f"'sha256-{digest}'")
    return sorted(found)


def _policy(directives: Mapping[str, str]) -> str:
    return "; ".join(f"{name} {value}" for name, value in directives.items())


_STYLE_HASHES = " ".join(_style_attribute_hashes(STATIC))
# The pages run only their own files from /static: no inline script, no eval, nothing from
# elsewhere; the feed's WebSocket is same-origin ('self' covers ws: and wss: in CSP 3).
PAGE_POLICY = _policy(
    {
        "default-src": "'none'",
        "script-src": "'self'",
        "style-src": f"'self' 'unsafe-hashes' {_STYLE_HASHES}".strip()
        if _STYLE_HASHES
        else "'self'",
        "img-src": "'self' data:",
        "font-src": "'self'",
        "connect-src": "'self'",
        "base-uri": "'none'",
        "form-action": "'self'",
        "frame-ancestors": "'none'",
    }
)
DOCS_POLICY = _policy(
    {
        "default-src": "'none'",
        "script-src": "'self' 'unsafe-inline' https://cdn.jsdelivr.net",
        "style-src": "'self' 'unsafe-inline' https://cdn.jsdelivr.net https://fonts.googleapis.com",
        "img-src": "'self' data: https://fastapi.tiangolo.com https://cdn.redoc.ly",
        "font-src": "'self' https://fonts.gstatic.com",
        "worker-src": "blob:",
        "connect-src": "'self'",
        "base-uri": "'none'",
        "form-action": "'self'",
        "frame-ancestors": "'none'",
    }
)
COMMON_HEADERS: dict[str, str] = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": (
        "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), "
        "microphone=(), payment=(), usb=(), serial=(), hid=(), bluetooth=()"
    ),
}


def _is_data_path(path: str) -> bool:
    """Answers holding the floor's data, which no browser or proxy should keep."""
    return path.startswith("/api/") or path in {"/metrics", "/openapi.json"}


def headers_for_path(path: str) -> dict[str, str]:
    """The security headers of an answer to ``path`` (a route's own Cache-Control stays)."""
    headers = dict(COMMON_HEADERS)
    headers["Content-Security-Policy"] = DOCS_POLICY if path in DOCS_PATHS else PAGE_POLICY
    if _is_data_path(path):
        headers["Cache-Control"] = "no-store"
    return headers


class SecurityHeaders:
    """ASGI middleware: the security headers on every HTTP answer, and a bound on request
    bodies (413 beyond ``MAX_REQUEST_BYTES``, declared or streamed)."""

    def __init__(self, app: ASGIApp, *, max_body: int = MAX_REQUEST_BYTES) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in headers_for_path(scope["path"]).items()
        ]

        async def _start(message: Message) -> None:
            headers = list(message.get("headers", []))
            present = {name.lower() for name, _ in headers}
            headers += [(n, v) for n, v in extra if n not in present]
            await send({**message, "headers": headers})

        async def refuse(status: int, detail: str) -> None:
            body = json.dumps({"detail": detail}).encode()
            await _start(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"connection", b"close"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})

        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            await refuse(413, f"the request is larger than {self.max_body} bytes")
            return

        received = 0
        refused = False
        started = False

        async def bounded_receive() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body and not refused:
                    refused = True
                    if not started:
                        await refuse(413, f"the request is larger than {self.max_body} bytes")
                    # The application sees a caller gone away and stops reading.
                    return {"type": "http.disconnect"}
            return message

        async def with_headers(message: Message) -> None:
            nonlocal started
            if refused:
                return  # 413 has been sent; nothing of the application's answer follows
            if message["type"] == "http.response.start":
                started = True
                await _start(message)
                return
            await send(message)

        try:
            await self.app(scope, bounded_receive, with_headers)
        except ClientDisconnect:
            if not refused:
                raise
        except Exception:
            # An error nothing below answered: the 500 carries the headers too (the server's
            # own error answer, further out, would not); raised on for the server to log.
            if not started and not refused:
                await refuse(500, "internal error: the request could not be answered")
            raise
