"""Under CI=true a missing PostgreSQL fails the PostgreSQL tests; elsewhere it skips them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
A_POSTGRES_TEST = (
    "tests/controller/storage/test_store.py::test_link_row_matches_its_chain_head[postgres]"
)


def run_without_postgres(ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PROGRESSIVE_TEST_PG"] = "postgresql://postgres@127.0.0.1:1/test"  # nothing listens there
    if ci:
        env["CI"] = "true"
    # One test: no workers of its own (-n 0), whatever the suite's addopts ask for.
    command = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-rs"]
    return subprocess.run(
        [*command, A_POSTGRES_TEST],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("ci", [True, False])
def test_missing_postgres(ci: bool) -> None:
    result = run_without_postgres(ci)
    out = result.stdout + result.stderr
    if ci:
        assert result.returncode != 0, out
        assert "1 error" in out or "1 failed" in out, out
        assert "under CI=true the PostgreSQL tests must run" in out
    else:
        assert result.returncode == 0, out
        assert "1 skipped" in out and "is not reachable" in out
