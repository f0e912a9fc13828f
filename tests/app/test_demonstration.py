"""A floor in demonstration mode, and the law it runs under, on every surface that is not a page:
the link and submission answers, a refusal, the packet and a report as printed, the exports,
and ``progressive links list`` and ``links show`` (the pages and displays, in Chromium:
``test_demonstration_browser``)."""

from __future__ import annotations

import csv
import io
import json
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import httpx

from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import WebFloor, settings_in, web_floor
from tests.app.helpers import progressive
from tests.pdf_text import keep_pdf, pdf_text_or_skip

LAW = "Indiana (68 IAC 10)"
SAID = "DEMONSTRATION MODE (PROGRESSIVE_DEMONSTRATION)"


def demonstration_floor(folder: Path) -> AbstractAsyncContextManager[WebFloor]:
    """The test floor (a Caribbean Stud link, a Let It Ride bonus link) in demonstration mode."""
    settings = settings_in(folder).model_copy(update={"demonstration": True})
    return web_floor(folder, settings=settings)


def pages_of(pdf: bytes) -> list[str]:
    """Each printed page's text (pdftotext parts pages with a form feed)."""
    return [page for page in pdf_text_or_skip(pdf).split("\f") if page.strip()]


def every_page_says(pdf: bytes, *words: str) -> int:
    pages = pages_of(pdf)
    for n, page in enumerate(pages, 1):
        flat = " ".join(page.split())
        for w in words:
            assert w in flat, (n, w, page)
    return len(pages)


async def test_a_demonstration_floor_says_so_and_its_jurisdiction_everywhere(
    tmp_path: Path,
) -> None:
    async with demonstration_floor(tmp_path) as wf:
        auditor = await headers_for(wf, Role.AUDITOR)
        supervisor = await headers_for(wf, Role.SUPERVISOR)
        async with httpx.AsyncClient(base_url=wf.base_url, timeout=30) as http:
            await _links_and_submissions(http, auditor)
            await _refusal(http, supervisor)
            await _packet_and_report(http, auditor, wf)
            await _exports(http, auditor)
        await _command_line(wf)


async def _links_and_submissions(http: httpx.AsyncClient, auditor: dict[str, str]) -> None:
    links = (await http.get("/api/v1/links")).json()  # public, as on the floor
    assert {link["link_id"] for link in links} == {"stud", "lir"}
    for link in links:
        assert link["jurisdiction"] == LAW
        assert link["demonstration"] is True  # opened in it: its history says so
        assert link["installation_demonstration"] is True
        assert link["demonstration_statement"].startswith(SAID)
        assert (
            f"link {link['link_id']} was opened in demonstration mode"
            in (link["demonstration_statement"])
        )
    one = (await http.get("/api/v1/links/stud")).json()
    assert one["jurisdiction"] == LAW and one["demonstration"] is True

    filed = (await http.get("/api/v1/submissions", headers=auditor)).json()
    assert {s["link_id"] for s in filed} == {"stud", "lir"}
    for s in filed:
        assert s["jurisdiction"] == LAW
        assert s["demonstration"] == (
            "demonstration mode: the notice period of 68 IAC 10-1-3(c)(1) was not given"
        )
        assert s["effective_at_us"] == s["filed_at_us"]  # played at once
        assert s["demonstration_statement"].startswith(SAID)
    doc = (await http.get(filed[0]["document_url"], headers=auditor)).json()
    assert doc["jurisdiction"] == LAW and doc["demonstration"].startswith(SAID)
    assert LAW in doc["letterhead"]
    notice = next(x for x in doc["sections"] if x["key"] == "notice")
    assert {"label": "Notice not given", "value": "Demonstration mode: the notice period of "
            "68 IAC 10-1-3(c)(1) was not given"} in notice["facts"]  # fmt: skip


async def _refusal(http: httpx.AsyncClient, supervisor: dict[str, str]) -> None:
    """A rule's refusal names its clause and the jurisdiction whose clause it is."""
    body = {"kind": "rate_change", "link_id": "stud", "rate_bp": 5_000}
    refused = await http.post("/api/v1/submissions", json=body, headers=supervisor)
    assert refused.status_code == 409, refused.text
    answer = refused.json()
    assert answer["clause"] in answer["detail"] and answer["clause"].startswith("68 IAC")
    assert answer["jurisdiction"] == LAW
    checked = (await http.post("/api/v1/submissions/check", json=body, headers=supervisor)).json()
    assert checked["ok"] is False and checked["jurisdiction"] == LAW


