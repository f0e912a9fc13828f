"""A refusal's HTTP status follows its type, never the words of its message; a rule's refusal
names its clause and the jurisdiction it is refused under; input refused at a part of the
request is answered as invalid input is, at that part."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from app.web import create_app
from controller.access.duties import DutyRefused, UnknownRequest
from controller.access.roles import AlreadyExists, UnknownUser, UserError
from controller.core.money import MoneyError
from controller.core.reducer import EngineError
from controller.core.reducer.levels import LevelError
from controller.periods import PeriodError
from controller.refusal import Refused, at
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
    (UnknownUser("no user 'pat'"), 404),
    (UnknownRequest("no account request 'x'"), 404),
    (AlreadyExists("there is already a user 'pat'"), 409),
    (DutyRefused("no admin sets the password of a supervisor"), 409),
    (LevelError("level 1 (Grand): two levels have that name"), 422),
    (MoneyError("'10' is not an amount"), 422),
    (Refused("refused, of no kind more exact"), 409),
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


# (what is raised inside ``at(where)``, where the answer places the problem)
PLACED = [
    (UserError("a password needs at least 10 characters"), "body.password", "body.password"),
    (PeriodError("the period is empty", where="until"), "query", "query.until"),
]


@pytest.mark.parametrize(("error", "at_", "where"), PLACED, ids=["user", "period"])
async def test_input_refused_at_a_part_of_the_request_is_answered_there(
    tmp_path: Path, error: Exception, at_: str, where: str
) -> None:
    app = create_app(FloorService(settings_in(tmp_path)))

    @app.get("/refuse")
    async def refuse() -> None:
        with at(at_):
            raise error

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        answer = await http.get("/refuse")
    assert answer.status_code == 422, answer.text
    problem = {"where": where, "problem": str(error)}
    assert answer.json() == {
        "detail": {"message": "the request is not valid", "problems": [problem]}
    }


async def test_a_refusal_not_of_input_is_not_placed(tmp_path: Path) -> None:
    """A user that is not there is a 404 wherever the route looked for them."""
    app = create_app(FloorService(settings_in(tmp_path)))

    @app.get("/refuse")
    async def refuse() -> None:
        with at("path.username"):
            raise UnknownUser("no user 'pat'")

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        answer = await http.get("/refuse")
    assert (answer.status_code, answer.json()) == (404, {"detail": "no user 'pat'"})
