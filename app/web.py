"""The web application: ``create_app(service)`` builds it; its lifespan runs the service.

Starting the application starts the controller service (database, links, poller when a floor
is configured) and stopping it finishes the polls under way before the database closes, so a
web process is the controller process and one Ctrl-C stops both cleanly.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.security.headers import SecurityHeaders
from controller.refusal import Conflict, Invalid, NotFound, Refused
from controller.rules import RuleViolation
from controller.rules.jurisdictions import Jurisdiction
from controller.runtime.service import FloorService
from controller.runtime.workers import Busy
from controller.storage.errors import DATABASE_ERRORS, unstorable_text

STATIC = Path(__file__).parent / "static"

API_DESCRIPTION = """
The progressive jackpot controller's JSON API.

Amounts are integer cents in fields named `*_cents`; rates are basis points in fields named
`*_bp` (8250 = 82.50 %). Times are integer microseconds since the Unix epoch (UTC) in fields
named `*_us`. Errors are JSON objects with a `detail` a person can read.

Current amounts are public (they are shown on the floor); everything else needs a bearer
token from `POST /api/v1/auth/token` and the role each operation names.
"""


def _error(status: int, detail: object) -> JSONResponse:
    return JSONResponse(status_code=status, content={"detail": detail})


def invalid_detail(problems: list[dict[str, Any]]) -> dict[str, object]:
    """The detail of a request that is not valid: each problem with where it is."""
    return {"message": "the request is not valid", "problems": problems}


# A refusal (controller.refusal) is answered here, for every route, by its type, never by
# reading its message: what was named is not there (404), the input as given (422), or a rule
# or the state of things refuses it (409).
def refusal_status(exc: Refused) -> int:
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, Invalid) and not isinstance(exc, Conflict):
        return 422
    return 409


def refusal_content(exc: Refused, law: Jurisdiction) -> dict[str, object]:
    """A refusal's answer: what was refused, for a person. Input refused at a part of the
    request the route named (``controller.refusal.at``) is answered as invalid input is,
    at that part; a rule's refusal also names its clause and the jurisdiction whose clause
    it is."""
    if refusal_status(exc) == 422 and isinstance(exc, Invalid) and exc.where is not None:
        return {"detail": invalid_detail([{"where": exc.where, "problem": str(exc)}])}
    content: dict[str, object] = {"detail": str(exc)}
    if isinstance(exc, RuleViolation):
        content.update(clause=exc.clause, jurisdiction=law.title)
    return content


def create_app(service: FloorService) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # A caller that started the service itself (to see its errors first) also stops it.
        owned = not service.started
        if owned:
            await service.start()
        try:
            yield
        finally:
            if owned:
                await service.stop()

    app = FastAPI(
        title="Progressive jackpot controller",
        version="1",
        description=API_DESCRIPTION,
        lifespan=lifespan,
        # The documentation pages are the application's own (app/api/docs.py), served with
        # every file they need: FastAPI's load theirs from CDNs.
        docs_url=None,
        redoc_url=None,
    )
    app.state.service = service
    # Every answer, errors included, carries the security headers; bodies are bounded.
    app.add_middleware(SecurityHeaders)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        response = _error(exc.status_code, exc.detail)
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid_input(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            {
                "where": ".".join(str(p) for p in err.get("loc", ())),
                "problem": err.get("msg", "invalid"),
            }
            for err in exc.errors()
        ]
        return _error(422, invalid_detail(problems))

    @app.exception_handler(Refused)
    async def refusal(_: Request, exc: Refused) -> JSONResponse:
        return JSONResponse(
            status_code=refusal_status(exc), content=refusal_content(exc, service.settings.law)
        )

    async def database_refusal(_: Request, exc: Exception) -> JSONResponse:
        # A value typed with a character the database keeps in no text is refused input,
        # not a server error.
        if unstorable_text(exc):
            problem = {"where": "input", "problem": "text may not contain a NUL character"}
            return _error(422, invalid_detail([problem]))
        raise exc

    for kind in DATABASE_ERRORS:
        app.add_exception_handler(kind, database_refusal)

    @app.exception_handler(Busy)
    async def busy(_: Request, exc: Busy) -> JSONResponse:
        response = _error(503, str(exc))
        response.headers["Retry-After"] = str(exc.retry_after_s)
        return response

    @app.get("/healthz", tags=["health"], summary="The process is alive")
    async def healthz() -> dict[str, str]:
        return {"status": "alive"}

    @app.get(
        "/readyz",
        tags=["health"],
        summary="Database reachable, every link polled recently, the software passing its check",
        responses={503: {"description": "not ready, with the reasons"}},
    )
    async def readyz() -> JSONResponse:
        problems = await service.readiness()
        notes = service.readiness_notes() if service.started else {}
        # The last check of the installed software against its manifest: state, when, and the
        # files that do not match.
        software = service.software()
        if problems:
            return JSONResponse(
                status_code=503,
                content={
                    "status": "not ready",
                    "problems": problems,
                    "notes": notes,
                    "software": software,
                },
            )
        return JSONResponse(
            content={"status": "ready", "problems": {}, "notes": notes, "software": software}
        )

    # Pages' scripts and styles: plain files, no build step.
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    # Routers are included below.
    from app.api import audit_log, auth, users

    app.include_router(auth.router)
    app.include_router(users.router)
    app.include_router(audit_log.router)
    from app.api import docs, hits, links, pages, records, reports, slips, tables

    app.include_router(links.router)
    app.include_router(tables.router)
    app.include_router(hits.router)
    app.include_router(slips.router)
    app.include_router(reports.router)
    app.include_router(records.router)
    app.include_router(pages.router)
    app.include_router(docs.router)
    from app.api import display

    app.include_router(display.router)
    from app.api import amount_text, corrections, integrity_records, reconciliation

    # The regulated paperwork: devices removed from play, corrections by two people, the
    # reconciliation of a link's meter for auditors, and how a typed amount or rate is read.
    app.include_router(integrity_records.router)
    from app.api import surveillance

    # Game protection: the tables' luck against the exact odds, for surveillance and auditors.
    app.include_router(surveillance.router)
    app.include_router(corrections.router)
    app.include_router(reconciliation.router)
    app.include_router(amount_text.router)
    from app.api import submissions

    app.include_router(submissions.router)
    from app.api import software

    app.include_router(software.router)
    from app import metrics

    app.include_router(metrics.router)
    from app.api.errors import document_errors

    document_errors(app)  # last: it documents the error answers of every route above
    return app
