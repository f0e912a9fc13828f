"""Every protected route refuses every role it does not name, and everyone without a token;
every route of the application (API, pages, WebSocket, static files) is classified.

The routes are found by walking the application's own routes for ``require(...)``
dependencies, so a route added later is checked without editing this test, and a route that
is neither behind a role nor named below as open or display-only fails it.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import websockets
from fastapi import FastAPI, routing
from fastapi.routing import APIWebSocketRoute
from starlette.routing import BaseRoute, Mount, Route

from app.api.pages import stated
from app.security.authentication import RoleRequirement, display_access, display_reader
from app.web import STATIC, create_app
from controller.access import device_tokens
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import settings_in, web_floor
from tests.app.routes import calls_of, protected_routes

# Every route outside the roles, and why it may be.
PAGE = "a page of static HTML with no data; its script signs in and calls the API"
OPEN: dict[tuple[str, str], str] = {
    ("POST", "/api/v1/auth/token"): "signing in",
    ("POST", "/api/v1/auth/password"): "one's own password, given the current one or a code",
    ("GET", "/healthz"): "liveness probe: says only that the process answers",
    ("GET", "/readyz"): "readiness probe: link and database health, no amounts",
    ("GET", "/metrics"): "Prometheus scrape: totals contributed and awarded, no person data",
    ("GET", "/openapi.json"): "the API's description",
    ("GET", "/docs"): "the API's description",
    ("GET", "/docs/oauth2-redirect"): "the API's description",
    ("GET", "/redoc"): "the API's description",
    ("GET", "/favicon.ico"): "the pages' icon, a fixed picture",
    ("GET", "/"): PAGE,
    ("GET", "/tech"): PAGE,
    ("GET", "/dealer"): PAGE,
    ("GET", "/dealer/{table_id}"): PAGE,
    ("GET", "/audit"): PAGE,
    ("GET", "/surveillance"): PAGE,
    ("GET", "/commission"): PAGE,
    ("GET", "/admin"): PAGE,
    ("GET", "/supervisor"): PAGE,
    ("MOUNT", "/static"): "the pages' scripts and styles",
}
# Current amounts, for displays: public unless the installation requires display tokens.
# Routes with the ``display_access`` dependency (or ``display_reader``, which checks it and
# shows signed-in staff more) are found; these check it in their body.
DISPLAY_IN_BODY = {("GET", "/display/{link_id}"), ("WEBSOCKET", "/ws/links/{link_id}")}


def _kinds(route: BaseRoute) -> list[str]:
    if isinstance(route, APIWebSocketRoute):
        return ["WEBSOCKET"]
    if isinstance(route, Mount):
        return ["MOUNT"]
    if isinstance(route, Route):
        return sorted((route.methods or set()) - {"HEAD", "OPTIONS"})
    raise AssertionError(f"a route of an unknown kind: {route!r}")


def classify(app: FastAPI) -> dict[tuple[str, str], str]:
    """Every route as (method, path) -> "role", "display" or "open"; raises for the rest."""
    found: dict[tuple[str, str], str] = {}
    unclassified: list[tuple[str, str]] = []
    for route in routing.iter_route_contexts(app.routes):
        original = getattr(route, "original_route", route)
        calls = calls_of(route.dependant) if hasattr(route, "dependant") else []
        for kind in _kinds(original):
            key = (kind, route.path)
            if any(isinstance(c, RoleRequirement) for c in calls):
                found[key] = "role"
            elif display_access in calls or display_reader in calls or key in DISPLAY_IN_BODY:
                found[key] = "display"
            elif key in OPEN:
                found[key] = "open"
            else:
                unclassified.append(key)
    assert not unclassified, f"routes neither behind a role nor named open: {unclassified}"
    return found


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
        # Who deals where: a dealer signs themself in and out, a supervisor or admin whom they
        # name; who dealt when is for those who check.
        roles_of = {(r.method, r.path): r.roles for r in routes}
        signers = {Role.DEALER, Role.SUPERVISOR, Role.ADMIN}
        assert roles_of[("POST", "/api/v1/tables/{table_id}/dealer")] == signers
        assert roles_of[("DELETE", "/api/v1/tables/{table_id}/dealer")] == signers
        assert roles_of[("GET", "/api/v1/tables/{table_id}/dealers")] == {
            Role.AUDITOR,
            Role.SUPERVISOR,
            Role.ADMIN,
        }

        callers = {role: await headers_for(wf, role) for role in Role}
        _, device_token = await device_tokens.create_device_token(
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


async def test_every_route_is_classified_and_display_routes_honour_the_setting(
    tmp_path: Path,
) -> None:
    settings = settings_in(tmp_path).model_copy(update={"display_requires_token": True})
    async with (
        web_floor(tmp_path, settings=settings) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        routes = classify(create_app(wf.service))
        stale = (set(OPEN) | DISPLAY_IN_BODY) - set(routes)
        assert not stale, f"named here but not routes of the application: {stale}"
        display = sorted(key for key, how in routes.items() if how == "display")
        assert ("GET", "/api/v1/links") in display and ("WEBSOCKET", "/ws/links/{link_id}") in (
            display
        )

        _, device_token = await device_tokens.create_device_token(
            wf.service.engine, name="pit 1", actor="test", at_us=wf.service.clock.now_us()
        )
        ws_base = wf.base_url.replace("http://", "ws://", 1)
        for kind, path in display:
            url = path.replace("{link_id}", "stud")
            if kind == "WEBSOCKET":
                async with websockets.connect(ws_base + url) as ws:
                    with pytest.raises(websockets.ConnectionClosed) as closed:
                        await ws.recv()
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401, path
                async with websockets.connect(f"{ws_base}{url}?token={device_token}") as ws:
                    assert '"snapshot"' in await ws.recv()
                continue
            assert (await http.request(kind, url)).status_code == 401, path
            allowed = await http.request(kind, url, params={"token": device_token})
            assert allowed.status_code == 200, f"{path}: {allowed.status_code}"

        # An open page is the static file as it is, with the law it is served under (the
        # installation's, naming no link): no data of the floor in it.
        said = wf.service.statement().unnamed()
        for (_, path), why in OPEN.items():
            if why == PAGE:
                answer = await http.get(path.replace("{table_id}", "stud-1"))
                name = (path.split("/")[1] or "home") + ".html"
                page = (STATIC / name).read_text(encoding="utf-8")
                assert answer.text == stated(page, said), path
