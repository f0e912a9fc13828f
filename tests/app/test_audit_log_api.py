"""The audit log read through the API: a period, and only one person's or one action's."""

from __future__ import annotations

from pathlib import Path

import httpx

from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import web_floor


async def test_the_audit_log_filters_by_person_and_by_action(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        admin = await headers_for(wf, Role.ADMIN, "ada.admin")
        auditor = await headers_for(wf, Role.AUDITOR)
        made = await http.post(
            "/api/v1/users", json={"username": "pat.tech", "role": "dealer",
                                   "password": "a long enough secret 1"}, headers=admin,
        )  # fmt: skip
        assert made.status_code == 201, made.text
        gone = await http.post("/api/v1/users/pat.tech/disable", headers=admin)
        assert gone.status_code == 200, gone.text

        async def read(**params: str) -> httpx.Response:
            return await http.get("/api/v1/audit-log", params=params, headers=auditor)

        everything = (await read()).json()
        assert {"user.create", "user.disable"} <= {e["action"] for e in everything}
        only_create = (await read(action="user.create")).json()
        assert only_create and {e["action"] for e in only_create} == {"user.create"}
        by_ada = (await read(actor="ada.admin")).json()
        assert by_ada and {e["actor"] for e in by_ada} == {"ada.admin"}
        assert (await read(actor="nobody.here")).json() == []
        both = (await read(actor="ada.admin", action="user.disable")).json()
        assert [e["target"] for e in both] == ["user pat.tech"]
        bad = await read(action="not an action")
        assert bad.status_code == 422
