"""Game protection on a floor of simulated tables dealing real cards: an alert raised from what
the tables report over the register map, read by surveillance, closed when its window ends."""

from __future__ import annotations

import contextlib
import csv
import http.server
import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select, update

from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.roles import Role
from controller.runtime.protection import GameProtection
from controller.storage.models import AuditRow, ProtectionAlertRow
from link_adapters.simulator.clock import VirtualClock
from tests.app.auth import headers_for, new_user
from tests.app.floor import WebFloor, step, stepped_floor
from tests.integration.harness import wait_until
from tests.pdf_text import pdf_text_or_skip

LINKS = {"stud": (Game.CARIBBEAN_STUD, 2)}


@contextlib.contextmanager
def posts_received() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A webhook on loopback: its URL, and the JSON bodies posted to it."""
    posts: list[dict[str, Any]] = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            posts.append(json.loads(self.rfile.read(length)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", posts
    finally:
        server.shutdown()
        server.server_close()


def watch(wf: WebFloor) -> GameProtection:
    protection = wf.service.protection
    assert protection is not None
    return protection


async def deal_royal(wf: WebFloor, clock: VirtualClock, seat: int) -> None:
    """A royal flush really dealt at stud-1, verified, signed off and the table reset."""
    wf.table("stud", 1).force_hand(seat, HandCategory.ROYAL_FLUSH)
    wf.play_round_now("stud", 1)
    await wait_until(lambda: wf.service.table_status("stud-1").hit_pending)
    hits = wf.service.hits
    for hit in await hits.unverified("stud-1"):
        await hits.verify(hit.hit_id, actor="tech")
    for hit in await hits.unsigned("stud-1"):
        await hits.sign_off(hit.hit_id, actor="tech-2")
    await hits.release_table("stud-1", actor="tech")
    await wait_until(lambda: not wf.service.table_status("stud-1").hit_pending)
    await step(wf, clock, 0.5)


async def test_too_many_royal_flushes_at_one_table_raise_an_alert_surveillance_reads(
    tmp_path: Path,
) -> None:
    clock = VirtualClock()
    async with (
        stepped_floor(tmp_path, clock, links=LINKS) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        eye = await headers_for(wf, Role.SURVEILLANCE)
        dee, _ = await new_user(wf, Role.DEALER, "dee")
        await wf.service.dealers.sign_in("stud-1", dealer=dee, actor=dee)
        for _ in range(20):
            await step(wf, clock, 0.5)
        await watch(wf).step(look_now=True)
        honest = (await http.get("/api/v1/surveillance/alerts", headers=eye)).json()
        assert honest == []

        for seat in (1, 2, 3):
            await deal_royal(wf, clock, seat)
        with posts_received() as (url, posts):
            watch(wf).webhook_url = url
            await watch(wf).step(look_now=True)
            watch(wf).webhook_url = None

        answer = await http.get("/api/v1/surveillance/alerts", headers=eye)
        assert answer.status_code == 200, answer.text
        # Each alert raised was posted to the webhook, as JSON.
        assert sorted(p["alert"]["alert_id"] for p in posts) == sorted(
            a["alert_id"] for a in answer.json()
        )
        assert {p["event"] for p in posts} == {"protection_alert_raised"}
        royal = [a for a in answer.json() if a["scope"] == "table"]
        assert {a["window"] for a in royal} == {"shift", "gaming_day", "7_days", "30_days"}
        a = royal[0]
        assert (a["table_id"], a["link_id"], a["line"], a["game"]) == (
            "stud-1",
            "stud",
            "ROYAL_FLUSH",
            "caribbean_stud",
        )
        assert a["observed"] == 3 and a["direction"] == "too_many"
        assert 0 < a["expected"] < 0.01 and a["p_value"] <= a["threshold"]
        assert "by luck" in a["luck"] and "royal flush" in a["text"].lower()
        assert a["since"] and a["closed_at"] is None
        history = await http.get(a["history_url"], headers=await headers_for(wf, Role.AUDITOR))
        assert history.status_code == 200 and any(
            e["kind"] == "award" and e["table_id"] == "stud-1" for e in history.json()["entries"]
        )
        seats = [x for x in answer.json() if x["scope"] == "seat"]
        assert all(x["subject"].startswith("stud-1 seat") for x in seats)
        # The dealer signed in at the table dealt them: held against the odds too.
        dealt = [x for x in answer.json() if x["scope"] == "dealer"]
        assert dealt and {(x["dealer"], x["line"]) for x in dealt} == {("dee", "ROYAL_FLUSH")}

        floor = (await http.get("/api/v1/surveillance/floor", headers=eye)).json()
        assert floor["tables"][0]["table_id"] == "stud-1" and floor["tables"][0]["alarming"]
        assert floor["tables"][1]["table_id"] == "stud-2"
        assert floor["open_alerts"] == len(answer.json())
        assert floor["tests_per_month"] > 0 and floor["threshold"] < 1e-6
        starts = {w["window"]: w["since_us"] for w in floor["windows"]}
        assert list(starts) == ["shift", "gaming_day", "7_days", "30_days"]
        assert starts["30_days"] < starts["7_days"] < starts["gaming_day"] <= starts["shift"]

        lines = (await http.get("/api/v1/surveillance/tables/stud-1", headers=eye)).json()
        royal_day = [
            x for x in lines["lines"] if x["line"] == "ROYAL_FLUSH" and x["window"] == "gaming_day"
        ]
        assert royal_day[0]["observed"] == 3 and royal_day[0]["alarming"]
        chart = await http.get(
            "/api/v1/surveillance/tables/stud-1/chart.svg?line=ROYAL_FLUSH", headers=eye
        )
        assert chart.status_code == 200 and chart.headers["content-type"] == "image/svg+xml"
        assert chart.text.startswith("<svg") and "3 seen" in chart.text

        # The hold report: theoretical against actual, per table, game and floor.
        report = await http.get("/api/v1/surveillance/hold-report.csv", headers=eye)
        assert report.status_code == 200, report.text
        rows = list(csv.reader(io.StringIO(report.text)))
        head = rows[2]
        stud1 = dict(zip(head, next(r for r in rows if r[:2] == ["table", "stud-1"]), strict=True))
        awards = [h for h in await wf.service.hits.of_link("stud") if h.table_id == "stud-1"]
        assert int(stud1["paid_cents"]) == sum(
            h.award_cents for h in awards if h.status == "awarded"
        )
        assert int(stud1["hands"].replace(",", "")) > 0 and stud1["theoretical hold"].endswith("%")
        assert [r[1] for r in rows if r[0] == "game"] == ["Caribbean Stud Poker"]
        pdf = await http.get("/api/v1/surveillance/hold-report.pdf", headers=eye)
        assert pdf.headers["content-type"] == "application/pdf"
        text = pdf_text_or_skip(pdf.content)
        assert "Hold report" in text and "13-8-4.14" in text and "stud-1" in text
        assert "Theoretical" in text and "Actual" in text and "Floor" in text

        # The record: once, in the audit log, never edited.
        async with wf.service.engine.connect() as conn:
            raised = (
                await conn.scalars(
                    select(AuditRow.target).where(AuditRow.action == "protection_alert_raised")
                )
            ).all()
        assert sorted(raised) == sorted(x["alert_id"] for x in answer.json())
        refused = False
        try:
            async with wf.service.engine.begin() as conn:
                await conn.execute(update(ProtectionAlertRow).values(observed=0))
        except Exception as exc:
            refused = "never edited" in str(exc)
        assert refused

        # A day on, the shift and the gaming day hold no royal flush: those alerts close.
        later = wf.service.now_us() + 26 * 3600 * 1_000_000
        watch(wf).now_us = lambda: later
        await watch(wf).step(look_now=True)
        still = {
            x["window"]
            for x in (await http.get("/api/v1/surveillance/alerts", headers=eye)).json()
            if x["scope"] == "table"
        }
        assert still == {"7_days", "30_days"}
        since = (
            await http.get(
                "/api/v1/surveillance/alerts", params={"since": "2000-01-01"}, headers=eye
            )
        ).json()
        closed = {x["window"] for x in since if x["scope"] == "table" and x["closed_at"]}
        assert closed == {"shift", "gaming_day"}

        # Only surveillance, auditors, supervisors and admins read it.
        dealer = await headers_for(wf, Role.DEALER)
        assert (await http.get("/api/v1/surveillance/alerts", headers=dealer)).status_code == 403
