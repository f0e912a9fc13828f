"""A refusal's HTTP status follows its type, never the words of its message; a rule's refusal
names its clause and the jurisdiction it is refused under."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from app.web import create_app
from controller.core.reducer import EngineError
from controller.rules import RuleViolation
from controller.runtime.service import FloorService
from controller.storage.errors import Conflict, NotFound, StaleState, StoreError
from tests.app.floor import settings_in

CASES = [
    # (what is raised, the status it is answered with)
    (NotFound("the integrity record 7 is not stored"), 404),
    (NotFound("no link 'stud'"), 404),
    (StoreError("no counter row was written, so the link is refused"), 409),
    (Conflict("no longer pending: decided meanwhile"), 409),
    (StaleState("link stud: its history moved on since it was loaded"), 409),
    (RuleViolation("68 IAC 10-1-1.1(d)", "no rate change before a win"), 409),
    (EngineError("no hit is pending on that table"), 409),
]


@pytest.mark.parametrize(("error", "status"), CASES, ids=[type(e).__name__ for e, _ in CASES])
async def test_the_status_of_a_refusal_is_chosen_by_its_type(
    tmp_path: Path, error: Exception, status: int
) -> None:
    app = create_app(FloorService(settings_in(tmp_path)))  # never started: no lifespan here

    @app.get("/refuse")
    async def refuse() -> None:
        raise error

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        answer = await http.get("/refuse")
    assert answer.status_code == status, answer.text
    if isinstance(error, RuleViolation):
        # A rule's refusal names its clause and the jurisdiction whose clause it is.
        assert answer.json() == {
            "detail": str(error),
            "clause": error.clause,
            "jurisdiction": "Indiana (68 IAC 10)",
        }
    else:
        assert answer.json() == {"detail": str(error)}
