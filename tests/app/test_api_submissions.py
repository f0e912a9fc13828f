"""Submissions through the live server: filed, read, reviewed only by commission agents."""

from __future__ import annotations

from pathlib import Path

import httpx

from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.core.money import MAX_AMOUNT_CENTS
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import web_floor
from tests.integration.harness import wait_until

STUD_ONLY = {"stud": (Game.CARIBBEAN_STUD, 2)}


async def test_a_new_link_waits_for_approval_then_plays(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=STUD_ONLY, approve=False) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        agent = await headers_for(wf, Role.COMMISSION_AGENT)
        sup = await headers_for(wf, Role.SUPERVISOR)
        assert wf.service.table_status("stud-1").state == "awaiting_approval"
        pending = (await http.get("/api/v1/submissions?status=filed", headers=agent)).json()
        assert [(s["kind"], s["link_id"]) for s in pending] == [("new_link", "stud")]
        sid = pending[0]["submission_id"]
        assert pending[0]["filed_by"] == "configuration"
        assert (
            await http.post(f"/api/v1/submissions/{sid}/approve", headers=sup)
        ).status_code == 403
        assert wf.service.table_status("stud-1").credits is None  # never polled
        ok = await http.post(f"/api/v1/submissions/{sid}/approve", headers=agent)
        assert ok.status_code == 200 and ok.json()["status"] == "approved"
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")


async def test_rate_change_filed_reviewed_and_applied_at_the_reset(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=STUD_ONLY) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        agent = await headers_for(wf, Role.COMMISSION_AGENT)
        sup = await headers_for(wf, Role.SUPERVISOR)
        admin = await headers_for(wf, Role.ADMIN)
        auditor = await headers_for(wf, Role.AUDITOR)
        tech = await headers_for(wf, Role.TECHNICIAN)
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")
        body = {"kind": "rate_change", "link_id": "stud", "rate_bp": 9000}
        # 68 IAC 10-1-1.1(d): no jackpot since the rate was set.
        refused = await http.post("/api/v1/submissions", json=body, headers=sup)
        assert refused.status_code == 409 and "10-1-1.1(d)" in refused.json()["detail"]
        wf.table("stud", 1).force_hand(2, HandCategory.ROYAL_FLUSH)
        await wait_until(
            lambda: wf.service.runtime.memory.states["stud"].jackpot_won_since_rate_set
        )
        for rate in (5999, 10001):
            r = await http.post("/api/v1/submissions", json={**body, "rate_bp": rate}, headers=sup)
            assert r.status_code == 409 and "10-1-1.1(c)" in r.json()["detail"]
        # 68 IAC 10-1-4(1): the executive director's written direction, filed with the change.
        waiver = {
            "given_by": "J. Doe, Executive Director", "reference": "IGC letter 2026-114",
            "given_on": "2020-01-02", "document_sha256": "ab" * 32,
        }  # fmt: skip
        # A waiver without its document is refused with the clause; the old field is gone.
        r = await http.post(
            "/api/v1/submissions",
            json={**body, "waiver": {**waiver, "document_sha256": "a letter"}},
            headers=sup,
        )
        assert r.status_code == 409 and r.json()["clause"] == "68 IAC 10-1-4(1)", r.text
        # Its day is a day, ten characters, and nothing longer is read.
        for day in ("2020-01-02" + "0" * 20, "not a day"):
            r = await http.post(
                "/api/v1/submissions",
                json={**body, "waiver": {**waiver, "given_on": day}},
                headers=sup,
            )
            assert r.status_code == 422 and "given_on" in r.text, r.text
        r = await http.post(
            "/api/v1/submissions", json={**body, "notice_override": "letter ED-7"}, headers=sup
        )
        assert r.status_code == 422
        assert (await http.post("/api/v1/submissions", json=body, headers=tech)).status_code == 403
        filed = await http.post("/api/v1/submissions", json={**body, "waiver": waiver}, headers=sup)
        assert filed.status_code == 201, filed.text
        sub = filed.json()
        assert sub["status"] == "filed" and sub["waiver"] == waiver
        assert sub["notice_override"] is None
        sid = sub["submission_id"]
        pdf = await http.get(sub["packet_pdf_url"], headers=auditor)
        assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
        packet = (await http.get(sub["packet_json_url"], headers=agent)).json()
        assert packet["proposed"]["rate_bp"] == 9000 and packet["current"]["rate_bp"] == 8000
        locations = [g["location"] for g in packet["progressive_games"]["games"]]
        assert locations == ["pit 1, table 1", "pit 1, table 2"]
        # Nobody but a commission agent reviews.
        for who in (sup, admin, auditor):
            r = await http.post(f"/api/v1/submissions/{sid}/approve", headers=who)
            assert r.status_code == 403
            r = await http.post(
                f"/api/v1/submissions/{sid}/reject", json={"reason": "x"}, headers=who
            )
            assert r.status_code == 403
        r = await http.post(f"/api/v1/submissions/{sid}/reject", json={"reason": ""}, headers=agent)
        assert r.status_code == 422
        # Not approved until the agent confirms the director's direction.
        r = await http.post(
            f"/api/v1/submissions/{sid}/approve", json={"reason": "notice waived"}, headers=agent
        )
        assert r.status_code == 409 and r.json()["clause"] == "68 IAC 10-1-4(1)", r.text
        assert "waiver_confirmed" in r.json()["detail"]
        ok = await http.post(
            f"/api/v1/submissions/{sid}/approve",
            json={"reason": "notice waived", "waiver_confirmed": True},
            headers=agent,
        )
        assert ok.status_code == 200 and ok.json()["reviewed_by"].startswith("commission-agent")
        assert ok.json()["review_reason"] == "notice waived"
        assert ok.json()["words"]["change"] == [
            {"label": "Rate of progression", "current": "80.00 %", "proposed": "90.00 %"}
        ]
        doc = (await http.get(ok.json()["document_url"], headers=auditor)).json()
        decision = next(s for s in doc["sections"] if s["key"] == "decision")
        assert {"label": "Reason", "value": "notice waived"} in decision["facts"]
        again = await http.post(f"/api/v1/submissions/{sid}/approve", headers=agent)
        assert again.status_code == 409
        # Armed, effective, but the link accumulates at the old rate until the next reset.
        assert wf.service.runtime.memory.states["stud"].rate_bp == 8000
        wf.table("stud", 2).force_hand(1, HandCategory.ROYAL_FLUSH)
        await wait_until(lambda: wf.service.runtime.memory.states["stud"].rate_bp == 9000)
        done = (await http.get(f"/api/v1/submissions/{sid}", headers=auditor)).json()
        assert done["applied_at_us"] is not None
        log = (await http.get("/api/v1/audit-log", headers=admin)).json()
        actions = {e["action"] for e in (log["entries"] if isinstance(log, dict) else log)}
        assert {"submission.file", "submission.approve"} <= actions


