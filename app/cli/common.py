"""What every ``progressive`` command shares: the command group and ``--version``, the settings,
the database session (refused in one line when there is none, it cannot be reached, or a link
named is not in it), the one-line answer to a refusal or a user's error and the parameter
types."""

from __future__ import annotations

import asyncio
import errno
import socket
from collections.abc import AsyncIterator, Coroutine, Iterable
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal, TypeVar

import click
from click.core import ParameterSource
from pydantic import ValidationError

from app.serve import ServeError
from controller.core.money import MoneyError, parse_cents, parse_rate_bp
from controller.paperwork.checkpoints import CheckpointError
from controller.paperwork.record_views import link_names
from controller.refusal import Refused
from controller.rules import RuleViolation
from controller.rules.jurisdictions import DEFAULT_JURISDICTION, jurisdiction
from controller.rules.statement import Statement
from controller.runtime.service import FloorService
from controller.settings import (
    LedgerKeyError,
    SecretKeyError,
    Settings,
    load_secret_key,
    secret_key_path,
    settings_refused,
)
from controller.storage.database import (
    SchemaNotCurrent,
    check_schema,
    connect_once,
    make_engine,
    sqlite_file,
    upgrade,
    url_shown,
)
from controller.storage.errors import StorageUnavailable
from controller.storage.handles import Database
from controller.text import ID, ONE_LINE, TextRefused, TextRule
from link_adapters.simulator.gateway import SimulatorError

__all__ = [
    "AMOUNT",
    "LINK_ID",
    "NAME",
    "RATE",
    "USER_ERRORS",
    "Amount",
    "BadFile",
    "Commands",
    "DatabaseUnreachable",
    "NoDatabase",
    "PortTaken",
    "Rate",
    "Text",
    "UnknownLink",
    "check_port",
    "database",
    "database_setting",
    "db_option",
    "main",
    "missing_sqlite_file",
    "reach",
    "refused",
    "run",
    "settings_for",
    "stated_lines",
]

T = TypeVar("T")


class DatabaseUnreachable(Exception):
    """The database the settings name could not be opened (a server down or refusing, a file
    that is not a database); the message names the setting to correct."""


# The installation's faults that a user corrects (a key, the checkpoints, the schema, the
# database out of reach, the web address, the simulator's), shown as a one-line message as a
# refusal is (``Commands``).
USER_ERRORS: tuple[type[Exception], ...] = (
    CheckpointError,
    LedgerKeyError,
    ServeError,
    SimulatorError,
    SchemaNotCurrent,
    DatabaseUnreachable,
)


class BadFile(click.ClickException):
    """A file given to a command that cannot be used as it is: exit status 2, like a usage
    error, with every problem of it named."""

    exit_code = 2


class NoDatabase(click.ClickException):
    """A command that works on an installation, pointed at a SQLite file that is not there:
    exit status 2, and the file is not created (only ``db upgrade`` and the demo make one)."""

    exit_code = 2


class UnknownLink(click.ClickException):
    """A link named on the command line that the database does not hold: exit status 2, never
    taken for a link with no history (a typo is not a tamper report)."""

    exit_code = 2


class PortTaken(click.ClickException):
    """The web address a command would serve on cannot be listened on (another demo or
    controller serves there): exit status 2, refused before anything is created."""

    exit_code = 2


