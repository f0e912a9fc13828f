"""``progressive users`` and ``progressive display-tokens`` as an operator runs them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import main
from controller.access import device_tokens, duties, users
from controller.access.duties import RequestKind
from controller.roles import Role
from controller.storage import access_repo
from controller.storage.database import make_engine, upgrade
from tests.command_forks import run_command
from tests.conftest import T0, process_env

PASSWORD = "correct horse battery"


async def run(*args: str, db_url: str, stdin: str = "") -> tuple[int, str, str]:
    """``progressive ARGS`` in a real process, with ``stdin`` as its standard input."""
    env = process_env()
    env["PROGRESSIVE_DATABASE_URL"] = db_url
    return await run_command("app.cli", args, env=env, stdin=stdin)


async def test_the_first_admin_and_a_display_token(db_url: str) -> None:
    code, out, err = await run(
        "users", "add", "root", "--role", "admin", "--password-stdin", db_url=db_url,
        stdin=PASSWORD + "\n",
    )  # fmt: skip
    assert code == 0, err
    assert out.strip() == "user root created with the role admin"

    code, _, err = await run(
        "users", "add", "root", "--role", "auditor", "--password-stdin", db_url=db_url,
        stdin=PASSWORD + "\n",
    )  # fmt: skip
    assert code == 1 and "there is already a user 'root'" in err
    code, _, err = await run(
        "users", "add", "ada", "--role", "auditor", "--password-stdin", db_url=db_url,
        stdin="short\n",
    )  # fmt: skip
    assert code == 1 and "at least 10 characters" in err
    code, _, err = await run(
        "users", "add", "ada", "--role", "wizard", "--password-stdin", db_url=db_url
    )
    assert code == 2 and "wizard" in err
    code, _, err = await run(
        "users", "add", "Ada Lovelace", "--role", "auditor", "--password-stdin", db_url=db_url
    )
    assert code == 2 and "not a valid username" in err

    code, out, err = await run("users", "list", db_url=db_url)
    assert code == 0, err
    assert out.startswith("root\tadmin\tenabled\tcreated ")

    code, out, err = await run("display-tokens", "create", "pit 1 stud", db_url=db_url)
    assert code == 0, err
    token = out.strip()
    assert "shown this once" in err

    engine = make_engine(db_url)
    try:
        root = await users.authenticate(engine, "root", PASSWORD)
        assert root is not None and root.role is Role.ADMIN
        device = await device_tokens.verify_device_token(engine, token)
        assert device is not None and device.name == "pit 1 stud"
        actors = {e.actor for e in await users.audit_entries(engine)}
        assert all(a.startswith("cli") for a in actors), actors
    finally:
        await engine.dispose()

    # The only admin is not disabled (no second admin would be left to confirm anything).
    code, _, err = await run("users", "disable", "root", db_url=db_url)
    assert code == 1 and "last 2 enabled admins" in err, err
    code, _, err = await run(
        "users", "add", "ada", "--role", "auditor", "--password-stdin", db_url=db_url,
        stdin=PASSWORD + "\n",
    )  # fmt: skip
    assert code == 0, err
    code, out, err = await run("users", "disable", "ada", db_url=db_url)
    assert code == 0, err
    code, out, _ = await run("users", "list", db_url=db_url)
    assert out.startswith("ada\tauditor\tdisabled\t")
    code, _, err = await run("users", "disable", "ghost", db_url=db_url)
    assert code == 1 and "no user 'ghost'" in err


async def test_an_unmigrated_database_is_named_with_the_fix(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}"
    # No file at all: refused (exit 2) and none is made.
    code, _, err = await run("users", "list", db_url=url)
    assert code == 2 and "no database at" in err and "progressive db upgrade" in err, err
    assert not (tmp_path / "empty.db").exists()
    # A file with no schema: named with the fix.
    (tmp_path / "empty.db").touch()
    code, _, err = await run("users", "list", db_url=url)
    assert code == 1
    assert "progressive db upgrade" in err


def test_the_password_is_asked_twice_without_echo(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'progressive.db'}"

    async def migrate() -> None:
        engine = make_engine(url)
        await upgrade(engine)
        await engine.dispose()

    asyncio.run(migrate())
    runner = CliRunner()
    answers = f"{PASSWORD}\nsomething else\n{PASSWORD}\n{PASSWORD}\n"
    result = runner.invoke(
        main, ["users", "add", "dee.dealer", "--role", "dealer", "--database-url", url],
        input=answers,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert PASSWORD not in result.output  # hidden input is not echoed
    assert "do not match" in result.output.lower()
    assert "user dee.dealer created with the role dealer" in result.output

    async def check() -> bool:
        engine = make_engine(url)
        try:
            return await users.authenticate(engine, "dee.dealer", PASSWORD) is not None
        finally:
            await engine.dispose()

    assert asyncio.run(check())


async def test_the_command_line_makes_only_the_first_two_admins(db_url: str) -> None:
    async def add(name: str, role: str) -> tuple[int, str]:
        code, _, err = await run(
            "users", "add", name, "--role", role, "--password-stdin", db_url=db_url,
            stdin=PASSWORD + "\n",
        )  # fmt: skip
        return code, err

    # Roles that check others' work are two admins' to make, through the API.
    for role in ("technician", "supervisor", "commission_agent"):
        code, err = await add(f"x-{role.replace('_', '-')}", role)
        assert code == 1 and "made by two admins" in err, err
    assert await add("ann", "admin") == (0, "")
    assert await add("bob", "admin") == (0, "")
    code, err = await add("cid", "admin")
    assert code == 1 and "first two admins" in err, err
    code, err = await add("sam", "supervisor")
    assert code == 1 and "POST /api/v1/users" in err, err
    assert (await add("dee", "dealer"))[0] == 0

    # A third admin and an agent, made by two admins (ann asks, bob confirms).
    engine = make_engine(db_url)
    try:
        for name, role in (("cid", Role.ADMIN), ("cara", Role.COMMISSION_AGENT)):
            asked = await duties.file_request(
                engine, kind=RequestKind.CREATE, username=name, role=role, actor="ann", at_us=T0
            )
            await duties.confirm_request(engine, asked.request.request_id, actor="bob", at_us=T0)
    finally:
        await engine.dispose()

    # The attack: one admin's accounts, or the host, thin the admins out to reopen the way.
    assert (await run("users", "disable", "cid", db_url=db_url))[0] == 0
    code, _, err = await run("users", "disable", "bob", db_url=db_url)
    assert code == 1 and "last 2 enabled admins" in err, err
    engine = make_engine(db_url)
    try:
        demote = duties.file_request(
            engine, kind=RequestKind.ROLE, username="bob", role=Role.DEALER, actor="ann", at_us=T0
        )
        with pytest.raises(duties.DutyRefused, match="last 2 enabled admins"):
            await demote
        # However it came about (an older release, the database's own tools): two admins once
        # had, the command line makes no more.
        async with engine.begin() as conn:
            await access_repo.disable_user(conn, "bob")
    finally:
        await engine.dispose()
    code, err = await add("eve", "admin")
    assert code == 1 and "first two admins" in err, err

    # The way back: asked for on the host, with a reason, and confirmed by an enabled admin.
    code, _, err = await run("users", "recover", "fay", db_url=db_url)
    assert code == 2 and "--reason" in err
    code, out, err = await run(
        "users", "recover", "fay", "--reason", "bob left; two admins needed", db_url=db_url
    )
    assert code == 0, err
    request_id = out.split("request ", 1)[1].split()[0]
    first = out.rsplit(": ", 1)[1].strip()
    assert "POST /api/v1/account-requests/" in err
    engine = make_engine(db_url)
    try:
        assert await users.get_user(engine, "fay") is None  # nothing until confirmed
        assert await users.authenticate(engine, "fay", first, at_us=T0) is None
        with pytest.raises(duties.DutyRefused, match="confirmed by an enabled admin"):
            await duties.confirm_request(engine, request_id, actor="cid", at_us=T0)
        done = await duties.confirm_request(engine, request_id, actor="ann", at_us=T0)
        code_ = f"{first}{done.second_half}"
        fay = await users.change_own_password(
            engine, username="fay", current=code_, new="fay's own passphrase", at_us=T0
        )
        assert fay is not None and fay.role is Role.ADMIN
        log = await users.audit_entries(engine, limit=200)
    finally:
        await engine.dispose()
    asked = next(e for e in log if e.action == "account.request" and e.target == "user fay")
    assert asked.actor.startswith("cli") and "bob left" in (asked.after or "")
    made = next(e for e in log if e.action == "user.create" and e.target == "user fay")
    assert made.actor == "ann" and '"requested_by":"cli' in (made.after or "")
    assert [e.action for e in log].count(duties.BOOTSTRAP_CLOSED) == 1
