"""What a database error means above storage: a database that cannot be opened, a text it
cannot keep; the callers (the web's answers, the commands' messages) never name the driver's
errors themselves."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.exc import DBAPIError

from controller.storage.database import connect_once, make_engine
from controller.storage.errors import (
    DATABASE_ERRORS,
    StorageUnavailable,
    unavailable,
    unstorable_text,
)


class _Refused(Exception):
    def __init__(self, message: str, sqlstate: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


def _db_error(orig: BaseException) -> DBAPIError:
    return DBAPIError("INSERT INTO t VALUES (?)", None, orig)


def test_a_nul_refused_by_the_database_is_unstorable_text() -> None:
    nul = _db_error(_Refused("invalid byte sequence for encoding UTF8: 0x00", "22021"))
    assert isinstance(nul, DATABASE_ERRORS)
    assert unstorable_text(nul)
    # The driver's own error wrapped once more (asyncpg through SQLAlchemy's adapter).
    wrapped = Exception("adapted")
    wrapped.__cause__ = _Refused("0x00", "22021")
    assert unstorable_text(_db_error(wrapped))
    assert not unstorable_text(_db_error(_Refused("duplicate key", "23505")))
    assert not unstorable_text(ValueError("22021"))


def test_a_failure_to_connect_says_why_in_one_line() -> None:
    found = unavailable(_db_error(OSError("connection refused\nmore detail")))
    assert isinstance(found, StorageUnavailable) and str(found) == "connection refused"
    found = unavailable(ConnectionRefusedError())
    assert found is not None and str(found) == "ConnectionRefusedError"
    assert unavailable(ValueError("a fault")) is None


async def test_a_file_that_is_no_database_cannot_be_opened(tmp_path: Path) -> None:
    (tmp_path / "notes.db").write_text("not a database, " * 100)
    engine = make_engine(f"sqlite+aiosqlite:///{tmp_path / 'notes.db'}")
    try:
        with pytest.raises(StorageUnavailable, match="not a database"):
            await connect_once(engine)
    finally:
        await engine.dispose()
    engine = make_engine(f"sqlite+aiosqlite:///{tmp_path / 'new.db'}")
    try:
        await connect_once(engine)
    finally:
        await engine.dispose()
