"""Engines and migrations for both supported databases.

SQLite (the embedded default) runs with foreign keys on, WAL and a busy timeout; PostgreSQL
through asyncpg. Everything above this module is the same on both.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import event, inspect, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from controller.storage.errors import unavailable

if TYPE_CHECKING:
    from alembic.config import Config

ROOT = Path(__file__).resolve().parents[2]

# The newest migration in alembic/versions: the revision a database must be at for this code
# (``check_schema``), read without loading the migrations (a command that only asks the
# database something starts the faster). A test holds it to the migrations' own head.
SCHEMA_HEAD = "0015"

log = logging.getLogger(__name__)

# SQLite's own files: the database, its write-ahead log and its shared-memory index. Each may
# hold meters, account hashes and the encrypted draws: readable by the controller's own user
# only.
_SIDE_FILES = ("", "-wal", "-shm", "-journal")
_PRIVATE = 0o600


def _private_file(path: Path) -> None:
    """Create ``path`` readable and writable by its owner only (an empty file is an empty
    SQLite database), or take group and others' bits off one that exists, with its side
    files. SQLite creates the log and index with the database's own mode."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _PRIVATE)
    except FileExistsError:
        pass
    else:
        os.close(fd)
    for suffix in _SIDE_FILES:
        side = Path(f"{path}{suffix}")
        try:
            mode = stat.S_IMODE(side.stat().st_mode)
        except FileNotFoundError:
            continue
        if mode & 0o077:
            os.chmod(side, mode & 0o700)
            log.warning("%s was readable by others (mode %o): made private", side, mode)


def make_engine(url: str, **kwargs: Any) -> AsyncEngine:
    # A database error names its statement, never its parameters: those are password hashes,
    # code and token digests, which a logged traceback must not carry.
    kwargs.setdefault("hide_parameters", True)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_async_engine(url, **kwargs)
        path = sqlite_file(url)

        @event.listens_for(engine.sync_engine, "do_connect")
        def _sqlite_private(*_args: Any) -> None:
            if path is not None:
                _private_file(path)

        @event.listens_for(engine.sync_engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=10000")
            if parsed.database not in (None, "", ":memory:"):
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA synchronous=FULL")
            cur.close()
            if path is not None:
                _private_file(path)  # the log and index the WAL mode has just opened

        return engine
    # ``?search_path=schema`` puts the controller's tables in a schema of their own.
    search_path = parsed.query.get("search_path")
    if search_path:
        parsed = parsed.difference_update_query(["search_path"])
        connect_args = dict(kwargs.pop("connect_args", {}))
        connect_args.setdefault("server_settings", {})["search_path"] = str(search_path)
        kwargs["connect_args"] = connect_args
    kwargs.setdefault("pool_pre_ping", True)
    return create_async_engine(parsed, **kwargs)


def backend_of(url: str) -> str:
    """``sqlite`` or ``postgresql``: the kind of database a URL names (``ValueError``: the
    text is no database URL)."""
    try:
        return make_url(url).get_backend_name()
    except ArgumentError:
        raise ValueError("not a database URL") from None


def url_shown(url: str) -> str:
    """A URL as it may be printed: its password, if any, as ``***``."""
    return make_url(url).render_as_string(hide_password=True)


def sqlite_file(url: str) -> Path | None:
    """The file a SQLite URL names (connecting creates it when it is not there); None for
    any other database and for one in memory."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    name = parsed.database or ""
    if name.startswith("file:"):  # a URI filename (``?uri=true``): its path, without options
        if "mode=memory" in name or parsed.query.get("mode") == "memory":
            return None
        name = name[len("file:") :].split("?", 1)[0]
    if name in ("", ":memory:"):
        return None
    return Path(name)


@contextlib.asynccontextmanager
async def snapshot(engine: AsyncEngine, *, write: bool = False) -> AsyncIterator[AsyncConnection]:
    """A connection in one transaction whose reads all see the same commit while others go
    on committing (a link row and its tables' rows, a chain's head and its entries).

    PostgreSQL: REPEATABLE READ. SQLite's driver opens a transaction only before a write, so
    each SELECT would otherwise see the newest commit: the transaction is begun here, and
    with ``write`` begun IMMEDIATE, so a write after the reads cannot find its snapshot
    overtaken by another writer's commit. Committed when the block ends without an error.
    """
    async with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            await conn.execution_options(isolation_level="REPEATABLE READ")
            async with conn.begin():
                yield conn
            return
        await conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            yield conn
        except BaseException:
            await conn.rollback()
            raise
        await conn.commit()


def alembic_config() -> Config:
    # Alembic is loaded by what migrates, not by every command that opens the database.
    from alembic.config import Config

    cfg = Config(str(ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(ROOT / "alembic"))
    cfg.attributes["configure_logger"] = False
    return cfg


def _upgrade(connection: Connection, revision: str) -> None:
    cfg = alembic_config()
    cfg.attributes["connection"] = connection
    from alembic import command

    command.upgrade(cfg, revision)


def _downgrade(connection: Connection, revision: str) -> None:
    cfg = alembic_config()
    cfg.attributes["connection"] = connection
    from alembic import command

    command.downgrade(cfg, revision)


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Run the migrations to ``revision`` on ``engine``, in the caller's event loop."""
    async with engine.begin() as conn:
        await conn.run_sync(_upgrade, revision)


async def downgrade(engine: AsyncEngine, revision: str) -> None:
    async with engine.begin() as conn:
        await conn.run_sync(_downgrade, revision)


def _current_revision(connection: Connection) -> str | None:
    """The migration the database is at (alembic's version table), or None before any."""
    if not inspect(connection).has_table("alembic_version"):
        return None
    version = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    return None if version is None else str(version)


class SchemaNotCurrent(RuntimeError):
    """The database is not migrated to the revision this code needs."""


async def connect_once(engine: AsyncEngine) -> None:
    """One connection, at once, closed again: ``StorageUnavailable`` saying why when the
    database cannot be reached or opened, before anything else is asked of it."""
    try:
        async with engine.connect():
            pass
    except Exception as exc:
        found = unavailable(exc)
        if found is None:
            raise
        raise found from exc


async def check_schema(engine: AsyncEngine) -> None:
    """Raise SchemaNotCurrent unless the database is at the newest migration."""
    async with engine.connect() as conn:
        current = await conn.run_sync(_current_revision)
    if current != SCHEMA_HEAD:
        raise SchemaNotCurrent(
            f"the database schema is at {current or 'nothing'}, this controller needs "
            f"{SCHEMA_HEAD}: "
            "run `progressive db upgrade` first"
        )
