"""What someone holding only the database learns: meters and wins, never a mystery trigger.

The armed trigger of a mystery level is the amount at which it will hit; its queued draws are
the next ones. Both are stored encrypted under a key derived from the ledger key, which is
kept outside the database (``controller.storage.draw_cipher``). The SQLite file and its side
files are readable by their owner only.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select, update

from controller.storage.database import make_engine, upgrade
from controller.storage.draw_cipher import (
    HIDDEN,
    DrawsUnreadable,
    has_plain_draws,
    hide_draws,
    open_draws,
)
from controller.storage.errors import StoreError
from controller.storage.models import LinkRow
from controller.storage.store import LedgerStore
from tests.conftest import KEY
from tests.controller.storage.helpers import Poller, runtime
from tests.controller.storage.test_levels_store import make_links, play

OTHER_KEY = bytes(range(1, 33))


async def _stored_levels(store: LedgerStore, link_id: str = "pool") -> str:
    async with store.engine.connect() as conn:
        text = await conn.scalar(select(LinkRow.levels).where(LinkRow.link_id == link_id))
    assert text is not None
    return str(text)


async def test_the_row_holds_no_trigger_a_reader_can_use(store: LedgerStore) -> None:
    await make_links(store)
    rt = await runtime(store)
    await play(rt, Poller())
    mini = rt.memory.states["pool"].levels[3]
    assert mini.armed is not None and len(mini.draws) > 0
    text = await _stored_levels(store)
    levels = json.loads(text)
    # Meters and wins stay readable; the trigger, the draws and their salts do not.
    assert levels[3]["wins"] == mini.wins and levels[3]["meter_units"] == mini.meter_units
    assert "armed" not in levels[3] and "draws" not in levels[3] and HIDDEN in levels[3]
    assert not has_plain_draws(text)
    for d in (mini.armed, *mini.draws):
        assert d.salt not in text
    # Only the key opens it, to exactly what the controller holds.
    opened = json.loads(open_draws(KEY, "pool", text) or "null")
    assert opened[3]["armed"] == [mini.armed.trigger_cents, mini.armed.salt]
    assert opened[3]["draws"] == [[d.trigger_cents, d.salt] for d in mini.draws]
    with pytest.raises(DrawsUnreadable):
        open_draws(OTHER_KEY, "pool", text)


async def test_a_new_process_resumes_the_same_draws(store: LedgerStore) -> None:
    await make_links(store)
    rt = await runtime(store)
    await play(rt, Poller())
    again = await runtime(LedgerStore(store.engine, KEY))
    assert again.memory.inoperable == {}
    assert again.memory.states["pool"].levels == rt.memory.states["pool"].levels


async def test_a_sealed_part_moved_to_another_level_does_not_open(store: LedgerStore) -> None:
    await make_links(store)
    rt = await runtime(store)
    await play(rt, Poller())
    levels = json.loads(await _stored_levels(store))
    levels[0][HIDDEN] = levels[3].pop(HIDDEN)  # the Mini's draws put on the Grand
    moved = json.dumps(levels)
    with pytest.raises(DrawsUnreadable):
        open_draws(KEY, "pool", moved)
    async with store.engine.begin() as conn:
        await conn.execute(update(LinkRow).where(LinkRow.link_id == "pool").values(levels=moved))
    with pytest.raises(StoreError, match="mystery draws do not open"):
        await LedgerStore(store.engine, KEY).load_link("pool")


async def test_a_row_from_before_is_encrypted_at_start_and_still_whole(
    store: LedgerStore,
) -> None:
    await make_links(store)
    rt = await runtime(store)
    await play(rt, Poller())
    plain = open_draws(KEY, "pool", await _stored_levels(store))
    assert plain is not None and has_plain_draws(plain)
    async with store.engine.begin() as conn:  # as every row was written before encryption
        await conn.execute(update(LinkRow).where(LinkRow.link_id == "pool").values(levels=plain))
    # Read as it is (the seal covers the triggers, not their text) ...
    before = LedgerStore(store.engine, KEY)
    assert (await before.load_link("pool")).levels == rt.memory.states["pool"].levels
    # ... and written encrypted by the next store that starts with the key.
    starting = LedgerStore(store.engine, KEY)
    await starting.check_key()
    text = await _stored_levels(store)
    assert not has_plain_draws(text) and HIDDEN in text
    again = await runtime(LedgerStore(store.engine, KEY))
    assert again.memory.inoperable == {}
    assert again.memory.states["pool"].levels == rt.memory.states["pool"].levels


def test_every_write_uses_a_fresh_nonce() -> None:
    plain = json.dumps([{"meter_units": 1, "armed": [5571, "ab"], "draws": [[5355, "cd"]]}])
    first, second = hide_draws(KEY, "l", plain), hide_draws(KEY, "l", plain)
    assert first != second and "5571" not in (first or "") and "5355" not in (first or "")
    assert open_draws(KEY, "l", first) == open_draws(KEY, "l", second)
    with pytest.raises(DrawsUnreadable):
        open_draws(KEY, "other-link", first)


# ------------------------------------------------------------------------- the SQLite file


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _files_beside(folder: Path, name: str) -> list[Path]:
    return [p for p in folder.iterdir() if p.name != name]


async def test_a_new_sqlite_database_and_its_side_files_are_private(tmp_path: Path) -> None:
    path = tmp_path / "floor.db"
    engine = make_engine(f"sqlite+aiosqlite:///{path}")
    await upgrade(engine)
    async with engine.connect() as conn:  # open: the write-ahead log and index exist
        await conn.exec_driver_sql("SELECT 1")
        sides = _files_beside(tmp_path, "floor.db")
        assert {p.name for p in sides} >= {"floor.db-wal", "floor.db-shm"}
        assert {p.name: _mode(p) for p in [path, *sides]} == {p.name: 0o600 for p in [path, *sides]}
    await engine.dispose()


async def test_an_existing_readable_database_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "floor.db"
    engine = make_engine(f"sqlite+aiosqlite:///{path}")
    await upgrade(engine)
    await engine.dispose()
    os.chmod(path, 0o644)
    engine = make_engine(f"sqlite+aiosqlite:///{path}")
    async with engine.connect() as conn:
        await conn.exec_driver_sql("SELECT 1")
    await engine.dispose()
    assert _mode(path) == 0o600


def test_db_upgrade_creates_a_private_database(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
        "PROGRESSIVE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'p.db'}",
    }
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "db", "upgrade"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    files = [p for p in tmp_path.iterdir() if p.name.startswith("p.db")]
    assert files and all(_mode(p) == 0o600 for p in files), {p.name: _mode(p) for p in files}
