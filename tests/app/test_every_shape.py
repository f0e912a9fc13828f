"""Every game, every jackpot shape and every outcome of a hit through every surface people use.

One floor (``shapes_floor``) for the module: Caribbean Stud and Draw on the demo's link of
four levels (hidden share, limits with overflow, envy pays, a mystery Mini), a link of levels
whose Major passes its excess on to the next level and whose mystery Mini has hit, Pai Gow
Poker with the joker on one meter, the Let It Ride bonus and Super Sevens as fixed-pay links;
hits held, verified, signed off by a second person, paid by hand, reset, refused, and fixed
pays paid at the table that nobody waits for.

Each is taken through every GET route of the API (read from the application's OpenAPI: a
route added later fails ``test_every_get_route_is_classified`` until it is called here or
said to carry no shape), every page in Chromium at a desk's size and a phone's, every printed
document read back by pdftotext, every export over the API and ``progressive export``; and a
hit whose stored cards are damaged breaks no list.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import pytest_asyncio
from fastapi import routing
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRoute
from playwright.async_api import Browser, ConsoleMessage, Locator, Page, expect
from sqlalchemy import select, text, update
from sqlalchemy.pool import QueuePool

from controller.core.hands import HandCategory, ShownCards
from controller.roles import Role
from controller.storage.models import HitRow
from tests.app.browser import pytestmark as on_the_browser_loop
from tests.app.browser import role_words, shot
from tests.app.helpers import progressive
from tests.app.routes import protected_routes
from tests.app.shapes_floor import ShapesFloor, hit_url, shapes_floor
from tests.pdf_text import keep_pdf, pdf_text_or_skip

# The module's tests on one test process, which builds the floor once: spread over four, each
# built its own, and on a loaded machine the last reached the displays after the wins' time.
pytestmark = [*on_the_browser_loop, pytest.mark.xdist_group("every-shape")]

# Whom a route is asked as: the first of these it admits.
ROLE_ORDER = (
    Role.AUDITOR,
    Role.TECHNICIAN,
    Role.SUPERVISOR,
    Role.COMMISSION_AGENT,
    Role.ADMIN,
    Role.DEALER,
)


@dataclass(frozen=True)
class Hit:
    hit_id: str
    link_id: str
    table_id: str
    seat: int
    hand: str
    kind: str
    status: str
    cards: int  # how many cards the table reported (0: none)
    paid_from: str | None
    needs_technician: bool
    award_cents: int


@dataclass
class Floor:
    sf: ShapesFloor
    http: httpx.AsyncClient
    headers: dict[Role, dict[str, str]]
    hits: dict[str, Hit]
    today: str
    shifts: list[int]
    submissions: list[str]
    # What the GET routes answered, by URL: the documents are read back from these.
    answers: dict[str, httpx.Response] = field(default_factory=dict)

    async def get(self, url: str, role: Role | None) -> httpx.Response:
        if url not in self.answers:
            headers = self.headers[role] if role is not None else {}
            self.answers[url] = await self.http.get(url, headers=headers)
        return self.answers[url]

    def of_link(self, link_id: str) -> list[Hit]:
        return [h for h in self.hits.values() if h.link_id == link_id]

    @property
    def tables(self) -> list[str]:
        return sorted({f"{gw}-{u}" for gw, u in self.sf.sim.tables})

    @property
    def period(self) -> str:
        day = date.fromisoformat(self.today)
        return f"since={day - timedelta(days=1)}&until={day + timedelta(days=2)}"


async def _hits(sf: ShapesFloor) -> dict[str, Hit]:
    async with sf.service.engine.connect() as conn:
        rows = (await conn.execute(select(HitRow).order_by(HitRow.at_us))).all()
    found = {}
    for r in rows:
        codes = ShownCards.of(r.cards).codes
        found[r.hit_id] = Hit(
            r.hit_id, r.link_id, r.table_id, r.seat, r.hand, r.kind, r.status,
            0 if codes is None else len(codes), r.paid_from, r.needs_technician, r.award_cents,
        )  # fmt: skip
    return found


async def _start_heavy_work(sf: ShapesFloor) -> None:
    """Every thread of the service's heavy work (documents) started now, not in a test that
    would be blamed for it."""
    workers = sf.service.workers
    meet = threading.Barrier(workers.threads)

    async def one() -> None:
        async with workers.job() as job:
            await job.run(meet.wait, 10)

    await asyncio.gather(*(one() for _ in range(workers.threads)))
    # And the database's connections, each with its thread, as many as its pool keeps.
    engine = sf.service.engine
    size = engine.pool.size() if isinstance(engine.pool, QueuePool) else 1
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(size):
            await stack.enter_async_context(engine.connect())


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def floor(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Floor]:
    async with (
        shapes_floor(tmp_path_factory.mktemp("shapes")) as sf,
        httpx.AsyncClient(base_url=sf.base_url, timeout=30) as http,
    ):
        headers = {role: sf.headers(role) for role in Role}
        await _start_heavy_work(sf)
        auditor = headers[Role.AUDITOR]
        calendar = (await http.get("/api/v1/reports/calendar", headers=auditor)).json()
        subs = (await http.get("/api/v1/submissions", headers=headers[Role.SUPERVISOR])).json()
        yield Floor(
            sf=sf,
            http=http,
            headers=headers,
            hits=await _hits(sf),
            today=calendar["today"],
            shifts=[s["shift"] for s in calendar["shifts"]],
            submissions=[s["submission_id"] for s in subs],
        )


# --- every GET route of the API ----------------------------------------------------------

Calls = Callable[[Floor], list[str]]


def _each_link(path: str, *queries: str) -> Calls:
    def calls(f: Floor) -> list[str]:
        return [
            path.replace("{link_id}", quote(link, safe="")) + q
            for link in f.sf.links
            for q in queries or ("",)
        ]

    return calls


def _once(*urls: str) -> Calls:
    return lambda f: list(urls)


def _reports(path: str, *, shift: bool) -> Calls:
    def calls(f: Floor) -> list[str]:
        shifts = [f"&shift={s}" for s in f.shifts] if shift else [""]
        return [
            path.replace("{link_id}", link) + f"?date={f.today}{s}&format={fmt}"
            for link in f.sf.links
            for s in shifts
            for fmt in ("pdf", "csv", "json")
        ]

    return calls


def _exports(f: Floor) -> list[str]:
    return [
        f"/api/v1/exports/{kind}?{f.period}&format={fmt}{link}"
        for kind in ("history", "hits", "reductions")
        for fmt in ("csv", "json")
        for link in ("", *(f"&link={lk}" for lk in f.sf.links))
    ]


def _submission(suffix: str) -> Calls:
    return lambda f: [f"/api/v1/submissions/{s}{suffix}" for s in f.submissions]


# Every GET route that shows a link, a table or a hit, and how it is called for each shape.
CALLS: dict[str, Calls] = {
    "/api/v1/links": _once("/api/v1/links"),
    "/api/v1/links/{link_id}": _each_link("/api/v1/links/{link_id}"),
    "/api/v1/links/{link_id}/history": _each_link("/api/v1/links/{link_id}/history"),
    "/api/v1/links/{link_id}/meter": _each_link("/api/v1/links/{link_id}/meter"),
    "/api/v1/links/{link_id}/hits": _each_link("/api/v1/links/{link_id}/hits", "", "?pending=true"),
    "/api/v1/links/{link_id}/corrections/meters": _each_link(
        "/api/v1/links/{link_id}/corrections/meters"
    ),
    "/api/v1/tables": _once("/api/v1/tables"),
    "/api/v1/tables/{table_id}": lambda f: [f"/api/v1/tables/{t}" for t in f.tables],
    "/api/v1/tables/{table_id}/integrity-records": lambda f: [
        f"/api/v1/tables/{t}/integrity-records" for t in f.tables
    ],
    "/api/v1/tables/{table_id}/dealers": lambda f: [
        f"/api/v1/tables/{t}/dealers" for t in f.tables
    ],
    "/api/v1/hits": _once("/api/v1/hits?limit=1000", "/api/v1/hits?pending=true&limit=1000"),
    "/api/v1/hits/work": _once("/api/v1/hits/work?limit=1000"),
    "/api/v1/hits/paid-without-technician": _once("/api/v1/hits/paid-without-technician"),
    "/api/v1/hits/tax-forms-due": _once("/api/v1/hits/tax-forms-due?limit=500"),
    "/api/v1/hits/{hit_id}": lambda f: [hit_url(h) for h in f.hits],
    "/api/v1/hits/{hit_id}/slip.pdf": lambda f: [
        hit_url(h.hit_id, "slip.pdf") for h in f.hits.values() if h.status == "awarded"
    ],
    "/api/v1/reports/calendar": _once("/api/v1/reports/calendar"),
    "/api/v1/links/{link_id}/reports/gaming-day": _reports(
        "/api/v1/links/{link_id}/reports/gaming-day", shift=False
    ),
    "/api/v1/links/{link_id}/reports/shift": _reports(
        "/api/v1/links/{link_id}/reports/shift", shift=True
    ),
    "/api/v1/exports/{kind}": _exports,
    "/api/v1/links/{link_id}/reconciliation": lambda f: [
        f"/api/v1/links/{lk}/reconciliation?{f.period}" for lk in f.sf.links
    ],
    "/api/v1/links/{link_id}/reconciliation/export": lambda f: [
        f"/api/v1/links/{lk}/reconciliation/export?{f.period}&format={fmt}"
        for lk in f.sf.links
        for fmt in ("csv", "pdf")
    ],
    "/api/v1/audit-log": _once("/api/v1/audit-log"),
    "/api/v1/anomalies": _once("/api/v1/anomalies"),
    "/api/v1/corrections": _once("/api/v1/corrections"),
    "/api/v1/submissions": _once("/api/v1/submissions"),
    "/api/v1/submissions/terms/{link_id}": _each_link("/api/v1/submissions/terms/{link_id}"),
    "/api/v1/submissions/{submission_id}": _submission(""),
    "/api/v1/submissions/{submission_id}/document": _submission("/document"),
    "/api/v1/submissions/{submission_id}/packet.json": _submission("/packet.json"),
    "/api/v1/submissions/{submission_id}/packet.pdf": _submission("/packet.pdf"),
    "/display/{link_id}": _each_link("/display/{link_id}"),
    "/metrics": _once("/metrics"),
    "/readyz": _once("/readyz"),
    "/api/v1/self-check": _once("/api/v1/self-check"),
    "/api/v1/surveillance/alerts": _once(
        "/api/v1/surveillance/alerts", "/api/v1/surveillance/alerts?since=2000-01-01"
    ),
    "/api/v1/surveillance/floor": _once("/api/v1/surveillance/floor"),
    "/api/v1/surveillance/tables/{table_id}": lambda f: [
        f"/api/v1/surveillance/tables/{t}" for t in f.tables
    ],
    "/api/v1/surveillance/tables/{table_id}/chart.svg": lambda f: [
        f"/api/v1/surveillance/tables/{t}/chart.svg?line={hand}"
        for t in f.tables
        for hand in ("ROYAL_FLUSH", "FIVE_ACES", "THREE_SUITED_SEVENS")
    ],
    "/api/v1/surveillance/hold-report.{fmt}": _once(
        "/api/v1/surveillance/hold-report.csv", "/api/v1/surveillance/hold-report.pdf"
    ),
}
# GET routes that show no link, table or hit, and why.
NO_SHAPE: dict[str, str] = {
    "/healthz": "says only that the process answers",
    "/api/v1/auth/me": "the signed-in person",
    "/api/v1/users": "people and their roles",
    "/api/v1/account-requests": "people's account changes",
    "/api/v1/device-tokens": "display devices",
    "/api/v1/documents/{sha256}": "a stored document's bytes, as they were filed",
    "/api/v1/tables/{table_id}/integrity-records/{record_id}": (
        "one integrity record, as its table's list shows it"
    ),
}


async def _openapi_get_routes(f: Floor) -> list[str]:
    spec = (await f.http.get("/openapi.json")).json()
    return sorted(p for p, ops in spec["paths"].items() if "get" in ops)


async def test_the_display_announces_the_minis_win_at_the_amount_it_paid(
    floor: Floor, browser: Browser
) -> None:
    # First of the module: a win is announced for its time from the hit, which the tour of
    # every page below outlasts on a loaded machine.
    page, errors = await _open(browser, floor, "/display/levels", None, "desk")
    mini = floor.hits[floor.sf.one("mystery")].award_cents
    said = f"${mini // 100:,}.{mini % 100:02d}"
    await expect(page.locator("body")).to_contain_text(f"Mini: {said} won")
    assert not errors, errors
    await page.close()


async def test_every_get_route_is_classified(floor: Floor) -> None:
    routes = set(await _openapi_get_routes(floor))
    unclassified = routes - set(CALLS) - set(NO_SHAPE)
    assert not unclassified, (
        f"GET routes neither called with every shape (CALLS) nor said to show none "
        f"(NO_SHAPE): {sorted(unclassified)}"
    )
    gone = (set(CALLS) | set(NO_SHAPE)) - routes
    assert not gone, f"routes no longer served: {sorted(gone)}"


def _role_for(f: Floor, path: str) -> Role | None:
    found, _ = protected_routes(f.sf.app)
    for p in found:
        # A path as the OpenAPI writes it: "{hit_id}", not the route's "{hit_id:hit}".
        if p.method == "GET" and re.sub(r":[^}]+}", "}", p.path) == path:
            return next(r for r in ROLE_ORDER if r in p.roles)
    return None


async def test_every_get_route_answers_every_shape(floor: Floor) -> None:
    failures: list[str] = []
    calls = 0
    for path, make in CALLS.items():
        role = _role_for(floor, path)
        for url in make(floor):
            calls += 1
            answer = await floor.get(url, role)
            if answer.status_code != 200:
                failures.append(f"{url} ({role}): {answer.status_code} {answer.text[:200]}")
            elif "internal error" in answer.text.lower():
                failures.append(f"{url} ({role}): says internal error")
    assert not failures, "\n".join(failures)
    assert calls > len(floor.hits) * 2, calls


# --- the lists of hits carry every hit, with its cards --------------------------------------


def _check_listed(f: Floor, listed: list[dict[str, Any]], want: list[Hit], where: str) -> None:
    by_id = {h["hit_id"]: h for h in listed}
    missing = [h.hit_id for h in want if h.hit_id not in by_id]
    assert not missing, f"{where}: hits missing: {missing}"
    for h in want:
        shown = by_id[h.hit_id]
        cards = shown["cards"] or []
        assert len(cards) == h.cards, (where, h.hit_id, shown["cards"])
        assert all(isinstance(c, str) and c for c in cards), (where, h.hit_id, cards)
        assert shown["hand_label"], (where, h.hit_id)


async def _json(f: Floor, url: str, role: Role = Role.TECHNICIAN) -> Any:
    answer = await f.http.get(url, headers=f.headers[role])
    assert answer.status_code == 200, (url, answer.status_code, answer.text[:300])
    return answer.json()


async def test_every_hit_is_in_the_lists_with_its_cards(floor: Floor) -> None:
    everything = list(floor.hits.values())
    games = {h.table_id.rsplit("-", 1)[0] for h in everything}
    assert games >= {"stud", "draw", "paigow", "lir", "sevens", "levels"}, games
    assert {h.kind for h in everything} == {"hand", "envy", "mystery"}
    _check_listed(floor, await _json(floor, "/api/v1/hits?limit=1000"), everything, "/hits")
    for link in floor.sf.links:
        url = f"/api/v1/links/{link}/hits?limit=1000"
        _check_listed(floor, await _json(floor, url), floor.of_link(link), url)
    work = await _json(floor, "/api/v1/hits/work?limit=1000")
    waiting = [floor.hits[i] for o in ("held", "verified", "second_signed", "refused")
               for i in floor.sf.hits[o][:1]]  # fmt: skip
    _check_listed(floor, work["holding"] + work["other"], waiting, "/hits/work")
    quiet = await _json(floor, "/api/v1/hits/paid-without-technician?limit=200")
    at_table = [floor.hits[i] for i in floor.sf.hits["at_table"]]
    _check_listed(floor, quiet["hits"], at_table, "/hits/paid-without-technician")
    for h in everything:
        _check_listed(floor, [await _json(floor, hit_url(h.hit_id))], [h], hit_url(h.hit_id))
    # The joker is a card of its own, shown as one.
    (five_aces,) = [await _json(floor, hit_url(floor.sf.one("held")))]
    assert len(five_aces["cards"]) == 7 and len(set(five_aces["cards"])) == 7, five_aces


# --- documents -------------------------------------------------------------------------------


async def _pdf(f: Floor, url: str, role: Role = Role.AUDITOR) -> str:
    answer = await f.get(url, role)
    assert answer.status_code == 200, (url, answer.status_code, answer.text[:300])
    assert answer.content.startswith(b"%PDF"), url
    name = re.sub(r"[^A-Za-z0-9.-]+", "_", url.split("/api/v1/", 1)[-1])[:100]
    keep_pdf(f"every-shape-{name}.pdf", answer.content)
    return pdf_text_or_skip(answer.content)


async def test_every_document_prints_every_shape(floor: Floor) -> None:
    for h in floor.hits.values():
        if h.status != "awarded":
            continue
        text = await _pdf(floor, hit_url(h.hit_id, "slip.pdf"))
        assert h.hit_id in text and h.table_id in text, (h.hit_id, text[:500])
    assert "Joker" in await _pdf(floor, hit_url(floor.sf.one("held"), "slip.pdf"))
    for link in floor.sf.links:
        day = f"/api/v1/links/{link}/reports/gaming-day?date={floor.today}&format=pdf"
        text = await _pdf(floor, day)
        hits = floor.of_link(link)
        assert f"Hits ({len(hits)})" in text, (link, text)
        for h in hits:
            assert f"{h.table_id}, {h.seat}" in text, (link, h.hit_id)
        for shift in floor.shifts:
            url = f"/api/v1/links/{link}/reports/shift?date={floor.today}&shift={shift}&format=pdf"
            await _pdf(floor, url)
        await _pdf(floor, f"/api/v1/links/{link}/reconciliation/export?{floor.period}&format=pdf")
    for s in floor.submissions:
        await _pdf(floor, f"/api/v1/submissions/{s}/packet.pdf", Role.SUPERVISOR)


# --- exports ---------------------------------------------------------------------------------


def _exported(text: str, fmt: str) -> dict[str, dict[str, Any]]:
    """The rows of a hits export (or a report's hits), by hit id."""
    if fmt == "csv":
        rows: list[dict[str, Any]] = list(csv.DictReader(io.StringIO(text)))
    else:
        body = json.loads(text)
        rows = body if isinstance(body, list) else body.get("rows", body.get("hits", []))
    return {row["hit_id"]: row for row in rows}


def _card_count(cards: Any) -> int:
    if not cards:
        return 0
    return len(cards) if isinstance(cards, list) else len(str(cards).split())


def _check_exported(f: Floor, rows: dict[str, dict[str, Any]], want: list[Hit], where: str) -> None:
    assert set(rows) == {h.hit_id for h in want}, where
    for h in want:
        assert _card_count(rows[h.hit_id]["cards"]) == h.cards, (where, rows[h.hit_id])


async def test_every_export_carries_every_hit(floor: Floor) -> None:
    everything = list(floor.hits.values())
    for fmt in ("csv", "json"):
        url = f"/api/v1/exports/hits?{floor.period}&format={fmt}"
        answer = await floor.get(url, Role.AUDITOR)
        assert answer.status_code == 200, (url, answer.text[:300])
        _check_exported(floor, _exported(answer.text, fmt), everything, url)
        for link in floor.sf.links:
            url = f"/api/v1/links/{link}/reports/gaming-day?date={floor.today}&format={fmt}"
            answer = await floor.get(url, Role.AUDITOR)
            assert answer.status_code == 200, (url, answer.text[:300])
            if fmt == "json":
                _check_exported(floor, _exported(answer.text, fmt), floor.of_link(link), url)
            else:
                for h in floor.of_link(link):
                    assert h.hit_id in answer.text, (url, h.hit_id)
    day = date.fromisoformat(floor.today)
    settings = floor.sf.service.settings
    env = {"PROGRESSIVE_LEDGER_KEY_FILE": str(settings.ledger_key_file)}

    async def command(fmt: str) -> tuple[str, tuple[int, str, str]]:
        return fmt, await progressive(
            "export", "hits", "--since", str(day - timedelta(days=1)),
            "--until", str(day + timedelta(days=2)), "--format", fmt,
            db_url=settings.database_url, key=False, env=env,
        )  # fmt: skip

    for fmt, (code, out, err) in await asyncio.gather(command("csv"), command("json")):
        assert code == 0, err
        _check_exported(floor, _exported(out, fmt), everything, f"progressive export ({fmt})")


# --- one damaged record breaks no list -------------------------------------------------------


def _flagged(shown: dict[str, Any]) -> bool:
    """The hit says its stored record cannot be read as it should."""
    words = ("problem", "unreadable", "damaged", "invalid", "error")
    return any(v for k, v in shown.items() if any(w in k for w in words))


async def _write_cards(f: Floor, hit_id: str, cards: str | None) -> None:
    """Write a hit's cards past the database's guard on its facts: a record as damaged
    storage, or a writer of another version, could leave it."""
    async with f.sf.service.engine.begin() as conn:
        guards = (
            await conn.execute(
                text(
                    "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'hits'"
                )
            )
        ).all()
        for name, _ in guards:
            await conn.execute(text(f'DROP TRIGGER "{name}"'))
        await conn.execute(update(HitRow).where(HitRow.hit_id == hit_id).values(cards=cards))
        for _, sql in guards:
            await conn.execute(text(sql))


async def test_a_damaged_record_breaks_no_list(floor: Floor) -> None:
    damaged = floor.sf.one("verified")
    where = HitRow.hit_id == damaged
    async with floor.sf.service.engine.connect() as conn:
        before = await conn.scalar(select(HitRow.cards).where(where))
    await _write_cards(floor, damaged, "51,zz,99,-1")
    try:
        lists = [
            "/api/v1/hits?limit=1000",
            "/api/v1/hits?pending=true&limit=1000",
            "/api/v1/hits/work?limit=1000",
            f"/api/v1/links/{floor.hits[damaged].link_id}/hits?limit=1000",
        ]
        failures = []
        for url in lists:
            answer = await floor.http.get(url, headers=floor.headers[Role.TECHNICIAN])
            if answer.status_code != 200:
                failures.append(f"{url}: {answer.status_code} {answer.text[:200]}")
                continue
            body = answer.json()
            listed = body["holding"] + body["other"] if isinstance(body, dict) else body
            shown = [h for h in listed if h["hit_id"] == damaged]
            if len(shown) != 1:
                failures.append(f"{url}: the damaged hit {damaged} is not listed")
            elif not _flagged(shown[0]):
                failures.append(f"{url}: the damaged hit is listed unflagged: {shown[0]}")
            others = {h["hit_id"] for h in listed} - {damaged}
            if not others:
                failures.append(f"{url}: no other hit listed")
        answer = await floor.http.get(hit_url(damaged), headers=floor.headers[Role.TECHNICIAN])
        if answer.status_code != 200 or not _flagged(answer.json()):
            failures.append(f"{hit_url(damaged)}: {answer.status_code} {answer.text[:200]}")
        assert not failures, "\n".join(failures)
    finally:
        await _write_cards(floor, damaged, before)


# --- every page, in Chromium -----------------------------------------------------------------

PAGES: dict[str, Role | None] = {
    "/": Role.TECHNICIAN,
    "/tech": Role.TECHNICIAN,
    "/audit": Role.AUDITOR,
    "/surveillance": Role.SURVEILLANCE,
    "/dealer": Role.DEALER,
    "/supervisor": Role.SUPERVISOR,
    "/commission": Role.COMMISSION_AGENT,
    "/admin": Role.ADMIN,
}
# A table of each game, each held by another outcome (a dealer's page of one table).
DEALT_AT = ("stud-1", "draw-2", "paigow-1", "lir-1", "sevens-1", "levels-1")
# Every page, by the route that serves it: each is opened above, or fails the test below.
EVERY_PAGE = {*PAGES, "/dealer/{table_id}", "/display/{link_id}"}


async def test_every_page_is_opened(floor: Floor) -> None:
    served = set()
    for route in routing.iter_route_contexts(floor.sf.app.routes):
        original = getattr(route, "original_route", route)
        if isinstance(original, APIRoute) and original.response_class is HTMLResponse:
            served.add(route.path)
    served -= {"/docs", "/docs/oauth2-redirect", "/redoc"}  # the API's own description
    assert served == EVERY_PAGE, (sorted(served - EVERY_PAGE), sorted(EVERY_PAGE - served))


# The hits the technician's page shows: every one that waits for a technician.
TECH_OUTCOMES = ("held", "verified", "second_signed", "refused", "mystery", "envy")
SIZES = {"desk": (1920, 1080), "phone": (390, 844)}


async def _open(
    browser: Browser, f: Floor, path: str, role: Role | None, size: str
) -> tuple[Page, list[str]]:
    width, height = SIZES[size]
    page = await browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []

    def console(msg: ConsoleMessage) -> None:
        if msg.type == "error":
            errors.append(f"console: {msg.text} ({msg.location.get('url')})")

    page.on("console", console)
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    page.on(
        "response",
        lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None,
    )
    if role is not None:
        # Signed in as the sign-in form leaves the tab (Api.signIn): the token in sessionStorage.
        name, token = f.sf.users[role]
        stored = {"progressive.token": token, "progressive.role": role.value,
                  "progressive.user": name}  # fmt: skip
        await page.add_init_script(
            f"for (const [k, v] of Object.entries({json.dumps(stored)})) sessionStorage.setItem(k, v);"
        )
    await page.goto(f.sf.base_url + path)
    if role is not None:
        await expect(page.locator("#who")).to_have_text(f"{name} ({role_words(role)})")
    await page.wait_for_load_state("networkidle")
    return page, errors


async def _soft(problems: list[str], where: str, check: Awaitable[None]) -> None:
    """A check whose failure is written down, so one page's fault hides no other."""
    try:
        await check
    except AssertionError as exc:
        problems.append(f"{where}: {str(exc).strip().splitlines()[0]}")


async def _settled(page: Page, where: str, errors: list[str], problems: list[str]) -> None:
    body = page.locator("body")
    said = re.compile("internal error", re.I)
    await _soft(problems, where, expect(body).not_to_contain_text(said, timeout=2_000))
    await _soft(problems, where, expect(body).not_to_contain_text("Loading…", timeout=5_000))
    problems.extend(f"{where}: {e}" for e in errors)
    errors.clear()


async def _cards_shown(row: Locator, h: Hit, where: str, problems: list[str]) -> None:
    where = f"{where}, hit {h.hit_id}"
    await _soft(problems, where, expect(row).to_be_visible(timeout=3_000))
    await _soft(problems, where, expect(row.locator(".card")).to_have_count(h.cards, timeout=1_000))


async def _looked_at(
    page: Page, name: str, where: str, errors: list[str], problems: list[str]
) -> None:
    """Screenshots at a desk's size and a phone's, the page settled at each."""
    for size, (width, height) in SIZES.items():
        await page.set_viewport_size({"width": width, "height": height})
        await _settled(page, f"{where} at {size}", errors, problems)
        # Nothing goes past the screen's right edge: a wide table scrolls in its own box.
        wide = await page.evaluate("document.documentElement.scrollWidth")
        if wide > width:
            problems.append(f"{where} at {size}: {wide} px wide on a screen of {width}")
        await shot(page, f"every-shape-{name}-{size}")


async def _report_shows(page: Page, f: Floor, link: str, where: str, problems: list[str]) -> None:
    """The audit page's gaming-day report of ``link``: each of its hits with its cards."""
    wanted = f"/api/v1/links/{link}/reports/gaming-day"
    async with page.expect_response(lambda r: wanted in r.url):
        await page.select_option("#report-link", link)
    listed = page.locator("#report-hits tbody")
    for h in f.of_link(link):
        await _soft(problems, where, expect(listed).to_contain_text(h.hit_id))
    folded = page.locator("#report-hits button.fold[aria-expanded=false]")
    for fold in await folded.all():
        await fold.click()
    for h in f.of_link(link):
        row = page.locator(f'#report-hits tr[data-hit="{h.hit_id}"]')
        await _cards_shown(row, h, f"{where}, {link}", problems)


async def test_every_page_shows_every_shape(floor: Floor, browser: Browser) -> None:
    problems: list[str] = []
    for path, role in PAGES.items():
        page, errors = await _open(browser, floor, path, role, "desk")
        where = path
        await _settled(page, where, errors, problems)
        if path == "/tech":
            for outcome in TECH_OUTCOMES:
                h = floor.hits[floor.sf.one(outcome)]
                row = page.locator(f'[data-hit="{h.hit_id}"]').first
                hand = re.compile(re.escape(HandCategory[h.hand].label), re.I)
                await _soft(
                    problems,
                    f"{where}, hit {h.hit_id}",
                    expect(row).to_contain_text(hand, timeout=3_000),
                )
                await _cards_shown(row, h, where, problems)
        if path == "/audit":
            for link in floor.sf.links:
                await page.select_option("#link", link)
                # Shown once the link's latest activity has brought its hits.
                wanted = f"/api/v1/links/{link}/hits"
                async with page.expect_response(lambda r, w=wanted: w in r.url):
                    await page.click("#latest")
                listed = page.locator("#hits tbody")
                for h in floor.of_link(link):
                    await _soft(
                        problems, f"{where}, {link}", expect(listed).to_contain_text(h.hit_id)
                    )
                folded = page.locator("#hits button.fold[aria-expanded=false]")
                for fold in await folded.all():
                    await fold.click()
                await _soft(problems, f"{where}, {link}", expect(folded).to_have_count(0))
                for h in floor.of_link(link):
                    row = page.locator("#hits tbody tr", has_text=h.hit_id).first
                    await _cards_shown(row, h, f"{where}, {link}", problems)
                await _report_shows(page, floor, link, f"{where}, the day's report", problems)
                await _settled(page, f"{where}, {link}", errors, problems)
                if link == "paigow":
                    await _looked_at(page, "audit-paigow", where, errors, problems)
                    await page.set_viewport_size({"width": 1920, "height": 1080})
        name = path.strip("/") or "home"
        await _looked_at(page, name, where, errors, problems)
        await page.close()
    for table in DEALT_AT:
        page, errors = await _open(browser, floor, f"/dealer/{table}", Role.DEALER, "desk")
        await _soft(
            problems, f"/dealer/{table}", expect(page.locator("#title")).to_contain_text(table)
        )
        await _looked_at(page, f"dealer-{table}", f"/dealer/{table}", errors, problems)
        await page.close()
    for link in floor.sf.links:
        page, errors = await _open(browser, floor, f"/display/{link}", None, "desk")
        await _looked_at(page, f"display-{link}", f"/display/{link}", errors, problems)
        await page.close()
    assert not problems, "\n".join(problems)
