"""Tables and hits through the live server: a forced royal flush, verified, paid and reset.

The simulated tables deal only when a test says so, on a virtual clock: the rounds, credits
and hits the controller reports are then exactly the ones the test dealt, however slow the
machine is (a floor dealing on the wall clock could deal a paying hand of its own at any
moment, holding the table before the forced royal or adding a second hit).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import httpx

from controller.core.hands import HandCategory, evaluate, parse_cards
from controller.core.reducer import HitClaim
from controller.roles import Role
from controller.rules.house import FIXED_PAY_TECHNICIAN_FROM_CENTS
from link_adapters.simulator.clock import VirtualClock
from link_adapters.simulator.dealer import DealtRound
from tests.app.auth import headers_for
from tests.app.floor import WebFloor, dealt_table_id, step, stepped_floor
from tests.integration.harness import wait_until

# 2 rounds a second per table (web_floor's rate), 5 virtual seconds, 4 tables, seed 11: the
# seed fixes every table's schedule, so these many rounds are dealt, every run.
ROUNDS_IN_5_S = 40
HITS_IN_5_S = 4  # all at the Let It Ride bonus tables, which pay two pair and better


def hit_url(hit_id: str, action: str) -> str:
    # Hit ids hold "#": it is percent-encoded in a path, as a browser's encodeURIComponent does.
    return f"/api/v1/hits/{quote(hit_id, safe='')}/{action}"


def _held(wf: WebFloor, table_id: str) -> bool:
    return wf.service.table_status(table_id).hit_pending


async def test_stepped_rounds_are_reported_exactly(tmp_path: Path) -> None:
    clock = VirtualClock()
    async with (
        stepped_floor(tmp_path, clock) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        dealer = await headers_for(wf, Role.DEALER)
        tech = await headers_for(wf, Role.TECHNICIAN)
        assert wf.sim.deal_due() == []  # the clock has not moved: nothing is due
        dealt: list[DealtRound] = []
        for _ in range(10):  # small steps: about one round per table between two polls
            dealt += await step(wf, clock, 0.5)
        assert len(dealt) == ROUNDS_IN_5_S
        assert [d.record.time_us for d in dealt] == sorted(d.record.time_us for d in dealt)
        hits = [(dealt_table_id(wf, d), h) for d in dealt for h in d.record.hits]
        assert len(hits) == HITS_IN_5_S

        tables = (await http.get("/api/v1/tables", headers=dealer)).json()
        assert len(tables) == 4
        for shown in tables:
            link_id, unit = shown["table_id"].rsplit("-", 1)
            game, _ = wf.links[link_id]
            table = wf.table(link_id, int(unit))
            mine = [d.record for d in dealt if (d.gateway, d.unit) == (game.value, int(unit))]
            assert shown["rounds"] == table.rounds == len(mine)
            assert shown["credits"] == table.credits == sum(r.credits for r in mine)
            assert shown["seats_with_bets"] == list(table.records[-1].bet_seats)
            assert shown["state"] == "online"
        shown_hits = (await http.get("/api/v1/hits", headers=tech)).json()
        assert sorted((h["table_id"], h["seat"], h["hand"], h["round"]) for h in shown_hits) == (
            sorted((table_id, h.seat, h.hand.name, h.round) for table_id, h in hits)
        )

        # One more step deals exactly what the schedule holds for it, and nothing else.
        before = {key: table.rounds for key, table in wf.sim.tables.items()}
        more = await step(wf, clock, 0.5)
        after = {key: table.rounds for key, table in wf.sim.tables.items()}
        assert sum(after.values()) - sum(before.values()) == len(more)
        assert await step(wf, clock, 0) == []


async def test_forced_royal_is_verified_paid_and_reset(tmp_path: Path) -> None:
    clock = VirtualClock()
    async with (
        stepped_floor(tmp_path, clock) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        tech = await headers_for(wf, Role.TECHNICIAN)
        dealer = await headers_for(wf, Role.DEALER)
        for _ in range(4):
            await step(wf, clock, 0.5)
        assert wf.table("stud", 1).all_hits() == []  # seed 11: no paying hand of its own

        tables = (await http.get("/api/v1/tables", headers=dealer)).json()
        assert {t["table_id"] for t in tables} == {"stud-1", "stud-2", "lir-1", "lir-2"}
        one = (await http.get("/api/v1/tables/stud-1", headers=dealer)).json()
        assert one["state"] == "online" and one["seats"] == 7
        assert one["rounds"] == wf.table("stud", 1).rounds
        assert isinstance(one["seats_with_bets"], list)
        flags = one["status_flags"]  # the table's own state, named
        assert set(flags) == {"lockout", "door_open", "fault", "progressive_disabled"}
        assert not flags["fault"] and not flags["door_open"]

        wf.table("stud", 1).force_hand(3, HandCategory.ROYAL_FLUSH)
        royal = wf.play_round_now("stud", 1)
        assert [(h.seat, h.hand) for h in royal.hits] == [(3, HandCategory.ROYAL_FLUSH)]
        await wait_until(lambda: _held(wf, "stud-1"))
        assert (await http.get("/api/v1/tables/stud-1", headers=tech)).json()["state"] == (
            "hit_pending"
        )

        # Every hit the tables dealt is recorded (the Let It Ride bonus tables may have had
        # some); pending are all but the fixed pays under the operator's amount, which the
        # dealer pays with no technician; exactly one at stud-1: the royal the test dealt.
        every = (await http.get("/api/v1/hits", headers=tech)).json()
        assert len(every) == sum(len(t.all_hits()) for t in wf.sim.tables.values())
        pending = (await http.get("/api/v1/hits?pending=true", headers=tech)).json()
        waiting = {h["hit_id"] for h in pending}
        assert waiting <= {h["hit_id"] for h in every}
        assert all(
            h["paid_from"] == "table" and h["award_cents"] < FIXED_PAY_TECHNICIAN_FROM_CENTS
            for h in every
            if h["hit_id"] not in waiting
        )
        (hit,) = [h for h in pending if h["table_id"] == "stud-1"]
        assert hit["round"] == royal.round
        assert hit["seat"] == 3 and hit["hand"] == "ROYAL_FLUSH"
        assert hit["status"] == "awarded" and hit["paid_from"] == "meter"
        royal = evaluate(parse_cards(" ".join(hit["cards"])))
        assert royal.category is HandCategory.ROYAL_FLUSH
        assert isinstance(hit["award_cents"], int) and hit["award_cents"] >= 100_000
        by_link = (await http.get("/api/v1/links/stud/hits", headers=tech)).json()
        assert by_link[0]["hit_id"] == hit["hit_id"]

        # The reset waits for the verification.
        early = await http.post("/api/v1/tables/stud-1/reset", headers=tech)
        assert early.status_code == 409, early.text
        assert "cannot be reset before its hits are verified" in early.json()["detail"]

        # A dealer may look, not verify.
        denied = await http.post(hit_url(hit["hit_id"], "verify"), headers=dealer)
        assert denied.status_code == 403
        assert "technician" in denied.json()["detail"]

        wrong = await http.post(
            hit_url(hit["hit_id"], "verify"),
            headers=tech,
            json={"cards": ["2c", "3d", "4h", "5s", "7c"]},
        )
        assert wrong.status_code == 409
        assert "not the cards the table reported" in wrong.json()["detail"]

        ok = await http.post(hit_url(hit["hit_id"], "verify"), headers=tech, json={})
        assert ok.status_code == 200, ok.text
        assert ok.json()["verified_cards"] == hit["cards"]
        again = await http.post(hit_url(hit["hit_id"], "verify"), headers=tech)
        assert again.status_code == 409
        assert "already verified" in again.json()["detail"]

        bad_pay = await http.post(
            hit_url(hit["hit_id"], "hand-pay"), headers=tech, json={"amount_cents": 12.5}
        )
        assert bad_pay.status_code == 422
        paid = await http.post(
            hit_url(hit["hit_id"], "hand-pay"),
            headers=tech,
            json={"amount_cents": hit["award_cents"]},
        )
        assert paid.status_code == 200, paid.text
        assert paid.json()["hand_paid_cents"] == hit["award_cents"]

        reset = await http.post("/api/v1/tables/stud-1/reset", headers=tech)
        assert reset.status_code == 200, reset.text
        assert reset.json()["hit_pending"] is False
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")
        pending = (await http.get("/api/v1/hits?pending=true", headers=tech)).json()
        assert hit["hit_id"] not in {h["hit_id"] for h in pending}


async def test_cards_entered_for_a_hit_reported_without_them(tmp_path: Path) -> None:
    clock = VirtualClock()
    async with (
        stepped_floor(tmp_path, clock) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        tech = await headers_for(wf, Role.TECHNICIAN)
        await wait_until(lambda: wf.service.table_status("stud-2").state == "online")
        claim = HitClaim(table_seq=None, seat=5, hand=HandCategory.ROYAL_FLUSH, round=1)
        await wf.service.runtime.hits.enter("stud-2", claim, actor="tech")
        (hit,) = (await http.get("/api/v1/hits?table=stud-2", headers=tech)).json()
        assert hit["cards"] is None
        url = hit_url(hit["hit_id"], "verify")

        none = await http.post(url, headers=tech)
        assert none.status_code == 409
        assert "reported no cards; enter the five cards" in none.json()["detail"]
        pair = await http.post(url, headers=tech, json={"cards": ["Ah", "Ad", "Qh", "Jh", "Th"]})
        assert pair.status_code == 409
        assert "make one pair, not the claimed royal flush" in pair.json()["detail"]
        garbage = await http.post(url, headers=tech, json={"cards": ["Zz", "Kh", "Qh", "Jh", "Th"]})
        assert garbage.status_code == 422
        assert "unrecognised card 'Zz'" in garbage.text

        ok = await http.post(url, headers=tech, json={"cards": ["Ah", "Kh", "Qh", "Jh", "Th"]})
        assert ok.status_code == 200, ok.text
        assert ok.json()["verified_cards"] == ["Ah", "Kh", "Qh", "Jh", "Th"]
        assert (await http.post("/api/v1/tables/stud-2/reset", headers=tech)).status_code == 200


async def test_unknown_ids_and_roles(tmp_path: Path) -> None:
    clock = VirtualClock()
    async with (
        stepped_floor(tmp_path, clock) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        tech = await headers_for(wf, Role.TECHNICIAN)
        auditor = await headers_for(wf, Role.AUDITOR)
        missing = await http.get("/api/v1/tables/nope", headers=tech)
        assert missing.status_code == 404
        assert missing.json()["detail"] == "no table 'nope'"
        assert (await http.post("/api/v1/hits/nope/verify", headers=tech)).json() == {
            "detail": "no hit 'nope'"
        }
        assert (await http.post("/api/v1/tables/nope/reset", headers=tech)).status_code == 404
        not_held = await http.post("/api/v1/tables/stud-1/reset", headers=tech)
        assert not_held.status_code == 409
        assert "has no hit pending" in not_held.json()["detail"]
        assert (await http.get("/api/v1/tables")).status_code == 401
        auditor_reset = await http.post("/api/v1/tables/stud-1/reset", headers=auditor)
        assert auditor_reset.status_code == 403
        extra = await http.post(
            "/api/v1/hits/x/hand-pay", headers=tech, json={"amount_cents": 100, "tip": 1}
        )
        assert extra.status_code == 422
        assert (await http.get("/api/v1/hits?limit=0", headers=tech)).status_code == 422
