"""``progressive ledger``: the checkpoint signing keys and the check of the meter history,
in the database or in an export."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from app.cli.common import LINK_ID, database, db_option, main, run, settings_for
from controller.paperwork.checkpoints import (
    CheckpointError,
    CheckpointFile,
    load_private_key,
    load_public_key,
    make_key_pair,
    read_checkpoints,
)
from controller.paperwork.export import verify_export
from controller.runtime.clock import SystemClock
from controller.settings import Settings, checkpoint_public_key_path, load_ledger_key
from controller.storage.compaction import Compacted, compact_link
from controller.storage.unit_of_work import reading
from controller.storage.verify import verify_ledger


@main.group()
def ledger() -> None:
    """The meter history."""


def _signed_checkpoints(
    settings: Settings, checkpoints: Path | None, public_key: Path | None, *, required: bool
) -> CheckpointFile | None:
    """The checkpoint file given (or the settings' one, when it exists) read with the public
    key given (or the settings' one); None when neither names any."""
    path = checkpoints
    if path is None and settings.checkpoint_file.exists():
        path = settings.checkpoint_file
    key_path = public_key or checkpoint_public_key_path(settings)
    if path is None:
        if required:
            raise click.UsageError("--checkpoints FILE is needed")
        return None
    if key_path is None:
        raise click.UsageError(
            f"{path} is checked with the controller's public key: --public-key FILE"
        )
    try:
        return read_checkpoints(path, load_public_key(key_path))
    except CheckpointError as exc:
        raise click.ClickException(str(exc)) from None


checkpoints_option = click.option(
    "--checkpoints",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Signed checkpoint file (default: the checkpoint_file setting, when it exists).",
)
public_key_option = click.option(
    "--public-key",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="The controller's checkpoint public key (default: the signing key file's .pub).",
)


@ledger.command("keygen")
@click.option(
    "--out",
    "folder",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for checkpoint-signing.key (private, 0600) and checkpoint-signing.pub.",
)
def ledger_keygen(folder: Path) -> None:
    """A key pair for signing checkpoints: the controller keeps the private key, auditors get
    the public one."""
    try:
        private, public = make_key_pair(folder)
    except CheckpointError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"private key {private} (keep it on the controller only)")
    click.echo(f"public key  {public} (give it to auditors)")
    click.echo(f"set PROGRESSIVE_CHECKPOINT_KEY_FILE={private}")


@ledger.command("verify")
@db_option
@click.option(
    "--link", "links", type=LINK_ID, multiple=True, help="Only these links (default: all)."
)
@checkpoints_option
@public_key_option
@click.option(
    "--every-seal",
    is_flag=True,
    help="Check each entry of a sealed block too, and every checkpoint's digest (slower).",
)
def ledger_verify(
    database_url: str | None,
    links: tuple[str, ...],
    checkpoints: Path | None,
    public_key: Path | None,
    every_seal: bool,
) -> None:
    """Walk every hash chain; exit 0 when whole, 1 naming the first bad entry of each link.

    On a link of levels, also each meter entry by entry and every mystery reveal against the
    commitment sealed when its trigger was drawn.

    With signed checkpoints, also refuse a chain shorter than, or diverging from, any of them
    (entries taken away, a database put back from an earlier copy).

    The entries of a sealed block (the controller checked them before it packed them) are
    checked through the block's seal; --every-seal checks each of them again."""
    settings = settings_for(database_url)
    signed = _signed_checkpoints(settings, checkpoints, public_key, required=False)
    show = sys.stderr.isatty()

    def progress(n: int) -> None:
        if show:
            click.echo(f"\r  {n:,} entries checked", nl=False, err=True)

    async def go() -> Any:
        key = load_ledger_key(settings)
        async with database(settings, schema="check", links=links) as engine:
            return await verify_ledger(
                engine,
                key,
                link_ids=list(links) or None,
                progress=progress,
                checkpoints=signed.checkpoints if signed else (),
                public_key=signed.public if signed else None,
                every_seal=every_seal,
            )

    report = run(go())
    if show:
        click.echo("", err=True)
    for link_id, count in sorted(report.links.items()):
        bad = [p for p in report.problems if p.link_id == link_id]
        click.echo(f"link {link_id}: {count:,} entries " + ("BROKEN" if bad else "whole"))
    file_problems = signed.problems if signed else []
    for line in file_problems:
        click.echo(f"BROKEN: {line}", err=True)
    for problem in report.problems:
        click.echo(f"BROKEN: {problem}", err=True)
    for note in report.unverifiable:
        click.echo(f"UNVERIFIABLE: {note}", err=True)
    if signed is None:
        click.echo("no signed checkpoints given: a history cut short would not be seen", err=True)
    else:
        click.echo(f"checked against {report.checkpoints:,} signed checkpoints")
        if report.digests_by_block_seal:
            click.echo(
                f"  of which {report.digests_by_block_seal:,} cover entries of sealed blocks: "
                "checked by their seal and the blocks' seals (--every-seal: by their digest too)"
            )
    if report.sealed:
        click.echo(
            f"{report.sealed:,} entries checked through the seals of the blocks that hold them"
        )
    if report.ok and not file_problems:
        click.echo(f"ledger whole: {report.entries:,} entries in {len(report.links)} links")
    else:
        n = len(report.problems) + len(file_problems)
        click.echo(f"ledger NOT whole: {n} problem(s)", err=True)
        sys.exit(1)


@ledger.command("compact")
@db_option
@click.option(
    "--link", "links", type=LINK_ID, multiple=True, help="Only these links (default: all)."
)
def ledger_compact(database_url: str | None, links: tuple[str, ...]) -> None:
    """Move the ordinary entries of closed gaming days into blocks now (the controller does
    it by itself every quarter hour): the same sealed entries in a fraction of the space.
    The day still open stays as it is."""
    settings = settings_for(database_url)
    calendar = settings.calendar
    key = load_ledger_key(settings)  # each block sealed after its entries are checked
    # and signed with the checkpoint key, as the controller signs them, when it has one
    signer = (
        None
        if settings.checkpoint_key_file is None
        else load_private_key(settings.checkpoint_key_file)
    )

    async def go() -> list[tuple[str, Compacted]]:
        async with database(settings, schema="check", links=links) as engine:
            async with reading(engine) as uow:
                ids = list(links) or sorted(await uow.links.ids())
            until = calendar.day_start(calendar.day(SystemClock().now_us()))
            out = []
            for link_id in ids:
                done = await compact_link(
                    engine,
                    link_id,
                    key=key,
                    signer=signer,
                    until_us=until,
                    day_end=calendar.day_end,
                )
                click.echo(f"link {link_id}: {done.entries:,} entries into {done.blocks:,} blocks")
                out.append((link_id, done))
            return out

    done = run(go())
    entries = sum(d.entries for _, d in done)
    blocks = sum(d.blocks for _, d in done)
    click.echo(f"{entries:,} entries of closed gaming days moved into {blocks:,} blocks")


@ledger.command("verify-export")
@click.argument("export_file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@checkpoints_option
@public_key_option
def ledger_verify_export(
    export_file: Path, checkpoints: Path | None, public_key: Path | None
) -> None:
    """Check a history export (``export history --format json``) offline, with the signed
    checkpoints and the public key alone: no database, no ledger key."""
    signed = _signed_checkpoints(
        settings_for(None, existing=False), checkpoints, public_key, required=True
    )
    assert signed is not None
    try:
        data = json.loads(export_file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise click.ClickException(f"{export_file} is not a JSON export: {exc}") from None
    check = verify_export(data, signed.checkpoints)
    for line in signed.problems + check.problems:
        click.echo(f"BROKEN: {line}", err=True)
    click.echo(
        f"{check.entries:,} entries; {check.anchored:,} proved by {check.checkpoints:,} signed "
        f"checkpoints; {check.entries - check.anchored:,} not inside a checkpoint"
    )
    if not check.ok or signed.problems:
        click.echo("export NOT verified", err=True)
        sys.exit(1)
    click.echo("export verified against the signed checkpoints")
