"""Security headers on every answer the application gives, and a bound on request bodies.

Every GET route of the application is asked (found by walking its routes, so a new one is
covered without editing this test), signed in or not, and so are errors and static files.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
from fastapi import FastAPI, routing
from fastapi.routing import APIRoute
from starlette.routing import Route

from app.security.headers import MAX_REQUEST_BYTES, SecurityHeaders
from app.serve import serve
from app.web import create_app
from controller.core.games import Game
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import web_floor

ONE_LINK = {"stud": (Game.CARIBBEAN_STUD, 1)}
# Known values for path parameters, so that most answers are 200s rather than 404s.
KNOWN = {"link_id": "stud", "table_id": "stud-1", "kind": "meter"}


def _url(path: str) -> str:
    return re.sub(r"\{([^}:]+)(:[^}]+)?\}", lambda m: KNOWN.get(m.group(1), "nothing"), path)


def header_problems(where: str, answer: httpx.Response) -> list[str]:
    h = answer.headers
    problems: list[str] = []
    expected = {
        "x-content-type-options": "nosniff",
        "x-frame-options": "DENY",
        "referrer-policy": "no-referrer",
    }
    for name, value in expected.items():
        if h.get(name) != value:
            problems.append(f"{where}: {name} is {h.get(name)!r}")
    csp = h.get("content-security-policy", "")
    if "frame-ancestors 'none'" not in csp or "default-src 'none'" not in csp:
        problems.append(f"{where}: Content-Security-Policy is {csp!r}")
    # The documentation pages too: they run the application's own copies of Swagger UI and
    # ReDoc, started from its own scripts (app/api/docs.py).
    script = re.search(r"script-src ([^;]*)", csp)
    if script is None or script.group(1).strip() != "'self'":
        problems.append(f"{where}: scripts not limited to the site's own files: {csp!r}")
    if "unsafe-inline" in csp or "unsafe-eval" in csp:
        problems.append(f"{where}: the policy admits inline code: {csp!r}")
    if "camera=()" not in h.get("permissions-policy", ""):
        problems.append(f"{where}: Permissions-Policy is {h.get('permissions-policy')!r}")
    path = where.split()[1]
    if (path.startswith("/api/") or path == "/metrics") and "no-store" not in h.get(
        "cache-control", ""
    ):
        problems.append(f"{where}: Cache-Control is {h.get('cache-control')!r}")
    return problems


async def test_every_answer_carries_the_security_headers(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=ONE_LINK) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        signed_in = await headers_for(wf, Role.SUPERVISOR)
        gets: list[str] = []
        for route in routing.iter_route_contexts(create_app(wf.service).routes):
            if isinstance(route.original_route, APIRoute | Route) and "GET" in (
                route.methods or ()
            ):
                gets.append(route.path)
        assert {"/tech", "/display/{link_id}", "/api/v1/links", "/metrics", "/docs"} <= set(gets)
        problems: list[str] = []
        seen: set[int] = set()
        for path in gets:
            for headers in ({}, signed_in):
                answer = await http.get(_url(path), headers=headers)
                seen.add(answer.status_code)
                problems += header_problems(f"GET {path} ({answer.status_code})", answer)
        # Errors, static files and writes carry them too.
        others = [
            ("GET", "/static/api.js", {}),
            ("GET", "/no/such/page", {}),
            ("GET", "/api/v1/exports/meter?since=soon", signed_in),
            ("POST", "/api/v1/auth/token", {}),
            ("POST", "/api/v1/ledger/verify", signed_in),
            ("POST", "/api/v1/users", signed_in),
        ]
        for method, url, headers in others:
            answer = await http.request(method, url, headers=headers)
            seen.add(answer.status_code)
            problems += header_problems(f"{method} {url} ({answer.status_code})", answer)
        assert {200, 401, 403, 404, 422} <= seen
        assert not problems, "\n".join(problems)

        # A route's own cache rule stays (the display page is revalidated, not kept).
        display = await http.get("/display/stud")
        assert display.headers["cache-control"] == "no-cache"


async def test_an_error_nothing_answered_carries_them_too() -> None:
    # The middleware as the application stacks it, behind the server's own error answer.
    app = FastAPI()
    app.add_middleware(SecurityHeaders)

    @app.get("/api/v1/fails")
    async def fails() -> None:
        raise OverflowError("date value out of range")

    async with serve(app, port=0) as served, httpx.AsyncClient(base_url=served.base_url) as http:
        answer = await http.get("/api/v1/fails")
    assert answer.status_code == 500
    assert "out of range" not in answer.text  # nothing of the inside leaks
    assert not header_problems("GET /api/v1/fails (500)", answer)


async def test_a_body_larger_than_the_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=ONE_LINK) as wf,
        httpx.AsyncClient(base_url=wf.base_url, timeout=60) as http,
    ):
        sup = await headers_for(wf, Role.SUPERVISOR)
        url = "/api/v1/links/stud/corrections"
        form = {"delta_cents": "100", "category": "malfunction", "reason": "too big"}
        # Only the headers are sent: the answer comes before any of the body.
        host, port = wf.base_url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            head = (
                f"POST {url} HTTP/1.1\r\nHost: {host}\r\n"
                f"Authorization: {sup['Authorization']}\r\n"
                "Content-Type: multipart/form-data; boundary=edge\r\n"
                f"Content-Length: {MAX_REQUEST_BYTES + 1}\r\n\r\n"
            )
            writer.write(head.encode())
            await writer.drain()
            async with asyncio.timeout(30):
                answer = await reader.read(65536)
        finally:
            writer.close()
            await writer.wait_closed()
        status_line, _, rest = answer.partition(b"\r\n")
        assert status_line.startswith(b"HTTP/1.1 413 "), answer
        assert b"x-content-type-options: nosniff" in rest.lower()
        assert b"larger than" in rest

        # Sent in chunks without a length: counted as it arrives, refused all the same.
        async def chunks() -> AsyncIterator[bytes]:
            boundary = b"--edge\r\n"
            yield boundary + b'Content-Disposition: form-data; name="document"; '
            yield b'filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n'
            for _ in range(MAX_REQUEST_BYTES // (1 << 20) + 2):
                yield b"0" * (1 << 20)

        streamed = await http.post(
            url,
            content=chunks(),
            headers={**sup, "Content-Type": "multipart/form-data; boundary=edge"},
        )
        assert streamed.status_code == 413, streamed.text

        # The largest document accepted still goes through.
        fits = b"%PDF-1.4 " + b"0" * (MAX_REQUEST_BYTES - 64 * 1024 - 100)
        ok = await http.post(
            url, data=form, files={"document": ("ok.pdf", fits, "application/pdf")}, headers=sup
        )
        assert ok.status_code == 201, ok.text
