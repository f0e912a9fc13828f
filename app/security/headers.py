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
    "MAX_DATA_BYTES",
    "MAX_REQUEST_BYTES",
    "PAGE_POLICY",
    "REDOC_PATH",
    "REDOC_POLICY",
    "STATIC",
    "SecurityHeaders",
    "headers_for_path",
    "redoc_policy",
]

STATIC = Path(__file__).parent.parent / "static"
# The API's own documentation pages (app/api/docs.py): Swagger UI and ReDoc from the
# application's own files, started from its own scripts, like every other page.
DOCS_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc"})
REDOC_PATH = "/redoc"
# The largest request body: a supporting document and the form fields around it.
MAX_REQUEST_BYTES = MAX_DOCUMENT_BYTES + 64 * 1024
# Any body but an upload (JSON, a plain form): the largest one any route takes, every text at
# its longest and escaped, is a few tens of kilobytes. Past this, a body is refused before it
# is read whole, let alone parsed on the event loop that serves every table's polling.
MAX_DATA_BYTES = 256 * 1024


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
_DOCS_DIRECTIVES = {
    "default-src": "'none'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
DOCS_POLICY = _policy(_DOCS_DIRECTIVES)


# What ReDoc 2.5.4 (app/static/vendor/redoc) writes into the page beyond the docs' policy,
# each named exactly; tests/app/test_docs_browser.py fails on anything more or less:
# * the scrollbar styles (perfect-scrollbar) its bundle puts in a <style> element as it
#   loads, before it can be given a nonce: admitted by the hash of that text alone;
# * an empty <style> element it inserts as it starts: the hash of the empty text;
# * its search index, which runs in a Web Worker the bundle builds from a blob: URL.
REDOC_STYLE_HASHES = (
    "'sha256-QMIg+bpjm3JdElJ388KYke01izlUW0UoNOeKjpMxdgc='",
    "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='",
)


def redoc_policy(style_nonce: str | None) -> str:
    """The policy of the ReDoc page: the docs' policy, plus what ReDoc needs and nothing
    more: the style elements it writes as it renders (styled-components), admitted by the
    nonce drawn for that one answer and given to ReDoc's ``nonce`` option, never by
    'unsafe-inline'; the two it writes before that (``REDOC_STYLE_HASHES``); its search
    worker from a blob: URL. Without a nonce (an answer not made by the page's route) only
    the hashed styles are admitted."""
    styles = ["'self'", *REDOC_STYLE_HASHES]
    if style_nonce is not None:
        if not re.fullmatch(r"[A-Za-z0-9_-]{16,}", style_nonce):
            raise ValueError("a style nonce is URL-safe base64 of at least 16 characters")
        styles.append(f"'nonce-{style_nonce}'")
    return _policy({**_DOCS_DIRECTIVES, "style-src": " ".join(styles), "worker-src": "blob:"})


REDOC_POLICY = redoc_policy(None)
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
    if path == REDOC_PATH:
        policy = REDOC_POLICY
    elif path in DOCS_PATHS:
        policy = DOCS_POLICY
    else:
        policy = PAGE_POLICY
    headers["Content-Security-Policy"] = policy
    if _is_data_path(path):
        headers["Cache-Control"] = "no-store"
    return headers


class SecurityHeaders:
    """ASGI middleware: the security headers on every HTTP answer, and a bound on request
    bodies (413 beyond ``MAX_REQUEST_BYTES`` for an upload, ``MAX_DATA_BYTES`` for any other,
    declared or streamed)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body: int = MAX_REQUEST_BYTES,
        max_data: int = MAX_DATA_BYTES,
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.max_data = max_data

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

        sent = dict(scope["headers"])
        upload = sent.get(b"content-type", b"").lower().startswith(b"multipart/form-data")
        limit = self.max_body if upload else self.max_data
        too_large = f"the request is larger than {limit} bytes" + (
            "" if upload else " (only an upload, multipart/form-data, may be larger)"
        )
        declared = sent.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await refuse(413, too_large)
            return

        received = 0
        refused = False
        started = False

        async def bounded_receive() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit and not refused:
                    refused = True
                    if not started:
                        await refuse(413, too_large)
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
