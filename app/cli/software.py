"""``progressive self-check``: the installed software against its manifest, on demand; and, with
``--make``, the manifest itself, written when a release is installed."""

from __future__ import annotations

import time
from pathlib import Path

import click

from app.cli.common import main, settings_for
from controller.manifest import (
    ManifestError,
    SoftwareCheck,
    make_manifest,
    read_manifest,
    verify_install,
)
from controller.settings import manifest_path


def _manifest_of(option: Path | None) -> Path:
    if option is not None:
        return option
    return manifest_path(settings_for(None, existing=False))


def _said(check: SoftwareCheck) -> str:
    made = f", written {check.made_at} of progressive {check.version}" if check.made_at else ""
    return f"{check.manifest} (sha256 {check.manifest_sha256}{made})"


@main.command("self-check")
@click.option(
    "--make",
    is_flag=True,
    help="Write the manifest of the installed software instead of checking against it: done "
    "by the operator who installs a release, on the host, with write access to the install; "
    "the running service never writes it.",
)
@click.option(
    "--manifest",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="PROGRESSIVE_MANIFEST_FILE",
    default=None,
    help="The manifest (default: progressive-manifest.json next to the installed packages).",
)
def self_check_cmd(make: bool, manifest: Path | None) -> None:
    """Check every installed file against the manifest's SHA-256 digests: each file that
    differs, is missing or is not in the manifest is printed; exit 0 when all match, 1 when
    not. The running controller makes the same check at start, every 24 hours and on the
    admin's page."""
    path = _manifest_of(manifest)
    if make:
        _make(path)
        return
    check = verify_install(path)
    for where, what in check.mismatches:
        click.echo(f"{what:<8} {where}")
    if check.problem is not None:
        click.echo(
            f"software self-check FAILED in {check.seconds:.3f} s: {check.problem}", err=True
        )
        raise SystemExit(1)
    if check.fault is not None:
        click.echo(
            f"software self-check FAILED: {len(check.mismatches)} of the installed files do not "
            f"match the {check.files} of the manifest {_said(check)}; checked in "
            f"{check.seconds:.3f} s. The controller does not start, and a running one stops "
            "its links, until they do.",
            err=True,
        )
        raise SystemExit(1)
    click.echo(
        f"software self-check passed: {check.files} files match the manifest {_said(check)}; "
        f"checked in {check.seconds:.3f} s"
    )


def _make(path: Path) -> None:
    try:
        before = read_manifest(path)
    except ManifestError:
        before = None
    started = time.perf_counter()
    try:
        made = make_manifest(path)
    except OSError as exc:
        raise click.ClickException(
            f"cannot write the manifest {path}: {exc.strerror or exc} (it is written by the "
            "operator who installs a release, with write access to the install)"
        ) from None
    took = time.perf_counter() - started
    click.echo(
        f"manifest of {len(made.files)} installed files written to {made.path} "
        f"(sha256 {made.sha256}) in {took:.3f} s"
    )
    if before is not None:
        old = before.files
        changed = sum(1 for p, d in made.files.items() if p in old and old[p] != d)
        added = len(made.files.keys() - before.files.keys())
        removed = len(before.files.keys() - made.files.keys())
        click.echo(
            f"it replaces the manifest written {before.made_at} of progressive {before.version} "
            f"(sha256 {before.sha256}): {changed} files changed, {added} added, {removed} removed"
        )
