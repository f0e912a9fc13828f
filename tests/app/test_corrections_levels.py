"""A correction of each meter of a link of levels (68 IAC 10-6-5(c), 10-8-5(c)): filed naming
the meter, approved by a second person, applied to that meter alone, named in the history
entry and the audit, and the ledger still whole; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from app.demo_floor import CARIBBEAN_LEVELS, PAYTABLE
from controller.core.games import Game
from controller.core.money import UNITS_PER_CENT
from controller.roles import Role
from controller.storage.verify import verify_ledger
from link_adapters.simulator.clock import VirtualClock
from tests.app.auth import headers_for
from tests.app.floor import WebFloor, settings_in, web_floor
from tests.controller.permissive_law import KEY as PERMISSIVE_KEY

LINKS = {"caribbean": (Game.CARIBBEAN_STUD, 2)}
STUD_LINES = [line for line in PAYTABLE if line["game"] == Game.CARIBBEAN_STUD.value]
LEVELS = {
    "caribbean": {
        "name": "Caribbean Stud and Draw progressive",
        "level": CARIBBEAN_LEVELS,
        "paytable": STUD_LINES,
    }
}
# Every meter of the demo's Caribbean pool, as the form names it.
METERS = {
    "L1": "Grand",
    "L1.reserve": "Grand reserve",
    "L2": "Major",
    "L2.overflow": "Major overflow",
    "L3": "Minor",
    "L3.overflow": "Minor overflow",
    "L4": "Mini",
}
URL = "/api/v1/links/caribbean/corrections"
PDF = b"%PDF-1.4 count of the meter"


def levels_floor(folder: Path, db_url: str) -> Any:
    """The demo's Caribbean link of four levels, its tables dealing only when told to; under
    a jurisdiction allowing its limits (Indiana refuses them, 68 IAC 10-1-5(d))."""
    settings = settings_in(folder).model_copy(
        update={"database_url": db_url, "jurisdiction": PERMISSIVE_KEY}
    )
    return web_floor(
        folder,
        links=LINKS,
        link_settings=LEVELS,
        settings=settings,
        sim_autodeal=False,
        sim_clock=VirtualClock().now_us,
    )


async def meters(http: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, int]:
    answer = await http.get(f"{URL}/meters", headers=headers)
    assert answer.status_code == 200, answer.text
    listed = answer.json()
    assert {m["meter"]: m["name"] for m in listed} == METERS
    return {m["meter"]: m["amount_cents"] for m in listed}


async def file(
    http: httpx.AsyncClient, headers: dict[str, str], *, delta: str, meter: str | None
) -> httpx.Response:
    data = {"delta": delta, "category": "malfunction", "reason": "meter counted short"}
    if meter is not None:
        data["meter"] = meter
    return await http.post(
        URL, data=data, files={"document": ("count.pdf", PDF, "application/pdf")}, headers=headers
    )


async def ledger_whole(wf: WebFloor) -> None:
    report = await verify_ledger(wf.service.engine, wf.service.runtime.memory.store.key)
    assert report.ok and not report.problems, report.problems
    assert report.links["caribbean"] > 0


async def test_a_correction_of_each_meter_of_a_link_of_levels(db_url: str, tmp_path: Path) -> None:
    async with (
        levels_floor(tmp_path, db_url) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        sup = await headers_for(wf, Role.SUPERVISOR)
        sup2 = await headers_for(wf, Role.SUPERVISOR, username="second-supervisor")
        auditor = await headers_for(wf, Role.AUDITOR)

        # Filed without a meter, or with one the link has not, it is refused when filed.
        none = await file(http, sup, delta="$5.00", meter=None)
        assert none.status_code == 422, none.text
        problem = none.json()["detail"]["problems"][0]
        assert problem["where"] == "body.meter"
        assert "several meters" in problem["problem"] and "L1.reserve" in problem["problem"]
        wrong = await file(http, sup, delta="$5.00", meter="L9")
        assert wrong.status_code == 422 and "no meter L9" in wrong.text
        assert (await http.get("/api/v1/corrections", headers=sup)).json() == []

        for key, name in METERS.items():
            before = await meters(http, sup)
            asked = await file(http, sup, delta="$5.00", meter=key)
            assert asked.status_code == 201, asked.text
            req = asked.json()
            assert (req["meter"], req["meter_name"], req["status"]) == (key, name, "pending")
            assert await meters(http, sup) == before  # nothing moves until approved
            same = await http.post(f"/api/v1/corrections/{req['request_id']}/approve", headers=sup)
            assert same.status_code == 409
            ok = await http.post(f"/api/v1/corrections/{req['request_id']}/approve", headers=sup2)
            assert ok.status_code == 200, ok.text
            done = ok.json()
            assert (done["status"], done["meter"], done["decided_by"]) == (
                "approved",
                key,
                "second-supervisor",
            )
            after = await meters(http, sup)
            assert after == {**before, key: before[key] + 5_00}, (key, before, after)

            history = await http.get("/api/v1/links/caribbean/history", headers=auditor)
            entry = history.json()["entries"][-1]
            assert entry["kind"] == "correction"
            assert entry["correction_id"] == done["correction_id"]
            assert entry["delta_units"] == 5_00 * UNITS_PER_CENT
            assert f"of {name} ({key}) by " in entry["explanation"], entry["explanation"]

        # A reduction of one meter, with its document.
        before = await meters(http, sup)
        lower = await file(http, sup, delta="-$2.50", meter="L2.overflow")
        assert lower.status_code == 201, lower.text
        approve = f"/api/v1/corrections/{lower.json()['request_id']}/approve"
        assert (await http.post(approve, headers=sup2)).status_code == 200
        assert await meters(http, sup) == {**before, "L2.overflow": before["L2.overflow"] - 2_50}

        # The audit names the meter of the request and of the correction applied.
        audit = await http.get("/api/v1/audit-log?action=meter.correct", headers=auditor)
        applied = [json.loads(a["after"]) for a in audit.json()]
        assert sorted(a["meter"] for a in applied) == sorted([*METERS, "L2.overflow"])
        audit = await http.get("/api/v1/audit-log?action=correction.request", headers=auditor)
        assert "L1.reserve" in {json.loads(a["after"])["meter"] for a in audit.json()}

        await ledger_whole(wf)


async def test_a_correction_of_a_link_of_one_meter_names_none(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links={"stud": (Game.CARIBBEAN_STUD, 2)}) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        sup = await headers_for(wf, Role.SUPERVISOR)
        assert (await http.get("/api/v1/links/stud/corrections/meters", headers=sup)).json() == []
        data = {"delta": "$1.00", "category": "other", "reason": "count", "meter": "L2"}
        wrong = await http.post("/api/v1/links/stud/corrections", data=data, headers=sup)
        assert wrong.status_code == 422 and "no meter L2" in wrong.text
        del data["meter"]
        ok = await http.post("/api/v1/links/stud/corrections", data=data, headers=sup)
        assert ok.status_code == 201, ok.text
        assert (ok.json()["meter"], ok.json()["meter_name"]) == (None, None)


async def test_a_bare_number_is_no_change_of_the_meter(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links={"stud": (Game.CARIBBEAN_STUD, 2)}) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        sup = await headers_for(wf, Role.SUPERVISOR)
        data = {"delta": "10", "category": "other", "reason": "count"}
        bare = await http.post("/api/v1/links/stud/corrections", data=data, headers=sup)
        assert bare.status_code == 422, bare.text
        problem = bare.json()["detail"]["problems"][0]
        assert problem["where"] == "body.delta"
        assert "needs its unit" in problem["problem"] and "$1,234.56" in problem["problem"]
