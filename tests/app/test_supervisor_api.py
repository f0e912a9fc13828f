"""The dry run of a filing: the same refusals as filing, with field and clause, nothing filed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.roles import Role
from controller.rules.progression import RATE_CLAUSE, RATE_LOCK_CLAUSE
from controller.storage.papers.submissions import Submission
from tests.app.auth import headers_for
from tests.app.floor import WebFloor, web_floor
from tests.integration.harness import wait_until

STUD_ONLY = {"stud": (Game.CARIBBEAN_STUD, 2)}
CHECK = "/api/v1/submissions/check"


async def _rows(wf: WebFloor) -> list[Submission]:
    return await wf.service.review_desk.find()


async def _both(
    http: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str]
) -> tuple[httpx.Response, httpx.Response]:
    """The dry run, then the filing, of one body."""
    checked = await http.post(CHECK, json=body, headers=headers)
    filed = await http.post("/api/v1/submissions", json=body, headers=headers)
    return checked, filed


async def test_the_check_refuses_what_filing_refuses_and_files_nothing(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=STUD_ONLY) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        sup = await headers_for(wf, Role.SUPERVISOR)
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")
        before = len(await _rows(wf))

        # 68 IAC 10-1-1.1(d): no jackpot was won since the rate was set.
        checked, filed = await _both(http, {"kind": "rate_change", "link_id": "stud",
                                            "rate": "90%"}, sup)  # fmt: skip
        assert checked.status_code == 200, checked.text
        answer = checked.json()
        assert answer["ok"] is False
        assert answer["problems"] == [{
            "field": "rate_bp",
            "rule": RATE_LOCK_CLAUSE,
            "message": "the rate of progression 80% cannot change to 90% until a patron wins "
            "the jackpot",
        }]  # fmt: skip
        assert filed.status_code == 409
        assert filed.json()["detail"] == f"{answer['problems'][0]['message']} ({RATE_LOCK_CLAUSE})"
        assert len(await _rows(wf)) == before

        wf.table("stud", 1).force_hand(2, HandCategory.ROYAL_FLUSH)
        await wait_until(
            lambda: wf.service.runtime.memory.states["stud"].jackpot_won_since_rate_set
        )

        # 68 IAC 10-1-1.1(c): 55% is below the least rate, as text and as basis points alike.
        for body in (
            {"kind": "rate_change", "link_id": "stud", "rate": "55%"},
            {"kind": "rate_change", "link_id": "stud", "rate_bp": 5500},
        ):
            checked = await http.post(CHECK, json=body, headers=sup)
            [problem] = checked.json()["problems"]
            assert problem["rule"] == RATE_CLAUSE and problem["field"] == "rate_bp"
            assert "55%" in problem["message"]
            assert checked.json()["proposal"]["rate_bp"] == 5500
        filed = await http.post("/api/v1/submissions", json=body, headers=sup)
        assert filed.status_code == 409
        assert filed.json()["detail"] == f"{problem['message']} ({RATE_CLAUSE})"
        assert len(await _rows(wf)) == before

        # A text that is no percentage is shown on its field, with no clause: nothing to cite.
        checked = await http.post(
            CHECK, json={"kind": "rate_change", "link_id": "stud", "rate": "82.5x"}, headers=sup
        )
        [problem] = checked.json()["problems"]
        assert problem["field"] == "rate" and problem["rule"] is None
        assert "not a percentage" in problem["message"]

        # A good rate: ok, with the date it would take effect; still nothing filed.
        good = {"kind": "rate_change", "link_id": "stud", "rate": "82.5%"}
        checked = await http.post(CHECK, json=good, headers=sup)
        answer = checked.json()
        assert answer["ok"] is True and answer["problems"] == []
        assert answer["proposal"] == {"kind": "rate_change", "rate_bp": 8250}
        assert answer["effective_at_us"] is not None
        assert len(await _rows(wf)) == before
        filed = await http.post("/api/v1/submissions", json=good, headers=sup)
        assert filed.status_code == 201 and filed.json()["proposal"]["rate_bp"] == 8250
        assert len(await _rows(wf)) == before + 1

        # One awaiting review at a time: the check says so too, about no field in particular.
        again = await http.post(CHECK, json={**good, "rate": "85%"}, headers=sup)
        [problem] = again.json()["problems"]
        assert problem["field"] is None and "awaiting review" in problem["message"]


async def test_the_check_names_the_paytable_line_and_only_filers_may_ask(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=STUD_ONLY) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        sup = await headers_for(wf, Role.SUPERVISOR)
        auditor = await headers_for(wf, Role.AUDITOR)
        body = {
            "kind": "paytable_change",
            "link_id": "stud",
            "paytable": [
                {"hand": "ROYAL_FLUSH", "percent": "100%"},
                {"hand": "FLUSH", "fixed": "$50.001"},
            ],
        }
        [problem] = (await http.post(CHECK, json=body, headers=sup)).json()["problems"]
        assert problem["field"] == "paytable.1.fixed" and "fraction of a cent" in problem["message"]
        body["paytable"][1] = {"hand": "FLUSH", "fixed": "$50.00", "percent": "10%"}
        answer = (await http.post(CHECK, json=body, headers=sup)).json()
        assert answer["ok"] is False and answer["problems"][0]["field"] == "paytable"
        body["paytable"][1] = {"hand": "FLUSH", "fixed": "$50.00"}
        answer = (await http.post(CHECK, json=body, headers=sup)).json()
        assert answer["ok"] is True, answer
        assert answer["proposal"]["paytable"][1] == {"hand": "FLUSH", "fixed_cents": 5000}
        assert (await http.post(CHECK, json=body, headers=auditor)).status_code == 403
        assert (await http.post(CHECK, json=body)).status_code == 401
        terms = (await http.get("/api/v1/submissions/terms/stud", headers=sup)).json()
        assert [k["kind"] for k in terms["kinds"]] == [
            "rate_change", "reset_change", "paytable_change"
        ]  # fmt: skip
        [game] = terms["games"]
        assert game["hands"][0] == {"hand": "ROYAL_FLUSH", "label": "royal flush"}


# Every field of a request body that takes an amount or a rate as text, with a bare number in
# it: (body, the field the problem is on, the form the refusal shows).
LEVEL = {"name": "Grand", "reset": "$10,000", "rate": "40%"}
BARE: list[tuple[dict[str, Any], str, str]] = [
    ({"kind": "rate_change", "link_id": "stud", "rate": "85"}, "rate", "82.5%"),
    ({"kind": "reset_change", "link_id": "stud", "reset": "6000"}, "reset", "$1,234.56"),
    *[
        ({"kind": "paytable_change", "link_id": "stud", "paytable": [line]},
         f"paytable.0.{field}", form)
        for line, field, form in (
            ({"hand": "ROYAL_FLUSH", "percent": "100"}, "percent", "10%"),
            ({"hand": "FLUSH", "fixed": "50"}, "fixed", "$1,234.56"),
            ({"hand": "ROYAL_FLUSH", "percent": "100%", "envy": "5"}, "envy", "$1,234.56"),
        )
    ],
    *[
        ({"kind": "levels_change", "link_id": "stud", "levels": [{**LEVEL, field: text}]},
         f"levels.0.{field}", form)
        for field, text, form in (
            ("reset", "10000", "$1,234.56"),
            ("rate", "40", "10%"),
            ("reserve", "10", "10%"),
            ("limit", "2500", "$1,234.56"),
        )
    ],
]  # fmt: skip


async def test_a_bare_number_is_refused_in_every_amount_and_rate(tmp_path: Path) -> None:
    """As on the command line, 10 is never taken for $10 (nor 85 for 85 %): the filing is a
    422 showing the form to write, the check shows it on the field, and a page's echo of what
    was typed says the same, or how it reads."""
    async with (
        web_floor(tmp_path, links=STUD_ONLY) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        sup = await headers_for(wf, Role.SUPERVISOR)
        before = len(await _rows(wf))
        for body, field, form in BARE:
            checked, filed = await _both(http, body, sup)
            assert filed.status_code == 422, (body, filed.text)
            [problem] = filed.json()["detail"]["problems"]
            assert problem["where"] == f"body.{field}" and "needs its unit" in problem["problem"]
            assert form in problem["problem"], problem
            [shown] = checked.json()["problems"]
            assert (shown["field"], shown["message"]) == (field, problem["problem"])
        assert len(await _rows(wf)) == before

        async def read(kind: str, text: str) -> httpx.Response:
            return await http.post(
                "/api/v1/readings", json={"kind": kind, "text": text}, headers=sup
            )

        for kind, text, value, reads_as in (
            ("amount", "$6,000", 6_000_00, "$6,000.00"),
            ("change", "-$120", -120_00, "-$120.00"),
            ("rate", "85%", 8_500, "85%"),
            ("share", "2.5%", 250, "2.5%"),
        ):
            answer = await read(kind, text)
            assert answer.status_code == 200, answer.text
            assert answer.json() == {"value": value, "reads_as": reads_as}
        for kind, text, form in (("amount", "6000", "$1,234.56"), ("rate", "85", "82.5%")):
            bare = await read(kind, text)
            assert bare.status_code == 422
            [problem] = bare.json()["detail"]["problems"]
            assert "needs its unit" in problem["problem"] and form in problem["problem"]
        assert (await read("share", "101%")).status_code == 422
        assert (
            await http.post("/api/v1/readings", json={"kind": "rate", "text": "85%"})
        ).status_code == 401
