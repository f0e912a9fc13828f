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

import pytest

from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import web_floor

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


@pytest.mark.parametrize("role", [None, *Role], ids=lambda r: "anonymous" if r is None else r)
async def test_no_server_error_and_answers_as_documented(tmp_path: Path, role: Role | None) -> None:
    """Every role (and no token) against every operation: each reaches the logic its role may
    reach and the refusals of the rest, and none gets a 5xx or an undocumented answer."""
    async with web_floor(tmp_path) as wf:
        schema = f"{wf.base_url}/openapi.json"
        work = tmp_path / "schemathesis"
        work.mkdir()
        if role is None:
            # Without a token every guarded operation stops at the door: a few cases suffice.
            code, report = await schemathesis_run(
                schema, work, "--max-examples", "2", phases="examples,fuzzing"
            )
        else:
            who = await headers_for(wf, role, "root" if role is Role.ADMIN else None)
            code, report = await schemathesis_run(
                schema,
                work,
                "--max-examples",
                "5" if role is Role.ADMIN else "3",
                "-H",
                f"Authorization: {who['Authorization']}",
            )
        assert code == 0, f"as {role or 'anonymous'}:\n{report}"
