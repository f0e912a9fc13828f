"""The second signature is technicians (and supervisors) checking each other, through the live
server: no one admin makes, takes over, revives or promotes into a technician, a signer tied to
the verifier by an account change is no second person, and no one admin thins the admins out
below the two that every two-person change needs; after its first two admins the host only
asks for one, which an admin confirms."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from controller.core.games import Game
from controller.roles import Role
from tests.app.auth import client_at, headers_for, new_user
from tests.app.busy_floor import busy_floor
from tests.app.floor import web_floor
from tests.app.test_users_cli import PASSWORD as CLI_PASSWORD
from tests.app.test_users_cli import run

STUD = {"stud": (Game.CARIBBEAN_STUD, 1)}
PASSWORD = "chosen by the admin 1"


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
    http: httpx.AsyncClient, asked: httpx.Response, admin: dict[str, str]
) -> httpx.Response:
    request: dict[str, Any] = asked.json()
    return await http.post(
        f"/api/v1/account-requests/{request['request_id']}/confirm", headers=admin
    )


async def test_one_admin_cannot_make_two_technicians_who_sign_each_other_off(
    tmp_path: Path,
) -> None:
    async with (
        busy_floor(tmp_path, fixed_pays=0, quiet_pays=0, second_signature_from_cents=100_00) as bf,
        httpx.AsyncClient(base_url=bf.base_url) as http,
    ):
        wf = bf.wf
        root = await headers_for(wf, Role.ADMIN, "root")
        ann = await headers_for(wf, Role.ADMIN, "ann")
        bob = await headers_for(wf, Role.ADMIN, "bob")

        # The attack: two technicians at once, with passwords the admin chose.
        for name in ("tech-a", "tech-b"):
            body = {"username": name, "role": "technician", "password": PASSWORD}
            made = await http.post("/api/v1/users", headers=root, json=body)
            assert made.status_code == 422, made.text
            assert "no admin chooses the password of a technician" in made.text
            async with client_at(wf, "127.0.0.2") as admin_terminal:
                assert (await _sign_in(admin_terminal, name, PASSWORD)).status_code == 401
        # Or an existing technician taken over, revived or made of a dealer: each waits for a
        # second admin, and the asking admin holds only half of any code.
        await new_user(wf, Role.TECHNICIAN, "tina")
        taken = await http.post(
            "/api/v1/users/tina/password", headers=root, json={"password": PASSWORD}
        )
        assert taken.status_code == 409 and "/api/v1/users/tina/reset" in taken.json()["detail"]
        reset = await http.post("/api/v1/users/tina/reset", headers=root)
        assert reset.status_code == 202 and reset.json()["code_second_half"] is None
        assert (await http.post("/api/v1/users/tina/disable", headers=root)).status_code == 200
        revived = await http.post("/api/v1/users/tina/enable", headers=root)
        assert revived.status_code == 202 and revived.json()["status"] == "pending"
        await new_user(wf, Role.DEALER, "dee")
        promoted = await http.post(
            "/api/v1/users/dee/role", headers=root, json={"role": "technician"}
        )
        assert promoted.status_code == 202 and promoted.json()["code_second_half"] is None
        assert (await _confirm(http, promoted, root)).status_code == 409

        # Asked for properly: nothing exists until a different admin confirms.
        asked = await http.post(
            "/api/v1/users", headers=root, json={"username": "tech-a", "role": "technician"}
        )
        assert asked.status_code == 202, asked.text
        listed = (await http.get("/api/v1/users", headers=root)).json()
        assert "tech-a" not in {u["username"] for u in listed}
        own = await _confirm(http, asked, root)
        assert own.status_code == 409 and "cannot also confirm" in own.json()["detail"]
        confirmed = await _confirm(http, asked, ann)
        assert confirmed.status_code == 200, confirmed.text
        code = asked.json()["code_first_half"] + confirmed.json()["code_second_half"]
        tech_a = _bearer(await _set_own(http, "tech-a", code, "tech-a's own passphrase"))

        # Ann confirmed tech-a's account; later a supervisor (root asks, bob confirms), her
        # signature on tech-a's verification is no second person's.
        to_supervisor = await http.post(
            "/api/v1/users/ann/role", headers=root, json={"role": "supervisor"}
        )
        assert to_supervisor.status_code == 202, to_supervisor.text
        done = await _confirm(http, to_supervisor, bob)
        assert done.status_code == 200, done.text
        code = to_supervisor.json()["code_first_half"] + done.json()["code_second_half"]
        ann = _bearer(await _set_own(http, "ann", code, "ann's own passphrase"))

        hit = f"/api/v1/hits/{quote(bf.held_hit_id, safe='')}"
        royal = (await http.get(hit, headers=tech_a)).json()
        assert royal["needs_second_signature"], royal
        verified = await http.post(f"{hit}/verify", headers=tech_a, json={})
        assert verified.status_code == 200, verified.text
        tied = await http.post(f"{hit}/sign-off", headers=ann)
        assert tied.status_code == 409, tied.text
        detail = tied.json()["detail"]
        assert "ann took part in the create of tech-a's account" in detail, detail
        assert "house policy: second signature from an amount" in detail
        held = await http.post(f"/api/v1/tables/{bf.held_table}/reset", headers=tech_a)
        assert held.status_code == 409 and "signed off by a second person" in held.text

        # Someone independent of both signs, and the table resets.
        tess = await headers_for(wf, Role.TECHNICIAN, "tess")
        signed = await http.post(f"{hit}/sign-off", headers=tess)
        assert signed.status_code == 200 and signed.json()["signed_off_by"] == "tess"
        freed = await http.post(f"/api/v1/tables/{bf.held_table}/reset", headers=tech_a)
        assert freed.status_code == 200, freed.text


async def test_one_admin_cannot_thin_the_admins_below_two(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=STUD) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        root = await headers_for(wf, Role.ADMIN, "root")
        await headers_for(wf, Role.ADMIN, "ann")
        bob = await headers_for(wf, Role.ADMIN, "bob")
        await new_user(wf, Role.COMMISSION_AGENT, "cara")

        # Three admins: one may go; then the last two stay, whatever one admin asks.
        assert (await http.post("/api/v1/users/ann/disable", headers=root)).status_code == 200
        for path, body in (
            ("/api/v1/users/bob/disable", None),
            ("/api/v1/users/bob/role", {"role": "dealer"}),
            ("/api/v1/users/bob/role", {"role": "supervisor"}),
        ):
            refused = await http.post(path, headers=root, json=body)
            assert refused.status_code == 409, (path, refused.text)
            assert "last 2 enabled admins" in refused.json()["detail"]
        users = {u["username"]: u for u in (await http.get("/api/v1/users", headers=root)).json()}
        assert users["bob"]["role"] == "admin" and not users["bob"]["disabled"]
        assert (await http.get("/api/v1/auth/me", headers=bob)).status_code == 200

        # Taking an agent's powers away is one admin's act; giving them back is two admins'.
        demoted = await http.post("/api/v1/users/cara/role", headers=root, json={"role": "dealer"})
        assert demoted.status_code == 200 and demoted.json()["status"] == "confirmed"
        back = await http.post(
            "/api/v1/users/cara/role", headers=root, json={"role": "commission_agent"}
        )
        assert back.status_code == 202, back.text
        # A disabled admin comes back by two admins too, after which one may go again.
        revived = await http.post("/api/v1/users/ann/enable", headers=root)
        assert revived.status_code == 202, revived.text
        assert (await _confirm(http, revived, bob)).status_code == 200
        assert (await http.post("/api/v1/users/bob/disable", headers=root)).status_code == 200


async def test_the_host_asks_for_an_admin_only_for_an_admin_to_confirm(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=STUD) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        url = wf.service.settings.database_url

        async def add_admin(name: str) -> tuple[int, str]:
            code, _, err = await run(
                "users", "add", name, "--role", "admin", "--password-stdin", db_url=url,
                stdin=CLI_PASSWORD + "\n",
            )  # fmt: skip
            return code, err

        assert await add_admin("root") == (0, "")
        assert await add_admin("ann") == (0, "")
        code, err = await add_admin("cid")
        assert code == 1 and "first two admins" in err, err
        root = _bearer(await _sign_in(http, "root", CLI_PASSWORD))
        closed = await http.get("/api/v1/audit-log?action=access.bootstrap_closed", headers=root)
        assert [e["actor"] for e in closed.json()] == [f"cli {getpass.getuser()}"]

        code, out, err = await run(
            "users", "recover", "cid", "--reason", "ann is away for a month", db_url=url
        )
        assert code == 0, err
        request_id = out.split("request ", 1)[1].split()[0]
        first = out.rsplit(": ", 1)[1].strip()
        (pending,) = (await http.get("/api/v1/account-requests", headers=root)).json()
        assert pending["kind"] == "recover" and pending["request_id"] == request_id
        assert pending["requested_by"].startswith("cli ") and pending["role"] == "admin"
        async with client_at(wf, "127.0.0.2") as host_terminal:  # half a code is nothing
            assert (await _sign_in(host_terminal, "cid", first)).status_code == 401

        confirmed = await http.post(f"/api/v1/account-requests/{request_id}/confirm", headers=root)
        assert confirmed.status_code == 200, confirmed.text
        second = confirmed.json()["code_second_half"]
        cid = _bearer(await _set_own(http, "cid", first + second, "cid's own passphrase"))
        me = (await http.get("/api/v1/auth/me", headers=cid)).json()
        assert me["role"] == "admin"
        made = await http.get("/api/v1/audit-log?action=user.create", headers=cid)
        (entry,) = [e for e in made.json() if e["target"] == "user cid"]
        assert entry["actor"] == "root" and '"requested_by":"cli ' in entry["after"]
