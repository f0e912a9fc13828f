"""Running the ``progressive`` command as a user would: a real process."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import httpx

from tests.command_forks import run_command
from tests.conftest import KEY, process_env


async def progressive(
    *args: str,
    db_url: str | None = None,
    cwd: Path | None = None,
    key: bool = True,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    module: str = "app.cli",
) -> tuple[int, str, str]:
    """Exit code, standard output and standard error of ``progressive ARGS``.

    The environment is the test's, less every ``PROGRESSIVE_`` setting but the session's
    manifest (``process_env``), plus ``db_url``, the test ledger key (unless ``key`` is
    false) and ``env``. ``module``: what runs the command (``tests.controller.permissive_cli``:
    in a process that knows the test jurisdiction).
    """
    full = process_env()
    if db_url is not None:
        full["PROGRESSIVE_DATABASE_URL"] = db_url
    if key:
        full["PROGRESSIVE_LEDGER_KEY"] = KEY.hex()
    full.update(env or {})
    return await run_command(module, args, env=full, cwd=cwd, stdin=stdin)


async def commission_agent(db_url: str, username: str, password: str) -> None:
    """A commission agent in the database, as two admins would have made it through the API
    (``progressive users add`` makes only the first admins)."""
    await checking_account(db_url, username, password, role="commission_agent")


async def checking_account(db_url: str, username: str, password: str, *, role: str) -> None:
    """An account of a role that checks others' work (technician, supervisor, commission
    agent) in the database, as two admins would have made it through the API."""
    import time

    from controller.access import users
    from controller.storage.database import make_engine

    engine = make_engine(db_url)
    try:
        await users.create_user(
            engine,
            username=username,
            role=role,
            password=password,
            actor="admin",
            at_us=time.time_ns() // 1000,
        )
    finally:
        await engine.dispose()


TABLE_WATCHER_PASSWORD = "a dealer's password for reading tables"


async def table_watcher(http: httpx.AsyncClient, db_url: str) -> dict[str, str]:
    """Signed-in headers of a dealer (made in the database the first time), for reading each
    table's state on a link: the public link view names no table's state."""
    import time

    from controller.access import roles, users
    from controller.roles import Role
    from controller.storage.database import make_engine

    engine = make_engine(db_url)
    try:
        await users.create_user(
            engine,
            username="table-watcher",
            role=Role.DEALER,
            password=TABLE_WATCHER_PASSWORD,
            actor="admin",
            at_us=time.time_ns() // 1000,
        )
    except roles.AlreadyExists:
        pass
    finally:
        await engine.dispose()
    answer = await http.post(
        "/api/v1/auth/token",
        data={"username": "table-watcher", "password": TABLE_WATCHER_PASSWORD},
    )
    answer.raise_for_status()
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}
