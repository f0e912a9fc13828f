"""``progressive export``: a period of meter history, hits or reductions for auditors."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from app.cli.common import LINK_ID, database, db_option, main, run, settings_for
from controller.paperwork.export import ExportKind, export, iso
from controller.periods import PeriodError, parse_instant


@main.command("export")
@db_option
@click.argument("kind", type=click.Choice([k.value for k in ExportKind]))
@click.option("--since", required=True, help="Start of the period (UTC), e.g. 2026-01-01.")
@click.option("--until", required=True, help="End of the period (UTC, exclusive), e.g. 2026-02-01.")
@click.option("--link", type=LINK_ID, default=None, help="Only this link.")
@click.option(
    "--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file (default: standard output).",
)
def export_cmd(
    database_url: str | None,
    kind: str,
    since: str,
    until: str,
    link: str | None,
    fmt: str,
    output: Path | None,
) -> None:
    """Meter history, hits or reductions for a period, for auditors."""
    settings = settings_for(database_url)
    try:
        since_us = parse_instant(since, where="--since")
        until_us = parse_instant(until, where="--until")
    except PeriodError as exc:
        raise click.BadParameter(str(exc)) from exc

    async def go() -> int:
        named = () if link is None else (link,)
        async with database(settings, schema="check", links=named) as engine:
            if output is None:
                return await export(
                    engine,
                    sys.stdout,
                    kind=ExportKind(kind),
                    fmt=fmt,
                    since_us=since_us,
                    until_us=until_us,
                    link_id=link,
                    law=settings.law,
                    demonstration=settings.demonstration,
                )
            tmp = output.with_suffix(output.suffix + ".part")
            with tmp.open("w", newline="", encoding="utf-8") as fh:
                n = await export(
                    engine,
                    fh,
                    kind=ExportKind(kind),
                    fmt=fmt,
                    since_us=since_us,
                    until_us=until_us,
                    link_id=link,
                    law=settings.law,
                    demonstration=settings.demonstration,
                )
            tmp.replace(output)
            return n

    n = run(go())
    said = settings.statement()
    click.echo(
        f"{n:,} {kind} rows from {iso(since_us)} to {iso(until_us)}, under {said.jurisdiction}",
        err=True,
    )
    if said.demonstration is not None:
        click.echo(said.demonstration, err=True)