def check_port(host: str, port: int) -> None:
    """Refuse, in one line, a web address that cannot be listened on, before a command
    creates a database, keys or links it would then leave behind. Bound as the web server
    binds (address reuse on, so a port left in TIME_WAIT by a stopped server is free)."""
    if port == 0:
        return  # the system chooses a free one
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise PortTaken(f"cannot serve the web on {host}:{port}: {exc.strerror or exc}") from None
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise PortTaken(
                        f"{host}:{port} is already in use (another progressive demo or "
                        "controller serving there?): stop it, or give --port another port; "
                        "nothing was created"
                    ) from None
                raise PortTaken(
                    f"cannot serve the web on {host}:{port}: {exc.strerror or exc}; nothing "
                    "was created"
                ) from None


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command's work; a user's error becomes a one-line message (exit status 1), as a
    refusal does wherever a command meets it (``Commands``)."""
    try:
        return asyncio.run(coro)
    except USER_ERRORS as exc:
        raise click.ClickException(str(exc)) from exc


def refused(exc: Refused) -> str:
    """A refusal as a command says it: its message, and a rule's with its clause and the
    jurisdiction whose clause it is (the installation's, PROGRESSIVE_JURISDICTION)."""
    if not isinstance(exc, RuleViolation):
        return str(exc)
    try:
        law = Settings().law
    except ValidationError:
        law = jurisdiction(DEFAULT_JURISDICTION)
    return f"{exc}; refused under {law.title}"


def stated_lines(statement: Statement) -> list[str]:
    """What a command's output states of the law it runs under: the jurisdiction, and
    demonstration mode when the installation runs in it or links shown were opened in it."""
    lines = [f"jurisdiction: {statement.jurisdiction}"]
    if statement.demonstration is not None:
        lines.append(statement.demonstration)
    return lines


def database_setting() -> str:
    """Where the command's database URL came from, as the user would correct it."""
    ctx = click.get_current_context(silent=True)
    source = None
    if ctx is not None and "database_url" in ctx.params:
        source = ctx.get_parameter_source("database_url")
    if source is ParameterSource.COMMANDLINE:
        return "--database-url"
    if source is ParameterSource.ENVIRONMENT:
        return "PROGRESSIVE_DATABASE_URL"
    return "the default, PROGRESSIVE_DATABASE_URL not set"


def missing_sqlite_file(url: str) -> Path | None:
    """The file a SQLite URL names when that file does not exist (connecting would create
    it, empty); None for any other database, an in-memory one or a file that is there."""
    path = sqlite_file(url)
    return None if path is None or path.exists() else path


def _refuse_missing(url: str) -> None:
    path = missing_sqlite_file(url)
    if path is None:
        return
    source = database_setting()
    if source == "--database-url":
        fix = "give --database-url an existing database"
    else:
        fix = "set PROGRESSIVE_DATABASE_URL to an existing database"
    raise NoDatabase(
        f'no database at {path} ({source}): {fix} (or run "progressive db upgrade" to create one)'
    )


def settings_for(database_url: str | None, *, existing: bool = True) -> Settings:
    """The settings, read afresh (one command, one environment), with ``--database-url``.

    With ``existing`` (every command but ``db upgrade`` and those that need no database) a
    SQLite file that is not there is refused before anything could create it."""
    try:
        s = Settings()
    except ValidationError as exc:
        raise click.ClickException(f"settings refused: {settings_refused(exc)}") from None
    s = s.model_copy(update={"database_url": database_url}) if database_url else s
    if existing:
        _refuse_missing(s.database_url)
    return s


def serving_settings(database_url: str | None) -> Settings:
    """The settings of a command that serves the web, whole: with the token-signing key read
    (or made) now, so that a key found wanting stops the command before anything serves
    rather than failing every sign-in."""
    settings = settings_for(database_url, existing=False)  # the database is checked later
    try:
        # A key given, or a key file there, is checked now; a missing file is made later, by
        # the service, once the database is found: a refused command leaves no file behind.
        if settings.secret_key is not None or secret_key_path(settings).exists():
            load_secret_key(settings, create=False)
    except (SecretKeyError, OSError) as exc:
        raise click.ClickException(f"settings refused: {exc}") from None
    return settings


async def _open(engine: Database, url: str) -> None:
    """One connection, at once, so that a database that cannot be reached is one line naming
    the setting rather than an error from deep inside the first query."""
    try:
        await connect_once(engine)
    except StorageUnavailable as exc:
        raise DatabaseUnreachable(
            f"cannot open the database at {url_shown(url)} ({database_setting()}): {exc}"
        ) from exc


async def reach(settings: Settings) -> None:
    """Refuse, in one line, a database the settings name that is not there (a SQLite file,
    not created) or cannot be opened: for commands that hand the settings to the service
    rather than to ``database``."""
    _refuse_missing(settings.database_url)
    engine = make_engine(settings.database_url)
    try:
        await _open(engine, settings.database_url)
    finally:
        await engine.dispose()


# How many of the links held a refusal of an unknown one names, to help with a typo.
LINKS_NAMED = 12


async def _known_links(engine: Database, link_ids: Iterable[str]) -> None:
    wanted = list(dict.fromkeys(link_ids))
    if not wanted:
        return
    names = await link_names(engine)
    unknown = [link_id for link_id in wanted if link_id not in names]
    if unknown:
        shown = sorted(names)[:LINKS_NAMED]
        held = ", ".join(shown) if shown else "none"
        if len(names) > len(shown):
            held += f" and {len(names) - len(shown)} more: see `progressive links list`"
        raise UnknownLink(
            "; ".join(f"no link {link_id!r}" for link_id in unknown) + f" (links: {held})"
        )


@asynccontextmanager
async def database(
    settings: Settings,
    *,
    schema: Literal["check", "upgrade"] | None = None,
    links: Iterable[str] = (),
) -> AsyncIterator[Database]:
    """The settings' database for one command: reached first, its schema checked (or
    upgraded) when asked, every link of ``links`` known, its connections closed at the end
    whatever happens. Every command that names a link checks it here."""
    engine = make_engine(settings.database_url)
    try:
        await _open(engine, settings.database_url)
        if schema == "upgrade":
            await upgrade(engine)
        elif schema == "check":
            await check_schema(engine)
        await _known_links(engine, links)
        yield engine
    finally:
        await engine.dispose()


@asynccontextmanager
async def floor_service(
    settings: Settings, *, links: Iterable[str] = ()
) -> AsyncIterator[FloorService]:
    """The controller's services for one command on the settings' database, polling nothing
    and running no schedule: the same desks, law, odds bound and letterhead as a running
    controller's, refused in one line as ``database`` refuses (its schema, ``links``)."""
    async with database(settings, schema="check", links=links):
        pass
    service = FloorService(settings, retention_schedule=False, protection=False)
    await service.start()
    try:
        yield service
    finally:
        await service.stop()


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


class Amount(click.ParamType[int]):
    """An amount of money typed with its ``$`` (``$10,000``, ``$1,234.56``), as whole cents: a
    bare number is refused with the form to use, never guessed to be dollars or cents."""

    name = "amount"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_cents(str(value), unit_required=True)
        except MoneyError as exc:
            self.fail(str(exc), param, ctx)


class Rate(click.ParamType[int]):
    """A rate typed with its ``%`` (``82.5%``), as basis points: ``82.5`` alone is refused with
    the form to use. Whether the rate is allowed is the rulebook's to say."""

    name = "rate"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_rate_bp(str(value), unit_required=True, form=RATE_FORM)
        except MoneyError as exc:
            self.fail(str(exc), param, ctx)


RATE_FORM = "a rate like 82.5%"
AMOUNT = Amount()
RATE = Rate()

db_option = click.option(
    "--database-url",
    envvar="PROGRESSIVE_DATABASE_URL",
    default=None,
    help="SQLAlchemy URL (default: the embedded SQLite file progressive.db).",
)


def _print_version(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    try:
        found = version("progressive")
    except PackageNotFoundError:
        found = "unknown (the package is not installed; run it from an installed copy)"
    click.echo(f"progressive {found}")
    ctx.exit(0)


class Commands(click.Group):
    """The ``progressive`` command group. A refusal (``controller.refusal``) that a command
    meets, in its work or before it, and does not answer itself (as a bad parameter, say) is
    answered here, for every command: its message in one line, exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Refused as exc:
            raise click.ClickException(refused(exc)) from exc


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the installed package's version and exit.",
)
def main() -> None:
    """Progressive jackpot controller for linked table games."""
