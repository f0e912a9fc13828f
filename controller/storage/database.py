"""Engines and migrations for both supported databases.

SQLite (the embedded default) runs with foreign keys on, WAL and a busy timeout; PostgreSQL
through asyncpg. Everything above this module is the same on both.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from alembic import command

ROOT = Path(__file__).resolve().parents[2]


def make_engine(url: str, **kwargs: Any) -> AsyncEngine:
    # A database error names its statement, never its parameters: those are password hashes,
    # code and token digests, which a logged traceback must not carry.
    kwargs.setdefault("hide_parameters", True)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_async_engine(url, **kwargs)

        @event.listens_for(engine.sync_engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=10000")
            if parsed.database not in (None, "", ":memory:"):
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA synchronous=FULL")
            cur.close()

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
    """``sqlite`` or ``postgresql``: the kind of database a URL names."""
    return make_url(url).get_backend_name()


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
    cfg = Config(str(ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(ROOT / "alembic"))
    cfg.attributes["configure_logger"] = False
    return cfg


def _upgrade(connection: Connection, revision: str) -> None:
    cfg = alembic_config()
    cfg.attributes["connection"] = connection
    command.upgrade(cfg, revision)


def _downgrade(connection: Connection, revision: str) -> None:
    cfg = alembic_config()
    cfg.attributes["connection"] = connection
    command.downgrade(cfg, revision)


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Run the migrations to ``revision`` on ``engine``, in the caller's event loop."""
    async with engine.begin() as conn:
        await conn.run_sync(_upgrade, revision)


async def downgrade(engine: AsyncEngine, revision: str) -> None:
    async with engine.begin() as conn:
        await conn.run_sync(_downgrade, revision)


class SchemaNotCurrent(RuntimeError):
    """The database is not migrated to the revision this code needs."""


async def check_schema(engine: AsyncEngine) -> None:
    """Raise SchemaNotCurrent unless the database is at the newest migration."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    async with engine.connect() as conn:
        current = await conn.run_sync(
            lambda c: MigrationContext.configure(c).get_current_revision()
        )
    if current != head:
        raise SchemaNotCurrent(
            f"the database schema is at {current or 'nothing'}, this controller needs {head}: "
            "run `progressive db upgrade` first"
        )
