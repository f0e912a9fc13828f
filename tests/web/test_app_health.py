"""The application starts the controller, answers health checks and stops cleanly."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.integration.harness import wait_until
from tests.web.floor import web_floor


async def test_health_and_readiness_on_a_polled_floor(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        assert (await http.get("/healthz")).json() == {"status": "alive"}
        poller = wf.service.poller
        assert poller is not None
        await wait_until(lambda: all(tp.last_ok_us for tp in poller.tables.values()))
        ready = await http.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["status"] == "ready"
        status = wf.service.table_status("stud-1")
        assert status.state in ("online", "hit_pending")
        assert status.last_answer_us is not None


async def test_not_ready_when_no_table_answers(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        await wf.sim.stop()  # every table goes silent
        poller = wf.service.poller
        assert poller is not None
        for tp in poller.tables.values():
            tp.last_ok_us = 1  # as if the last answer were long ago
        ready = await http.get("/readyz")
        assert ready.status_code == 503
        body = ready.json()
        assert body["status"] == "not ready"
        assert set(body["problems"]) == {"link stud", "link lir"}
