"""``GET /metrics`` on a live floor: the numbers agree with the API and follow a forced hit."""

from __future__ import annotations

from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from app.metrics import FloorMetrics
from controller.core.hands import HandCategory
from controller.roles import Role
from link_adapters.simulator.clock import VirtualClock
from tests.app.auth import headers_for
from tests.app.floor import step, stepped_floor, web_floor
from tests.integration.harness import wait_until

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(http: httpx.AsyncClient) -> Samples:
    answer = await http.get("/metrics")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(answer.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[name, frozenset(labels.items())]


async def test_metrics_follow_the_floor(tmp_path: Path) -> None:
    # The tables deal only when stepped: no hand of their own can add a hit between two scrapes.
    clock = VirtualClock()
    async with (
        stepped_floor(tmp_path, clock) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        while wf.service.runtime.memory.states["stud"].meter_cents <= 100_000:
            await step(wf, clock, 0.5)

        # The meter only grows until a hit: the API's amount lies between two scrapes.
        before = await scrape(http)
        link = (await http.get("/api/v1/links/stud")).json()
        after = await scrape(http)
        low = value(before, "progressive_meter_cents", link_id="stud")
        high = value(after, "progressive_meter_cents", link_id="stud")
        assert low <= link["meter_cents"] <= high
        assert low >= link["reset_cents"]

        for link_id in ("stud", "lir"):
            assert value(after, "progressive_tables_online", link_id=link_id) == 2
            assert value(after, "progressive_link_live", link_id=link_id) == 1
            assert value(after, "progressive_link_polling", link_id=link_id) == 1
            assert value(after, "progressive_tables_hit_pending", link_id=link_id) == 0
            assert value(after, "progressive_poll_latency_seconds_count", link_id=link_id) > 0
            assert (
                value(after, "progressive_link_last_answer_timestamp_seconds", link_id=link_id) > 0
            )
        assert value(after, "progressive_table_online", link_id="stud", table_id="stud-1") == 1
        assert value(after, "progressive_table_polls_total", link_id="lir", table_id="lir-2") > 0
        assert (
            value(after, "progressive_table_errors_total", link_id="stud", table_id="stud-2") == 0
        )
        assert (
            value(after, "progressive_table_timeouts_total", link_id="stud", table_id="stud-2") == 0
        )
        assert value(after, "progressive_contribution_units_total", link_id="stud") > 0
        assert value(after, "progressive_ledger_append_seconds_count") > 0
        assert value(after, "progressive_websocket_clients", link_id="stud") == 0
        assert value(after, "progressive_event_loop_lag_seconds") >= 0
        assert value(after, "progressive_ledger_verification_timestamp_seconds") == 0
        assert value(after, "progressive_ledger_verification_failed") == 0

        hits_before = value(after, "progressive_hits_total", link_id="stud", status="awarded")
        wf.table("stud", 1).force_hand(3, HandCategory.ROYAL_FLUSH)
        wf.play_round_now("stud", 1)
        await wait_until(lambda: wf.service.table_status("stud-1").hit_pending)
        held = await scrape(http)
        assert value(held, "progressive_hits_total", link_id="stud", status="awarded") == (
            hits_before + 1
        )
        assert value(held, "progressive_award_cents_total", link_id="stud") >= 100_000
        assert value(held, "progressive_tables_hit_pending", link_id="stud") == 1
        assert value(held, "progressive_hit_pending_oldest_age_seconds", link_id="stud") >= 0

        auditor = await headers_for(wf, Role.AUDITOR)
        verified = await http.post("/api/v1/ledger/verify", headers=auditor)
        assert verified.status_code == 200 and verified.json()["ok"], verified.text
        checked = await scrape(http)
        assert value(checked, "progressive_ledger_verification_timestamp_seconds") > 0
        assert value(checked, "progressive_ledger_verification_failed") == 0


async def test_the_ledger_verification_is_shown(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf:
        await wait_until(lambda: wf.service.runtime.memory.states["stud"].meter_cents > 100_000)
        metrics = FloorMetrics(wf.service)  # not started: nothing else of the app changes
        assert await metrics.verify_now()
        samples = {
            s.name: s.value
            for family in text_string_to_metric_families(metrics.exposition().decode())
            for s in family.samples
        }
        assert samples["progressive_ledger_verification_failed"] == 0
        assert samples["progressive_ledger_verification_timestamp_seconds"] > 0


async def test_display_clients_are_counted(tmp_path: Path) -> None:
    from websockets.asyncio.client import connect

    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        url = wf.base_url.replace("http://", "ws://") + "/ws/links/lir"
        async with connect(url) as ws:
            await ws.recv()  # the snapshot: the client is registered
            samples = await scrape(http)
            assert value(samples, "progressive_websocket_clients", link_id="lir") == 1
            assert value(samples, "progressive_websocket_clients", link_id="stud") == 0
