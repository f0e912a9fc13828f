"""No one acts alone, through the live server: an admin cannot make, revive, promote or take
over an account of a role that checks others without a second admin, never learns a usable
password of one, and neither admin is then independent enough to approve that account's work.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from controller.core.games import Game
from controller.roles import Role
from tests.app.auth import client_at, headers_for, new_user
from tests.app.floor import web_floor

STUD = {"stud": (Game.CARIBBEAN_STUD, 1)}
PASSWORD = "chosen by the admin 1"
PDF = b"%PDF-1.4 supporting document"
RESET_CHANGE = {"kind": "reset_change", "link_id": "stud", "reset_cents": 150_000}


def _bearer(answer: httpx.Response) -> dict[str, str]:
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


async def _sign_in(http: httpx.AsyncClient, name: str, password: str) -> httpx.Response:
    return await http.post("/api/v1/auth/token", data={"username": name, "password": password})


async def _set_own(http: httpx.AsyncClient, name: str, current: str, new: str) -> httpx.Response:
    return await http.post(
        "/api/v1/auth/password",
        data={"username": name, "password": current, "new_password": new},
    )


async def _confirm(
    http: httpx.AsyncClient, request: dict[str, Any], admin: dict[str, str]
) -> httpx.Response:
    return await http.post(
        f"/api/v1/account-requests/{request['request_id']}/confirm", headers=admin
    )


async def _names(http: httpx.AsyncClient, admin: dict[str, str]) -> set[str]:
    return {u["username"] for u in (await http.get("/api/v1/users", headers=admin)).json()}


async def test_one_admin_cannot_make_a_commission_agent_and_approve_as_them(
    tmp_path: Path,
) -> None:
    async with (
        web_floor(tmp_path, links=STUD) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        root = await headers_for(wf, Role.ADMIN, "root")
        ann = await headers_for(wf, Role.ADMIN, "ann")
        sam = await headers_for(wf, Role.SUPERVISOR, "sam.super")

        # The attack: an agent of the admin's making, with a password the admin chose.
        made = await http.post(
            "/api/v1/users",
            headers=root,
            json={"username": "cara", "role": "commission_agent", "password": PASSWORD},
        )
        assert made.status_code == 422, made.text
        assert "no admin chooses the password" in made.text
        async with client_at(wf, "127.0.0.2") as admin_terminal:
            assert (await _sign_in(admin_terminal, "cara", PASSWORD)).status_code == 401

        # Asked for properly: nothing exists until a different admin confirms.
        asked = await http.post(
            "/api/v1/users", headers=root, json={"username": "cara", "role": "commission_agent"}
        )
        assert asked.status_code == 202, asked.text
        request = asked.json()
        assert request["status"] == "pending" and request["requested_by"] == "root"
        first, nothing = request["code_first_half"], request["code_second_half"]
        assert first and nothing is None
        assert "cara" not in await _names(http, root)
        own = await _confirm(http, request, root)
        assert own.status_code == 409 and "cannot also confirm" in own.json()["detail"]
        assert "cara" not in await _names(http, root)

        confirmed = await _confirm(http, request, ann)
        assert confirmed.status_code == 200, confirmed.text
        assert confirmed.json()["status"] == "confirmed"
        assert confirmed.json()["decided_by"] == "ann"
        second = confirmed.json()["code_second_half"]
        assert second and confirmed.json()["code_first_half"] is None
        again = await _confirm(http, request, ann)
        assert again.status_code == 409
        # Neither admin's half alone is the code (tried from the admins' own terminals).
        for half, terminal in ((first, "127.0.0.5"), (second, "127.0.0.3")):
            async with client_at(wf, terminal) as admin_terminal:
                tried = await _set_own(admin_terminal, "cara", half, "taken over by an admin")
                assert tried.status_code == 401, tried.text
        # The code signs in to nothing but choosing a password.
        code = f"{first} {second}"
        refused = await _sign_in(http, "cara", code)
        assert refused.status_code == 403 and "POST /api/v1/auth/password" in refused.text
        chosen = await _set_own(http, "cara", code, "cara's own passphrase")
        cara = _bearer(chosen)
        async with client_at(wf, "127.0.0.4") as elsewhere:  # used once
            used = await _set_own(elsewhere, "cara", code, "yet another passphrase")
            assert used.status_code == 401

        # Both admins took part in making cara: she approves nothing they file.
        filed = await http.post("/api/v1/submissions", json=RESET_CHANGE, headers=root)
        assert filed.status_code == 201, filed.text
        sid = filed.json()["submission_id"]
        tied = await http.post(f"/api/v1/submissions/{sid}/approve", headers=cara)
        assert tied.status_code == 409, tied.text
        assert "took part" in tied.json()["detail"]
        # An agent neither admin had a hand in reviews it instead.
        dan = await headers_for(wf, Role.COMMISSION_AGENT, "dan.agent")
        no = await http.post(
            f"/api/v1/submissions/{sid}/reject", headers=dan, json={"reason": "not needed"}
        )
        assert no.status_code == 200, no.text
        # What someone independent of her files, she approves.
        filed = await http.post("/api/v1/submissions", json=RESET_CHANGE, headers=sam)
        assert filed.status_code == 201, filed.text
        sid = filed.json()["submission_id"]
        ok = await http.post(f"/api/v1/submissions/{sid}/approve", headers=cara)
        assert ok.status_code == 200, ok.text


async def test_one_admin_cannot_make_a_second_supervisor_and_apply_their_correction(
    tmp_path: Path,
) -> None:
    async with (
        web_floor(tmp_path, links=STUD) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        root = await headers_for(wf, Role.ADMIN, "root")
        ann = await headers_for(wf, Role.ADMIN, "ann")
        sam = await headers_for(wf, Role.SUPERVISOR, "sam.super")
        made = await http.post(
            "/api/v1/users",
            headers=root,
            json={"username": "sue", "role": "supervisor", "password": PASSWORD},
        )
        assert made.status_code == 422, made.text
        async with client_at(wf, "127.0.0.2") as admin_terminal:
            assert (await _sign_in(admin_terminal, "sue", PASSWORD)).status_code == 401

        asked = await http.post(
            "/api/v1/users", headers=root, json={"username": "sue", "role": "supervisor"}
        )
        assert asked.status_code == 202, asked.text
        assert (await _confirm(http, asked.json(), root)).status_code == 409
        confirmed = await _confirm(http, asked.json(), ann)
        code = f"{asked.json()['code_first_half']}{confirmed.json()['code_second_half']}"
        sue = _bearer(await _set_own(http, "sue", code, "sue's own passphrase"))

        form = {"delta_cents": "-250", "category": "malfunction", "reason": "meter ran on"}
        requested = await http.post(
            "/api/v1/links/stud/corrections",
            headers=sue,
            data=form,
            files={"document": ("report.pdf", PDF, "application/pdf")},
        )
        assert requested.status_code == 201, requested.text
        approve = f"/api/v1/corrections/{requested.json()['request_id']}/approve"
        # Neither admin who made sue's account is the second person of her correction.
        for admin in (root, ann):
            tied = await http.post(approve, headers=admin)
            assert tied.status_code == 409, tied.text
            assert "took part" in tied.json()["detail"]
        ok = await http.post(approve, headers=sam)
        assert ok.status_code == 200 and ok.json()["status"] == "approved", ok.text


async def test_one_admin_cannot_take_over_the_commission_agent(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=STUD) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        root = await headers_for(wf, Role.ADMIN, "root")
        ann = await headers_for(wf, Role.ADMIN, "ann")
        _, her_password = await new_user(wf, Role.COMMISSION_AGENT, "cara")
        cara = _bearer(await _sign_in(http, "cara", her_password))

        # The attack: set her password, then sign in as her.
        taken = await http.post(
            "/api/v1/users/cara/password", headers=root, json={"password": PASSWORD}
        )
        assert taken.status_code == 409, taken.text
        assert "/api/v1/users/cara/reset" in taken.json()["detail"]
        async with client_at(wf, "127.0.0.2") as admin_terminal:
            assert (await _sign_in(admin_terminal, "cara", PASSWORD)).status_code == 401

        # A reset is asked for; until another admin confirms it nothing changes for her.
        asked = await http.post("/api/v1/users/cara/reset", headers=root)
        assert asked.status_code == 202, asked.text
        first = asked.json()["code_first_half"]
        assert (await http.get("/api/v1/auth/me", headers=cara)).status_code == 200
        assert (await _confirm(http, asked.json(), root)).status_code == 409
        confirmed = await _confirm(http, asked.json(), ann)
        assert confirmed.status_code == 200, confirmed.text
        second = confirmed.json()["code_second_half"]
        # Confirmed: every token of hers ends, her old password too; no admin holds the code.
        gone = await http.get("/api/v1/auth/me", headers=cara)
        assert gone.status_code == 401 and "revoked" in gone.json()["detail"]
        async with client_at(wf, "127.0.0.3") as admin_terminal:
            assert (await _sign_in(admin_terminal, "cara", her_password)).status_code == 401
        async with client_at(wf, "127.0.0.4") as admin_terminal:
            tried = await _set_own(admin_terminal, "cara", first, "taken over by root")
            assert tried.status_code == 401
        listed = (await http.get("/api/v1/users", headers=root)).json()
        assert next(u for u in listed if u["username"] == "cara")["must_set_password"] is True

        cara = _bearer(await _set_own(http, "cara", f"{first}-{second}", "cara's new phrase"))
        assert (await http.get("/api/v1/auth/me", headers=cara)).status_code == 200
        # Root asked for her reset: she approves nothing root files.
        filed = await http.post("/api/v1/submissions", json=RESET_CHANGE, headers=root)
        assert filed.status_code == 201, filed.text
        tied = await http.post(
            f"/api/v1/submissions/{filed.json()['submission_id']}/approve", headers=cara
        )
        assert tied.status_code == 409 and "took part in the reset" in tied.json()["detail"]


async def test_every_other_path_needs_a_second_admin_too(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=STUD) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        root = await headers_for(wf, Role.ADMIN, "root")
        ann = await headers_for(wf, Role.ADMIN, "ann")
        bob = await headers_for(wf, Role.ADMIN, "bob")
        _, tina_password = await new_user(wf, Role.TECHNICIAN, "tina")
        tina = _bearer(await _sign_in(http, "tina", tina_password))
        await new_user(wf, Role.SUPERVISOR, "sam")

        # A role change into a role that checks others: asked, confirmed by another admin,
        # and the account's old password goes (whoever knew it does not keep the new powers).
        promote = await http.post(
            "/api/v1/users/tina/role", headers=root, json={"role": "supervisor"}
        )
        assert promote.status_code == 202, promote.text
        assert (await _confirm(http, promote.json(), root)).status_code == 409
        done = await _confirm(http, promote.json(), ann)
        assert done.status_code == 200 and done.json()["code_second_half"], done.text
        assert (await http.get("/api/v1/auth/me", headers=tina)).status_code == 401
        async with client_at(wf, "127.0.0.2") as elsewhere:
            assert (await _sign_in(elsewhere, "tina", tina_password)).status_code == 401
        # Nobody changes their own role, nor confirms a change to their own account.
        own = await http.post("/api/v1/users/root/role", headers=root, json={"role": "auditor"})
        assert own.status_code == 409
        mine = await http.post("/api/v1/users/ann/reset", headers=root)
        assert mine.status_code == 202
        assert (await _confirm(http, mine.json(), ann)).status_code == 409
        # Demoting takes power away: one admin does it.
        demote = await http.post("/api/v1/users/tina/role", headers=root, json={"role": "dealer"})
        assert demote.status_code == 200 and demote.json()["status"] == "confirmed"

        # Re-enabling a supervisor: disabling is one admin's, enabling again two admins'.
        assert (await http.post("/api/v1/users/sam/disable", headers=root)).status_code == 200
        enable = await http.post("/api/v1/users/sam/enable", headers=root)
        assert enable.status_code == 202, enable.text
        assert (await _confirm(http, enable.json(), root)).status_code == 409
        # The admin who asked is disabled meanwhile: the request dies with their authority.
        assert (await http.post("/api/v1/users/root/disable", headers=ann)).status_code == 200
        orphan = await _confirm(http, enable.json(), ann)
        assert orphan.status_code == 409 and "no longer an enabled admin" in orphan.text
        refused = await http.post(
            f"/api/v1/account-requests/{enable.json()['request_id']}/reject",
            headers=ann,
            json={"reason": "asked by a disabled admin"},
        )
        assert refused.status_code == 200 and refused.json()["status"] == "rejected"
        again = await http.post("/api/v1/users/sam/enable", headers=ann)
        assert (await _confirm(http, again.json(), bob)).status_code == 200

        # An account that checks no one's work: one admin resets it; the code comes whole.
        reset = await http.post("/api/v1/users/tina/reset", headers=ann)
        assert reset.status_code == 200 and reset.json()["status"] == "confirmed", reset.text
        code = reset.json()["code_first_half"] + reset.json()["code_second_half"]
        assert (await _set_own(http, "tina", code, "tina's own phrase")).status_code == 200

        pending = await http.get("/api/v1/account-requests?status=pending", headers=ann)
        assert [(r["kind"], r["username"]) for r in pending.json()] == [("reset", "ann")]
        log = (await http.get("/api/v1/audit-log", headers=ann)).json()
        enabled = [e for e in log if e["action"] == "user.enable"]
        assert enabled[0]["actor"] == "bob" and '"requested_by":"ann"' in enabled[0]["after"]
