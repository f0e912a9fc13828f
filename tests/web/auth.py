"""Signing in for web tests: a real user in the database, a real token from the real endpoint."""

from __future__ import annotations

import secrets

import httpx

from app.security import Role
from controller import users
from tests.web.floor import WebFloor


async def new_user(wf: WebFloor, role: Role, username: str | None = None) -> tuple[str, str]:
    """A new user of ``role``, named after it unless ``username`` is given: name, password."""
    name = username or f"{role.value.replace('_', '-')}-{secrets.token_hex(3)}"
    password = secrets.token_urlsafe(16)
    await users.create_user(
        wf.service.engine,
        username=name,
        role=role,
        password=password,
        actor="test",
        at_us=wf.service.clock.now_us(),
    )
    return name, password


async def headers_for(wf: WebFloor, role: Role, username: str | None = None) -> dict[str, str]:
    """``{"Authorization": "Bearer ..."}`` of a new user of ``role`` (named after it unless
    ``username`` is given) signed in through ``POST /api/v1/auth/token``."""
    name, password = await new_user(wf, role, username)
    async with httpx.AsyncClient(base_url=wf.base_url) as http:
        answer = await http.post(
            "/api/v1/auth/token", data={"username": name, "password": password}
        )
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}
