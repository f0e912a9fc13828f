"""``progressive db``: the database's schema."""

from __future__ import annotations

import click

from app.cli.common import database, db_option, main, run, settings_for
from controller.settings import load_ledger_key


@main.group()
def db() -> None:
    """The database."""


@db.command("upgrade")
@db_option
def db_upgrade(database_url: str | None) -> None:
    """Run the migrations to the newest schema (creates the ledger key on first use)."""
    settings = settings_for(database_url, existing=False)  # the one command that makes one

    async def go() -> None:
        load_ledger_key(settings, create=True)
        async with database(settings, schema="upgrade"):
            pass

    run(go())
    click.echo(f"database at {settings.database_url} is up to date")
