"""Links through the live server: public amounts, history with reasons, the chart's series."""

from __future__ import annotations

from pathlib import Path

import httpx

from controller.core.hands import HandCategory
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import web_floor
from tests.integration.harness import wait_until


async def test_links_are_public_with_amounts_in_cents(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        links = (await http.get("/api/v1/links")).json()
        assert [link["link_id"] for link in links] == ["lir", "stud"]
        stud = (await http.get("/api/v1/links/stud")).json()
        assert stud["reset_cents"] == 100_000 and stud["rate_bp"] == 8000
        assert isinstance(stud["meter_cents"], int) and stud["meter_cents"] >= 100_000
        assert stud["game"] == "caribbean_stud" and stud["hit_policy"] == "split"
        assert stud["state"] in ("playing", "hit_pending")
        # How many tables, not their states (dealers and up: tests/app/test_public_views.py).
        assert stud["table_count"] == 2 and stud["tables"] == []
        assert any(line["hand"] == "ROYAL_FLUSH" for line in stud["paytable"])
        missing = await http.get("/api/v1/links/nope")
        assert missing.status_code == 404 and missing.json()["detail"] == "no link 'nope'"


async def test_history_names_every_reduction_and_the_chart_keeps_it(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        auditor = await headers_for(wf, Role.AUDITOR)
        dealer = await headers_for(wf, Role.DEALER)
        wf.table("stud", 1).force_hand(2, HandCategory.ROYAL_FLUSH)
        await wait_until(lambda: wf.service.table_status("stud-1").hit_pending)

        history = await http.get("/api/v1/links/stud/history", headers=auditor)
        assert history.status_code == 200, history.text
        body = history.json()
        entries = body["entries"]
        assert entries[0]["kind"] == "link_opened"
        assert [e["seq"] for e in entries] == sorted(e["seq"] for e in entries)
        reductions = [e for e in entries if e["delta_cents"] < 0]
        assert reductions, "the royal flush's award lowers the meter"
        for e in reductions:
            assert e["kind"] == "award" and e["hit_id"]
            assert e["reduction_reason"] == e["explanation"] and "royal flush" in e["explanation"]
            assert e["meter_after_cents"] - e["meter_before_cents"] == e["delta_cents"]
        only = (
            await http.get("/api/v1/links/stud/history?reductions_only=true", headers=auditor)
        ).json()["entries"]
        assert [e["seq"] for e in only] == [e["seq"] for e in reductions]

        page = (await http.get("/api/v1/links/stud/history?limit=2", headers=auditor)).json()
        assert len(page["entries"]) == 2 and page["next_after_seq"] == page["entries"][1]["seq"]
        rest = await http.get(
            f"/api/v1/links/stud/history?after_seq={page['next_after_seq']}", headers=auditor
        )
        assert rest.json()["entries"][0]["seq"] == page["next_after_seq"] + 1

        series = (await http.get("/api/v1/links/stud/meter?points=50", headers=auditor)).json()
        points = series["points"]
        assert 1 <= len(points) <= 50
        award = reductions[0]
        assert min(p["low_cents"] for p in points) <= award["meter_after_cents"]

        assert (await http.get("/api/v1/links/stud/history", headers=dealer)).status_code == 403
        assert (await http.get("/api/v1/links/stud/history")).status_code == 401


async def test_history_period_is_validated(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        auditor = await headers_for(wf, Role.AUDITOR)
        base = "/api/v1/links/stud/history"
        bad = await http.get(f"{base}?since=yesterday", headers=auditor)
        assert bad.status_code == 422
        (problem,) = bad.json()["detail"]["problems"]
        assert problem["where"] == "query.since" and "not a date or time" in problem["problem"]
        empty = await http.get(f"{base}?since=2026-02-01&until=2026-01-01", headers=auditor)
        assert empty.status_code == 422
        assert "the period is empty" in empty.text
        old = await http.get(f"{base}?since=2020-01-01&until=2020-01-02", headers=auditor)
        assert old.status_code == 200 and old.json()["entries"] == []
        assert (await http.get(f"{base}?limit=100000", headers=auditor)).status_code == 422
        missing = await http.get("/api/v1/links/nope/history", headers=auditor)
        assert missing.status_code == 404

        # Every path taking a period reads it alike: any offset, the calendar's edges
        # refused by name, and at most five years of records (and a week) at once.
        paths = [
            base,
            "/api/v1/links/stud/meter",
            "/api/v1/links/stud/reconciliation",
            "/api/v1/links/stud/reconciliation/export?format=pdf",
            "/api/v1/exports/history",
            "/api/v1/audit-log",
        ]
        edges = [
            ({"since": "0001-01-01T00:00:00+14:00", "until": "0001-01-02"}, "since"),
            ({"until": "9999-12-31T23:59:59.999999-14:00"}, "until"),
        ]
        for path in paths:
            for params, name in edges:
                answer = await http.get(path, params=params, headers=auditor)
                assert answer.status_code == 422, (path, params, answer.text)
                (problem,) = answer.json()["detail"]["problems"]
                assert problem["where"] == f"query.{name}", (path, problem)
                assert "the calendar" in problem["problem"]
            if path == "/api/v1/audit-log":
                continue  # any span: at most ``limit`` entries are read
            ever = await http.get(
                path, params={"since": "0001-01-01", "until": "9999-12-31"}, headers=auditor
            )
            assert ever.status_code == 422, (path, ever.text)
            (problem,) = ever.json()["detail"]["problems"]
            assert problem["where"] == "query.since"
            assert "at most 1,837 days" in problem["problem"], problem
            east = await http.get(
                path,
                params={"since": "2026-01-01T10:00:00+14:00", "until": "2026-01-01T00:00-11:00"},
                headers=auditor,
            )
            assert east.status_code == 200, (path, east.text)
