"""The manifest of the installed software: a SHA-256 digest of every file the controller runs.

It covers the install as it lies on disk beside this package (``ROOT``, the folder holding
``app``, ``controller``, ``link_adapters`` and the migrations in ``alembic``): every file of
those folders (the Python sources, the pages under ``app/static``, the register-map profiles,
the migrations) and ``alembic.ini``, by path relative to the install, never the bytecode
Python writes beside them (``__pycache__``). It is a JSON file, made when a release is
installed (``progressive self-check --make``) and read by every check of the running
controller (``controller.runtime.self_check``), which never writes it.

Each file is read once, in a stream, and hashed as it is read: a whole install (about 300
files, 5 MB) is checked in a few hundredths of a second. Whether the result passes, and
what a failure keeps from operating, is the rulebook's (``controller.rules.software``).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from controller.rules.software import (
    DIFFERS,
    DIGEST,
    EXTRA,
    MISSING,
    check_digest,
    software_fault,
)
from controller.rules.violation import RuleViolation

__all__ = [
    "MANIFEST_NAME",
    "PACKAGES",
    "ROOT",
    "Manifest",
    "ManifestError",
    "SoftwareCheck",
    "default_manifest",
    "digest_of",
    "installed_files",
    "make_manifest",
    "read_manifest",
    "verify_install",
]

# The install: the folder this package lies in (as ``controller.storage.database`` finds the
# migrations there).
ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "controller", "link_adapters", "alembic")
FILES = ("alembic.ini",)
# Written by Python as it imports, never part of a release.
SKIPPED_FOLDERS = frozenset({"__pycache__"})
MANIFEST_NAME = "progressive-manifest.json"
FORMAT = 1


class ManifestError(Exception):
    """The manifest is not there or cannot be read; the message names the file."""


def default_manifest() -> Path:
    """Where the manifest is kept unless ``PROGRESSIVE_MANIFEST_FILE`` says otherwise: next to
    the installed packages."""
    return ROOT / MANIFEST_NAME


def installed_files(root: Path = ROOT) -> list[str]:
    """Every file the manifest covers under ``root``, as sorted relative paths ("a/b.py")."""
    found = [name for name in FILES if (root / name).is_file()]
    for top in PACKAGES:
        base = root / top
        for folder, subfolders, names in os.walk(base):
            subfolders[:] = sorted(s for s in subfolders if s not in SKIPPED_FOLDERS)
            here = Path(folder).relative_to(root)
            found.extend((here / name).as_posix() for name in names)
    return sorted(found)


def digest_of(path: Path) -> str:
    """The file's SHA-256, read once in a stream (never whole in memory)."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, DIGEST).hexdigest()


@dataclass(frozen=True, slots=True)
class Manifest:
    path: Path
    files: dict[str, str]  # relative path -> sha256 hex
    made_at: str  # when the file was written (its modification time)
    version: str  # the release it was made of
    sha256: str  # of the manifest file itself, to compare with the one a release publishes


def _version() -> str:
    try:
        return version("progressive")
    except PackageNotFoundError:
        return "unknown"


