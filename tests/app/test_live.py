"""Live push to the floor displays, against a polled floor of simulated tables.

Real WebSocket clients (the websockets library) talk to the application served by uvicorn;
the hub's own behaviour (one encoding shared by every client, the latest state winning, a
client that stops reading being dropped) is checked by serving stand-in connections whose
sends the test controls.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from app.live import HubTiming, LiveHub
from controller.core.hands import HandCategory
from tests.app.floor import WebFloor, settings_in, web_floor
from tests.integration.harness import wait_until

Message = dict[str, Any]


def ws_url(wf: WebFloor, path: str) -> str:
    return wf.base_url.replace("http://", "ws://", 1) + path


async def next_message(
    ws: ClientConnection,
    condition: Callable[[Message], bool] = lambda m: True,
    within_s: float = 20.0,
) -> Message:
    async with asyncio.timeout(within_s):
        while True:
            message: Message = json.loads(await ws.recv())
            if condition(message):
                return message


class StandIn:
    """A display connection for the hub whose sends the test can hold up."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.gone = asyncio.Event()
        self.ending: str | None = None

    async def send(self, text: str) -> None:
        await self.flowing.wait()
        self.texts.append(text)

    async def receive(self) -> dict[str, Any]:
        await self.gone.wait()
        return {"type": "websocket.disconnect", "code": 1000}

    @property
    def messages(self) -> list[Message]:
        return [json.loads(t) for t in self.texts]


@asynccontextmanager
async def hub_on(wf: WebFloor, timing: HubTiming) -> AsyncIterator[LiveHub]:
    hub = LiveHub(wf.service, timing=timing)
    await hub.start()
    try:
        yield hub
    finally:
        await hub.stop()


@asynccontextmanager
async def served(hub: LiveHub, link_id: str, client: StandIn) -> AsyncIterator[asyncio.Task[str]]:
    task = asyncio.create_task(hub.serve(link_id, client.send, client.receive))
    try:
        yield task
    finally:
        client.flowing.set()
        client.gone.set()
        client.ending = await task


# ------------------------------------------------------------------------- the protocol


async def test_snapshot_on_connect_then_updates_with_increasing_seq(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, rounds_per_second=4.0) as wf,
        websockets.connect(ws_url(wf, "/ws/links/stud")) as ws,
    ):
        first = await next_message(ws)
        assert first["type"] == "snapshot"
        assert first["link_id"] == "stud"
        assert first["game"] == "caribbean_stud"
        assert first["reset_cents"] == 100_000
        assert first["rate_bp"] == 8000
        assert set(first["display"]) == {
            "mode",
            "amount_cents",
            "won_cents",
            "winning_table",
            "winning_table_name",
            "seats",
            "hand",
            "hand_label",
        }
        assert [t["table_id"] for t in first["tables"]] == ["stud-1", "stud-2"]
        seq, meter = first["seq"], first["meter_cents"]
        updates = 0
        async with asyncio.timeout(30):
            while updates < 5:
                m = json.loads(await ws.recv())
                assert isinstance(m["meter_cents"], int)
                assert isinstance(m["display"]["amount_cents"], int)
                if m["type"] == "update":
                    assert m["seq"] > seq
                    updates += 1
                else:
                    assert m["type"] == "heartbeat"
                    assert m["seq"] == seq  # a heartbeat repeats the last state
                assert m["meter_cents"] >= meter  # no hit forced: the meter only grows
                seq, meter = m["seq"], m["meter_cents"]
        assert meter > first["meter_cents"]


