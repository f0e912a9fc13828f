"""The jackpot slip, the tax form's reference and the gaming-day and shift reports through
the live server, on a floor whose tables deal only when told (one forced royal flush)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from urllib.parse import quote

import httpx

from controller.core.hands import HandCategory
from controller.periods import gaming_day_of
from controller.roles import Role
from link_adapters.simulator.clock import VirtualClock
from tests.app.auth import headers_for
from tests.app.floor import WebFloor, stepped_floor
from tests.integration.harness import wait_until
from tests.pdf_text import pdf_text


def _url(hit_id: str, what: str) -> str:
    return f"/api/v1/hits/{quote(hit_id, safe='')}/{what}"


async def _royal(wf: WebFloor) -> str:
    """A royal flush at stud-1, held for its technician: its hit id."""
    wf.table("stud", 1).force_hand(3, HandCategory.ROYAL_FLUSH)
    wf.play_round_now("stud", 1)
    await wait_until(lambda: wf.service.table_status("stud-1").hit_pending)
    hits = await wf.service.runtime.hits.of_link("stud")
    (hit,) = [h for h in hits if h.table_id == "stud-1"]
    return hit.hit_id


async def test_slip_and_tax_form_of_a_royal_flush(tmp_path: Path) -> None:
    clock = VirtualClock()
    async with (
        stepped_floor(tmp_path, clock) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        wf.service.settings = wf.service.settings.model_copy(
            update={"property_name": "Riverside Casino", "property_licence": "IGC-0042"}
        )
        hit_id = await _royal(wf)
        award = (await wf.service.runtime.hits.get(hit_id)).award_cents
        auditor = await headers_for(wf, Role.AUDITOR)
        tech = await headers_for(wf, Role.TECHNICIAN)
        dealer = await headers_for(wf, Role.DEALER)

        slip = await http.get(_url(hit_id, "slip.pdf"), headers=auditor)
        assert slip.status_code == 200, slip.text
        assert slip.headers["content-type"] == "application/pdf"
        assert slip.headers["content-disposition"].startswith('attachment; filename="jackpot-')
        assert slip.content.startswith(b"%PDF") and len(slip.content) > 1_000
        if (text := pdf_text(slip.content, layout=False)) is not None:
            assert hit_id in text and "Riverside Casino" in text and "royal flush" in text
        assert (await http.get(_url(hit_id, "slip.pdf"), headers=dealer)).status_code == 403
        assert (await http.get(_url(hit_id, "slip.pdf"))).status_code == 401
        missing = await http.get(_url("stud-1#nope", "slip.pdf"), headers=auditor)
        assert missing.status_code == 404 and "stud-1#nope" in missing.json()["detail"]

        # The tax form: not under the operator's amount, not by an auditor, one line, once.
        form = _url(hit_id, "tax-form")
        wf.service.settings = wf.service.settings.model_copy(
            update={"tax_reporting_from": award + 1}
        )
        below = await http.post(form, headers=tech, json={"reference": "W2G-17"})
        assert below.status_code == 409 and "under the tax-reporting amount" in below.text
        wf.service.settings = wf.service.settings.model_copy(update={"tax_reporting_from": award})
        for who in (auditor, dealer):
            refused = await http.post(form, headers=who, json={"reference": "W2G-17"})
            assert refused.status_code == 403
        two_lines = await http.post(form, headers=tech, json={"reference": "W2G\n17"})
        assert two_lines.status_code == 422
        done = await http.post(form, headers=tech, json={"reference": "W2G-17"})
        assert done.status_code == 200, done.text
        assert done.json()["tax_form_reference"] == "W2G-17"
        again = await http.post(form, headers=tech, json={"reference": "W2G-18"})
        assert again.status_code == 409 and "recorded once" in again.json()["detail"]
        printed = await http.get(_url(hit_id, "slip.pdf"), headers=auditor)
        if (text := pdf_text(printed.content, layout=False)) is not None:
            assert "W2G-17" in text


async def test_gaming_day_and_shift_reports(tmp_path: Path) -> None:
    clock = VirtualClock()
    async with (
        stepped_floor(tmp_path, clock) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        hit_id = await _royal(wf)
        auditor = await headers_for(wf, Role.AUDITOR)
        tech = await headers_for(wf, Role.TECHNICIAN)
        calendar = (await http.get("/api/v1/reports/calendar", headers=auditor)).json()
        assert [s["starts"] for s in calendar["shifts"]] == ["06:00", "14:00", "22:00"]
        s = wf.service.settings
        hit = await wf.service.runtime.hits.get(hit_id)
        day = gaming_day_of(hit.at_us, starts=s.gaming_day_starts, zone=s.zone)
        assert date.fromisoformat(calendar["today"]) >= day
        base = "/api/v1/links/stud/reports"

        got = await http.get(f"{base}/gaming-day?date={day}&format=json", headers=auditor)
        assert got.status_code == 200, got.text
        report = got.json()
        assert report["reconciliation"]["balanced"] is True
        (shown,) = [h for h in report["hits"] if h["hit_id"] == hit_id]
        assert shown["hand_name"] == "royal flush" and len(shown["cards"]) == 5
        csv_ = await http.get(f"{base}/gaming-day?date={day}&format=csv", headers=auditor)
        assert csv_.headers["content-type"].startswith("text/csv")
        assert " ".join(shown["cards"]) in csv_.text
        pdf = await http.get(f"{base}/gaming-day?date={day}", headers=auditor)
        assert pdf.headers["content-type"] == "application/pdf"
        assert pdf.content.startswith(b"%PDF")

        # The shifts tile the day: the hit is in exactly one of them.
        holding = 0
        for n in (1, 2, 3):
            shift = await http.get(
                f"{base}/shift?date={day}&shift={n}&format=json", headers=auditor
            )
            assert shift.status_code == 200, shift.text
            holding += any(h["hit_id"] == hit_id for h in shift.json()["hits"])
        assert holding == 1
        no_shift = await http.get(f"{base}/shift?date={day}&shift=4", headers=auditor)
        assert no_shift.status_code == 422 and "there is no shift 4" in no_shift.text
        bad_day = await http.get(f"{base}/gaming-day?date=23-11-2026", headers=auditor)
        assert bad_day.status_code == 422
        assert (await http.get(f"{base}/gaming-day?date={day}", headers=tech)).status_code == 403
        nope = await http.get(f"/api/v1/links/nope/reports/gaming-day?date={day}", headers=auditor)
        assert nope.status_code == 404
