"""Signing in, tokens, 401 and 403, display access and the user API, against a live server."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated

import httpx
from fastapi import Depends

from app.security.authentication import authority, display_access
from app.serve import serve
from app.web import create_app
from controller.access import users
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import WebFloor, settings_in, web_floor

PASSWORD = "correct horse battery"
TOKEN = "/api/v1/auth/token"


async def _make_user(wf: WebFloor, username: str, role: Role, password: str = PASSWORD) -> None:
    await users.create_user(
        wf.service.engine,
        username=username,
        role=role,
        password=password,
        actor="test",
        at_us=wf.service.clock.now_us(),
    )


async def _sign_in(http: httpx.AsyncClient, username: str, password: str) -> httpx.Response:
    return await http.post(TOKEN, data={"username": username, "password": password})


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_sign_in_with_the_right_password_only(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        await _make_user(wf, "pat.tech", Role.TECHNICIAN)
        ok = await _sign_in(http, "pat.tech", PASSWORD)
        assert ok.status_code == 200, ok.text
        body = ok.json()
        assert body["token_type"] == "bearer"
        assert body["role"] == "technician" and body["username"] == "pat.tech"
        assert body["expires_in"] == 15 * 60
        me = await http.get("/api/v1/auth/me", headers=_bearer(body["access_token"]))
        assert me.json() == {"username": "pat.tech", "role": "technician", "device": False}

        wrong = await _sign_in(http, "pat.tech", PASSWORD + "!")
        assert wrong.status_code == 401
        assert wrong.headers["www-authenticate"] == "Bearer"
        assert wrong.json()["detail"] == "wrong username or password, or the account is disabled"


async def test_failed_sign_ins_are_slowed_then_succeed_after_the_wait(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        await _make_user(wf, "pat.tech", Role.TECHNICIAN)
        await _make_user(wf, "sam", Role.SUPERVISOR)
        assert (await _sign_in(http, "pat.tech", PASSWORD + "!")).status_code == 401
        # The same name from the same address right away: refused before the password is
        # even looked at, the right one too.
        slowed = await _sign_in(http, "pat.tech", PASSWORD)
        assert slowed.status_code == 429, slowed.text
        assert "too many failed sign-ins" in slowed.json()["detail"]
        wait = int(slowed.headers["retry-after"])
        assert wait >= 1
        # Someone else at the same terminal is not kept waiting by one mistyped password.
        assert (await _sign_in(http, "sam", PASSWORD)).status_code == 200
        await asyncio.sleep(wait)
        assert (await _sign_in(http, "pat.tech", PASSWORD)).status_code == 200
        throttle = authority(wf.service).throttle
        assert throttle.failures("pair", "pat.tech", "127.0.0.1") == 0  # reset by the success
        assert throttle.failures("address", "127.0.0.1") == 1

        # Many names tried from one address: after six failures, everyone there waits.
        for n in range(5):
            assert (await _sign_in(http, f"nobody-{n}", PASSWORD)).status_code == 401
        assert (await _sign_in(http, "sam", PASSWORD)).status_code == 429


async def test_an_expired_or_forged_token_is_refused(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        await _make_user(wf, "ada", Role.AUDITOR)
        auth = authority(wf.service)
        expired = auth.issue("ada", Role.AUDITOR, lifetime_s=-1)
        answer = await http.get("/api/v1/auth/me", headers=_bearer(expired))
        assert answer.status_code == 401
        assert answer.json()["detail"] == "the token has expired; sign in again"
        assert answer.headers["www-authenticate"] == "Bearer"

        good = auth.issue("ada", Role.AUDITOR)
        assert (await http.get("/api/v1/auth/me", headers=_bearer(good))).status_code == 200
        head, payload, signature = good.split(".")
        forged = f"{head}.{payload}.{signature[:-4]}AAAA"
        for bad in (forged, "garbage", auth.issue("ada", Role.ADMIN)):
            answer = await http.get("/api/v1/auth/me", headers=_bearer(bad))
            assert answer.status_code == 401, bad
        # A token claiming a role the user does not have (signed with our key) is refused.
        answer = await http.get("/api/v1/auth/me", headers=_bearer(auth.issue("ada", Role.ADMIN)))
        assert answer.json()["detail"] == "the role of 'ada' has changed; sign in again"


async def test_a_disabled_user_is_signed_out(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        admin = await headers_for(wf, Role.ADMIN, "root")
        await _make_user(wf, "sam", Role.SUPERVISOR)
        token = (await _sign_in(http, "sam", PASSWORD)).json()["access_token"]
        assert (await http.get("/api/v1/auth/me", headers=_bearer(token))).status_code == 200

        done = await http.post("/api/v1/users/sam/disable", headers=admin)
        assert done.status_code == 200, done.text
        assert done.json()["disabled"] is True
        refused = await http.get("/api/v1/auth/me", headers=_bearer(token))
        assert refused.status_code == 401
        assert refused.json()["detail"] == "the account 'sam' is disabled or no longer exists"
        assert (await _sign_in(http, "sam", PASSWORD)).status_code == 401

        myself = await http.post("/api/v1/users/root/disable", headers=admin)
        assert myself.status_code == 409


async def test_401_without_a_token_and_403_naming_the_roles_needed(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        anonymous = await http.get("/api/v1/users")
        assert anonymous.status_code == 401
        assert anonymous.headers["www-authenticate"] == "Bearer"
        assert "this needs a sign-in" in anonymous.json()["detail"]

        auditor = await headers_for(wf, Role.AUDITOR)
        refused = await http.get("/api/v1/users", headers=auditor)
        assert refused.status_code == 403
        assert refused.json() == {
            "detail": "this needs the role admin; you are signed in as auditor"
        }
        technician = await headers_for(wf, Role.TECHNICIAN)
        refused = await http.get("/api/v1/audit-log", headers=technician)
        assert refused.status_code == 403
        assert refused.json()["detail"] == (
            "this needs the role supervisor, auditor or admin; you are signed in as technician"
        )
        # An admin is not every role: the audit log admits admins, the user list auditors not.
        assert (await http.get("/api/v1/audit-log", headers=auditor)).status_code == 200


@contextlib.asynccontextmanager
async def _probe(wf: WebFloor) -> AsyncIterator[httpx.AsyncClient]:
    """The floor's own application plus one public read route guarded like the links list."""
    app = create_app(wf.service)  # the service is running: this app neither starts nor stops it

    @app.get("/probe")
    async def probe(_: Annotated[None, Depends(display_access)]) -> dict[str, bool]:
        return {"ok": True}

    async with serve(app, port=0) as served, httpx.AsyncClient(base_url=served.base_url) as http:
        yield http