async def test_amounts_beyond_their_bound_are_refused_at_filing(tmp_path: Path) -> None:
    """A fixed pay of 2**63 cents (more than any column holds) is refused when filed, naming
    the field and the bound; nothing is filed."""
    async with (
        web_floor(tmp_path, links=STUD_ONLY) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        sup = await headers_for(wf, Role.SUPERVISOR)
        agent = await headers_for(wf, Role.COMMISSION_AGENT)
        royal = {"hand": "ROYAL_FLUSH", "percent_bp": 10_000}
        for fixed in (2**63, MAX_AMOUNT_CENTS + 1):
            body = {
                "kind": "paytable_change",
                "link_id": "stud",
                "paytable": [royal, {"hand": "FLUSH", "fixed_cents": fixed}],
            }
            r = await http.post("/api/v1/submissions", json=body, headers=sup)
            assert r.status_code == 422, r.text
            [problem] = r.json()["detail"]["problems"]
            assert problem["where"] == "body.paytable.1.fixed_cents"
            assert str(MAX_AMOUNT_CENTS) in problem["problem"]
        for reset in (2**63, -1):
            body = {"kind": "reset_change", "link_id": "stud", "reset_cents": reset}
            r = await http.post("/api/v1/submissions", json=body, headers=sup)
            assert r.status_code == 422, r.text
            assert r.json()["detail"]["problems"][0]["where"] == "body.reset_cents"
        filed = await http.get("/api/v1/submissions?status=filed", headers=agent)
        assert filed.json() == []
        # The bound itself is taken.
        body = {
            "kind": "paytable_change",
            "link_id": "stud",
            "paytable": [royal, {"hand": "FLUSH", "fixed_cents": MAX_AMOUNT_CENTS}],
        }
        r = await http.post("/api/v1/submissions", json=body, headers=sup)
        assert r.status_code == 201, r.text
