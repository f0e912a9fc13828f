"""Schemathesis against the live application's OpenAPI: no server error, answers as documented.

The real ``schemathesis run`` command fuzzes every operation of ``/openapi.json`` served by a
whole floor, signed in as each role in turn (so every operation reaches its own logic for the
roles it names, and its refusal for the others) and without a token. A 5xx, an undocumented status, or a body or header that does not match
the documented schema fails the test with schemathesis' own report.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.web import create_app
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import WebFloor, web_floor
from tests.app.routes import protected_routes

CHECKS = ",".join([
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
])  # fmt: skip
SEED = "20260101"


async def schemathesis_run(
    url: str, folder: Path, *extra: str, phases: str = "examples,coverage,fuzzing"
) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "schemathesis.cli",
        "run",
        url,
        "--checks",
        CHECKS,
        "--phases",
        phases,
        "--workers",
        "1",
        "--seed",
        SEED,
        "--request-timeout",
        "20",
        *extra,
        cwd=folder,  # its example database and any config stay out of the source tree
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(errors="replace")


def operations(served: dict[str, Any]) -> set[str]:
    """Every operation the served description names, as schemathesis labels them."""
    return {
        f"{method.upper()} {path}"
        for path, item in served["paths"].items()
        for method in item
        if method in {"get", "put", "post", "delete", "patch"}
    }


def reached_by(wf: WebFloor, served: set[str], role: Role) -> tuple[set[str], set[str]]:
    """The operations ``role`` may reach (its own and everyone's), and the ones it is refused."""
    routes, _ = protected_routes(create_app(wf.service))
    refused = {f"{r.method} {r.path}" for r in routes if role not in r.roles}
    return served - refused, served & refused


def named(names: set[str]) -> list[str]:
    return [arg for name in sorted(names) for arg in ("--include-name", name)]


@pytest.mark.parametrize(
    "role", [None, *Role, "refused"], ids=lambda r: "anonymous" if r is None else str(r)
)
async def test_no_server_error_and_answers_as_documented(
    tmp_path: Path, role: Role | str | None
) -> None:
    """Every role against every operation it may reach, fuzzed; without a token, and as a
    role refused it, every operation once more: none gets a 5xx or an undocumented answer.

    A role's refusals are the same dependency's answer wherever it stands, so one role
    refused everything it may not reach checks each refusal is documented;
    ``test_roles.py`` checks every route refuses every role it does not name."""
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        schema = f"{wf.base_url}/openapi.json"
        served = operations((await http.get("/openapi.json")).json())
        work = tmp_path / "schemathesis"
        work.mkdir()
        if role is None:
            # Without a token every guarded operation stops at the door: a few cases suffice.
            code, report = await schemathesis_run(
                schema, work, "--max-examples", "2", phases="examples,fuzzing"
            )
        elif role == "refused":
            # The role that may reach least, against everything it may not.
            least = min(Role, key=lambda r: len(reached_by(wf, served, r)[0]))
            who = await headers_for(wf, least)
            code, report = await schemathesis_run(
                schema,
                work,
                *named(reached_by(wf, served, least)[1]),
                "--max-examples",
                "1",
                "-H",
                f"Authorization: {who['Authorization']}",
                phases="examples,fuzzing",
            )
        else:
            assert isinstance(role, Role)
            who = await headers_for(wf, role, "root" if role is Role.ADMIN else None)
            code, report = await schemathesis_run(
                schema,
                work,
                *named(reached_by(wf, served, role)[0]),
                "--max-examples",
                "5" if role is Role.ADMIN else "3",
                "-H",
                f"Authorization: {who['Authorization']}",
            )
        assert code == 0, f"as {role or 'anonymous'}:\n{report}"
