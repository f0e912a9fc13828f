"""The edges of the ``progressive`` command: ``--version``; a database that is not there (never
created by a command that only reads or changes an installation), not migrated, or not
reachable; a link that does not exist; amounts and rates typed without their unit."""

from __future__ import annotations

import importlib.metadata
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from app.cli import main
from controller.storage.store import LedgerStore
from tests.app.helpers import progressive
from tests.app.test_cli import play
from tests.app.test_run_config import floor_file
from tests.conftest import KEY, process_env
from tests.controller.storage.helpers import make_link

FLOOR = "floor.toml"
# Every command that reads or changes an existing installation, with what it needs besides.
NEEDS_A_DATABASE: dict[str, tuple[str, ...]] = {
    "ledger verify": ("ledger", "verify"),
    "ledger verify --link": ("ledger", "verify", "--link", "stud"),
    "export": ("export", "hits", "--since", "2026-01-01", "--until", "2026-02-01"),
    "export --link": (
        "export", "history", "--since", "2026-01-01", "--until", "2026-02-01", "--link", "stud",
    ),
    "links list": ("links", "list"),
    "links show": ("links", "show", "stud"),
    "links create": (
        "links", "create", "--location", "pit 1", "--id", "stud", "--game", "caribbean_stud", "--rate", "80%",
        "--reset", "$500", "--table", "T1",
    ),
    "links recover": ("links", "recover", "stud", "--reason", "r", "--by", "a", "--approved-by", "b"),
    "users add": ("users", "add", "ann", "--role", "admin", "--password-stdin"),
    "users list": ("users", "list"),
    "users disable": ("users", "disable", "ann"),
    "display-tokens create": ("display-tokens", "create", "pit"),
    "retention run": ("retention", "run"),
    "run": ("run", "--config", FLOOR, "--no-checkpoints", "--port", "0"),
}  # fmt: skip


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder holding only a floor file, with no ``PROGRESSIVE_`` setting but
    the manifest of the tree under test (``tests.conftest.process_env``)."""
    for name in set(os.environ) - set(process_env()):
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    (tmp_path / FLOOR).write_text(floor_file())
    return tmp_path


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def invoke(*args: str, env: Mapping[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=dict(env or {}), input="Secret-pass-2026\n")


def one_line_refusal(result: Result, code: int) -> str:
    """The refusal's text, once it is known to be one line, with ``code``, and no error
    escaping the command (which a user would see as a traceback)."""
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert result.exit_code == code, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def test_version_prints_the_installed_package_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0, result.output
    assert result.output == f"progressive {importlib.metadata.version('progressive')}\n"


async def test_version_as_a_process() -> None:
    code, out, err = await progressive("--version", key=False)
    assert (code, out, err) == (0, f"progressive {importlib.metadata.version('progressive')}\n", "")


@pytest.mark.parametrize("command", sorted(NEEDS_A_DATABASE))
@pytest.mark.parametrize("source", ["default", "environment", "option"])
def test_no_database_is_refused_and_none_is_created(
    command: str, source: str, folder: Path
) -> None:
    args, env = NEEDS_A_DATABASE[command], {}
    if source == "environment":
        env = {"PROGRESSIVE_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'floor.db'}"}
    elif source == "option":
        args = (*args, "--database-url", "sqlite+aiosqlite:///floor.db")
    line = one_line_refusal(invoke(*args, env=env), 2)
    expected = {
        "default": "no database at progressive.db (the default, PROGRESSIVE_DATABASE_URL not "
        "set): set PROGRESSIVE_DATABASE_URL to an existing database",
        "environment": f"no database at {folder / 'floor.db'} (PROGRESSIVE_DATABASE_URL): "
        "set PROGRESSIVE_DATABASE_URL to an existing database",
        "option": "no database at floor.db (--database-url): give --database-url an existing "
        "database",
    }[source]
    assert expected in line, line
    assert '(or run "progressive db upgrade" to create one)' in line
    # Nothing made: no database file, no journal, no ledger key.
    assert files_in(folder) == [FLOOR]


async def test_no_database_as_a_process_prints_no_traceback(tmp_path: Path) -> None:
    for args in (NEEDS_A_DATABASE["ledger verify"], NEEDS_A_DATABASE["export"]):
        code, out, err = await progressive(*args, cwd=tmp_path)
        assert code == 2 and out == "", (code, out, err)
        assert err.startswith("Error: no database at progressive.db") and err.count("\n") == 1
    assert files_in(tmp_path) == []


def test_db_upgrade_still_creates_the_database(folder: Path) -> None:
    result = invoke("db", "upgrade")
    assert result.exit_code == 0, result.output
    assert (folder / "progressive.db").exists() and (folder / "progressive-ledger.key").exists()
    listed = invoke("links", "list")  # with the ledger key db upgrade made beside it
    assert listed.exit_code == 0 and "no links yet" in listed.output, listed.output


@pytest.mark.parametrize("command", sorted(NEEDS_A_DATABASE))
def test_a_database_not_migrated_is_one_line(command: str, folder: Path) -> None:
    with sqlite3.connect(folder / "old.db") as conn:
        conn.execute("CREATE TABLE something_else (a INTEGER)")
    env = {
        "PROGRESSIVE_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'old.db'}",
        "PROGRESSIVE_LEDGER_KEY": KEY.hex(),
    }
    line = one_line_refusal(invoke(*NEEDS_A_DATABASE[command], env=env), 1)
    assert "the database schema is at nothing" in line
    assert "run `progressive db upgrade` first" in line


@pytest.mark.parametrize("command", [*sorted(NEEDS_A_DATABASE), "web"])
def test_an_unreachable_postgresql_is_one_line_naming_the_setting(
    command: str, folder: Path
) -> None:
    args = ("web", "--port", "0") if command == "web" else NEEDS_A_DATABASE[command]
    env = {
        # Port 1: nothing listens there, the connection is refused at once.
        "PROGRESSIVE_DATABASE_URL": "postgresql+asyncpg://floor:s3cret@127.0.0.1:1/test",
        "PROGRESSIVE_LEDGER_KEY": KEY.hex(),
    }
    line = one_line_refusal(invoke(*args, env=env), 1)
    assert line.startswith(
        "Error: cannot open the database at postgresql+asyncpg://floor:***@127.0.0.1:1/test "
        "(PROGRESSIVE_DATABASE_URL): "
    ), line
    assert "s3cret" not in line
    assert files_in(folder) == [FLOOR]


def test_a_file_that_is_not_a_database_is_one_line(folder: Path) -> None:
    (folder / "notes.db").write_text("not a database at all, just notes\n" * 100)
    result = invoke(
        "links", "list", "--database-url", "sqlite+aiosqlite:///notes.db",
        env={"PROGRESSIVE_LEDGER_KEY": KEY.hex()},
    )  # fmt: skip
    line = one_line_refusal(result, 1)
    assert "cannot open the database at sqlite+aiosqlite:///notes.db (--database-url)" in line


# ------------------------------------------------------------------------------ unknown links

UNKNOWN_LINK = {
    "ledger verify": ("ledger", "verify", "--link", "nosuch"),
    "ledger verify, one known": ("ledger", "verify", "--link", "stud", "--link", "nosuch"),
    "export hits": ("export", "hits", "--since", "2026-01-01", "--until", "2027-01-01",
                    "--link", "nosuch"),
    "export history": ("export", "history", "--since", "2026-01-01", "--until", "2027-01-01",
                       "--link", "nosuch", "--format", "json"),
    "links show": ("links", "show", "nosuch"),
    "links recover": ("links", "recover", "nosuch", "--reason", "r", "--by", "a",
                      "--approved-by", "b"),
}  # fmt: skip


async def test_an_unknown_link_is_refused_never_reported_as_tampering(
    store: LedgerStore, db_url: str
) -> None:
    await play(store)
    for case, args in UNKNOWN_LINK.items():
        code, out, err = await progressive(*args, db_url=db_url)
        assert code == 2, (case, code, out, err)
        assert err == "Error: no link 'nosuch' (links: stud)\n", (case, err)
        assert out == "", (case, out)
    # The same commands on the link that is there.
    code, out, err = await progressive("ledger", "verify", "--link", "stud", db_url=db_url)
    assert code == 0 and "link stud: 16 entries whole" in out, err
    code, out, err = await progressive(*UNKNOWN_LINK["export hits"][:-1], "stud", db_url=db_url)
    assert code == 0 and "ROYAL_FLUSH" in out and "1 hits rows" in err, err


async def test_several_unknown_links_are_all_named(store: LedgerStore, db_url: str) -> None:
    for link_id in ("a", "b"):
        await make_link(store, link_id, (f"{link_id}1",))
    code, _, err = await progressive(
        "ledger", "verify", "--link", "a", "--link", "typo", "--link", "other", db_url=db_url
    )
    assert code == 2 and err == "Error: no link 'typo'; no link 'other' (links: a, b)\n", err


# ------------------------------------------------------------------------------------- units

BARE = {
    "a rate without its %": (
        ("--rate", "82.5"),
        "Invalid value for '--rate': '82.5' needs its unit: write a rate like 82.5%",
    ),
    "a reset without its $": (
        ("--reset", "10000"),
        "Invalid value for '--reset': '10000' needs its unit: write an amount like $1,234.56",
    ),
    "a denomination without its $": (
        ("--table", "T1:5"),
        "table T1: denomination '5' needs its unit: write an amount like $1,234.56",
    ),
}


@pytest.mark.parametrize("case", sorted(BARE))
async def test_links_create_wants_every_amount_and_rate_with_its_unit(
    case: str, db_url: str
) -> None:
    given = dict([("--rate", "82.5%"), ("--reset", "$10,000"), ("--table", "T1:$5")])
    (option, value), message = BARE[case]
    given[option] = value
    argv = [part for pair in given.items() for part in pair]
    code, out, err = await progressive(
        "links",
        "create",
        "--location",
        "pit 1",
        "--id",
        "stud",
        "--game",
        "caribbean_stud",
        *argv,
        db_url=db_url,
    )
    assert code == 2 and message in err, (code, out, err)
    code, out, err = await progressive("links", "list", db_url=db_url)
    assert code == 0 and out == "" and "no links yet" in err, (out, err)


async def test_links_create_takes_the_written_forms(db_url: str) -> None:
    code, out, err = await progressive(
        "links", "create", "--location", "pit 1", "--id", "stud", "--game", "caribbean_stud", "--rate", "82.5%",
        "--reset", "$10000", "--table", "T1:$5", "--table", "T2:$1.00", db_url=db_url,
    )  # fmt: skip
    assert code == 0, err
    assert "link stud: Caribbean Stud Poker, rate 82.5%, reset $10,000.00, 2 table(s)" in out


# ------------------------------------------------------------------------------ links list


async def test_links_list_shows_which_links_await_approval(store: LedgerStore, db_url: str) -> None:
    """A link filed with the commission and not yet approved (68 IAC 10-1-3(c)(4)) says so in
    its STATE column; a link that may play says approved."""
    await make_link(store, "old", ("o1",))
    code, _, err = await progressive(
        "links", "create", "--location", "pit 1", "--id", "new", "--game", "caribbean_stud", "--rate", "80%",
        "--reset", "$500", "--table", "n1", db_url=db_url,
    )  # fmt: skip
    assert code == 0, err
    code, out, err = await progressive("links", "list", db_url=db_url)
    assert code == 0, err
    header, *lines = out.splitlines()
    assert header == (
        "LINK\tSTATE\tGAMES\tMETER\tRATE\tRESET\tTABLES\tKIND\tAPPROVED CHANGES\tLAWFUL"
    )
    rows = {line.split("\t")[0]: dict(zip(header.split("\t"), line.split("\t"), strict=True))
            for line in lines}  # fmt: skip
    assert rows["new"]["STATE"] == "AWAITING APPROVAL"
    assert rows["old"]["STATE"] == "approved"
    assert (rows["new"]["METER"], rows["new"]["RATE"], rows["new"]["RESET"]) == (
        "$500.00", "80%", "$500.00",
    )  # fmt: skip
    code, out, _ = await progressive("links", "show", "new", db_url=db_url)
    assert out.startswith("link new (new): classic; AWAITING APPROVAL")
