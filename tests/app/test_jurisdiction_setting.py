"""The installation's jurisdiction at start: one the controller does not know is refused before
anything is made or served, naming the ones it knows; ``progressive demo --jurisdiction``
likewise."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from controller.rules.jurisdictions import INDIANA, NEW_JERSEY
from controller.settings import Settings
from tests.app.helpers import progressive
from tests.app.test_run_config import floor_file

# The jurisdictions the product ships; a test process may register the test-only permissive law
# beside them, which a command started as its own process never knows.
KNOWN = ", ".join(sorted((INDIANA.key, NEW_JERSEY.key)))
UNKNOWN = f"unknown jurisdiction 'ohio'; the controller knows {KNOWN}"


def test_the_setting_takes_a_known_jurisdiction_and_refuses_any_other() -> None:
    assert KNOWN == "indiana, new_jersey"
    # In this process the permissive law may have been registered too, after the shipped ones.
    assert Settings(jurisdiction="New-Jersey").jurisdiction == "new_jersey"
    with pytest.raises(ValueError, match=f"PROGRESSIVE_JURISDICTION: {UNKNOWN}"):
        Settings(jurisdiction="ohio")


async def test_an_unknown_jurisdiction_stops_run_before_it_serves(tmp_path: Path) -> None:
    config = tmp_path / "floor.toml"
    config.write_text(floor_file())
    db = f"sqlite+aiosqlite:///{tmp_path / 'p.db'}"
    async with asyncio.timeout(60):  # a command that started serving would not come back
        code, _, err = await progressive(
            "run", "--config", str(config), "--no-checkpoints", "--port", "0",
            db_url=db, cwd=tmp_path, env={"PROGRESSIVE_JURISDICTION": "ohio"},
        )  # fmt: skip
    assert code == 1, err
    assert err.strip().splitlines() == [
        f"Error: settings refused: PROGRESSIVE_JURISDICTION: {UNKNOWN}"
    ], err
    assert not (tmp_path / "p.db").exists()


async def test_the_demo_refuses_an_unknown_jurisdiction_before_anything_is_made(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "demo"
    async with asyncio.timeout(60):
        code, _, err = await progressive(
            "demo", "--port", "0", "--folder", str(folder), "--jurisdiction", "ohio",
            cwd=tmp_path, key=False,
        )  # fmt: skip
    assert code == 2, err
    assert f"Invalid value for '--jurisdiction': {UNKNOWN}" in err, err
    async with asyncio.timeout(60):
        code, _, err = await progressive(
            "demo", "--port", "0", "--folder", str(folder),
            cwd=tmp_path, key=False, env={"PROGRESSIVE_JURISDICTION": "ohio"},
        )  # fmt: skip
    assert code == 1, err
    assert f"Error: settings refused: PROGRESSIVE_JURISDICTION: {UNKNOWN}" in err, err
    assert os.listdir(tmp_path) == []
