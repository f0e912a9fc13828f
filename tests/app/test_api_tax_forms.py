"""The tax forms still to record, through the live server on SQLite and PostgreSQL: an award at
or above the operator's tax-reporting amount waits for its tax form's reference whether or
not its table was reset, and leaves the list once it is recorded (audited, by a technician or
supervisor only); the refusal of a reset before the second signature names who gives it."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import httpx

from controller.core.hands import HandCategory
from controller.roles import Role
from link_adapters.simulator.clock import VirtualClock
from tests.app.auth import headers_for
from tests.app.floor import WebFloor, settings_in, stepped_floor
from tests.integration.harness import wait_until

DUE = "/api/v1/hits/tax-forms-due"


def _url(hit_id: str, what: str) -> str:
    return f"/api/v1/hits/{quote(hit_id, safe='')}/{what}"


async def _royal(wf: WebFloor) -> str:
    wf.table("stud", 1).force_hand(3, HandCategory.ROYAL_FLUSH)
    wf.play_round_now("stud", 1)
    await wait_until(lambda: wf.service.table_status("stud-1").hit_pending)
    (hit,) = await wf.service.runtime.hits.unverified("stud-1")
    return hit.hit_id


async def test_tax_forms_wait_until_recorded_reset_or_not(tmp_path: Path, db_url: str) -> None:
    settings = settings_in(tmp_path).model_copy(update={"database_url": db_url})
    async with (
        stepped_floor(tmp_path, VirtualClock(), settings=settings) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        hit_id = await _royal(wf)
        award = (await wf.service.runtime.hits.get(hit_id)).award_cents
        tech = await headers_for(wf, Role.TECHNICIAN, "tina")
        sup = await headers_for(wf, Role.SUPERVISOR, "sam")
        dealer = await headers_for(wf, Role.DEALER)
        admin = await headers_for(wf, Role.ADMIN)

        wf.service.settings = wf.service.settings.model_copy(
            update={"tax_reporting_from": award + 1}
        )
        under = (await http.get(DUE, headers=tech)).json()
        assert under["total"] == 0 and under["hits"] == []
        assert under["tax_reporting_from_cents"] == award + 1
        wf.service.settings = wf.service.settings.model_copy(update={"tax_reporting_from": award})
        due = await http.get(DUE, headers=tech)
        assert due.status_code == 200, due.text
        assert [h["hit_id"] for h in due.json()["hits"]] == [hit_id] and due.json()["total"] == 1
        assert (await http.get(DUE, headers=dealer)).status_code == 403
        assert (await http.get(DUE)).status_code == 401
        assert (await http.get(f"{DUE}?link=nowhere", headers=tech)).status_code == 404
        assert (await http.get(f"{DUE}?table=stud-1", headers=tech)).json()["total"] == 1

        # The second signature: the refusal says who gives it.
        wf.service.runtime.hits.second_signature_from_cents = award
        assert (await http.post(_url(hit_id, "verify"), headers=tech)).status_code == 200
        refused = await http.post("/api/v1/tables/stud-1/reset", headers=tech)
        assert refused.status_code == 409
        assert "another technician or a supervisor" in refused.json()["detail"]
        own = await http.post(_url(hit_id, "sign-off"), headers=tech)
        assert own.status_code == 409
        assert "another technician or a supervisor" in own.json()["detail"]
        assert (await http.post(_url(hit_id, "sign-off"), headers=sup)).status_code == 200
        reset = await http.post("/api/v1/tables/stud-1/reset", headers=tech)
        assert reset.status_code == 200, reset.text

        # Reset, and still due until its reference is recorded.
        after = (await http.get(DUE, headers=sup)).json()
        assert [h["hit_id"] for h in after["hits"]] == [hit_id]
        assert after["hits"][0]["released_by"] == "tina"
        assert (
            await http.post(_url(hit_id, "tax-form"), headers=admin, json={"reference": "W2G-1"})
        ).status_code == 403
        done = await http.post(_url(hit_id, "tax-form"), headers=sup, json={"reference": "W2G-1"})
        assert done.status_code == 200, done.text
        assert (await http.get(DUE, headers=tech)).json()["total"] == 0
        log = await http.get("/api/v1/audit-log?action=hit.tax_form", headers=admin)
        assert log.status_code == 200, log.text
        entries = log.json()
        assert any(e["actor"] == "sam" and hit_id in e["target"] for e in entries), entries
