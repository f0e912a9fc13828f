"""Signing in for web tests: a real user in the database, a real token from the real endpoint."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator

import httpx

from controller.access import users
from controller.roles import Role
from tests.app.floor import WebFloor


async def new_user(wf: WebFloor, role: Role, username: str | None = None) -> tuple[str, str]:
    """A new user of ``role``, named after it unless ``username`` is given: name, password."""
    name = username or f"{role.value.replace('_', '-')}-{secrets.token_hex(3)}"
    password = secrets.token_urlsafe(16)
    await users.create_user(
        wf.service.engine,
        username=name,
        role=role,
        password=password,
        actor="test",
        at_us=wf.service.clock.now_us(),
    )
    return name, password


async def headers_for(wf: WebFloor, role: Role, username: str | None = None) -> dict[str, str]:
    """``{"Authorization": "Bearer ..."}`` of a new user of ``role`` (named after it unless
    ``username`` is given) signed in through ``POST /api/v1/auth/token``."""
    name, password = await new_user(wf, role, username)
    async with httpx.AsyncClient(base_url=wf.base_url) as http:
        answer = await http.post(
            "/api/v1/auth/token", data={"username": name, "password": password}
        )
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


class _FromAddress(httpx.AsyncBaseTransport):
    """Each request on a connection of its own from ``address``, HTTP/1.1, closed after.

    asyncio's own connect: httpx's ``local_address`` resolves it in a thread that outlives the
    test."""

    def __init__(self, address: str) -> None:
        self.address = address

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        reader, writer = await asyncio.open_connection(
            request.url.host, request.url.port, local_addr=(self.address, 0)
        )
        try:
            head = [f"{request.method} {request.url.raw_path.decode()} HTTP/1.1"]
            head += [
                f"{k}: {v}"
                for k, v in request.headers.items()
                if k not in ("connection", "content-length")
            ]
            head += ["Connection: close", f"Content-Length: {len(body)}"]
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
            await writer.drain()
            answer = await reader.read()
        finally:
            writer.close()
            await writer.wait_closed()
        raw_head, _, content = answer.partition(b"\r\n\r\n")
        status_line, *lines = raw_head.decode("latin-1").split("\r\n")
        headers = [tuple(line.split(": ", 1)) for line in lines]
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        return httpx.Response(int(status_line.split()[1]), headers=headers, content=content)


@contextlib.asynccontextmanager
async def client_at(wf: WebFloor, address: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client whose requests come from ``address`` (a loopback address of its own)."""
    transport = _FromAddress(address)
    async with httpx.AsyncClient(base_url=wf.base_url, transport=transport) as http:
        yield http
