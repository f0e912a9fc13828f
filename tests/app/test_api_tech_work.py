"""The technician's work through the live server, on a busy floor: the hits holding tables are
never cut off by a page of other work, and an award from the meter at or above the amount is
signed off by a second person before its table is reset."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import httpx

from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.busy_floor import busy_floor
from tests.integration.harness import wait_until


def hit_url(hit_id: str, action: str | None = None) -> str:
    path = f"/api/v1/hits/{quote(hit_id, safe='')}"
    return path if action is None else f"{path}/{action}"


async def test_every_holding_hit_comes_whatever_the_other_work(tmp_path: Path) -> None:
    async with (
        busy_floor(tmp_path, fixed_pays=300, quiet_pays=6) as bf,
        httpx.AsyncClient(base_url=bf.base_url) as http,
    ):
        tech = await headers_for(bf.wf, Role.TECHNICIAN)
        # The old page of pending hits, newest first, has no room for the royal.
        page = (await http.get("/api/v1/hits?pending=true", headers=tech)).json()
        assert len(page) == 200 and bf.held_hit_id not in {h["hit_id"] for h in page}

        work = (await http.get("/api/v1/hits/work?limit=5", headers=tech)).json()
        assert [h["hit_id"] for h in work["holding"]] == [bf.held_hit_id]
        (royal,) = work["holding"]
        assert royal["holds_table"] and royal["paid_from"] == "meter"
        assert royal["kind"] == "hand" and royal["needs_technician"]
        assert len(work["other"]) == 5 and work["other_total"] == bf.fixed_pays >= 300
        times = [h["at_us"] for h in work["other"]]
        assert times == sorted(times, reverse=True)
        assert not any(h["holds_table"] for h in work["other"])
        assert work["escalate_after_s"] == 600
        assert isinstance(work["second_signature_from_cents"], int)

        # A second royal, refused (an out-of-range seat), holds its table too, after the first.
        from controller.core.hands import HandCategory
        from controller.core.reducer import HitClaim

        refused = HitClaim(table_seq=None, seat=9, hand=HandCategory.ROYAL_FLUSH, round=1)
        await bf.wf.service.runtime.hits.enter("lir-2", refused, actor="tech")
        work = (await http.get("/api/v1/hits/work?limit=1", headers=tech)).json()
        assert [h["status"] for h in work["holding"]] == ["awarded", "refused"]

        # Filters: by link, table and kind, each group counted under them.
        lir = (await http.get("/api/v1/hits/work?link=lir", headers=tech)).json()
        assert [h["table_id"] for h in lir["holding"]] == ["lir-2"]
        assert all(h["link_id"] == "lir" for h in lir["other"])
        one = (await http.get("/api/v1/hits/work?table=stud-2", headers=tech)).json()
        assert one["holding"] == [] and 1 <= one["other_total"] <= 7
        mystery = (await http.get("/api/v1/hits/work?kind=mystery", headers=tech)).json()
        assert mystery == {**mystery, "holding": [], "other": [], "other_total": 0}
        bad = await http.get("/api/v1/hits/work?kind=jackpot", headers=tech)
        assert bad.status_code == 422
        assert (await http.get("/api/v1/hits/work?link=nope", headers=tech)).status_code == 404
        assert (await http.get("/api/v1/hits/work?limit=0", headers=tech)).status_code == 422

        # The quiet log: fixed pays under the amount, which nobody waits for.
        quiet = (
            await http.get("/api/v1/hits/paid-without-technician?limit=2", headers=tech)
        ).json()
        assert quiet["total"] == bf.quiet_pays >= 1 and len(quiet["hits"]) == min(2, bf.quiet_pays)
        assert not any(h["needs_technician"] or h["holds_table"] for h in quiet["hits"])
        dealer = await headers_for(bf.wf, Role.DEALER)
        assert (await http.get("/api/v1/hits/work", headers=dealer)).status_code == 403


async def test_a_second_person_signs_off_before_the_reset(tmp_path: Path) -> None:
    async with (
        busy_floor(tmp_path, fixed_pays=7, quiet_pays=0, second_signature_from_cents=100_00) as bf,
        httpx.AsyncClient(base_url=bf.base_url) as http,
    ):
        verifier = await headers_for(bf.wf, Role.TECHNICIAN)
        second = await headers_for(bf.wf, Role.SUPERVISOR)
        auditor = await headers_for(bf.wf, Role.AUDITOR)
        hit_id, table = bf.held_hit_id, bf.held_table
        royal = (await http.get(hit_url(hit_id), headers=verifier)).json()
        assert royal["needs_second_signature"] and royal["signed_off_by"] is None

        early = await http.post(hit_url(hit_id, "sign-off"), headers=second)
        assert early.status_code == 409 and "verify it first" in early.json()["detail"]
        ok = await http.post(hit_url(hit_id, "verify"), headers=verifier, json={})
        assert ok.status_code == 200, ok.text

        unsigned = await http.post(f"/api/v1/tables/{table}/reset", headers=verifier)
        assert unsigned.status_code == 409
        detail = unsigned.json()["detail"]
        assert "signed off by a second person" in detail and hit_id in detail
        assert "house policy: second signature from an amount" in detail

        own = await http.post(hit_url(hit_id, "sign-off"), headers=verifier)
        assert own.status_code == 409 and "cannot also sign it off" in own.json()["detail"]
        assert (await http.post(hit_url(hit_id, "sign-off"), headers=auditor)).status_code == 403
        signed = await http.post(hit_url(hit_id, "sign-off"), headers=second)
        assert signed.status_code == 200, signed.text
        assert signed.json()["signed_off_by"].startswith("supervisor-")
        assert isinstance(signed.json()["signed_off_at_us"], int)
        twice = await http.post(hit_url(hit_id, "sign-off"), headers=second)
        assert twice.status_code == 409 and "already signed off" in twice.json()["detail"]

        audit = (await http.get("/api/v1/audit-log", headers=auditor)).json()
        assert [e["actor"] for e in audit if e["action"] == "hit.sign_off"] == [
            signed.json()["signed_off_by"]
        ]

        reset = await http.post(f"/api/v1/tables/{table}/reset", headers=verifier)
        assert reset.status_code == 200, reset.text
        await wait_until(lambda: bf.wf.service.table_status(table).state == "online")

        # A fixed pay needs no signature, and its table resets without one.
        fixed_table = bf.fixed_pay_tables[0]
        (fixed, *_) = (
            await http.get(f"/api/v1/hits/work?table={fixed_table}", headers=verifier)
        ).json()["other"]
        assert not fixed["needs_second_signature"]
        needless = await http.post(hit_url(fixed["hit_id"], "sign-off"), headers=second)
        assert needless.status_code == 409 and "needs no second signature" in needless.text
        reset = await http.post(f"/api/v1/tables/{fixed_table}/reset", headers=verifier)
        assert reset.status_code == 200, reset.text


async def test_below_the_amount_the_reset_needs_no_signature(tmp_path: Path) -> None:
    async with (
        busy_floor(tmp_path, fixed_pays=7, quiet_pays=0) as bf,
        httpx.AsyncClient(base_url=bf.base_url) as http,
    ):
        tech = await headers_for(bf.wf, Role.TECHNICIAN)
        hit_id = bf.held_hit_id
        royal = (await http.get(hit_url(hit_id), headers=tech)).json()
        assert royal["award_cents"] < 100_000_00 and not royal["needs_second_signature"]
        assert (await http.post(hit_url(hit_id, "verify"), headers=tech)).status_code == 200
        reset = await http.post(f"/api/v1/tables/{bf.held_table}/reset", headers=tech)
        assert reset.status_code == 200, reset.text
