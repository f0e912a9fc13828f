"""An open display feed ends when its token stops being let in, as a new request with the token
would be refused: a device token revoked, its person disabled or given another role, or the
token expired. Each within a second, closed 4401 with the reason a display shows. Real
WebSocket clients against the application served by uvicorn on loopback."""

from __future__ import annotations

import asyncio
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from app.security.authentication import authority
from controller.access import users
from controller.core.games import Game
from controller.roles import Role
from tests.app.auth import headers_for, new_user
from tests.app.floor import WebFloor, settings_in, web_floor
from tests.app.test_live import next_message, ws_url

ONE_LINK = {"stud": (Game.CARIBBEAN_STUD, 1)}
WITHIN_S = 1.0


async def _closed_within(ws: ClientConnection, seconds: float) -> tuple[int, str, float]:
    """The close code and reason of ``ws``, and how long after now it came; fails past
    ``seconds``."""
    started = time.monotonic()
    with pytest.raises(ConnectionClosed) as closed:
        async with asyncio.timeout(seconds):
            while True:
                await ws.recv()
    rcvd = closed.value.rcvd
    assert rcvd is not None, "closed without a close frame"
    return rcvd.code, rcvd.reason, time.monotonic() - started


async def _open(wf: WebFloor, token: str) -> ClientConnection:
    ws = await connect(ws_url(wf, f"/ws/links/stud?token={token}"))
    assert (await next_message(ws))["type"] == "snapshot"
    return ws


def _floor(tmp_path: Path, **update: object) -> AbstractAsyncContextManager[WebFloor]:
    settings = settings_in(tmp_path).model_copy(update={"display_requires_token": True, **update})
    return web_floor(tmp_path, links=ONE_LINK, settings=settings)


def _token(headers: dict[str, str]) -> str:
    return headers["Authorization"].removeprefix("Bearer ")


async def test_a_revoked_device_token_ends_its_open_feed(tmp_path: Path) -> None:
    async with _floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        admin = await headers_for(wf, Role.ADMIN, "root")
        made = (await http.post("/api/v1/device-tokens", headers=admin, json={"name": "p1"})).json()
        other = (
            await http.post("/api/v1/device-tokens", headers=admin, json={"name": "p2"})
        ).json()
        ws, kept = await _open(wf, made["token"]), await _open(wf, other["token"])
        revoke = f"/api/v1/device-tokens/{made['token_id']}/revoke"
        assert (await http.post(revoke, headers=admin)).status_code == 200
        code, reason, after = await _closed_within(ws, WITHIN_S)
        assert (code, reason) == (4401, "signed out: token revoked"), after
        # Another display's feed plays on.
        assert (await next_message(kept, within_s=5))["type"] in {"update", "heartbeat"}
        await kept.close()
        # And the token opens no new feed, told why.
        again = await connect(ws_url(wf, f"/ws/links/stud?token={made['token']}"))
        code, reason, _ = await _closed_within(again, WITHIN_S)
        assert (code, reason) == (4401, "signed out: token revoked")


async def test_a_disabled_persons_open_feed_ends(tmp_path: Path) -> None:
    async with _floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        admin = await headers_for(wf, Role.ADMIN, "root")
        tech = await headers_for(wf, Role.TECHNICIAN, "tina.tech")
        ws, kept = await _open(wf, _token(tech)), await _open(wf, _token(admin))
        disabled = await http.post("/api/v1/users/tina.tech/disable", headers=admin)
        assert disabled.status_code == 200, disabled.text
        code, reason, _ = await _closed_within(ws, WITHIN_S)
        assert (code, reason) == (4401, "signed out: account disabled")
        assert (await next_message(kept, within_s=5))["type"] in {"update", "heartbeat"}
        await kept.close()


async def test_a_role_change_ends_the_persons_open_feed(tmp_path: Path) -> None:
    async with _floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        admin = await headers_for(wf, Role.ADMIN, "root")
        tech = await headers_for(wf, Role.TECHNICIAN, "tina.tech")
        ws = await _open(wf, _token(tech))
        changed = await http.post(
            "/api/v1/users/tina.tech/role", headers=admin, json={"role": "dealer"}
        )
        assert changed.status_code == 200, changed.text
        code, reason, _ = await _closed_within(ws, WITHIN_S)
        assert (code, reason) == (4401, "signed out: role changed")


async def test_an_expired_token_ends_its_open_feed(tmp_path: Path) -> None:
    async with _floor(tmp_path, token_minutes=1) as wf:
        name, _ = await new_user(wf, Role.TECHNICIAN, "tina.tech")
        user = await users.get_user(wf.service.engine, name)
        assert user is not None
        lifetime_s = 3
        token = authority(wf.service).issue(
            name, Role.TECHNICIAN, generation=user.token_generation, lifetime_s=lifetime_s
        )
        expires = time.time() + lifetime_s
        ws = await _open(wf, token)
        code, reason, _ = await _closed_within(ws, lifetime_s + WITHIN_S)
        assert time.time() - expires < WITHIN_S
        assert (code, reason) == (4401, "signed out: token expired")


async def test_without_a_required_token_a_feed_is_not_watched(tmp_path: Path) -> None:
    # An installation that shows amounts to everyone: a token sent anyway grants nothing,
    # and its revocation ends nothing.
    async with (
        web_floor(tmp_path, links=ONE_LINK) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        admin = await headers_for(wf, Role.ADMIN, "root")
        made = (await http.post("/api/v1/device-tokens", headers=admin, json={"name": "p1"})).json()
        ws = await _open(wf, made["token"])
        revoke = f"/api/v1/device-tokens/{made['token_id']}/revoke"
        assert (await http.post(revoke, headers=admin)).status_code == 200
        await asyncio.sleep(1.5)
        assert (await next_message(ws, within_s=5))["type"] in {"update", "heartbeat"}
        await ws.close()
