"""Every protected route refuses every role it does not name, and everyone without a token.

The routes are found by walking the application's own routes for ``require(...)``
dependencies, so a route added later is checked without editing this test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import httpx
from fastapi import FastAPI, routing
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from app.security import Role, RoleRequirement, display_access
from app.web import create_app
from controller import users
from tests.web.auth import headers_for
from tests.web.floor import web_floor

# What anyone may call: signing in. Current amounts are public unless the installation says
# otherwise, so those routes carry ``display_access`` instead of a role.
PUBLIC = {("POST", "/api/v1/auth/token")}
# A path parameter that names nothing: valid as text and as a number.
NOTHING = "987654321"


@dataclass(frozen=True)
class Protected:
    method: str
    path: str  # the template, e.g. /api/v1/users/{username}/disable
    roles: frozenset[Role]

    @property
    def url(self) -> str:
        return re.sub(r"\{[^}]+\}", NOTHING, self.path)


def _calls(dependant: Dependant) -> list[object]:
    found: list[object] = [dependant.call]
    for sub in dependant.dependencies:
        found.extend(_calls(sub))
    return found


def protected_routes(app: FastAPI) -> tuple[list[Protected], list[tuple[str, str]]]:
    """Routes with their admitted roles, and /api/ routes neither protected nor public."""
    found: list[Protected] = []
    unguarded: list[tuple[str, str]] = []
    # Included routers are resolved lazily: ask FastAPI for each route as it is served (its
    # full path, the router's dependencies included), as the OpenAPI generator does.
    for route in routing.iter_route_contexts(app.routes):
        if not isinstance(route.original_route, APIRoute):
            continue
        calls = _calls(route.dependant)
        requirements = [c for c in calls if isinstance(c, RoleRequirement)]
        for method in sorted(route.methods - {"HEAD", "OPTIONS"}):
            if requirements:
                # Several requirements on one route: the caller must meet all of them.
                roles = frozenset(Role).intersection(*(r.roles for r in requirements))
                found.append(Protected(method, route.path, roles))
            elif (
                route.path.startswith("/api/")
                and (method, route.path) not in PUBLIC
                and display_access not in calls
            ):
                unguarded.append((method, route.path))
    return found, unguarded


async def test_every_protected_route_refuses_the_roles_it_does_not_name(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        routes, unguarded = protected_routes(create_app(wf.service))
        assert not unguarded, f"API routes with neither a role requirement nor public: {unguarded}"
        paths = {(r.method, r.path) for r in routes}
        # The walk finds routes (the ones below exist whatever else is added).
        assert {
            ("GET", "/api/v1/auth/me"),
            ("GET", "/api/v1/users"),
            ("POST", "/api/v1/users"),
            ("POST", "/api/v1/device-tokens/{token_id}/revoke"),
            ("GET", "/api/v1/audit-log"),
        } <= paths
        assert next(r for r in routes if r.path == "/api/v1/audit-log").roles == {
            Role.AUDITOR,
            Role.SUPERVISOR,
            Role.ADMIN,
        }

        callers = {role: await headers_for(wf, role) for role in Role}
        _, device_token = await users.create_device_token(
            wf.service.engine, name="pit 1", actor="test", at_us=wf.service.clock.now_us()
        )
        device = {"Authorization": f"Bearer {device_token}"}
        leaks: list[str] = []
        for route in routes:
            where = f"{route.method} {route.path}"
            anonymous = await http.request(route.method, route.url)
            if anonymous.status_code != 401:
                leaks.append(f"{where} without a token: {anonymous.status_code}")
            elif anonymous.headers.get("www-authenticate") != "Bearer":
                leaks.append(f"{where} without a token: no WWW-Authenticate: Bearer")
            for role, headers in callers.items():
                answer = await http.request(route.method, route.url, headers=headers)
                if role in route.roles:
                    if answer.status_code in (401, 403):
                        leaks.append(f"{where} refused {role} it admits: {answer.text}")
                    continue
                if answer.status_code != 403:
                    leaks.append(f"{where} let {role} through: {answer.status_code}")
                    continue
                detail = answer.json()["detail"]
                if f"you are signed in as {role.value}" not in detail or not all(
                    r.value in detail for r in route.roles
                ):
                    leaks.append(f"{where}: 403 without naming the roles needed: {detail}")
            if Role.DISPLAY not in route.roles:
                answer = await http.request(route.method, route.url, headers=device)
                if answer.status_code != 403:
                    leaks.append(f"{where} let a display's token through: {answer.status_code}")
        assert not leaks, "\n".join(leaks)
