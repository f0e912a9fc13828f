"""Account changes asked at the same moment, through the live server on SQLite and PostgreSQL:
twenty confirmations of one request make one account and answer 409 to the rest, twenty
disables leave the last two admins, and nothing is logged with the database's parameters."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import httpx
import pytest

from controller.access import users
from controller.core.games import Game
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import settings_in, web_floor

STUD = {"stud": (Game.CARIBBEAN_STUD, 1)}
AT_ONCE = 20


def _problems(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What was logged as an error, with its exception."""
    return [
        f"{r.getMessage()} {r.exc_info[1]!r}" if r.exc_info else r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.ERROR
    ]


async def test_twenty_confirmations_at_once_make_one_account(
    tmp_path: Path, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    settings = settings_in(tmp_path).model_copy(update={"database_url": db_url})
    async with (
        web_floor(tmp_path, links=STUD, settings=settings, approve=False) as wf,
        httpx.AsyncClient(
            base_url=wf.base_url, limits=httpx.Limits(max_connections=AT_ONCE), timeout=60
        ) as http,
    ):
        root = await headers_for(wf, Role.ADMIN, "root")
        confirmers = [await headers_for(wf, Role.ADMIN, f"admin-{n}") for n in range(4)]
        asked = await http.post(
            "/api/v1/users", headers=root, json={"username": "sue-z", "role": "supervisor"}
        )
        assert asked.status_code == 202, asked.text
        url = f"/api/v1/account-requests/{asked.json()['request_id']}/confirm"

        answers = await asyncio.gather(
            *(http.post(url, headers=confirmers[n % 4]) for n in range(AT_ONCE))
        )
        codes = sorted(a.status_code for a in answers)
        assert codes == [200] + [409] * (AT_ONCE - 1), (codes, _problems(caplog))
        for refused in (a for a in answers if a.status_code == 409):
            assert "already" in refused.json()["detail"], refused.text
        listed = (await http.get("/api/v1/users", headers=root)).json()
        assert [u["username"] for u in listed].count("sue-z") == 1
        made = (await http.get("/api/v1/audit-log?action=user.create", headers=root)).json()
        assert [e["target"] for e in made].count("user sue-z") == 1
    assert _problems(caplog) == []


async def test_twenty_disables_at_once_leave_two_admins(
    tmp_path: Path, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    settings = settings_in(tmp_path).model_copy(update={"database_url": db_url})
    async with (
        web_floor(tmp_path, links=STUD, settings=settings, approve=False) as wf,
        httpx.AsyncClient(
            base_url=wf.base_url, limits=httpx.Limits(max_connections=AT_ONCE), timeout=60
        ) as http,
    ):
        names = [f"admin-{n}" for n in range(5)]
        admins = {name: await headers_for(wf, Role.ADMIN, name) for name in names}
        # Each admin disables the next ones, all at once: twenty requests for four admins.
        asks = [(names[n % 5], names[(n % 5 + 1 + n // 5) % 5]) for n in range(AT_ONCE)]
        answers = await asyncio.gather(
            *(http.post(f"/api/v1/users/{whom}/disable", headers=admins[who]) for who, whom in asks)
        )
        codes = {a.status_code for a in answers}
        assert codes <= {200, 401, 409}, (codes, _problems(caplog))
        users_now = await users.list_users(wf.service.engine)
        enabled = [u.username for u in users_now if u.role is Role.ADMIN and not u.disabled]
        assert len(enabled) == 2, enabled
    assert _problems(caplog) == []