async def _packet_and_report(
    http: httpx.AsyncClient, auditor: dict[str, str], wf: WebFloor
) -> None:
    (stud,) = [
        s
        for s in (await http.get("/api/v1/submissions", headers=auditor)).json()
        if s["link_id"] == "stud"
    ]
    packet = await http.get(stud["packet_pdf_url"], headers=auditor)
    keep_pdf("demonstration-packet.pdf", packet.content)
    # Every page, not only the first: the jurisdiction at its head, demonstration at its foot.
    assert every_page_says(packet.content, f"Jurisdiction: {LAW}", SAID) > 1
    text = " ".join(pdf_text_or_skip(packet.content).split())
    assert "Notice not given: Demonstration mode: the notice period of 68 IAC 10-1-3(c)(1)" in text

    day = (await http.get("/api/v1/reports/calendar", headers=auditor)).json()["today"]
    report = await http.get(f"/api/v1/links/stud/reports/gaming-day?date={day}", headers=auditor)
    assert report.status_code == 200, report.text
    keep_pdf("demonstration-report.pdf", report.content)
    every_page_says(report.content, f"Jurisdiction: {LAW}", SAID, "link stud was opened")
    as_json = (
        await http.get(f"/api/v1/links/stud/reports/gaming-day?date={day}&format=json",
                       headers=auditor)
    ).json()  # fmt: skip
    assert as_json["jurisdiction"] == LAW and as_json["demonstration"].startswith(SAID)
    as_csv = await http.get(
        f"/api/v1/links/stud/reports/gaming-day?date={day}&format=csv", headers=auditor
    )
    head = next(csv.DictReader(io.StringIO(as_csv.text)))  # the report's first block
    assert head["jurisdiction"] == LAW and head["demonstration"].startswith(SAID), head
    reconciled = await http.get(
        "/api/v1/links/stud/reconciliation/export?format=pdf", headers=auditor
    )
    every_page_says(reconciled.content, f"Jurisdiction: {LAW}", SAID)


async def _exports(http: httpx.AsyncClient, auditor: dict[str, str]) -> None:
    got = await http.get("/api/v1/exports/history?format=csv", headers=auditor)
    assert got.status_code == 200, got.text
    rows = list(csv.DictReader(io.StringIO(got.text)))
    assert rows and {r["link_id"] for r in rows} == {"stud", "lir"}
    assert {(r["jurisdiction"], r["demonstration"]) for r in rows} == {(LAW, "yes")}
    opened = [r for r in rows if r["kind"] == "link_opened"]
    assert all(json.loads(r["details"])["demonstration"] is True for r in opened)
    body = (await http.get("/api/v1/exports/hits?format=json", headers=auditor)).json()
    assert body["jurisdiction"] == LAW
    assert body["demonstration"]["installation"] is True
    assert body["demonstration"]["links"] == ["lir", "stud"]
    assert body["demonstration"]["statement"].startswith(SAID)


async def _command_line(wf: WebFloor) -> None:
    """Read by commands whose installation setting is off: the links opened in demonstration
    mode are still named, with the jurisdiction."""
    url = wf.service.settings.database_url
    env = {"PROGRESSIVE_LEDGER_KEY_FILE": str(wf.service.settings.ledger_key_file)}
    code, out, err = await progressive("links", "list", db_url=url, key=False, env=env)
    assert code == 0, err
    assert out.splitlines()[0].startswith("LINK\tSTATE")  # the table as scripts read it
    assert f"jurisdiction: {LAW}" in err.splitlines()
    assert "DEMONSTRATION MODE: links lir, stud were opened in demonstration mode" in err
    code, out, err = await progressive("links", "show", "stud", db_url=url, key=False, env=env)
    assert code == 0, err
    assert out.splitlines()[-2:] == [
        f"jurisdiction: {LAW}",
        "DEMONSTRATION MODE: link stud was opened in demonstration mode, without its notice period",
    ]
    code, out, err = await progressive(
        "export", "hits", "--since", "2000-01-01", "--until", "2100-01-01", db_url=url,
        key=False, env={**env, "PROGRESSIVE_DEMONSTRATION": "true"},
    )  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[0].endswith(",jurisdiction,demonstration")
    assert f"under {LAW}" in err and SAID in err
