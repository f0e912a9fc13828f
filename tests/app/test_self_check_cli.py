"""``progressive self-check`` and ``progressive run`` against the manifest, as real processes
running a copy of the install that the test changes as a tampered one would be: the check's
exit status, each mismatch printed, the manifest made with ``--make``; and a controller that
refuses to start, naming the file, creating nothing."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from controller.manifest import MANIFEST_NAME, make_manifest
from controller.storage.database import make_engine, upgrade
from controller.storage.store import LedgerStore
from tests.app.helpers import progressive
from tests.conftest import KEY, process_env
from tests.integration.test_run_command import free_port
from tests.software import copy_install


def _env(root: Path, manifest: Path | None) -> dict[str, str]:
    """The copy's code runs (its own folder first on the path), with ``manifest`` named."""
    env = {"PYTHONPATH": str(root)}
    if manifest is not None:
        env["PROGRESSIVE_MANIFEST_FILE"] = str(manifest)
    return env


async def test_self_check_passes_and_fails_with_its_exit_status(tmp_path: Path) -> None:
    root = copy_install(tmp_path / "install")
    manifest = tmp_path / "release" / MANIFEST_NAME
    env = _env(root, manifest)

    code, out, err = await progressive("self-check", "--make", cwd=root, env=env, key=False)
    assert code == 0, err
    assert f"installed files written to {manifest}" in out
    code, out, err = await progressive("self-check", cwd=root, env=env, key=False)
    assert code == 0, out + err
    assert f"files match the manifest {manifest} (sha256 " in out
    assert "; checked in 0." in out

    (root / "app" / "web.py").write_text((root / "app" / "web.py").read_text() + "# tampered\n")
    (root / "controller" / "runtime" / "extra.py").write_text("import os\n")
    (root / "alembic" / "versions" / "0003_submissions.py").unlink()
    code, out, err = await progressive("self-check", cwd=root, env=env, key=False)
    assert code == 1
    assert out.splitlines() == [
        "missing  alembic/versions/0003_submissions.py",
        "differs  app/web.py",
        "extra    controller/runtime/extra.py",
    ]
    assert "software self-check FAILED: 3 of the installed files do not match" in err
    assert f"manifest {manifest}" in err

    # Without the setting, the manifest is the one next to the installed packages.
    code, out, err = await _unset("self-check", root=root)
    assert code == 1 and f"no manifest of the installed software at {root / MANIFEST_NAME}" in err
    code, out, err = await _unset("self-check", "--make", root=root)
    assert code == 0 and f"written to {root / MANIFEST_NAME}" in out


async def _unset(*args: str, root: Path) -> tuple[int, str, str]:
    """``progressive ARGS`` of the copy at ``root`` with no ``PROGRESSIVE_`` setting at all."""
    env = {k: v for k, v in process_env().items() if not k.startswith("PROGRESSIVE_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        *args,
        env=env | {"PYTHONPATH": str(root)},
        cwd=root,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_run_refuses_to_start_on_an_edited_file_naming_it(tmp_path: Path) -> None:
    root = copy_install(tmp_path / "install")
    manifest = tmp_path / MANIFEST_NAME
    make_manifest(manifest, root)
    db = tmp_path / "floor.db"
    db_url = f"sqlite+aiosqlite:///{db}"
    engine = make_engine(db_url)
    await upgrade(engine)
    await engine.dispose()
    (tmp_path / "floor.toml").write_text(f"""
[[bus]]
name = "gw"
kind = "tcp"
host = "127.0.0.1"
port = {free_port()}

[[link]]
id = "stud"
game = "caribbean_stud"
rate = "80%"
reset = "$500"
  [[link.table]]
  id = "CS-1"
  bus = "gw"
  unit = 1
  location = "pit 1"
""")
    run = ("run", "--config", str(tmp_path / "floor.toml"), "--no-checkpoints", "--port", "0")
    notice = {"PROGRESSIVE_DEMONSTRATION": "1"}

    poller = root / "controller" / "runtime" / "poller.py"
    poller.write_text(poller.read_text().replace("def ", "def  ", 1))
    code, _, err = await progressive(
        *run, db_url=db_url, cwd=tmp_path, env=_env(root, manifest) | notice
    )
    assert code != 0
    (said,) = [line for line in err.splitlines() if line.startswith("Error: ")]
    assert "controller/runtime/poller.py differs from the manifest (1 file in all)" in said
    assert str(manifest) in said
    # Refused before anything: the floor's link was not opened, nothing sealed.
    engine = make_engine(db_url)
    try:
        assert await LedgerStore(engine, KEY).link_ids() == []
    finally:
        await engine.dispose()

    manifest.unlink()
    code, _, err = await progressive(
        *run, db_url=db_url, cwd=tmp_path, env=_env(root, manifest) | notice
    )
    assert code != 0
    assert f"no manifest of the installed software at {manifest}" in err


async def test_links_recover_is_refused_while_the_install_fails_its_check(tmp_path: Path) -> None:
    # The command's own service checks the install it runs from before anything: no link is
    # recovered by software that fails its check (controller.rules.software).
    root = copy_install(tmp_path / "install")
    manifest = tmp_path / MANIFEST_NAME
    make_manifest(manifest, root)
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'floor.db'}"
    env = _env(root, manifest)
    create = ("links", "create", "--location", "pit 1", "--id", "stud", "--game",
              "caribbean_stud", "--rate", "75%", "--reset", "$0", "--table", "T1")  # fmt: skip
    for args in (("db", "upgrade"), create):
        code, _, err = await progressive(*args, db_url=db_url, cwd=tmp_path, key=False, env=env)
        assert code == 0, err
    recover = ("links", "recover", "stud", "--reason", "put back", "--by", "ann",
               "--approved-by", "bob")  # fmt: skip
    poller = root / "controller" / "runtime" / "poller.py"
    poller.write_text(poller.read_text().replace("def ", "def  ", 1))
    code, _, err = await progressive(*recover, db_url=db_url, cwd=tmp_path, key=False, env=env)
    assert code != 0
    (said,) = [line for line in err.splitlines() if line.startswith("Error: ")]
    assert "controller/runtime/poller.py differs from the manifest (1 file in all)" in said
