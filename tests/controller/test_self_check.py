"""The manifest of the installed software and the rule that judges a check of it: every file
the controller runs, with its SHA-256, made once at install; a file edited, removed or added
fails the check, naming the first and how many; bytecode Python writes is not the release.

The install checked is a copy of the tree under test, changed as a tampered one would be."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from controller.manifest import (
    ROOT,
    installed_files,
    make_manifest,
    read_manifest,
    verify_install,
)
from controller.rules import RuleViolation
from controller.rules.software import (
    DIFFERS,
    EXTRA,
    MISSING,
    SOFTWARE_CLAUSE,
    check_digest,
    check_interval,
    check_recoverable,
    check_software,
    held_reason,
    software_fault,
)
from controller.settings import Settings, settings_refused
from tests.software import copy_install


def test_the_rule_names_the_first_file_and_how_many() -> None:
    assert software_fault(manifest="m.json", problem=None, mismatches=()) is None
    one = software_fault(manifest="m.json", problem=None, mismatches=[("app/web.py", DIFFERS)])
    assert one is not None
    assert "manifest m.json: app/web.py differs from the manifest (1 file in all)" in one
    three = software_fault(
        manifest="m.json",
        problem=None,
        mismatches=[("a.py", MISSING), ("b.py", EXTRA), ("c.py", DIFFERS)],
    )
    assert (
        three is not None and "a.py is listed in the manifest but missing (3 files in all)" in three
    )
    unread = software_fault(manifest="m.json", problem="no manifest at m.json", mismatches=())
    assert unread == "the software cannot be checked: no manifest at m.json"

    check_software(None)
    with pytest.raises(RuleViolation) as refused:
        check_software(one)
    assert refused.value.clause == SOFTWARE_CLAUSE
    assert "app/web.py differs" in str(refused.value)
    assert "progressive self-check --make" in str(refused.value)

    held = held_reason(one, "2026-01-01 00:00:00 UTC")
    assert "failed at 2026-01-01 00:00:00 UTC" in held and "two people" in held
    check_recoverable(None)
    with pytest.raises(RuleViolation, match="no link is recovered while the software fails"):
        check_recoverable(one)


def test_checked_at_least_every_24_hours_with_a_digest_strong_enough() -> None:
    # NJ 13:69O-1.5(c): at least every 24 hours.
    assert check_interval(24 * 3600.0) == 24 * 3600.0
    assert check_interval(0.5) == 0.5
    for seconds in (24 * 3600.0 + 1, 0.0, -1.0):
        with pytest.raises(RuleViolation, match="at least every 86400 s"):
            check_interval(seconds)
    assert Settings().self_check_interval_s == 24 * 3600.0
    with pytest.raises(ValidationError) as refused:
        Settings(self_check_interval_s=90_000)
    assert settings_refused(refused.value).startswith("PROGRESSIVE_SELF_CHECK_INTERVAL_S")

    # Mississippi 13-8-2.9: an error rate under 1 in 10^38; a CRC of 32 bits is not enough.
    check_digest("sha256", 256)
    with pytest.raises(RuleViolation, match="once in 10\\^38"):
        check_digest("crc32", 32)


def test_an_edited_missing_or_added_file_fails_the_check(tmp_path: Path) -> None:
    root = copy_install(tmp_path / "install")
    manifest = tmp_path / "progressive-manifest.json"
    made = make_manifest(manifest, root)
    assert sorted(made.files) == installed_files(root)
    assert {"alembic.ini", "app/static/admin.html", "link_adapters/profiles/reference-v1.json"} <= (
        set(made.files)
    )
    assert any(p.startswith("alembic/versions/") for p in made.files)
    web = root / "app" / "web.py"
    assert made.files["app/web.py"] == hashlib.sha256(web.read_bytes()).hexdigest()
    check = verify_install(manifest, root)
    assert check.passed and check.files == len(made.files) and check.mismatches == ()

    # Bytecode Python writes as it imports is not part of the release.
    (root / "app" / "__pycache__").mkdir(exist_ok=True)
    (root / "app" / "__pycache__" / "web.cpython-311.pyc").write_bytes(b"\x00")
    assert verify_install(manifest, root).passed

    original = web.read_bytes()
    web.write_bytes(original + b"# one more line\n")
    check = verify_install(manifest, root)
    assert check.mismatches == (("app/web.py", DIFFERS),)
    assert check.fault is not None and "app/web.py differs from the manifest" in check.fault
    web.write_bytes(original)
    assert verify_install(manifest, root).passed

    (root / "controller" / "rules" / "software.py").unlink()
    (root / "link_adapters" / "added.py").write_text("print('not released')\n")
    (root / "app" / "static" / "admin.js").write_text("// changed\n")
    check = verify_install(manifest, root)
    assert check.mismatches == (
        ("app/static/admin.js", DIFFERS),
        ("controller/rules/software.py", MISSING),
        ("link_adapters/added.py", EXTRA),
    )
    assert check.fault is not None and "app/static/admin.js" in check.fault
    assert "(3 files in all)" in check.fault


def test_a_release_makes_the_same_manifest_wherever_it_is_installed(tmp_path: Path) -> None:
    one = make_manifest(tmp_path / "one.json", copy_install(tmp_path / "a"))
    two = make_manifest(tmp_path / "two.json", copy_install(tmp_path / "b"))
    assert one.sha256 == two.sha256
    assert (tmp_path / "one.json").read_bytes() == (tmp_path / "two.json").read_bytes()
    assert read_manifest(tmp_path / "one.json").sha256 == one.sha256


def test_a_manifest_missing_or_unreadable_fails_naming_it(tmp_path: Path) -> None:
    absent = tmp_path / "none.json"
    check = verify_install(absent)
    assert not check.passed and check.files == 0
    assert check.fault is not None and f"no manifest of the installed software at {absent}" in (
        check.fault
    )
    bad = tmp_path / "bad.json"
    for text, said in (
        ("not json", "is not JSON"),
        ('{"format": 1, "digest": "sha256", "files": {}}', "lists no files"),
        ('{"format": 1, "digest": "md5", "files": {"a": "x"}}', "is kept in md5, not sha256"),
        ('{"format": 1, "digest": "nothing", "files": {"a": "x"}}', "unknown digest"),
        ('{"format": 2, "files": {}}', "not a manifest of format 1"),
    ):
        bad.write_text(text)
        check = verify_install(bad)
        assert check.fault is not None and said in check.fault, (text, check.fault)
        assert str(bad) in check.fault


def test_the_whole_install_is_checked_in_a_few_hundredths_of_a_second(tmp_path: Path) -> None:
    manifest = tmp_path / "progressive-manifest.json"
    started = time.perf_counter()
    made = make_manifest(manifest)
    making = time.perf_counter() - started
    check = verify_install(manifest)
    size = sum((ROOT / p).stat().st_size for p in made.files)
    print(
        f"\nmanifest of {len(made.files)} files ({size / 1e6:.1f} MB) made in {making:.3f} s; "
        f"checked in {check.seconds:.3f} s"
    )
    assert check.passed and check.files == len(made.files) > 250
    assert json.loads(manifest.read_text())["files"] == made.files
    assert check.seconds < 2.0
