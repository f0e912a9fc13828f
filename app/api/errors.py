"""The OpenAPI document tells the truth about errors.

The application answers every error as ``{"detail": ...}`` and invalid input as
``{"detail": {"message", "problems": [{"where", "problem"}]}}`` (see ``app.web``), not in
FastAPI's default shape; a body that cannot be read at all is a 400; a route guarded by
``require(...)`` answers 401 without a valid token and 403 to the wrong role; a public read
path answers 401 when the installation requires display tokens. This writes those answers
into every operation's documented responses, so clients and schema checks see what is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI, routing
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from app.security.authentication import RoleRequirement, display_access
from controller.rules.jurisdictions import INDIANA

ERROR = {
    "title": "Error",
    "type": "object",
    "required": ["detail"],
    "properties": {
        "detail": {"title": "Detail", "description": "what went wrong, for a person"},
        "clause": {
            "title": "Clause",
            "type": "string",
            "description": "a rule's refusal: the clause that refuses it",
        },
        "jurisdiction": {
            "title": "Jurisdiction",
            "type": "string",
            "description": "a rule's refusal: the jurisdiction whose clause it is",
            "examples": [INDIANA.title],
        },
    },
}
INVALID_REQUEST = {
    "title": "HTTPValidationError",
    "description": "the request is not valid: where, and what is wrong there",
    "type": "object",
    "required": ["detail"],
    "properties": {
        "detail": {
            "type": "object",
            "required": ["message", "problems"],
            "properties": {
                "message": {"type": "string"},
                "problems": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["where", "problem"],
                        "properties": {
                            "where": {"type": "string", "examples": ["body.password"]},
                            "problem": {"type": "string"},
                        },
                    },
                },
            },
        }
    },
}
ERROR_REF = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}


def _calls(dependant: Dependant) -> Iterator[Any]:
    yield dependant.call
    for sub in dependant.dependencies:
        yield from _calls(sub)


def _guards(app: FastAPI) -> dict[tuple[str, str], str]:
    """(path, method) -> "role" or "display" for every guarded operation."""
    found: dict[tuple[str, str], str] = {}
    for route in routing.iter_route_contexts(app.routes):
        if not isinstance(route.original_route, APIRoute) or route.path is None:
            continue
        calls = list(_calls(route.dependant))
        kind = (
            "role"
            if any(isinstance(c, RoleRequirement) for c in calls)
            else "display"
            if display_access in calls
            else None
        )
        if kind is not None:
            for method in route.methods or ():
                found[(route.path, method.lower())] = kind
    return found


def _document(app: FastAPI, schema: dict[str, Any]) -> None:
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = ERROR
    schemas["HTTPValidationError"] = INVALID_REQUEST
    schemas.pop("ValidationError", None)
    guards = _guards(app)
    for path, operations in schema.get("paths", {}).items():
        for method, op in operations.items():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            responses = op["responses"]
            if "requestBody" in op:
                responses.setdefault(
                    "400", {"description": "the body could not be read", "content": ERROR_REF}
                )
            guard = guards.get((path, method))
            if guard is not None:
                responses.setdefault(
                    "401",
                    {
                        "description": "no valid token"
                        if guard == "role"
                        else "the installation requires a display token and none valid was sent",
                        "content": ERROR_REF,
                    },
                )
            if guard == "role":
                responses.setdefault(
                    "403",
                    {"description": "the caller's role may not do this", "content": ERROR_REF},
                )


def document_errors(app: FastAPI) -> None:
    """Make ``app.openapi()`` describe the application's own error answers."""
    generate: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        schema = generate()  # cached by FastAPI until the routes change; patching is idempotent
        _document(app, schema)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
