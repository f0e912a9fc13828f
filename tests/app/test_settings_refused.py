"""Settings are checked whole when a serving command starts: a weak key or a setting that
cannot work stops ``progressive run`` (and ``progressive web``) before anything serves, with one
line naming the setting, rather than failing every sign-in once it serves."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.app.helpers import progressive
from tests.app.test_run_config import floor_file

# setting -> (value, what the one line must say)
REFUSED = {
    "a two-byte secret key": (
        {"PROGRESSIVE_SECRET_KEY": "00"},
        "PROGRESSIVE_SECRET_KEY must be at least 32 bytes (64 hex digits), not 1",
    ),
    "a secret key that is not hex": (
        {"PROGRESSIVE_SECRET_KEY": "correct horse battery staple"},
        "PROGRESSIVE_SECRET_KEY must be hexadecimal",
    ),
    "a short ledger key": (
        {"PROGRESSIVE_LEDGER_KEY": "0011"},
        "PROGRESSIVE_LEDGER_KEY must be at least 16 bytes (32 hex digits), not 2",
    ),
    "no database URL": (
        {"PROGRESSIVE_DATABASE_URL": "progressive.db"},
        "PROGRESSIVE_DATABASE_URL is not a database URL",
    ),
    "a database the controller does not keep records in": (
        {"PROGRESSIVE_DATABASE_URL": "mysql+aiomysql://host/db"},
        "PROGRESSIVE_DATABASE_URL: the controller keeps its records in SQLite or PostgreSQL",
    ),
    "an origin that is no origin": (
        {"PROGRESSIVE_ALLOWED_ORIGINS": "https://ok.example, displays"},
        "PROGRESSIVE_ALLOWED_ORIGINS: 'displays' is no web origin",
    ),
    "a checkpoint URL that is not http": (
        {"PROGRESSIVE_CHECKPOINT_URL": "ftp://archive.example/x"},
        "PROGRESSIVE_CHECKPOINT_URL: not an http(s) URL",
    ),
    "tokens that never expire": (
        {"PROGRESSIVE_TOKEN_MINUTES": "0"},
        "PROGRESSIVE_TOKEN_MINUTES: Input should be greater than or equal to 1",
    ),
    "a property name on two lines": (
        {"PROGRESSIVE_PROPERTY_NAME": "Blue River\nCasino"},
        "PROGRESSIVE_PROPERTY_NAME: one line of at most 200 characters",
    ),
}


async def _run(tmp_path: Path, env: dict[str, str]) -> tuple[int, str]:
    config = tmp_path / "floor.toml"
    config.write_text(floor_file())
    db = f"sqlite+aiosqlite:///{tmp_path / 'p.db'}"
    async with asyncio.timeout(60):  # a command that started serving would not come back
        code, _, err = await progressive(
            "run", "--config", str(config), "--no-checkpoints", "--port", "0",
            db_url=db, cwd=tmp_path, env=env,
        )  # fmt: skip
    return code, err


@pytest.mark.parametrize("case", list(REFUSED))
async def test_a_weak_or_invalid_setting_stops_run_before_it_serves(
    tmp_path: Path, case: str
) -> None:
    env, says = REFUSED[case]
    code, err = await _run(tmp_path, env)
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("Error: settings refused: "), err
    assert says in lines[0], err
    assert not (tmp_path / "p.db").exists()


async def test_a_short_key_in_the_secret_key_file_stops_run(tmp_path: Path) -> None:
    key_file = tmp_path / "secret.key"
    key_file.write_text("00\n")
    code, err = await _run(tmp_path, {"PROGRESSIVE_SECRET_KEY_FILE": str(key_file)})
    assert code != 0
    assert err.strip() == (
        f"Error: settings refused: the key in {key_file} must be at least 32 bytes "
        "(64 hex digits), not 1"
    ), err


# No setting lifts the notice periods (68 IAC 10-1-3(c)(1), 10-1-4(1)): the variable that once
# did stops every serving command, naming the lawful ways instead.
NOTICE_OVERRIDE = {"PROGRESSIVE_NOTICE_OVERRIDE": "letter ED-7"}
SERVING = {
    "run": ("run", "--config", "floor.toml", "--no-checkpoints", "--port", "0"),
    "web": ("web", "--port", "0"),
    "demo": ("demo", "--port", "0", "--folder", "demo"),
}


@pytest.mark.parametrize("command", list(SERVING))
async def test_the_notice_override_stops_run_web_and_demo(tmp_path: Path, command: str) -> None:
    (tmp_path / "floor.toml").write_text(floor_file())
    async with asyncio.timeout(60):
        code, _, err = await progressive(
            *SERVING[command], db_url=f"sqlite+aiosqlite:///{tmp_path / 'p.db'}", cwd=tmp_path,
            env=NOTICE_OVERRIDE,
        )  # fmt: skip
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("Error: settings refused: PROGRESSIVE_NOTICE_OVERRIDE is refused")
    assert "PROGRESSIVE_DEMONSTRATION=1" in lines[0] and "waiver" in lines[0], err
    assert not (tmp_path / "p.db").exists() and not (tmp_path / "demo").exists()
