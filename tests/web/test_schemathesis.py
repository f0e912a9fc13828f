"""Schemathesis against the live application's OpenAPI: no server error, answers as documented.

The real ``schemathesis run`` command fuzzes every operation of ``/openapi.json`` served by a
whole floor, once signed in as an admin (so the guarded operations reach their own logic) and
once without a token. A 5xx, an undocumented status, or a body or header that does not match
the documented schema fails the test with schemathesis' own report.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from app.security import Role
from tests.web.auth import headers_for
from tests.web.floor import web_floor

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


async def test_no_server_error_and_answers_as_documented(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf:
        admin = await headers_for(wf, Role.ADMIN, "root")
        schema = f"{wf.base_url}/openapi.json"
        work = tmp_path / "schemathesis"
        work.mkdir()
        code, report = await schemathesis_run(
            schema, work, "--max-examples", "5", "-H", f"Authorization: {admin['Authorization']}"
        )
        assert code == 0, f"signed in as an admin:\n{report}"
        # Without a token every guarded operation stops at the door: a few cases each suffice.
        code, report = await schemathesis_run(
            schema, work, "--max-examples", "2", phases="examples,fuzzing"
        )
        assert code == 0, f"without a token:\n{report}"
