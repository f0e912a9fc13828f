"""Who deals at each table through the live server: a dealer signs in and out, moves to
another table, another takes a table over, a supervisor signs in and out whom they name; the
tables show their dealer, auditors read who dealt when, and the audit log holds every change."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from controller.core.games import Game
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import web_floor

STUD_ONLY = {"stud": (Game.CARIBBEAN_STUD, 2)}


def dealer_url(table_id: str) -> str:
    return f"/api/v1/tables/{table_id}/dealer"


async def test_dealers_sign_in_and_out_and_the_record_shows_who_dealt_when(
    tmp_path: Path,
) -> None:
    async with (
        web_floor(tmp_path, links=STUD_ONLY) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        ann = await headers_for(wf, Role.DEALER, "ann.dealer")
        bob = await headers_for(wf, Role.DEALER, "bob.dealer")
        sue = await headers_for(wf, Role.SUPERVISOR, "sue.super")
        auditor = await headers_for(wf, Role.AUDITOR)
        await headers_for(wf, Role.TECHNICIAN, "tom.tech")

        async def dealers_shown(who: dict[str, str]) -> dict[str, str | None]:
            tables = (await http.get("/api/v1/tables", headers=who)).json()
            return {t["table_id"]: t["dealer"] for t in tables}

        assert await dealers_shown(ann) == {"stud-1": None, "stud-2": None}
        signed = await http.post(dealer_url("stud-1"), headers=ann)
        assert signed.status_code == 200, signed.text
        table = signed.json()
        assert (table["table_id"], table["dealer"]) == ("stud-1", "ann.dealer")
        since = table["dealer_since_us"]
        assert isinstance(since, int)
        assert await dealers_shown(bob) == {"stud-1": "ann.dealer", "stud-2": None}
        one = (await http.get("/api/v1/tables/stud-1", headers=bob)).json()
        assert (one["dealer"], one["dealer_since_us"]) == ("ann.dealer", since)
        link = (await http.get("/api/v1/links/stud", headers=bob)).json()
        assert [t["dealer"] for t in link["tables"]] == ["ann.dealer", None]
        # Signing in again where she deals changes nothing; her own name is herself.
        again = await http.post(dealer_url("stud-1"), headers=ann, json={"dealer": "ann.dealer"})
        assert again.json()["dealer_since_us"] == since

        # A dealer signs in only herself, and signs out only herself.
        other = await http.post(dealer_url("stud-2"), headers=ann, json={"dealer": "bob.dealer"})
        assert other.status_code == 403
        assert "a dealer signs in only themself" in other.json()["detail"]
        assert (await http.delete(dealer_url("stud-1"), headers=bob)).status_code == 409

        # Ann moves to stud-2: out of stud-1. Bob takes stud-2 over: Ann out of it.
        moved = await http.post(dealer_url("stud-2"), headers=ann)
        assert moved.json()["dealer"] == "ann.dealer"
        assert await dealers_shown(ann) == {"stud-1": None, "stud-2": "ann.dealer"}
        taken = await http.post(dealer_url("stud-2"), headers=bob)
        assert taken.json()["dealer"] == "bob.dealer"
        refused = await http.delete(dealer_url("stud-2"), headers=ann)
        assert refused.status_code == 409
        assert (
            refused.json()["detail"] == "ann.dealer does not deal at table stud-2: bob.dealer does"
        )

        # A supervisor names the dealer: an enabled dealer's account.
        unnamed = await http.post(dealer_url("stud-1"), headers=sue)
        assert unnamed.status_code == 422
        assert unnamed.json()["detail"]["problems"][0]["where"] == "body.dealer"
        for name in ("tom.tech", "nobody.here"):
            wrong = await http.post(dealer_url("stud-1"), headers=sue, json={"dealer": name})
            assert wrong.status_code == 422, wrong.text
            assert wrong.json()["detail"]["problems"] == [
                {"where": "body.dealer", "problem": f"{name!r} is not a dealer's account"}
            ]
        named = await http.post(dealer_url("stud-1"), headers=sue, json={"dealer": "ann.dealer"})
        assert named.json()["dealer"] == "ann.dealer"
        # ...and signs out whoever deals, or only the dealer expected there.
        expected = await http.delete(
            dealer_url("stud-2"), headers=sue, params={"dealer": "ann.dealer"}
        )
        assert expected.status_code == 409
        left = await http.delete(dealer_url("stud-2"), headers=sue)
        assert left.status_code == 200, left.text
        assert (left.json()["dealer"], left.json()["dealer_since_us"]) == (None, None)
        nobody = await http.delete(dealer_url("stud-2"), headers=sue)
        assert nobody.status_code == 409
        assert nobody.json()["detail"] == "no dealer is signed in at table stud-2"
        assert (await http.post(dealer_url("stud-9"), headers=ann)).status_code == 404

        # Who dealt at stud-2, newest first: for auditors, supervisors and admins.
        url = "/api/v1/tables/stud-2/dealers"
        turns = (await http.get(url, headers=auditor)).json()
        assert [(t["dealer"], t["signed_in_by"], t["signed_out_by"]) for t in turns] == [
            ("bob.dealer", "bob.dealer", "sue.super"),
            ("ann.dealer", "ann.dealer", "bob.dealer"),
        ]
        assert turns[1]["until_us"] == turns[0]["from_us"]
        assert [t["dealer"] for t in (await http.get(url, headers=sue)).json()] == [
            "bob.dealer",
            "ann.dealer",
        ]
        newest = (await http.get(url, headers=auditor, params={"limit": 1})).json()
        assert [t["dealer"] for t in newest] == ["bob.dealer"]
        before = await http.get(url, headers=auditor, params={"until": "2020-01-01"})
        assert before.json() == []
        assert (await http.get(url, headers=ann)).status_code == 403
        bad = await http.get(url, headers=auditor, params={"since": "yesterday"})
        assert bad.status_code == 422
        assert bad.json()["detail"]["problems"][0]["where"] == "query.since"
        missing = await http.get("/api/v1/tables/stud-9/dealers", headers=auditor)
        assert missing.status_code == 404
        still = (await http.get("/api/v1/tables/stud-1/dealers", headers=auditor)).json()
        assert [(t["dealer"], t["until_us"]) for t in still[:1]] == [("ann.dealer", None)]

        # Every change in the audit log: who, which table, the dealer before and after.
        log = (await http.get("/api/v1/audit-log", headers=auditor, params={"limit": 100})).json()
        changes = [
            (e["actor"], e["action"], e["target"], json.loads(e["after"])["dealer"])
            for e in reversed(log)
            if e["action"].startswith("dealer.")
        ]
        assert changes == [
            ("ann.dealer", "dealer.sign_in", "table:stud-1", "ann.dealer"),
            ("ann.dealer", "dealer.sign_out", "table:stud-1", None),
            ("ann.dealer", "dealer.sign_in", "table:stud-2", "ann.dealer"),
            ("bob.dealer", "dealer.sign_out", "table:stud-2", None),
            ("bob.dealer", "dealer.sign_in", "table:stud-2", "bob.dealer"),
            ("sue.super", "dealer.sign_in", "table:stud-1", "ann.dealer"),
            ("sue.super", "dealer.sign_out", "table:stud-2", None),
        ]