async def test_current_amounts_are_public_by_default(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, _probe(wf) as http:
        assert (await http.get("/probe")).json() == {"ok": True}
        assert (await http.get("/probe", params={"token": "nonsense"})).status_code == 200


async def test_display_tokens_when_the_installation_requires_them(tmp_path: Path) -> None:
    settings = settings_in(tmp_path).model_copy(update={"display_requires_token": True})
    async with web_floor(tmp_path, settings=settings) as wf, _probe(wf) as http:
        admin = await headers_for(wf, Role.ADMIN, "root")
        refused = await http.get("/probe")
        assert refused.status_code == 401
        assert "display device token" in refused.json()["detail"]

        made = await http.post("/api/v1/device-tokens", headers=admin, json={"name": "pit 1"})
        assert made.status_code == 201, made.text
        device = made.json()
        token = device["token"]
        assert (await http.get("/probe", headers=_bearer(token))).status_code == 200
        assert (await http.get("/probe", params={"token": token})).status_code == 200
        # A signed-in person may look too; a display token is no sign-in for anything else.
        assert (await http.get("/probe", headers=admin)).status_code == 200
        me = await http.get("/api/v1/auth/me", headers=_bearer(token))
        assert me.json() == {"username": "display pit 1", "role": "display", "device": True}
        assert (await http.get("/api/v1/users", headers=_bearer(token))).status_code == 403

        listed = (await http.get("/api/v1/device-tokens", headers=admin)).json()
        assert [d["token_id"] for d in listed] == [device["token_id"]]
        assert "token" not in listed[0]
        revoke = f"/api/v1/device-tokens/{device['token_id']}/revoke"
        assert (await http.post(revoke, headers=admin)).status_code == 200
        assert (await http.get("/probe", params={"token": token})).status_code == 401
        gone = await http.post("/api/v1/device-tokens/nope/revoke", headers=admin)
        assert gone.status_code == 404


async def test_user_administration_and_its_audit_trail(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        admin = await headers_for(wf, Role.ADMIN, "root")
        body = {"username": "pat.tech", "role": "dealer", "password": PASSWORD}
        made = await http.post("/api/v1/users", headers=admin, json=body)
        assert made.status_code == 201, made.text
        assert made.json()["created_by"] == "root"
        assert (await http.post("/api/v1/users", headers=admin, json=body)).status_code == 409

        bad = await http.post(
            "/api/v1/users", headers=admin, json={**body, "username": "Bad Name", "password": "x"}
        )
        assert bad.status_code == 422
        where = {p["where"] for p in bad.json()["detail"]["problems"]}
        assert where == {"body.username", "body.password"}
        bad_role = await http.post("/api/v1/users", headers=admin, json={**body, "role": "boss"})
        assert bad_role.status_code == 422

        new_password = "a new long passphrase"
        changed = await http.post(
            "/api/v1/users/pat.tech/password", headers=admin, json={"password": new_password}
        )
        assert changed.status_code == 200, changed.text
        assert (await _sign_in(http, "pat.tech", new_password)).status_code == 200
        missing = await http.post(
            "/api/v1/users/ghost/password", headers=admin, json={"password": new_password}
        )
        assert missing.status_code == 404
        assert (await http.post("/api/v1/users/ghost/disable", headers=admin)).status_code == 404
        assert (await http.post("/api/v1/users/pat.tech/disable", headers=admin)).status_code == 200

        names = [u["username"] for u in (await http.get("/api/v1/users", headers=admin)).json()]
        assert names == ["pat.tech", "root"]

        auditor = await headers_for(wf, Role.AUDITOR, "ada")
        log = await http.get("/api/v1/audit-log", headers=auditor, params={"limit": 50})
        assert log.status_code == 200, log.text
        rows = [
            (e["actor"], e["action"], e["target"])
            for e in log.json()
            if e["target"] == "user pat.tech"
        ]
        assert rows == [
            ("root", "user.disable", "user pat.tech"),
            ("root", "user.set_password", "user pat.tech"),
            ("root", "user.create", "user pat.tech"),
        ]
        for entry in log.json():
            text = json.dumps(entry)
            assert PASSWORD not in text and new_password not in text and "argon2" not in text
        future = await http.get(
            "/api/v1/audit-log", headers=auditor, params={"since": "2999-01-01"}
        )
        assert future.json() == []
        nonsense = await http.get("/api/v1/audit-log", headers=auditor, params={"since": "soon"})
        assert nonsense.status_code == 422
        assert nonsense.json()["detail"]["problems"][0]["where"] == "query.since"