def make_manifest(path: Path, root: Path = ROOT) -> Manifest:
    """Hash every installed file and write the manifest to ``path`` whole (another name
    first, then renamed over it), readable by all, written by its owner only."""
    path = path.absolute()
    inside = path.relative_to(root).as_posix() if path.is_relative_to(root) else None
    files = {rel: digest_of(root / rel) for rel in installed_files(root) if rel != inside}
    made_by = _version()
    # Nothing in it but the release and its files: the same release makes the same manifest,
    # byte for byte, wherever it is installed, so its own digest can be compared with the one
    # published with the release.
    document = {"format": FORMAT, "digest": DIGEST, "version": made_by, "files": files}
    data = (json.dumps(document, indent=1, sort_keys=True) + "\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return Manifest(path, files, _written_at(path), made_by, hashlib.sha256(data).hexdigest())


def _written_at(path: Path) -> str:
    try:
        at = path.stat().st_mtime
    except OSError:
        return ""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _bad(path: Path, why: str) -> ManifestError:
    return ManifestError(f"the manifest {path} {why}")


def read_manifest(path: Path) -> Manifest:
    """The manifest at ``path``, or ``ManifestError`` saying why it cannot be used."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ManifestError(
            f"no manifest of the installed software at {path} (PROGRESSIVE_MANIFEST_FILE): "
            "the operator installing a release makes it with `progressive self-check --make`"
        ) from None
    except OSError as exc:
        raise _bad(path, f"cannot be read: {exc.strerror or exc}") from None
    try:
        document: Any = json.loads(data)
    except ValueError:
        raise _bad(path, "is not JSON") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise _bad(path, f"is not a manifest of format {FORMAT}")
    name = document.get("digest")
    try:
        bits = hashlib.new(str(name)).digest_size * 8
    except ValueError:
        raise _bad(path, f"names an unknown digest {name!r}") from None
    try:
        check_digest(str(name), bits)
    except RuleViolation as exc:
        raise _bad(path, f"cannot be trusted: {exc}") from None
    if name != DIGEST:
        raise _bad(path, f"is kept in {name}, not {DIGEST}")
    files = document.get("files")
    if (
        not isinstance(files, dict)
        or not files
        or not all(
            isinstance(k, str) and isinstance(v, str) and len(v) == 64 for k, v in files.items()
        )
    ):
        raise _bad(path, "lists no files with their digests")
    return Manifest(
        path,
        dict(files),
        _written_at(path),
        str(document.get("version", "")),
        hashlib.sha256(data).hexdigest(),
    )


@dataclass(frozen=True, slots=True)
class SoftwareCheck:
    """One check of the install against its manifest."""

    manifest: Path
    manifest_sha256: str | None  # None: the manifest could not be read
    files: int  # files the manifest lists
    mismatches: tuple[tuple[str, str], ...]  # (path, differs / missing / extra), path order
    problem: str | None  # why the manifest could not be used
    seconds: float  # how long the check took
    fault: str | None  # the rulebook's verdict: None when the software passes
    made_at: str = ""  # when the manifest was written
    version: str = ""  # of the release it was made of, as it says

    @property
    def passed(self) -> bool:
        return self.fault is None


def _compared(manifest: Manifest, root: Path) -> Iterator[tuple[str, str]]:
    present = set(installed_files(root))
    inside = (
        manifest.path.absolute().relative_to(root).as_posix()
        if manifest.path.absolute().is_relative_to(root)
        else None
    )
    present.discard(inside or "")
    for rel in sorted(present | set(manifest.files)):
        if rel not in manifest.files:
            yield rel, EXTRA
        elif rel not in present:
            yield rel, MISSING
        else:
            try:
                found = digest_of(root / rel)
            except FileNotFoundError:  # gone since the folders were read
                yield rel, MISSING
                continue
            if found != manifest.files[rel]:
                yield rel, DIFFERS


def verify_install(path: Path, root: Path = ROOT) -> SoftwareCheck:
    """Every installed file against the manifest at ``path``: blocking (a thread's work)."""
    started = time.perf_counter()
    try:
        manifest = read_manifest(path)
    except ManifestError as exc:
        problem = str(exc)
        return SoftwareCheck(
            path,
            None,
            0,
            (),
            problem,
            time.perf_counter() - started,
            software_fault(manifest=str(path), problem=problem, mismatches=()),
        )
    mismatches = tuple(_compared(manifest, root))
    return SoftwareCheck(
        path,
        manifest.sha256,
        len(manifest.files),
        mismatches,
        None,
        time.perf_counter() - started,
        software_fault(manifest=str(path), problem=None, mismatches=mismatches),
        manifest.made_at,
        manifest.version,
    )
