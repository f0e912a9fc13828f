"""Every privileged write the API offers leaves an audit entry: actor, action, target, and the
state before (when something existing changed) and after.

The write routes are found by walking the application's routes, so a privileged write route
added later without a step here fails this test until it is performed and its entry checked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from fastapi import FastAPI, routing
from fastapi.routing import APIRoute

from app.security.authentication import RoleRequirement
from app.web import create_app
from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import WebFloor, hold_anomaly, web_floor
from tests.app.routes import calls_of
from tests.integration.harness import wait_until

WRITES = {"POST", "PUT", "PATCH", "DELETE"}
# Protected POSTs that change nothing, so leave no entry (checked below: the log stays as it was).
NOT_WRITES: dict[tuple[str, str], dict[str, object] | None] = {
    ("POST", "/api/v1/ledger/verify"): None,
    ("POST", "/api/v1/submissions/check"): {
        "kind": "rate_change",
        "link_id": "stud",
        "rate_bp": 8800,
    },
    ("POST", "/api/v1/readings"): {"kind": "amount", "text": "$6,000"},
}
PASSWORD = "correct horse battery"
PDF = b"%PDF-1.4 supporting document"
REMOVAL = {
    "questioned_at_us": 1_767_225_600_000_000,
    "device_type": "Caribbean Stud table controller",
    "commission_registration_number": "IGC-2",
    "malfunction_reason": "seat 4 sensor sticks",
}


def privileged_writes(app: FastAPI) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for route in routing.iter_route_contexts(app.routes):
        if not isinstance(route.original_route, APIRoute):
            continue
        if not any(isinstance(c, RoleRequirement) for c in calls_of(route.dependant)):
            continue
        # A path parameter's converter (``{hit_id:hit}``) is the route's, not its name's.
        path = re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)
        found |= {(m, path) for m in route.methods & WRITES}
    return found


@dataclass(frozen=True)
class Expected:
    action: str
    target: str
    changes: bool  # something existing changed: its state before is recorded too


class AuditCheck:
    """Performs a write as someone and checks the entries it added to the audit log."""

    def __init__(self, wf: WebFloor, http: httpx.AsyncClient, reader: dict[str, str]) -> None:
        self.wf, self.http, self.reader = wf, http, reader
        self.seen = 0
        self.done: set[tuple[str, str]] = set()
        self.problems: list[str] = []

    async def entries(self) -> list[dict[str, Any]]:
        answer = await self.http.get(
            "/api/v1/audit-log", headers=self.reader, params={"limit": 10_000}
        )
        assert answer.status_code == 200, answer.text
        return [e for e in answer.json() if e["audit_id"] > self.seen]

    async def settle(self) -> None:
        """Entries written before the next write (sign-ins' user creations) are not its."""
        self.seen = max([self.seen, *(e["audit_id"] for e in await self.entries())])

    async def write(
        self,
        route: tuple[str, str],
        url: str,
        who: tuple[str, dict[str, str]],
        expected: Expected,
        **request: Any,
    ) -> httpx.Response:
        await self.settle()
        actor, headers = who
        answer = await self.http.request(route[0], url, headers=headers, **request)
        assert answer.is_success, f"{route}: {answer.status_code} {answer.text}"
        self.done.add(route)
        new = await self.entries()
        matching = [
            e
            for e in new
            if e["action"] == expected.action
            and e["actor"] == actor
            and e["target"] == expected.target
        ]
        where = f"{route[0]} {route[1]}"
        if not matching:
            found = [(e["actor"], e["action"], e["target"]) for e in new]
            self.problems.append(f"{where}: no entry {expected}; the log gained {found}")
        for e in matching:
            if e["after"] is None:
                self.problems.append(f"{where}: {e['action']} without the state after")
            if expected.changes and e["before"] is None:
                self.problems.append(f"{where}: {e['action']} without the state before")
        return answer


async def test_every_privileged_write_leaves_an_audit_entry(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links={"stud": (Game.CARIBBEAN_STUD, 2)}) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        routes = privileged_writes(create_app(wf.service))
        assert ("POST", "/api/v1/users") in routes  # the walk finds routes
        people = {
            "root": Role.ADMIN,
            "ann.admin": Role.ADMIN,
            "tina.tech": Role.TECHNICIAN,
            "sam.super": Role.SUPERVISOR,
            "sue.super": Role.SUPERVISOR,
            "cara.agent": Role.COMMISSION_AGENT,
            "ada.audit": Role.AUDITOR,
        }
        who = {name: (name, await headers_for(wf, role, name)) for name, role in people.items()}
        check = AuditCheck(wf, http, who["ada.audit"][1])
        admin, tech, sup, sup2, agent = (
            who[n] for n in ("root", "tina.tech", "sam.super", "sue.super", "cara.agent")
        )

        # --- the software's check of itself, asked for now
        await check.write(
            ("POST", "/api/v1/self-check"), "/api/v1/self-check", admin,
            Expected("software.check", "software", changes=False),
        )  # fmt: skip

        # --- users and display tokens
        await check.write(
            ("POST", "/api/v1/users"), "/api/v1/users", admin,
            Expected("user.create", "user pat.tech", changes=False),
            json={"username": "pat.tech", "role": "dealer", "password": PASSWORD},
        )  # fmt: skip
        await check.write(
            ("POST", "/api/v1/users/{username}/password"), "/api/v1/users/pat.tech/password",
            admin, Expected("user.set_password", "user pat.tech", changes=True),
            json={"password": "another long passphrase"},
        )  # fmt: skip
        await check.write(
            ("POST", "/api/v1/users/{username}/disable"), "/api/v1/users/pat.tech/disable",
            admin, Expected("user.disable", "user pat.tech", changes=True),
        )  # fmt: skip
        # Accounts that check no one's work: one admin changes them at once.
        for route, action, body in (
            ("enable", "user.enable", None),
            ("role", "user.set_role", {"role": "auditor"}),
            ("reset", "user.reset_password", None),
        ):
            await check.write(
                ("POST", f"/api/v1/users/{{username}}/{route}"), f"/api/v1/users/pat.tech/{route}",
                admin, Expected(action, "user pat.tech", changes=True), json=body,
            )  # fmt: skip
        # Accounts that do: asked for by one admin, confirmed by another, or turned down.
        asked = await check.write(
            ("POST", "/api/v1/users"), "/api/v1/users", admin,
            Expected("account.request", "user vic.super", changes=False),
            json={"username": "vic.super", "role": "supervisor"},
        )  # fmt: skip
        await check.write(
            ("POST", "/api/v1/account-requests/{request_id}/confirm"),
            f"/api/v1/account-requests/{asked.json()['request_id']}/confirm", who["ann.admin"],
            Expected("user.create", "user vic.super", changes=False),
        )  # fmt: skip
        asked = await http.post("/api/v1/users/sam.super/reset", headers=admin[1])
        assert asked.status_code == 202, asked.text
        await check.write(
            ("POST", "/api/v1/account-requests/{request_id}/reject"),
            f"/api/v1/account-requests/{asked.json()['request_id']}/reject", admin,
            Expected("account.reject", "user sam.super", changes=True),
            json={"reason": "asked in error"},
        )  # fmt: skip
        await check.settle()
        made = await http.post(
            "/api/v1/device-tokens", headers=admin[1], json={"name": "pit 1 display"}
        )
        assert made.status_code == 201, made.text
        token_id, secret = made.json()["token_id"], made.json()["token"]
        # The create was performed above, outside check.write, to learn its id first.
        check.done.add(("POST", "/api/v1/device-tokens"))
        created = [e for e in await check.entries() if e["action"] == "device_token.create"]
        if not (
            created
            and created[0]["actor"] == "root"
            and created[0]["target"] == f"device token {token_id}"
            and created[0]["after"]
        ):
            check.problems.append(f"POST /api/v1/device-tokens: no entry, got {created}")
        await check.write(
            ("POST", "/api/v1/device-tokens/{token_id}/revoke"),
            f"/api/v1/device-tokens/{token_id}/revoke", admin,
            Expected("device_token.revoke", f"device token {token_id}", changes=True),
        )  # fmt: skip

        # --- a hit: verified, paid by hand, the table released
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")
        wf.table("stud", 1).force_hand(3, HandCategory.ROYAL_FLUSH)
        await wait_until(lambda: wf.service.table_status("stud-1").hit_pending)
        pending = (await http.get("/api/v1/hits?pending=true", headers=tech[1])).json()
        # The royal flush forced; the table may also have paid a fixed amount before it, or
        # another hand in the same round (the deal depends on how many rounds went before).
        at_table = [h for h in pending if h["table_id"] == "stud-1"]
        (hit,) = [h for h in at_table if h["hand"] == "ROYAL_FLUSH"]
        for other in at_table:
            if other is not hit:
                await wf.service.runtime.hits.verify(other["hit_id"], actor="terry.tech")
        hit_path = f"/api/v1/hits/{quote(hit['hit_id'], safe='')}"
        await check.write(
            ("POST", "/api/v1/hits/{hit_id}/verify"), f"{hit_path}/verify", tech,
            Expected("hit.verify", f"hit:{hit['hit_id']}", changes=True), json={},
        )  # fmt: skip
        # The house's second-signature amount brought down to this royal: a second person signs.
        wf.service.runtime.hits.second_signature_from_cents = hit["award_cents"]
        await check.write(
            ("POST", "/api/v1/hits/{hit_id}/sign-off"), f"{hit_path}/sign-off", sup,
            Expected("hit.sign_off", f"hit:{hit['hit_id']}", changes=True),
        )  # fmt: skip
        # The operator's tax-reporting amount brought down to it too: its form is recorded.
        wf.service.settings = wf.service.settings.model_copy(
            update={"tax_reporting_from": hit["award_cents"]}
        )
        await check.write(
            ("POST", "/api/v1/hits/{hit_id}/tax-form"), f"{hit_path}/tax-form", tech,
            Expected("hit.tax_form", f"hit:{hit['hit_id']}", changes=True),
            json={"reference": "W2G-2026-000123"},
        )  # fmt: skip
        await check.write(
            ("POST", "/api/v1/hits/{hit_id}/hand-pay"), f"{hit_path}/hand-pay", tech,
            Expected("hit.hand_pay", f"hit:{hit['hit_id']}", changes=True),
            json={"amount_cents": hit["award_cents"]},
        )  # fmt: skip
        await check.write(
            ("POST", "/api/v1/tables/{table_id}/reset"), "/api/v1/tables/stud-1/reset", tech,
            Expected("table.release", "table:stud-1", changes=True),
        )  # fmt: skip

        # --- who deals: a supervisor signs a dealer in at a table, and out
        await headers_for(wf, Role.DEALER, "dee.dealer")
        await check.write(
            ("POST", "/api/v1/tables/{table_id}/dealer"), "/api/v1/tables/stud-2/dealer", sup,
            Expected("dealer.sign_in", "table:stud-2", changes=True),
            json={"dealer": "dee.dealer"},
        )  # fmt: skip
        await check.write(
            ("DELETE", "/api/v1/tables/{table_id}/dealer"), "/api/v1/tables/stud-2/dealer", sup,
            Expected("dealer.sign_out", "table:stud-2", changes=True),
        )  # fmt: skip

        # --- rate change submissions: filed, rejected; filed again, approved
        await wait_until(
            lambda: wf.service.runtime.memory.states["stud"].jackpot_won_since_rate_set
        )
        rate = {"kind": "rate_change", "link_id": "stud", "rate_bp": 9000}
        for decision in ("reject", "approve"):
            await check.settle()
            filed = await http.post("/api/v1/submissions", json=rate, headers=sup[1])
            assert filed.status_code == 201, filed.text
            sid = filed.json()["submission_id"]
            check.done.add(("POST", "/api/v1/submissions"))
            entries = await check.entries()
            if not any(
                e["action"] == "submission.file"
                and e["actor"] == "sam.super"
                and e["target"] == f"submission:{sid}"
                and e["after"]
                for e in entries
            ):
                check.problems.append(f"POST /api/v1/submissions: no entry, got {entries}")
            await check.write(
                ("POST", f"/api/v1/submissions/{{submission_id}}/{decision}"),
                f"/api/v1/submissions/{sid}/{decision}", agent,
                Expected(f"submission.{decision}", f"submission:{sid}", changes=True),
                json={"reason": "the notice is incomplete"} if decision == "reject" else None,
            )  # fmt: skip

        # --- anomalies approved and rejected
        for decision in ("approve", "reject"):
            await hold_anomaly(wf, f"a-{decision}")
            await check.write(
                ("POST", f"/api/v1/anomalies/{{anomaly_id}}/{decision}"),
                f"/api/v1/anomalies/a-{decision}/{decision}", sup,
                Expected(f"anomaly.{decision}", f"anomaly:a-{decision}", changes=True),
                json={"reason": "bet sensors checked"},
            )  # fmt: skip

        # --- a table out of play and back
        made_record = await check.write(
            ("POST", "/api/v1/tables/{table_id}/integrity-records"),
            "/api/v1/tables/stud-2/integrity-records", tech,
            Expected("table.remove_from_play", "table:stud-2", changes=True), json=REMOVAL,
        )  # fmt: skip
        rid = made_record.json()["record_id"]
        record = f"/api/v1/tables/stud-2/integrity-records/{rid}"
        base = "/api/v1/tables/{table_id}/integrity-records/{record_id}"
        await check.write(
            ("POST", f"{base}/remedial-actions"), f"{record}/remedial-actions", tech,
            Expected("integrity.remedial_action", f"integrity_record:{rid}", changes=False),
            json={
                "description": "sensor replaced",
                "employees": [
                    {"printed_name": "T. Tech", "signature": "TT", "occupational_license_number": "9"}
                ],
            },
        )  # fmt: skip
        await check.write(
            ("POST", f"{base}/verification"), f"{record}/verification", sup,
            Expected("integrity.verify", f"integrity_record:{rid}", changes=True),
            json={"verification": "tested with 200 hands"},
        )  # fmt: skip
        await check.write(
            ("POST", f"{base}/return-to-play"), f"{record}/return-to-play", sup,
            Expected("table.return_to_play", "table:stud-2", changes=True),
        )  # fmt: skip

        # --- corrections: requested, then approved by a second person or rejected
        form = {"delta_cents": "-250", "category": "malfunction", "reason": "meter ran on"}
        for decision in ("approve", "reject"):
            asked = await check.write(
                ("POST", "/api/v1/links/{link_id}/corrections"), "/api/v1/links/stud/corrections",
                sup, Expected("correction.request", "link:stud", changes=False),
                data=form, files={"document": ("report.pdf", PDF, "application/pdf")},
            )  # fmt: skip
            request_id = asked.json()["request_id"]
            await check.write(
                ("POST", f"/api/v1/corrections/{{request_id}}/{decision}"),
                f"/api/v1/corrections/{request_id}/{decision}", sup2,
                Expected(
                    "meter.correct" if decision == "approve" else "correction.reject",
                    "link:stud", changes=True,
                ),
                json={"reason": "no such malfunction"} if decision == "reject" else None,
            )  # fmt: skip

        # --- a protected POST that changes nothing leaves nothing
        await check.settle()
        for (method, path), body in NOT_WRITES.items():
            assert (await http.request(method, path, headers=sup[1], json=body)).is_success
        assert await check.entries() == []

        log = json.dumps((await http.get("/api/v1/audit-log", headers=check.reader)).json())
        assert secret not in log and PASSWORD not in log

        unchecked = routes - check.done - set(NOT_WRITES)
        assert not unchecked, f"privileged write routes with no audit check here: {unchecked}"
        assert not check.problems, "\n".join(check.problems)
