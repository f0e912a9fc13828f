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
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx
import pytest
import pytest_asyncio
from argon2 import PasswordHasher

from controller.access import hashing
from controller.manifest import MANIFEST_NAME, make_manifest
from controller.runtime.clock import FixedClock
from controller.storage.database import make_engine, upgrade
from controller.storage.store import LedgerStore

PG_DSN = os.environ.get("PROGRESSIVE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
KEY = bytes(range(32))
T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z in microseconds


MANIFEST_SETTING = "PROGRESSIVE_MANIFEST_FILE"


# How long a test's HTTP client waits for an answer: httpx's 5 s is less than a floor takes to
# answer on a loaded two-core machine running four test processes, their browsers and their
# commands. A test is judged on what a request answers, never how fast (bench/ measures that).
HTTP_WAIT_S = 30.0


# An idle connection is let go before the server's keep-alive (uvicorn: 5 s, httpx's own
# default too) ends it: at the same 5 s a request sent on it as the server closes it is lost
# (ReadError), which a loaded machine, its retries waiting seconds, makes happen.
HTTP_IDLE_S = 1.0


def _patient_http_clients() -> None:
    for client in (httpx.AsyncClient, httpx.Client):
        defaults = client.__init__.__kwdefaults__
        if defaults is not None and "timeout" in defaults:
            defaults["timeout"] = httpx.Timeout(HTTP_WAIT_S)
        if defaults is not None and "limits" in defaults:
            defaults["limits"] = httpx.Limits(
                max_connections=100, max_keepalive_connections=20, keepalive_expiry=HTTP_IDLE_S
            )


def pytest_configure(config: pytest.Config) -> None:
    _patient_http_clients()
    """The suite starts hundreds of Python processes (commands, servers, simulators, the
    rulebook's runs, and the test processes themselves), each of which compiles the project
    again where bytecode is not kept (PYTHONDONTWRITEBYTECODE): it is kept, for the processes
    started from here on, under the temporary folder, never in the tree."""
    prefix = os.environ.setdefault(
        "PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "progressive-test-pycache")
    )
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix, sys.dont_write_bytecode = prefix, False


@pytest.fixture(scope="session", autouse=True)
def quick_password_hashes() -> Iterator[None]:
    """Argon2 at its least cost in the tests' own processes: every test that signs someone in
    would otherwise spend half a second of a processor per password on hashing alone. Hashes
    carry their parameters, so those made by the commands the tests start (at the real cost)
    verify here too; ``tests/controller/access/test_users.py`` holds the real cost."""
    real = hashing._hasher
    hashing._hasher = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    hashing._dummy_hash.cache_clear()
    yield
    hashing._hasher = real
    hashing._dummy_hash.cache_clear()


@contextlib.contextmanager
def named_manifest(folder: Path) -> Iterator[Path]:
    """The manifest of the tree under test, made in ``folder`` and named by the setting while
    the block runs: for the suite's session, and for the long runs of tests/reliability run
    as commands."""
    path = folder / MANIFEST_NAME
    make_manifest(path)
    before = os.environ.get(MANIFEST_SETTING)
    os.environ[MANIFEST_SETTING] = str(path)
    try:
        yield path
    finally:
        if before is None:
            os.environ.pop(MANIFEST_SETTING, None)
        else:
            os.environ[MANIFEST_SETTING] = before


@pytest.fixture(scope="session", autouse=True)
def tree_manifest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The manifest of the tree under test, made once per session, named by the setting."""
    with named_manifest(tmp_path_factory.mktemp("manifest")) as path:
        yield path


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
    async with empty_database(db_kind, tmp_path / "progressive.db") as url:
        yield url


@contextlib.asynccontextmanager
async def empty_database(kind: str, path: Path) -> AsyncIterator[str]:
    """An empty, migrated database of ``kind`` as a SQLAlchemy URL: SQLite's the file
    ``path``, PostgreSQL's a schema of its own, dropped after."""
    if kind == "sqlite":
        await _SQLITE.copy_to(path)
        yield f"sqlite+aiosqlite:///{path}"
        return
    need_postgres(await _pg_available())
    async with fresh_schema("t") as url:
        yield url


@contextlib.asynccontextmanager
async def fresh_schema(prefix: str) -> AsyncIterator[str]:
    """A migrated, empty schema of the test database, as a SQLAlchemy URL; dropped after."""
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(PG_DSN)
    try:
        await _POSTGRES.make(admin, schema)
        yield f"{_pg_url()}?search_path={schema}"
    finally:
        await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await admin.close()


@contextlib.asynccontextmanager
async def fresh_database(prefix: str) -> AsyncIterator[tuple[str, str]]:
    """A migrated, empty database of its own on the test server: its name and SQLAlchemy URL;
    dropped after. For a run that cuts every connection to its database and refuses new ones
    for a while, which a schema of the shared database cannot have done to it alone."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    url = urlsplit(_pg_url())
    admin = await asyncpg.connect(PG_DSN)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        try:
            own = urlunsplit(url._replace(path=f"/{name}"))
            await _migrate(own)
            yield name, own
        finally:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture
async def own_database() -> AsyncIterator[tuple[str, str]]:
    """A PostgreSQL database of the test's own (``fresh_database``): its name and URL."""
    need_postgres(await _pg_available())
    async with fresh_database("t") as made:
        yield made


async def _migrate(url: str) -> None:
    engine = make_engine(url)
    await upgrade(engine)
    await engine.dispose()


class _SqliteTemplate:
    """One database migrated per test process; a test's is a copy of its file (what the
    migrations would write again, byte for byte, in a fraction of the time)."""

    def __init__(self) -> None:
        self._file: Path | None = None

    async def copy_to(self, path: Path) -> None:
        if self._file is None:
            file = Path(tempfile.mkdtemp(prefix="progressive-template-")) / "progressive.db"
            await _migrate(f"sqlite+aiosqlite:///{file}")
            assert not file.with_name(file.name + "-wal").exists(), "its log is not folded in"
            self._file = file
        shutil.copy2(self._file, path)


_SQLITE = _SqliteTemplate()


class _PostgresTemplate:
    """One schema migrated per test process and dumped (``pg_dump``); a test's schema is that
    dump played again under its own name. Without ``pg_dump``, each schema is migrated."""

    def __init__(self) -> None:
        self._script: str | None = None
        self._name = ""

    async def make(self, admin: asyncpg.Connection, schema: str) -> None:
        if self._script is None and shutil.which("pg_dump") is not None:
            self._name = f"template_{uuid.uuid4().hex}"
            await admin.execute(f'CREATE SCHEMA "{self._name}"')
            try:
                await _migrate(f"{_pg_url()}?search_path={self._name}")
                dump = await asyncio.create_subprocess_exec(
                    "pg_dump", "--no-owner", "--no-privileges", "--inserts",
                    f"--schema={self._name}", PG_DSN,
                    stdout=asyncio.subprocess.PIPE,
                )  # fmt: skip
                out, _ = await dump.communicate()
                if dump.returncode == 0:
                    # What is psql's own (a backslash command) is not SQL; the rest is.
                    lines = out.decode().splitlines()
                    self._script = "\n".join(x for x in lines if not x.startswith("\\"))
            finally:
                await admin.execute(f'DROP SCHEMA "{self._name}" CASCADE')
        if self._script is None:
            await admin.execute(f'CREATE SCHEMA "{schema}"')
            await _migrate(f"{_pg_url()}?search_path={schema}")
            return
        await admin.execute(self._script.replace(self._name, schema))


_POSTGRES = _PostgresTemplate()


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


@contextlib.asynccontextmanager
async def _tasks_left_behind_fail() -> AsyncIterator[None]:
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


@pytest.fixture
async def no_leaked_tasks() -> AsyncIterator[None]:
    async with _tasks_left_behind_fail():
        yield


@pytest_asyncio.fixture(loop_scope="session")
async def no_leaked_session_tasks() -> AsyncIterator[None]:
    """The same check for a test on the process's shared loop (the page tests, which share
    one Chromium): a task it leaves fails it, not a test after it."""
    async with _tasks_left_behind_fail():
        yield


@pytest_asyncio.fixture(loop_scope="session")
async def own_thread_pool() -> AsyncIterator[None]:
    """A test on the shared loop has the loop's thread pool to itself, its threads joined at
    the test's end as the close of a loop of its own would join them: a thread the test
    leaves running is still the test's, and one idle in the pool is not counted against it."""
    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor()
    loop.set_default_executor(pool)
    yield
    # What runs between tests (a module's fixtures) has an idle pool of its own.
    loop.set_default_executor(ThreadPoolExecutor())
    joined = loop.create_future()

    def join() -> None:
        pool.shutdown(wait=True)
        loop.call_soon_threadsafe(joined.set_result, None)

    joiner = threading.Thread(target=join, name="join-test-pool")
    joiner.start()
    try:
        await joined
    finally:
        joiner.join()


def _loop_scope(item: pytest.Item) -> str:
    marker = item.get_closest_marker("asyncio")
    return str(marker.kwargs.get("loop_scope", "function")) if marker else "function"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fn = getattr(item, "obj", None)
        if fn is None or not asyncio.iscoroutinefunction(fn):
            continue
        names: list[str] = item.fixturenames  # type: ignore[attr-defined]
        # After the fixtures of the session and the module (the shared Chromium's driver is
        # theirs), before the test's own.
        at = names.index("no_leaked_threads") if "no_leaked_threads" in names else 0
        if _loop_scope(item) == "session":
            names.insert(at + 1, "own_thread_pool")
            names.insert(at, "no_leaked_session_tasks")
        else:
            names.insert(at, "no_leaked_tasks")
