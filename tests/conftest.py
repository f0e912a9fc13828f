"""Shared fixtures: real databases (SQLite and PostgreSQL), the manifest of the software under
test, and a guard against leaks.

PostgreSQL tests run in a schema of their own that is dropped afterwards. Without a server they
are skipped on a developer's machine and fail under ``CI=true``.

Every controller checks its installed software against a manifest before it starts, as in
production: the session makes the manifest of this tree once (a few hundredths of a second)
and names it in ``PROGRESSIVE_MANIFEST_FILE``, for the controllers of this process and the
processes it starts (``process_env``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest

from controller.manifest import MANIFEST_NAME, make_manifest
from controller.runtime.clock import FixedClock
from controller.storage.database import make_engine, upgrade
from controller.storage.store import LedgerStore

PG_DSN = os.environ.get("PROGRESSIVE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
KEY = bytes(range(32))
T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z in microseconds


MANIFEST_SETTING = "PROGRESSIVE_MANIFEST_FILE"


@pytest.fixture(scope="session", autouse=True)
def tree_manifest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The manifest of the tree under test, made once per session, named by the setting."""
    path = tmp_path_factory.mktemp("manifest") / MANIFEST_NAME
    make_manifest(path)
    before = os.environ.get(MANIFEST_SETTING)
    os.environ[MANIFEST_SETTING] = str(path)
    yield path
    if before is None:
        os.environ.pop(MANIFEST_SETTING, None)
    else:
        os.environ[MANIFEST_SETTING] = before


def process_env() -> dict[str, str]:
    """The environment of a process a test starts: the test's, less every ``PROGRESSIVE_``
    setting but the manifest of the tree the session made."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PROGRESSIVE_") or k == MANIFEST_SETTING
    }


def _pg_url() -> str:
    return PG_DSN.replace("postgresql://", "postgresql+asyncpg://", 1)


async def _pg_available() -> str | None:
    try:
        conn = await asyncpg.connect(PG_DSN, timeout=5)
    except (OSError, asyncpg.PostgresError) as exc:
        return f"{type(exc).__name__}: {exc}"
    await conn.close()
    return None


def need_postgres(problem: str | None) -> None:
    if problem is None:
        return
    message = f"PostgreSQL at {PG_DSN} is not reachable ({problem})"
    if IN_CI:
        pytest.fail(message + "; under CI=true the PostgreSQL tests must run", pytrace=False)
    pytest.skip(message)


@pytest.fixture(params=["sqlite", "postgres"])
def db_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def db_url(db_kind: str, tmp_path: Path) -> AsyncIterator[str]:
    """An empty, migrated database of each kind, as a SQLAlchemy URL."""
    if db_kind == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'progressive.db'}"
        engine = make_engine(url)
        await upgrade(engine)
        await engine.dispose()
        yield url
        return
    need_postgres(await _pg_available())
    async with fresh_schema("t") as url:
        yield url


@contextlib.asynccontextmanager
async def fresh_schema(prefix: str) -> AsyncIterator[str]:
    """A migrated, empty schema of the test database, as a SQLAlchemy URL; dropped after."""
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(PG_DSN)
    await admin.execute(f'CREATE SCHEMA "{schema}"')
    url = f"{_pg_url()}?search_path={schema}"
    try:
        engine = make_engine(url)
        await upgrade(engine)
        await engine.dispose()
        yield url
    finally:
        await admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
        await admin.close()


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[LedgerStore]:
    engine = make_engine(db_url)
    s = LedgerStore(engine, KEY)
    await s.check_key()
    yield s
    await engine.dispose()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


# ------------------------------------------------------------------------------------ leaks

LEAK_GRACE_S = 2.0


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    """A daemon that leaks threads dies slowly on a casino floor: fail the test that does."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + LEAK_GRACE_S
    while True:
        leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        if not leaked or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert not leaked, f"test leaked threads: {[t.name for t in leaked]}"


@pytest.fixture
async def no_leaked_tasks() -> AsyncIterator[None]:
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    before = {t for t in asyncio.all_tasks(loop) if t is not me}
    yield
    mine = {me, asyncio.current_task()}  # pytest-asyncio runs setup and teardown as tasks
    deadline = loop.time() + LEAK_GRACE_S
    while True:
        leaked = [
            t for t in asyncio.all_tasks(loop) if t not in mine and t not in before and not t.done()
        ]
        if not leaked or loop.time() > deadline:
            break
        await asyncio.sleep(0.02)
    assert not leaked, f"test leaked tasks: {[t.get_coro() for t in leaked]}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fn = getattr(item, "obj", None)
        if fn is not None and asyncio.iscoroutinefunction(fn):
            item.fixturenames.insert(0, "no_leaked_tasks")  # type: ignore[attr-defined]
