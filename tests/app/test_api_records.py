"""Records through the live server: exports as downloads, the ledger verification, anomalies."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import httpx

from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import hold_anomaly, web_floor
from tests.app.test_security_headers import header_problems
from tests.integration.harness import wait_until


async def test_exports_download_csv_and_json(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        auditor = await headers_for(wf, Role.AUDITOR)
        await wait_until(lambda: wf.service.runtime.memory.states["stud"].meter_cents > 100_000)
        got = await http.get("/api/v1/exports/history?link=stud", headers=auditor)
        assert got.status_code == 200, got.text
        assert got.headers["content-type"].startswith("text/csv")
        assert got.headers["content-disposition"].startswith('attachment; filename="history_stud_')
        rows = list(csv.DictReader(io.StringIO(got.text)))
        assert rows[0]["kind"] == "link_opened" and {r["link_id"] for r in rows} == {"stud"}

        hits = await http.get("/api/v1/exports/hits?format=json", headers=auditor)
        assert hits.status_code == 200
        assert json.loads(hits.text)["kind"] == "hits"
        reductions = await http.get("/api/v1/exports/reductions", headers=auditor)
        assert reductions.text.startswith("link_id,seq,at,kind,delta_units")

        assert (await http.get("/api/v1/exports/everything", headers=auditor)).status_code == 422
        assert (
            await http.get("/api/v1/exports/hits?format=xml", headers=auditor)
        ).status_code == 422
        assert (
            await http.get("/api/v1/exports/hits?link=nope", headers=auditor)
        ).status_code == 404
        tech = await headers_for(wf, Role.TECHNICIAN)
        assert (await http.get("/api/v1/exports/hits", headers=tech)).status_code == 403


async def test_ledger_verification_reports_a_whole_chain(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        auditor = await headers_for(wf, Role.AUDITOR)
        result = await http.post("/api/v1/ledger/verify", headers=auditor)
        assert result.status_code == 200, result.text
        body = result.json()
        assert body["problems"] == [] and body["ok"] is True
        assert body["entries_checked"] >= 2 and set(body["links"]) == {"stud", "lir"}
        one = (await http.post("/api/v1/ledger/verify?link=stud", headers=auditor)).json()
        assert set(one["links"]) == {"stud"}
        assert (await http.post("/api/v1/ledger/verify?link=x", headers=auditor)).status_code == 404


async def test_heavy_work_past_what_is_taken_is_refused_with_a_time_to_retry(
    tmp_path: Path,
) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        auditor = await headers_for(wf, Role.AUDITOR)
        workers = wf.service.workers
        release = asyncio.Event()

        async def hold() -> None:
            async with workers.job():
                await release.wait()

        holders = [asyncio.create_task(hold()) for _ in range(workers.capacity)]
        await wait_until(lambda: workers.admitted == workers.capacity)
        heavy = [
            ("GET", "/api/v1/links/stud/reconciliation"),
            ("GET", "/api/v1/links/stud/reconciliation/export?format=pdf"),
            ("GET", "/api/v1/exports/history"),
            ("GET", "/api/v1/links/stud/meter"),
            ("POST", "/api/v1/ledger/verify"),
        ]
        for method, url in heavy:
            answer = await http.request(method, url, headers=auditor)
            assert answer.status_code == 503, (url, answer.text)
            assert answer.headers["retry-after"] == str(workers.retry_after_s)
            assert "busy" in answer.json()["detail"]
            assert not header_problems(f"{method} {url} (503)", answer)
        # Neither is anything else held up meanwhile.
        assert (await http.get("/api/v1/links/stud/history", headers=auditor)).status_code == 200
        release.set()
        await asyncio.gather(*holders)
        assert workers.admitted == 0
        for method, url in heavy:
            assert (await http.request(method, url, headers=auditor)).status_code == 200, url


async def test_supervisor_reviews_anomalies_with_a_reason(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        supervisor = await headers_for(wf, Role.SUPERVISOR, "sam.super")
        auditor = await headers_for(wf, Role.AUDITOR)
        await hold_anomaly(wf, "a-1")
        await hold_anomaly(wf, "a-2")
        held = (await http.get("/api/v1/anomalies?status=held", headers=auditor)).json()
        assert {a["anomaly_id"] for a in held} == {"a-1", "a-2"}
        assert held[0]["amount_cents"] == 400_00

        no_reason = await http.post("/api/v1/anomalies/a-1/approve", headers=supervisor, json={})
        assert no_reason.status_code == 422
        blank = await http.post(
            "/api/v1/anomalies/a-1/approve", headers=supervisor, json={"reason": "   "}
        )
        assert blank.status_code == 422
        by_auditor = await http.post(
            "/api/v1/anomalies/a-1/approve", headers=auditor, json={"reason": "checked"}
        )
        assert by_auditor.status_code == 403

        before = wf.service.runtime.memory.states["stud"].meter_units
        approved = await http.post(
            "/api/v1/anomalies/a-1/approve",
            headers=supervisor,
            json={"reason": "bet sensors checked; the count was real"},
        )
        assert approved.status_code == 200, approved.text
        assert approved.json()["status"] == "approved"
        assert approved.json()["reviewer"] == "sam.super"
        assert wf.service.runtime.memory.states["stud"].meter_units >= before + 500 * 100 * 8000
        again = await http.post(
            "/api/v1/anomalies/a-1/reject", headers=supervisor, json={"reason": "changed mind"}
        )
        assert again.status_code == 409 and "already approved" in again.json()["detail"]

        rejected = await http.post(
            "/api/v1/anomalies/a-2/reject", headers=supervisor, json={"reason": "sensor fault"}
        )
        assert rejected.json()["status"] == "rejected"
        assert rejected.json()["review_reason"] == "sensor fault"
        missing = await http.post(
            "/api/v1/anomalies/zz/approve", headers=supervisor, json={"reason": "whatever"}
        )
        assert missing.status_code == 404 and missing.json()["detail"] == "no anomaly 'zz'"
