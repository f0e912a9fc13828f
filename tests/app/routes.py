"""The application's routes as its own dependencies declare them: who each one admits.

Walked from FastAPI's routes as they are served, so a route added later is found without
editing a list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fastapi import FastAPI, routing
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from app.security.authentication import RoleRequirement, display_access, display_reader
from controller.roles import Role

# What anyone may call: signing in, and choosing one's own password with the current one (or
# a one-time code). Current amounts are public unless the installation says otherwise, so
# those routes carry ``display_access`` instead of a role.
PUBLIC = {("POST", "/api/v1/auth/token"), ("POST", "/api/v1/auth/password")}
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


def calls_of(dependant: Dependant) -> list[object]:
    found: list[object] = [dependant.call]
    for sub in dependant.dependencies:
        found.extend(calls_of(sub))
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
        calls = calls_of(route.dependant)
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
                and display_reader not in calls
            ):
                unguarded.append((method, route.path))
    return found, unguarded
