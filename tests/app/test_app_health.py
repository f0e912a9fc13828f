"""The application starts the controller, answers health checks and stops cleanly."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import httpx

from controller.core.hands import HandCategory
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import web_floor
from tests.controller.storage.helpers import accept_hits_again, refuse_hits_of
from tests.integration.harness import wait_until


async def test_health_and_readiness_on_a_polled_floor(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        assert (await http.get("/healthz")).json() == {"status": "alive"}
        poller = wf.service.poller
        assert poller is not None
        # Answered and recorded: a table's answer is marked before its reading is committed.
        await wait_until(
            lambda: all(
                tp.last_ok_us and wf.service.table_status(tid).credits is not None
                for tid, tp in poller.tables.items()
            )
        )
        ready = await http.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["status"] == "ready"
        status = wf.service.table_status("stud-1")
        assert status.state in ("online", "hit_pending")
        assert status.last_answer_us is not None


async def test_not_ready_when_no_table_answers(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        await wf.sim.stop()  # every table goes silent
        poller = wf.service.poller
        assert poller is not None
        # Once each table's poll has failed since, no answer in flight can land after this.
        await wait_until(lambda: all(tp.failures > 0 for tp in poller.tables.values()))
        for tp in poller.tables.values():
            tp.last_ok_us = 1  # as if the last answer were long ago
        ready = await http.get("/readyz")
        assert ready.status_code == 503
        body = ready.json()
        assert body["status"] == "not ready"
        assert set(body["problems"]) == {"link stud", "link lir"}


async def test_not_ready_naming_a_link_whose_tables_are_all_offline(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        poller = wf.service.poller
        assert poller is not None
        await wait_until(lambda: all(tp.last_ok_us for tp in poller.tables.values()))
        stud = [tp for tp in poller.tables.values() if tp.link_id == "stud"]
        for tp in stud:
            wf.sim.set_silent("caribbean_stud", tp.entry.unit, True)
        state = wf.service.runtime.memory.states
        await wait_until(lambda: not any(ts.online for ts in state["stud"].tables.values()))
        ready = await http.get("/readyz")  # at once, not only once the answers are old
        assert ready.status_code == 503, ready.text
        problems = ready.json()["problems"]
        assert set(problems) == {"link stud"}
        assert problems["link stud"].startswith("every table is offline (stud-1")


async def test_a_table_that_stops_answering_is_shown_offline_before_that_is_recorded(
    tmp_path: Path,
) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        service = wf.service
        poller = service.poller
        assert poller is not None
        await wait_until(lambda: all(tp.last_ok_us for tp in poller.tables.values()))
        commands = service.runtime.commands
        record_offline = commands.table_offline

        async def database_away(table_id: str, *, reason: str) -> NoReturn:
            raise ConnectionError("the database is not taking connections")

        commands.table_offline = database_away  # type: ignore[assignment,method-assign]
        wf.sim.set_silent("caribbean_stud", 1, True)
        tp = poller.tables["stud-1"]
        await wait_until(lambda: tp.failures >= 4)
        tech = await headers_for(wf, Role.TECHNICIAN)
        shown = (await http.get("/api/v1/tables/stud-1", headers=tech)).json()
        assert shown["state"] == "offline" and shown["online"] is False, shown
        assert "did not answer" in shown["poll_problem"], shown
        # Not recorded yet: the ledger says so once it can.
        assert service.runtime.memory.states["stud"].table("stud-1").online
        commands.table_offline = record_offline  # type: ignore[method-assign]
        states = service.runtime.memory.states
        await wait_until(lambda: not states["stud"].table("stud-1").online)
        wf.sim.set_silent("caribbean_stud", 1, False)
        await wait_until(lambda: service.table_status("stud-1").state in ("online", "hit_pending"))
        assert service.table_status("stud-1").online


async def test_an_inoperable_link_is_named_by_readyz_and_shown_by_the_api(
    tmp_path: Path,
) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        poller = wf.service.poller
        assert poller is not None
        await wait_until(lambda: all(tp.last_ok_us for tp in poller.tables.values()))
        # As a load that found the link's stored state changed would leave it.
        wf.service.runtime.memory.inoperable["stud"] = "table stud-1: its counter row was changed"
        ready = await http.get("/readyz")
        assert ready.status_code == 503
        assert "table stud-1" in ready.json()["problems"]["link stud"]
        link = (
            await http.get("/api/v1/links/stud", headers=await headers_for(wf, Role.DEALER))
        ).json()
        assert link["state"] == "inoperable"
        assert link["inoperable_reason"] == "table stud-1: its counter row was changed"
        assert {t["state"] for t in link["tables"]} == {"inoperable"}
        assert (await http.get("/api/v1/links/lir")).json()["state"] != "inoperable"
        # Its tables are told at once to take no progressive side bets (register 102, bit0).
        for tp in (tp for tp in poller.tables.values() if tp.link_id == "stud"):
            sim = wf.sim.tables[("caribbean_stud", tp.entry.unit)]
            await wait_until(lambda t=sim: t.command_bits & 1 != 0)


async def test_a_table_whose_hit_cannot_be_recorded_is_named_by_readyz_api_and_metrics(
    tmp_path: Path,
) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        service = wf.service
        poller = service.poller
        assert poller is not None
        poller.per_table.unrecorded_retry_s = 0.2
        async with service.engine.begin() as conn:
            await refuse_hits_of(conn, "stud-1")
        wf.table("stud", 1).force_hand(3, HandCategory.FLUSH)
        await wait_until(lambda: service.table_status("stud-1").state == "unrecorded")
        ready = await http.get("/readyz")
        assert ready.status_code == 503
        assert "this hit is refused" in ready.json()["problems"]["table stud-1"]
        tech = await headers_for(wf, Role.TECHNICIAN)
        link = (await http.get("/api/v1/links/stud", headers=tech)).json()
        tables = {t["table_id"]: t for t in link["tables"]}
        assert tables["stud-1"]["state"] == "unrecorded"
        assert "this hit is refused" in tables["stud-1"]["unrecorded_reason"]
        assert tables["stud-2"]["unrecorded_reason"] is None
        metrics = (await http.get("/metrics")).text
        assert 'progressive_table_unrecorded{link_id="stud",table_id="stud-1"} 1.0' in metrics
        assert 'progressive_table_unrecorded{link_id="stud",table_id="stud-2"} 0.0' in metrics
        async with service.engine.begin() as conn:
            await accept_hits_again(conn)
        await wait_until(lambda: service.table_status("stud-1").state != "unrecorded")
        assert (await http.get("/readyz")).status_code == 200


async def test_a_table_whose_polls_fail_for_an_unknown_reason_is_named_by_readyz_api_and_metrics(
    tmp_path: Path,
) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        service = wf.service
        poller = service.poller
        assert poller is not None
        handle = poller.tables["stud-1"].handle
        read, exchange = handle.read, handle.exchange

        async def faulty(**_: object) -> NoReturn:
            raise AttributeError("'NoneType' object has no attribute 'registers'")

        handle.read = handle.exchange = faulty  # type: ignore[method-assign]
        await wait_until(lambda: service.table_status("stud-1").state == "offline")
        await wait_until(lambda: poller.tables["stud-1"].failures >= 3)
        ready = await http.get("/readyz")
        assert ready.status_code == 503
        problem = ready.json()["problems"]["table stud-1"]
        assert "AttributeError" in problem and "'registers'" in problem, problem
        tech = await headers_for(wf, Role.TECHNICIAN)
        tables = {t["table_id"]: t for t in (await http.get("/api/v1/tables", headers=tech)).json()}
        assert tables["stud-1"]["state"] == "offline"
        assert tables["stud-1"]["online"] is False
        assert tables["stud-1"]["failures"] >= 3
        assert "AttributeError" in tables["stud-1"]["poll_problem"]
        # stud-2 is none of it (on a loaded machine it may time out of its own, a known cause).
        assert "AttributeError" not in (tables["stud-2"]["poll_problem"] or "")
        metrics = (await http.get("/metrics")).text
        unknown = 'progressive_table_poll_failures_total{cause="unknown",link_id="stud",'
        assert f'{unknown}table_id="stud-2"}} 0.0' in metrics
        assert f'{unknown}table_id="stud-1"}}' in metrics
        assert f'{unknown}table_id="stud-1"}} 0.0' not in metrics
        handle.read, handle.exchange = read, exchange  # type: ignore[method-assign]
        await wait_until(lambda: service.table_status("stud-1").state == "online")
        assert service.table_status("stud-1").poll_problem is None
        assert (await http.get("/readyz")).status_code == 200
