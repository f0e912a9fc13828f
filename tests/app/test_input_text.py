"""Text that enters through the API: control characters, bidirectional controls and invisible
formatting characters are refused with a 422 naming the field and the rule; ids are a safe
charset; the OpenAPI document states each rule (``pattern``, ``maxLength``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from controller.core.games import Game
from controller.roles import Role
from controller.storage.models import table_of
from controller.storage.paperwork import IntegrityRecordRow
from tests.app.auth import headers_for
from tests.app.floor import web_floor
from tests.controller.storage.helpers import drop_guards

ONE_LINK = {"stud": (Game.CARIBBEAN_STUD, 1)}
PDF = b"%PDF-1.4 report"
RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE


def refused(answer: httpx.Response, where: str, rule: str) -> None:
    assert answer.status_code == 422, f"{where}: {answer.status_code} {answer.text}"
    problems = answer.json()["detail"]["problems"]
    assert any(p["where"] == where and rule in p["problem"] for p in problems), problems


async def test_hidden_characters_are_refused_where_text_enters(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=ONE_LINK) as wf,
        httpx.AsyncClient(base_url=wf.base_url, timeout=60) as http,
    ):
        sup = await headers_for(wf, Role.SUPERVISOR)
        admin = await headers_for(wf, Role.ADMIN)
        tech = await headers_for(wf, Role.TECHNICIAN)

        async def correction(reason: str) -> httpx.Response:
            return await http.post(
                "/api/v1/links/stud/corrections",
                data={"delta_cents": "-100", "category": "malfunction", "reason": reason},
                files={"document": ("report.pdf", PDF, "application/pdf")},
                headers=sup,
            )

        # Reasons: a bare CR (a new spreadsheet row), an override, an escape sequence.
        refused(await correction("\r=1+1"), "body.reason", "U+000D CARRIAGE RETURN")
        refused(await correction(f"paid {RLO}001$"), "body.reason", "U+202E RIGHT-TO-LEFT")
        refused(await correction("ok\x1b[2J"), "body.reason", "U+001B")
        refused(await correction("x" * 2001), "body.reason", "at most 2000 characters")
        # Line breaks belong in a reason; CR LF (as a browser sends a form) is kept as LF.
        taken = await correction("meter ran on\r\nafter the reset\tseen by two")
        assert taken.status_code == 201, taken.text
        assert taken.json()["reason"] == "meter ran on\nafter the reset\tseen by two"

        # Names: no line break at all, and nothing invisible.
        for name, rule in (
            (f"pit 1{RLO}", "U+202E"),
            ("pit\u200b1", "U+200B ZERO WIDTH SPACE"),
            ("pit\u2066 1\u2069", "U+2066"),
            ("pit\n1", "U+000A"),
            ("pit\x85 1", "U+0085"),
        ):
            answer = await http.post("/api/v1/device-tokens", json={"name": name}, headers=admin)
            refused(answer, "body.name", rule)
        answer = await http.post(
            "/api/v1/users",
            json={"username": f"pat{RLO}tech", "role": "technician", "password": "x" * 12},
            headers=admin,
        )
        refused(answer, "body.username", "U+202E")
        answer = await http.post(
            "/api/v1/auth/token", data={"username": "admin\x00", "password": "x" * 12}
        )
        refused(answer, "body.username", "U+0000")

        # Ids in paths and queries: a safe charset, so a lookup names what it shows.
        answer = await http.get(f"/api/v1/links/{quote('stud' + RLO)}", headers=admin)
        refused(answer, "path.link_id", "U+202E")
        answer = await http.get("/api/v1/tables", params={"link": "st ud"}, headers=admin)
        refused(answer, "query.link", "not a valid id")
        answer = await http.get("/api/v1/hits", params={"table": "stud-1\r"}, headers=tech)
        refused(answer, "query.table", "U+000D")
        answer = await http.get(f"/api/v1/hits/{quote('stud-1#1' + RLO)}", headers=tech)
        refused(answer, "path.hit_id", "U+202E")
        answer = await http.get("/api/v1/hits", params={"table": "stud-1"}, headers=tech)
        assert answer.status_code == 200, answer.text
        # An envy pay's id holds a "/": it reaches its hit, and a second segment that is no
        # envy pay's is refused by the rule, not lost as an unknown address.
        answer = await http.get(f"/api/v1/hits/{quote('stud-1#1/envyX', safe='')}", headers=tech)
        refused(answer, "path.hit_id", "not a valid hit reference")
        envy = quote("stud-1#99/envy2", safe="")
        for path in (f"/api/v1/hits/{envy}", f"/api/v1/hits/{envy}/slip.pdf"):
            answer = await http.get(path, headers=tech)
            assert answer.status_code == 404 and "stud-1#99/envy2" in answer.text, answer.text

        # A record's fields, each by its own kind; multi-line text keeps its lines.
        removal: dict[str, Any] = {
            "questioned_at_us": wf.service.clock.now_us(),
            "device_type": "table controller",
            "commission_registration_number": "CR-1",
            "malfunction_reason": "counts twice\nafter a power cut",
        }
        answer = await http.post(
            "/api/v1/tables/stud-1/integrity-records",
            json={**removal, "complainant_name": f"Pat{RLO}"},
            headers=tech,
        )
        refused(answer, "body.complainant_name", "U+202E")
        answer = await http.post(
            "/api/v1/tables/stud-1/integrity-records",
            json={**removal, "device_type": "table\tcontroller"},
            headers=tech,
        )
        refused(answer, "body.device_type", "U+0009")
        answer = await http.post(
            "/api/v1/tables/stud-1/integrity-records", json=removal, headers=tech
        )
        assert answer.status_code == 201, answer.text
        record = answer.json()
        assert record["malfunction_reason"] == "counts twice\nafter a power cut"
        answer = await http.post(
            f"/api/v1/tables/stud-1/integrity-records/{record['record_id']}/remedial-actions",
            json={
                "description": "replaced the board",
                "employees": [
                    {
                        "printed_name": "Pat\u00adTech",
                        "signature": "PT",
                        "occupational_license_number": "1",
                    }
                ],
            },
            headers=tech,
        )
        refused(answer, "body.employees.0.printed_name", "U+00AD SOFT HYPHEN")

        # Written before the rule existed: the rule is at entry, what is kept is shown as is.
        async with wf.service.engine.begin() as conn:
            await drop_guards(conn)
            await conn.execute(
                table_of(IntegrityRecordRow)
                .update()
                .where(IntegrityRecordRow.record_id == record["record_id"])
                .values(malfunction_reason=f"\r=1+1 {RLO}", complainant_name="Pat\x1b")
            )
        answer = await http.get(
            f"/api/v1/tables/stud-1/integrity-records/{record['record_id']}", headers=tech
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["malfunction_reason"] == f"\r=1+1 {RLO}"


async def test_the_openapi_document_states_the_rules(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=ONE_LINK) as wf,
        httpx.AsyncClient(base_url=wf.base_url, timeout=60) as http,
    ):
        schema = (await http.get("/openapi.json")).json()
        parts = schema["components"]["schemas"]
        form = parts["Body_request_correction_api_v1_links__link_id__corrections_post"]
        reason = form["properties"]["reason"]
        assert reason["maxLength"] == 2000 and "\\u202e" in reason["pattern"]
        name = parts["DeviceTokenCreate"]["properties"]["name"]
        assert name["maxLength"] == 200 and "\\u0000-\\u001f" in name["pattern"]
        link = schema["paths"]["/api/v1/links/{link_id}"]["get"]["parameters"][0]["schema"]
        assert link["pattern"] == "^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$"
