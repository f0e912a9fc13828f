"""Devices removed from play, corrections by two people and reconciliation, on a live floor."""

from __future__ import annotations

import asyncio
import csv
import io
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from sqlalchemy import func, select

from controller.roles import Role
from controller.storage.models import DocumentRow, MeterEntryRow
from tests.app.auth import headers_for
from tests.app.floor import WebFloor, web_floor
from tests.integration.harness import wait_until

PDF = b"%PDF-1.4 technician's report"
REMOVAL = {
    "questioned_at_us": 1_767_225_600_000_000,
    "device_type": "Caribbean Stud table controller",
    "manufacturer_serial_number": "SN-1",
    "commission_registration_number": "IGC-1",
    "malfunction_reason": "seat 2 sensor double counts",
    "complainant_name": "A. Patron",
    "complaint_nature": "bet counted twice",
}


async def _contributions(wf: WebFloor, table_id: str) -> int:
    async with wf.service.engine.connect() as conn:
        return int(
            await conn.scalar(
                select(func.count()).where(
                    MeterEntryRow.table_id == table_id, MeterEntryRow.kind == "contribution"
                )
            )
            or 0
        )


async def test_out_of_play_corrections_and_reconciliation(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        tech = await headers_for(wf, Role.TECHNICIAN)
        sup = await headers_for(wf, Role.SUPERVISOR)
        sup2 = await headers_for(wf, Role.SUPERVISOR, username="second-supervisor")
        auditor = await headers_for(wf, Role.AUDITOR)
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")

        # --- removed from play: the table is told to take no side bets; nothing is credited.
        r = await http.post("/api/v1/tables/stud-1/integrity-records", json=REMOVAL, headers=tech)
        assert r.status_code == 201, r.text
        record = r.json()
        rid = record["record_id"]
        assert record["out_of_play_us"] is None
        assert wf.service.table_status("stud-1").state == "out_of_play"
        async with wf.service.engine.connect() as conn:
            notice = await conn.scalar(
                select(DocumentRow.content).where(DocumentRow.sha256 == record["notice_sha256"])
            )
        assert notice is not None and notice.startswith(b"%PDF")
        before = await _contributions(wf, "stud-1")
        sim = wf.sim.tables[("caribbean_stud", 1)]
        await wait_until(lambda: sim.command_bits & 1 != 0)  # register 102, bit0
        credits = sim.credits
        for _ in range(5):
            sim_round = wf.sim.play_round_now("caribbean_stud", 1)
            assert sim_round.credits == 0  # 68 IAC 10-1-6.2: no side bet taken out of play
        assert sim.credits == credits
        await asyncio.sleep(0.3)  # a few polls of the table
        assert await _contributions(wf, "stud-1") == before
        base = f"/api/v1/tables/stud-1/integrity-records/{rid}"
        early = await http.post(f"{base}/return-to-play", headers=tech)
        assert early.status_code == 409 and "remedial action" in early.json()["detail"]
        action = {
            "description": "sensor replaced",
            "employees": [
                {"printed_name": "T. Tech", "signature": "TT", "occupational_license_number": "9"}
            ],
        }
        assert (await http.post(f"{base}/remedial-actions", json=action, headers=tech)).is_success
        v = await http.post(f"{base}/verification", json={"verification": "ok"}, headers=sup)
        assert v.is_success, v.text
        back = await http.post(f"{base}/return-to-play", headers=sup)
        assert back.status_code == 200, back.text
        assert back.json()["out_of_play_us"] >= 0
        listed = (await http.get("/api/v1/tables/stud-1/integrity-records", headers=auditor)).json()
        assert [x["record_id"] for x in listed] == [rid]

        async def credited_again() -> bool:
            return await _contributions(wf, "stud-1") > before

        for _ in range(400):  # the tables deal on their own; wait for the next wager
            if await credited_again():
                break
            await asyncio.sleep(0.05)
        assert await credited_again()

        # --- corrections: a supervisor requests, a second person approves.
        url = "/api/v1/links/stud/corrections"
        form = {"delta_cents": "-250", "category": "malfunction", "reason": "meter ran on"}
        none = await http.post(url, data=form, headers=sup)
        assert none.status_code == 409 and "supporting document" in none.json()["detail"]
        bad = await http.post(
            url, data=form, files={"document": ("x.exe", b"MZ", "application/x-msdownload")},
            headers=sup,
        )  # fmt: skip
        assert bad.status_code == 422
        spoofed = await http.post(
            url, data=form, files={"document": ("r.pdf", b"not a pdf", "application/pdf")},
            headers=sup,
        )  # fmt: skip
        assert spoofed.status_code == 422
        made = await http.post(
            url, data=form, files={"document": ("../../etc/passwd.pdf", PDF, "application/pdf")},
            headers=sup,
        )  # fmt: skip
        assert made.status_code == 201, made.text
        req = made.json()
        assert req["status"] == "pending" and req["delta_cents"] == -250
        async with wf.service.engine.connect() as conn:
            name = await conn.scalar(
                select(DocumentRow.filename).where(DocumentRow.sha256 == req["document_sha256"])
            )
        assert name == "passwd.pdf"
        assert (await http.post(url, data=form, headers=tech)).status_code == 403
        same = await http.post(f"/api/v1/corrections/{req['request_id']}/approve", headers=sup)
        assert same.status_code == 409 and "cannot also approve" in same.json()["detail"]
        ok = await http.post(f"/api/v1/corrections/{req['request_id']}/approve", headers=sup2)
        assert ok.status_code == 200, ok.text
        assert ok.json()["status"] == "approved" and ok.json()["correction_id"]
        seen = (await http.get("/api/v1/corrections?link=stud", headers=auditor)).json()
        assert seen[0]["request_id"] == req["request_id"]

        # --- reconciliation after real play: balanced to the unit.
        # From before the floor opened (a period is at most five years and a week long).
        q = {"since": (datetime.now(UTC) - timedelta(days=30)).date().isoformat()}
        rec = await http.get("/api/v1/links/stud/reconciliation", params=q, headers=auditor)
        assert rec.status_code == 200, rec.text
        body = rec.json()
        assert body["balanced"] is True, body["problems"]
        assert body["difference_units"] == 0
        assert body["corrections_cents"] == -250
        assert {t["table_id"] for t in body["tables"]} == {"stud-1", "stud-2"}
        assert body["weeks"][-1]["closing_units"] == body["closing_units"]
        csv_ = await http.get("/api/v1/links/stud/reconciliation/export", params=q, headers=auditor)
        assert csv_.headers["content-type"].startswith("text/csv")
        assert csv_.text.splitlines()[0].startswith("row,period_start")
        # The weekly report anchors the history on paper: the head and the last checkpoint.
        cells = [row[0] for row in csv.reader(io.StringIO(csv_.text)) if len(row) == 1]
        (head_line,) = [x for x in cells if x.startswith("Chain head: entry ")]
        assert len(head_line.rsplit("seal ", 1)[1]) == 64
        assert any(x.startswith("Last signed checkpoint: ") for x in cells)
        pdf = await http.get(
            "/api/v1/links/stud/reconciliation/export",
            params={**q, "format": "pdf"},
            headers=auditor,
        )
        assert pdf.content.startswith(b"%PDF")
        assert (
            await http.get("/api/v1/links/stud/reconciliation", headers=tech)
        ).status_code == 403
