"""``progressive retention``: the purge of records past their retention period."""

from __future__ import annotations

from typing import Any

import click

from app.cli.common import db_option, floor_service, main, run, settings_for
from controller.rules.integrity import INTEGRITY_RETENTION_CLAUSE
from controller.rules.meter_records import RETENTION_CLAUSE


@main.group()
def retention() -> None:
    """Records past their retention period."""


@retention.command("run")
@db_option
@click.option(
    "--meter-years",
    type=int,
    default=None,
    help=f"Meter history and its documents are kept this long ({RETENTION_CLAUSE}; never less); "
    "default: the meter_retention_years setting.",
)
@click.option(
    "--integrity-years",
    type=int,
    default=None,
    help="Records of devices removed from play, after their return "
    f"({INTEGRITY_RETENTION_CLAUSE}); "
    "default: the integrity_retention_years setting.",
)
def retention_run(
    database_url: str | None, meter_years: int | None, integrity_years: int | None
) -> None:
    """Purge what is past its period, sealing a manifest of it into each link's history."""
    settings = settings_for(database_url)

    async def go() -> Any:
        async with floor_service(settings) as service:
            return await service.retention_purge.run(
                meter_years=settings.meter_retention_years if meter_years is None else meter_years,
                integrity_years=(
                    settings.integrity_retention_years
                    if integrity_years is None
                    else integrity_years
                ),
            )

    report = run(go())
    for link_id, manifest in sorted(report.links.items()):
        click.echo(
            f"link {link_id}: entries {manifest['first_seq']}-{manifest['last_seq']} removed "
            f"({manifest['counts']}), seals sha256 {manifest['seals_sha256']}"
        )
    records = report.integrity.get("records", [])
    click.echo(
        f"retention: {len(report.links)} link(s) purged, {len(records)} integrity record(s) removed"
    )
