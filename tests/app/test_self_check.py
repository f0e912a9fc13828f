"""The running controller checks its own software: on an admin's demand and on its schedule.

A real floor (simulated tables over Modbus TCP on loopback, the controller, the web) starts
on the manifest of the tree under test; the manifest is then changed as if a file of the
install had been (a digest that no longer matches). The check that finds it holds every
link: its tables are told to take no side bets (bit0), nothing is sealed, ``/readyz`` and
``/metrics`` say so, the audit log records it. Once the check passes again the links stay
held, in the database too, until two people recover each one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from controller.core.games import Game
from controller.manifest import MANIFEST_NAME
from controller.roles import Role
from controller.rules import RuleViolation
from controller.runtime.links import LinkRuntime
from controller.storage.errors import LinkInoperable
from controller.storage.store import LedgerStore
from tests.app.auth import headers_for
from tests.app.floor import WebFloor, settings_in, web_floor
from tests.integration.harness import wait_until

LINKS = {"stud": (Game.CARIBBEAN_STUD, 2), "lir": (Game.LET_IT_RIDE_BONUS, 1)}
TAMPERED = "app/web.py"


def manifest_copy(tree_manifest: Path, folder: Path) -> Path:
    """A manifest of the tree under test the test may change, in ``folder``."""
    path = folder / MANIFEST_NAME
    shutil.copy(tree_manifest, path)
    return path


def as_if_edited(manifest: Path, path: str = TAMPERED) -> bytes:
    """Change one file's digest in the manifest, as an edit of that file would make it differ;
    the manifest as it was."""
    before = manifest.read_bytes()
    document = json.loads(before)
    document["files"][path] = "0" * 64
    manifest.write_text(json.dumps(document))
    return before


def _side_bets_refused(wf: WebFloor, link_id: str) -> list[bool]:
    """Each table of the link: told to take no side bets (register 102, bit0)."""
    _, tables = wf.links[link_id]
    return [bool(wf.table(link_id, u).command_bits & 1) for u in range(1, tables + 1)]


def _told_no_side_bets(wf: WebFloor, link_id: str) -> bool:
    return all(_side_bets_refused(wf, link_id))


async def test_a_check_on_demand_that_fails_holds_every_link_until_recovered(
    tmp_path: Path, tree_manifest: Path
) -> None:
    manifest = manifest_copy(tree_manifest, tmp_path)
    settings = settings_in(tmp_path).model_copy(update={"manifest_file": manifest})
    async with (
        web_floor(tmp_path, links=LINKS, settings=settings) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        service = wf.service
        runtime = service.runtime
        admin = await headers_for(wf, Role.ADMIN, "ann")
        # Checked at start, before anything was polled.
        ready = (await http.get("/readyz")).json()
        assert ready["software"]["state"] == "passed"
        assert ready["software"]["asked_by"] == "start"
        assert ready["software"]["files"] > 250 and ready["software"]["mismatches"] == []
        assert ready["software"]["manifest"] == str(manifest)
        # Once its tables are read and told, the floor takes side bets.
        await wait_until(lambda: not any(_side_bets_refused(wf, "stud")))

        original = as_if_edited(manifest)
        answer = await http.post("/api/v1/self-check", headers=admin)
        assert answer.status_code == 200, answer.text
        found = answer.json()
        assert found["state"] == "failed" and found["asked_by"] == "demand"
        assert found["by"] == "ann"
        assert found["mismatches"] == [{"path": TAMPERED, "problem": "differs"}]
        assert f"{TAMPERED} differs from the manifest (1 file in all)" in found["fault"]
        assert set(found["inoperable_links"]) == {"stud", "lir"}
        assert "two people" in found["inoperable_links"]["stud"]

        # Every table is told to take no side bets at its next poll (register 102, bit0).
        await wait_until(lambda: _told_no_side_bets(wf, "stud") and _told_no_side_bets(wf, "lir"))
        ready = await http.get("/readyz")
        assert ready.status_code == 503
        problems = ready.json()["problems"]
        assert TAMPERED in problems["software"]
        assert problems["link stud"].startswith("inoperable: the software self-check failed at")
        assert ready.json()["software"]["mismatches"] == [{"path": TAMPERED, "problem": "differs"}]
        link = (await http.get("/api/v1/links/stud", headers=admin)).json()
        assert link["state"] == "inoperable"
        assert {t["state"] for t in link["tables"]} == {"inoperable"}
        # Nothing is sealed: no command applies, and the store refuses whatever asks.
        with pytest.raises(LinkInoperable):
            await runtime.commands.change_rate("stud", rate_bp=8100, actor="ann")
        assert service.store.software_fault is not None
        # The alert's metric, and the audit log with who asked, what and the links held.
        metrics = (await http.get("/metrics")).text
        assert "progressive_software_check_failed 1.0" in metrics
        assert "progressive_software_check_mismatched_files 1.0" in metrics
        log = (await http.get("/api/v1/audit-log?action=software.check", headers=admin)).json()
        assert [e["actor"] for e in log] == ["ann"]
        recorded = json.loads(log[0]["after"])
        assert recorded["result"] == "failed" and recorded["links_held"] == ["lir", "stud"]
        assert recorded["mismatches"] == [f"{TAMPERED} differs"]
        # No recovery while the software fails its check.
        with pytest.raises(RuleViolation, match="while the software fails its self-check"):
            await runtime.commands.recover("stud", reason="put back", by="ann", approved_by="bob")

        # The files put back (here: the manifest): the check passes, the links stay held.
        manifest.write_bytes(original)
        passed = (await http.post("/api/v1/self-check", headers=admin)).json()
        assert passed["state"] == "passed" and passed["mismatches"] == []
        assert set(passed["inoperable_links"]) == {"stud", "lir"}
        assert service.store.software_fault is None
        ready = await http.get("/readyz")
        assert ready.status_code == 503 and "software" not in ready.json()["problems"]
        assert "progressive_software_check_failed 0.0" in (await http.get("/metrics")).text
        # The hold is in the database: a controller started now would find it.
        again = LinkRuntime(LedgerStore(service.engine, service.store.key))
        await again.memory.load()
        assert (again.memory.is_inoperable("stud") or "").startswith(
            "the software self-check failed"
        )

        # Two people recover each link, as any inoperable link comes back.
        with pytest.raises(RuleViolation):
            await runtime.commands.recover(
                "stud", reason="files put back", by="ann", approved_by="ann"
            )
        await runtime.commands.recover("stud", reason="files put back", by="ann", approved_by="bob")
        assert runtime.memory.is_inoperable("stud") is None and runtime.memory.is_inoperable("lir")
        again = LinkRuntime(LedgerStore(service.engine, service.store.key))
        await again.memory.load()
        assert (
            again.memory.is_inoperable("stud") is None
            and again.memory.is_inoperable("lir") is not None
        )
        # The recovery entry of the history says what it found: the hold.
        entries = [e async for e in service.store.entries_after("stud", 0)]
        (recovery,) = [e for e in entries if e.kind == "state_recovered"]
        assert json.loads(recovery.details)["found"].startswith("the software self-check failed")


async def test_the_schedule_finds_a_mismatch_while_running(
    tmp_path: Path, tree_manifest: Path
) -> None:
    manifest = manifest_copy(tree_manifest, tmp_path)
    settings = settings_in(tmp_path).model_copy(
        update={"manifest_file": manifest, "self_check_interval_s": 0.2}
    )
    async with web_floor(tmp_path, links=LINKS, settings=settings) as wf:
        check = wf.service.self_check
        assert check is not None
        await check.wait_for_checks(2)  # the start's, then the schedule's
        assert check.last is not None and check.last.result.passed
        assert wf.service.runtime.memory.inoperable == {}
        as_if_edited(manifest, "controller/runtime/poller.py")
        await wait_until(lambda: wf.service.runtime.memory.inoperable.keys() == {"stud", "lir"})
        assert check.last.why == "schedule"
        assert (
            "controller/runtime/poller.py differs" in wf.service.runtime.memory.inoperable["stud"]
        )
        await wait_until(lambda: _told_no_side_bets(wf, "stud"))
        assert check.failures >= 1
