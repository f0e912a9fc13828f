"""The paths the command and the service share: one database session for every command, one
way to create a link and file it, and the typed reads behind the displays and the metrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli.common import database
from controller.core.games import Game
from controller.core.reducer import HitPolicy
from controller.paperwork.filing_desk import FilingDesk
from controller.runtime.new_links import create_and_file_link
from controller.settings import Settings
from controller.storage.database import SchemaNotCurrent
from controller.storage.hits import unreleased_hits
from controller.storage.link_names import link_names
from controller.storage.store import LedgerStore
from tests.conftest import T0
from tests.controller.storage.helpers import runtime, table


async def test_a_command_session_checks_the_schema_and_closes(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}")
    with pytest.raises(SchemaNotCurrent):
        async with database(settings, schema="check"):
            pytest.fail("an empty database is not current")
    async with database(settings, schema="upgrade") as engine:
        assert engine.dialect.name == "sqlite"
    async with database(settings, schema="check") as engine, engine.connect():
        pass


async def test_a_created_link_is_filed_and_named(store: LedgerStore) -> None:
    rt = await runtime(store)
    filed = await create_and_file_link(
        rt,
        FilingDesk(rt),
        link_id="stud",
        name="Main pit",
        game=Game.CARIBBEAN_STUD,
        rate_bp=8250,
        reset_cents=10_000_00,
        hit_policy=HitPolicy.SPLIT,
        tables=[table("t1"), table("t2")],
        at_us=T0,
        actor="test",
    )
    assert filed.submission_id.startswith("sub-")
    assert "stud" in rt.memory.states
    assert not rt.memory.is_live("stud", T0)  # filed, not yet approved
    names = await link_names(store.engine, "stud")
    assert names is not None
    assert names.name == "Main pit"
    assert set(names.tables) == {"t1", "t2"}
    assert await link_names(store.engine, "nope") is None
    assert await unreleased_hits(store.engine) == []
