"""What every ``progressive`` command shares: the command group, the settings, the database
session, the one-line refusal of a user's error and the text parameter types."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeVar

import click
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine

from app.serve import ServeError
from controller.core.games import PaytableError
from controller.core.money import MoneyError
from controller.core.reducer import EngineError
from controller.paperwork.checkpoints import CheckpointError
from controller.paperwork.export import ExportError
from controller.rules import RuleViolation
from controller.runtime.service import FloorMismatch
from controller.settings import LedgerKeyError, Settings
from controller.storage.database import SchemaNotCurrent, check_schema, make_engine, upgrade
from controller.storage.store import StoreError
from controller.text import ID, ONE_LINE, TextRefused, TextRule
from link_adapters.simulator.server import SimulatorError

__all__ = [
    "LINK_ID",
    "NAME",
    "USER_ERRORS",
    "BadFile",
    "Text",
    "database",
    "db_option",
    "main",
    "run",
    "settings_for",
]

T = TypeVar("T")

# Errors that are the user's input or the installation's state, shown as a one-line message.
USER_ERRORS: tuple[type[Exception], ...] = (
    CheckpointError,
    FloorMismatch,
    LedgerKeyError,
    StoreError,
    RuleViolation,
    MoneyError,
    PaytableError,
    EngineError,
    ExportError,
    ServeError,
    SimulatorError,
    SchemaNotCurrent,
)


class BadFile(click.ClickException):
    """A file given to a command that cannot be used as it is: exit status 2, like a usage
    error, with every problem of it named."""

    exit_code = 2


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command's work; a user's error becomes a one-line message (exit status 1)."""
    try:
        return asyncio.run(coro)
    except USER_ERRORS as exc:
        raise click.ClickException(str(exc)) from exc


def settings_for(database_url: str | None) -> Settings:
    """The settings, read afresh (one command, one environment), with ``--database-url``."""
    try:
        s = Settings()
    except ValidationError as exc:
        raise click.ClickException(f"settings: {exc}") from None
    return s.model_copy(update={"database_url": database_url}) if database_url else s


@asynccontextmanager
async def database(
    settings: Settings, *, schema: Literal["check", "upgrade"] | None = None
) -> AsyncIterator[AsyncEngine]:
    """The settings' database for one command: its schema checked (or upgraded) first when
    asked, its connections closed at the end whatever happens."""
    engine = make_engine(settings.database_url)
    try:
        if schema == "upgrade":
            await upgrade(engine)
        elif schema == "check":
            await check_schema(engine)
        yield engine
    finally:
        await engine.dispose()


class Text(click.ParamType[str]):
    """A text argument or option under one of ``controller.text``'s rules."""

    def __init__(self, rule: TextRule, *, required: bool = False) -> None:
        self.rule = rule
        self.required = required
        self.name = rule.name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return self.rule.check(str(value), required=self.required)
        except TextRefused as exc:
            self.fail(str(exc), param, ctx)


LINK_ID = Text(ID)
NAME = Text(ONE_LINE, required=True)

db_option = click.option(
    "--database-url",
    envvar="PROGRESSIVE_DATABASE_URL",
    default=None,
    help="SQLAlchemy URL (default: the embedded SQLite file progressive.db).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Progressive jackpot controller for linked table games."""