async def test_heartbeats_keep_coming_when_nothing_changes(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf:
        for unit in (1, 2):
            wf.table("lir", unit).set_lockout(True)  # no side bets: the meter stands still
        async with websockets.connect(ws_url(wf, "/ws/links/lir")) as ws:
            await next_message(ws, lambda m: m["type"] == "snapshot")
            beats = [await next_message(ws, lambda m: m["type"] == "heartbeat") for _ in range(2)]
            assert beats[1]["at_us"] > beats[0]["at_us"]
            assert beats[0]["fresh"] is True


async def test_unknown_link_closes_with_4404(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        async with websockets.connect(ws_url(wf, "/ws/links/nowhere")) as ws:
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 4404
        page = await http.get("/display/nowhere")
        assert page.status_code == 404
        assert "No such jackpot" in page.text


async def test_a_required_display_token_is_enforced(tmp_path: Path) -> None:
    settings = settings_in(tmp_path).model_copy(update={"display_requires_token": True})
    async with (
        web_floor(tmp_path, settings=settings) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        async with websockets.connect(ws_url(wf, "/ws/links/stud?token=wrong")) as ws:
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 4401
        assert (await http.get("/display/stud")).status_code == 401


async def test_a_hit_pushes_the_won_amount_and_the_winning_table(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, rounds_per_second=4.0) as wf,
        websockets.connect(ws_url(wf, "/ws/links/stud")) as ws,
    ):
        await next_message(ws, lambda m: m["type"] == "snapshot")
        wf.table("stud", 1).force_hand(3, HandCategory.ROYAL_FLUSH)
        won = await next_message(ws, lambda m: m["display"]["mode"] == "won")
        d = won["display"]
        assert d["winning_table"] == "stud-1"
        assert d["hand"] == "ROYAL_FLUSH"
        assert 3 in d["seats"]
        assert d["amount_cents"] == d["won_cents"] > 100_000
        # 100% of the meter was won: the link plays on from its reset amount.
        assert 100_000 <= won["meter_cents"] < d["won_cents"]
        assert wf.service.table_status("stud-1").state == "hit_pending"


async def test_displays_learn_that_the_tables_stopped_answering(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path) as wf,
        websockets.connect(ws_url(wf, "/ws/links/stud")) as ws,
    ):
        live = await next_message(ws, lambda m: m["fresh"])
        await wf.sim.stop()
        stale = await next_message(ws, lambda m: not m["fresh"])
        assert stale["seq"] > live["seq"]
        assert stale["fresh"] is False


# ------------------------------------------------------------------------- the hub


async def test_one_encoding_is_shared_by_every_client(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, rounds_per_second=4.0) as wf,
        hub_on(wf, HubTiming()) as hub,
    ):
        clients = [StandIn() for _ in range(5)]
        async with contextlib.AsyncExitStack() as stack:
            for client in clients:
                await stack.enter_async_context(served(hub, "stud", client))
            await wait_until(lambda: all(len(c.texts) >= 4 for c in clients))
            channel = hub.channels["stud"]
            seq = channel.seq
            await wait_until(lambda: channel.seq > seq + 1)
            await wait_until(lambda: all(c.texts[-1] is channel.update_text for c in clients))
        # Every client got the very same str object for each update it received.
        by_seq: dict[tuple[str, int], set[int]] = {}
        for c in clients:
            for text, m in zip(c.texts, c.messages, strict=True):
                by_seq.setdefault((m["type"], m["seq"]), set()).add(id(text))
        shared = [ids for (kind, _), ids in by_seq.items() if kind == "update"]
        assert shared
        assert all(len(ids) == 1 for ids in shared)


async def test_the_latest_state_wins_for_a_client_that_falls_behind(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, rounds_per_second=5.0) as wf,
        hub_on(wf, HubTiming(stall_limit_s=600)) as hub,
    ):
        slow = StandIn()
        async with served(hub, "stud", slow):
            await wait_until(lambda: len(slow.texts) >= 1)
            slow.flowing.clear()  # its next send hangs
            channel = hub.channels["stud"]
            held_at = channel.seq
            await wait_until(lambda: channel.seq >= held_at + 5)
            received = len(slow.texts)
            slow.flowing.set()
            await wait_until(lambda: len(slow.texts) >= received + 2)
            behind = slow.messages[received:]
            # The send in flight goes out, then straight to the newest state, no backlog.
            assert behind[1]["seq"] >= held_at + 5
            assert [m["seq"] for m in behind] == sorted(m["seq"] for m in behind)
        assert slow.ending == "left"


async def test_a_client_that_stops_reading_is_dropped_and_others_carry_on(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, rounds_per_second=4.0) as wf,
        hub_on(wf, HubTiming(stall_limit_s=0.5, tick_s=0.05)) as hub,
    ):
        stuck, reader = StandIn(), StandIn()
        stuck.flowing.clear()  # never completes a send
        async with served(hub, "stud", stuck) as stuck_task, served(hub, "stud", reader):
            ending = await asyncio.wait_for(stuck_task, timeout=20)
            assert ending == "dropped"
            assert hub.dropped == 1
            assert hub.clients("stud") == 1
            count = len(reader.texts)
            await wait_until(lambda: len(reader.texts) > count + 2)
        assert stuck.texts == []
        assert reader.ending == "left"
