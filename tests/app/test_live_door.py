"""Who may open a display feed: this server's pages (a foreign Origin is refused before the
handshake is accepted) and at most a set number of feeds from one address at once, the rest
unaffected. Real WebSocket clients against the application served by uvicorn on loopback."""

from __future__ import annotations

import contextlib
from pathlib import Path

import httpx
import pytest
import websockets
from websockets.asyncio.client import ClientConnection, connect

from tests.app.floor import settings_in, web_floor
from tests.app.test_live import next_message, ws_url
from tests.app.test_metrics import scrape, value


async def refused_handshake(url: str, **kw: object) -> int:
    with pytest.raises(websockets.InvalidStatus) as refused:
        async with connect(url, **kw):
            pass
    return refused.value.response.status_code


async def test_a_page_of_another_site_is_refused_the_own_pages_are_served(
    tmp_path: Path,
) -> None:
    settings = settings_in(tmp_path).model_copy(
        update={"allowed_origins": ("https://displays.casino.example",)}
    )
    async with (
        web_floor(tmp_path, settings=settings) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        url = ws_url(wf, "/ws/links/stud")
        for foreign in (
            "http://evil.example",
            wf.base_url.replace("127.0.0.1", "127.0.0.1.evil.example"),
            wf.base_url.rsplit(":", 1)[0] + ":1",  # the same host, another port
            "null",  # a sandboxed frame, a file
        ):
            assert await refused_handshake(url, origin=foreign) == 403, foreign
        # The server's own origin (what a display page sends), a listed one, and a client
        # that is no browser at all (no Origin: a native display) are served.
        for origin in (wf.base_url, "https://displays.casino.example", None):
            async with connect(url, origin=origin) as ws:
                assert (await next_message(ws))["type"] == "snapshot", origin
        samples = await scrape(http)
        assert value(samples, "progressive_websocket_refused_total", reason="origin") == 4


async def test_an_installation_may_require_an_origin(tmp_path: Path) -> None:
    settings = settings_in(tmp_path).model_copy(update={"ws_require_origin": True})
    async with web_floor(tmp_path, settings=settings) as wf:
        url = ws_url(wf, "/ws/links/stud")
        assert await refused_handshake(url) == 403
        async with connect(url, origin=wf.base_url) as ws:
            assert (await next_message(ws))["type"] == "snapshot"


async def test_one_address_holds_at_most_the_cap_and_the_others_play_on(
    tmp_path: Path,
) -> None:
    cap = 4
    settings = settings_in(tmp_path).model_copy(update={"ws_max_per_address": cap})
    async with (
        web_floor(tmp_path, settings=settings, rounds_per_second=4.0) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
        contextlib.AsyncExitStack() as stack,
    ):
        url = ws_url(wf, "/ws/links/stud")
        held: list[ClientConnection] = []
        snapshots = []
        for _ in range(cap):
            ws = await stack.enter_async_context(connect(url))
            snapshots.append(await next_message(ws, lambda m: m["type"] == "snapshot"))
            held.append(ws)
        # One more from the same address: told to try again later, nothing else.
        async with connect(url) as extra:
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await extra.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
        # The first ones still receive every change.
        for ws, first in zip(held, snapshots, strict=True):
            update = await next_message(ws, lambda m: m["type"] == "update")
            assert update["seq"] > first["seq"]
        samples = await scrape(http)
        assert value(samples, "progressive_websocket_refused_total", reason="too_many") == 1
        assert value(samples, "progressive_websocket_clients", link_id="stud") == cap
        # A feed that ends gives its place back.
        await held.pop().close()
        async with connect(url) as again:
            assert (await next_message(again))["type"] == "snapshot"
