"""Tables and hits through the live server: a forced royal flush, verified, paid and reset."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import httpx

from app.security import Role
from controller.core.hands import HandCategory, evaluate, parse_cards
from controller.core.reducer import HitClaim
from tests.integration.harness import wait_until
from tests.web.auth import headers_for
from tests.web.floor import WebFloor, web_floor


def hit_url(hit_id: str, action: str) -> str:
    # Hit ids hold "#": it is percent-encoded in a path, as a browser's encodeURIComponent does.
    return f"/api/v1/hits/{quote(hit_id, safe='')}/{action}"


def _held(wf: WebFloor, table_id: str) -> bool:
    return wf.service.table_status(table_id).hit_pending


async def test_forced_royal_is_verified_paid_and_reset(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        tech = await headers_for(wf, Role.TECHNICIAN)
        dealer = await headers_for(wf, Role.DEALER)
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")

        tables = (await http.get("/api/v1/tables", headers=dealer)).json()
        assert {t["table_id"] for t in tables} == {"stud-1", "stud-2", "lir-1", "lir-2"}
        one = (await http.get("/api/v1/tables/stud-1", headers=dealer)).json()
        assert one["state"] == "online" and one["seats"] == 7
        assert isinstance(one["rounds"], int) and isinstance(one["seats_with_bets"], list)
        flags = one["status_flags"]  # the table's own state, named
        assert set(flags) == {"lockout", "door_open", "fault", "progressive_disabled"}
        assert not flags["fault"] and not flags["door_open"]

        wf.table("stud", 1).force_hand(3, HandCategory.ROYAL_FLUSH)
        await wait_until(lambda: _held(wf, "stud-1"))
        assert (await http.get("/api/v1/tables/stud-1", headers=tech)).json()["state"] == (
            "hit_pending"
        )

        pending = (await http.get("/api/v1/hits?pending=true", headers=tech)).json()
        (hit,) = [h for h in pending if h["table_id"] == "stud-1"]
        assert hit["seat"] == 3 and hit["hand"] == "ROYAL_FLUSH"
        assert hit["status"] == "awarded" and hit["paid_from"] == "meter"
        royal = evaluate(parse_cards(" ".join(hit["cards"])))
        assert royal.category is HandCategory.ROYAL_FLUSH
        assert isinstance(hit["award_cents"], int) and hit["award_cents"] >= 100_000
        by_link = (await http.get("/api/v1/links/stud/hits", headers=tech)).json()
        assert by_link[0]["hit_id"] == hit["hit_id"]

        # The reset waits for the verification.
        early = await http.post("/api/v1/tables/stud-1/reset", headers=tech)
        assert early.status_code == 409, early.text
        assert "cannot be reset before its hits are verified" in early.json()["detail"]

        # A dealer may look, not verify.
        denied = await http.post(hit_url(hit["hit_id"], "verify"), headers=dealer)
        assert denied.status_code == 403
        assert "technician" in denied.json()["detail"]

        wrong = await http.post(
            hit_url(hit["hit_id"], "verify"),
            headers=tech,
            json={"cards": ["2c", "3d", "4h", "5s", "7c"]},
        )
        assert wrong.status_code == 409
        assert "not the cards the table reported" in wrong.json()["detail"]

        ok = await http.post(hit_url(hit["hit_id"], "verify"), headers=tech, json={})
        assert ok.status_code == 200, ok.text
        assert ok.json()["verified_cards"] == hit["cards"]
        again = await http.post(hit_url(hit["hit_id"], "verify"), headers=tech)
        assert again.status_code == 409
        assert "already verified" in again.json()["detail"]

        bad_pay = await http.post(
            hit_url(hit["hit_id"], "hand-pay"), headers=tech, json={"amount_cents": 12.5}
        )
        assert bad_pay.status_code == 422
        paid = await http.post(
            hit_url(hit["hit_id"], "hand-pay"),
            headers=tech,
            json={"amount_cents": hit["award_cents"]},
        )
        assert paid.status_code == 200, paid.text
        assert paid.json()["hand_paid_cents"] == hit["award_cents"]

        reset = await http.post("/api/v1/tables/stud-1/reset", headers=tech)
        assert reset.status_code == 200, reset.text
        assert reset.json()["hit_pending"] is False
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")
        pending = (await http.get("/api/v1/hits?pending=true", headers=tech)).json()
        assert hit["hit_id"] not in {h["hit_id"] for h in pending}


async def test_cards_entered_for_a_hit_reported_without_them(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        tech = await headers_for(wf, Role.TECHNICIAN)
        await wait_until(lambda: wf.service.table_status("stud-2").state == "online")
        claim = HitClaim(table_seq=None, seat=5, hand=HandCategory.ROYAL_FLUSH, round=1)
        await wf.service.runtime.enter_hit("stud-2", claim, actor="tech")
        (hit,) = (await http.get("/api/v1/hits?table=stud-2", headers=tech)).json()
        assert hit["cards"] is None
        url = hit_url(hit["hit_id"], "verify")

        none = await http.post(url, headers=tech)
        assert none.status_code == 409
        assert "reported no cards; enter the five cards" in none.json()["detail"]
        pair = await http.post(url, headers=tech, json={"cards": ["Ah", "Ad", "Qh", "Jh", "Th"]})
        assert pair.status_code == 409
        assert "make one pair, not the claimed royal flush" in pair.json()["detail"]
        garbage = await http.post(url, headers=tech, json={"cards": ["Zz", "Kh", "Qh", "Jh", "Th"]})
        assert garbage.status_code == 422
        assert "unrecognised card 'Zz'" in garbage.text

        ok = await http.post(url, headers=tech, json={"cards": ["Ah", "Kh", "Qh", "Jh", "Th"]})
        assert ok.status_code == 200, ok.text
        assert ok.json()["verified_cards"] == ["Ah", "Kh", "Qh", "Jh", "Th"]
        assert (await http.post("/api/v1/tables/stud-2/reset", headers=tech)).status_code == 200


async def test_unknown_ids_and_roles(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        tech = await headers_for(wf, Role.TECHNICIAN)
        auditor = await headers_for(wf, Role.AUDITOR)
        missing = await http.get("/api/v1/tables/nope", headers=tech)
        assert missing.status_code == 404
        assert missing.json()["detail"] == "no table 'nope'"
        assert (await http.post("/api/v1/hits/nope/verify", headers=tech)).json() == {
            "detail": "no hit 'nope'"
        }
        assert (await http.post("/api/v1/tables/nope/reset", headers=tech)).status_code == 404
        not_held = await http.post("/api/v1/tables/stud-1/reset", headers=tech)
        assert not_held.status_code == 409
        assert "has no hit pending" in not_held.json()["detail"]
        assert (await http.get("/api/v1/tables")).status_code == 401
        auditor_reset = await http.post("/api/v1/tables/stud-1/reset", headers=auditor)
        assert auditor_reset.status_code == 403
        extra = await http.post(
            "/api/v1/hits/x/hand-pay", headers=tech, json={"amount_cents": 100, "tip": 1}
        )
        assert extra.status_code == 422
        assert (await http.get("/api/v1/hits?limit=0", headers=tech)).status_code == 422
