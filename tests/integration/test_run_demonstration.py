"""``progressive run`` in demonstration mode, as a real process: it says so loudly at start, its
new link is filed to play at once and marked in its history, and a command run afterwards with
the setting off still names the link as opened in demonstration mode."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from controller.settings import Settings
from tests.app.helpers import progressive
from tests.conftest import KEY, process_env
from tests.integration.test_run_command import _until_up, free_port, start, stop

RULE = "!" * 78


async def test_run_in_demonstration_mode_says_so_loudly_and_marks_its_links(
    tmp_path: Path,
) -> None:
    assert Settings().demonstration is False  # never on by default
    (tmp_path / "floor.toml").write_text(
        f'[[bus]]\nname = "gw"\nkind = "tcp"\nhost = "127.0.0.1"\nport = {free_port()}\n'
        '[[link]]\nid = "stud"\ngame = "caribbean_stud"\nrate = "80%"\nreset = "$500"\n'
        '  [[link.table]]\n  id = "CS-1"\n  bus = "gw"\n  unit = 1\n  location = "pit 1"\n'
    )
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'floor.db'}"
    code, _, err = await progressive("db", "upgrade", db_url=db_url, cwd=tmp_path)
    assert code == 0, err
    env = process_env() | {
        "PROGRESSIVE_DATABASE_URL": db_url,
        "PROGRESSIVE_LEDGER_KEY": KEY.hex(),
        "PROGRESSIVE_DEMONSTRATION": "true",
    }
    web = free_port()
    run = await start(
        "run", "--config", str(tmp_path / "floor.toml"), "--no-checkpoints", "--port", str(web),
        env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{web}") as http:
            await _until_up(http)
            (link,) = (await http.get("/api/v1/links")).json()
    finally:
        code, said = await asyncio.wait_for(stop(run), timeout=30)
    assert code == 0, said
    lines = said.splitlines()
    assert "jurisdiction: Indiana (68 IAC 10)" in lines
    at = lines.index(RULE)
    assert lines[at + 1].startswith("DEMONSTRATION MODE (PROGRESSIVE_DEMONSTRATION)")
    assert lines[at + 2] == RULE
    assert link["demonstration"] is True and link["installation_demonstration"] is True

    code, _, err = await progressive("links", "list", db_url=db_url, cwd=tmp_path)
    assert code == 0, err
    assert "DEMONSTRATION MODE: link stud was opened in demonstration mode" in err
    assert "DEMONSTRATION MODE (PROGRESSIVE_DEMONSTRATION)" not in err  # the setting is off now
