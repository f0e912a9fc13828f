"""The ``progressive`` command."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import ValidationError

from app.serve import ServeError
from controller.access.users import Role
from controller.core.games import Game, PaytableError
from controller.core.money import (
    MAX_DENOMINATION_CENTS,
    MoneyError,
    check_cents,
    format_bp,
    format_cents,
    parse_cents,
    parse_rate_bp,
)
from controller.core.reducer import EngineError, HitPolicy, TableConfig
from controller.paperwork.checkpoints import (
    CheckpointError,
    CheckpointFile,
    load_public_key,
    make_key_pair,
    read_checkpoints,
)
from controller.paperwork.export import ExportError, ExportKind, export, iso, verify_export
from controller.paperwork.retention import run_retention
from controller.paperwork.submissions import SubmissionDesk
from controller.periods import PeriodError, parse_instant
from controller.rules import RuleViolation
from controller.rules.integrity import INTEGRITY_RETENTION_CLAUSE
from controller.rules.progression import check_rate_of_progression
from controller.rules.records import RETENTION_CLAUSE
from controller.rules.wagers import check_denomination
from controller.runtime.clock import SystemClock
from controller.runtime.config import CREDITS_PER_SEAT, MIN_ROUND_MS, id_problem, text_problem
from controller.runtime.links import LinkRuntime
from controller.runtime.service import FloorMismatch, FloorService
from controller.settings import (
    LedgerKeyError,
    Settings,
    checkpoint_public_key_path,
    load_ledger_key,
)
from controller.storage.database import SchemaNotCurrent, make_engine, upgrade
from controller.storage.store import LedgerStore, StoreError, TableSpec
from controller.storage.verify import verify_ledger
from controller.text import ID, MULTILINE, ONE_LINE, USERNAME, TextRefused, TextRule
from link_adapters.simulator.server import SimulatorError

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


def _run(coro: Coroutine[Any, Any, T]) -> T:
    try:
        return asyncio.run(coro)
    except USER_ERRORS as exc:
        raise click.ClickException(str(exc)) from exc


def _settings(database_url: str | None) -> Settings:
    try:
        s = Settings()  # read afresh: one command, one environment
    except ValidationError as exc:
        raise click.ClickException(f"settings: {exc}") from None
    return s.model_copy(update={"database_url": database_url}) if database_url else s


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


# --------------------------------------------------------------------------------------- demo


@main.command("demo")
@click.option(
    "--folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where the demo database and ledger key live.",
)
@click.option(
    "--round-seconds",
    default=2.0,
    show_default=True,
    help="About how often each simulated table deals a round.",
)
@click.option(
    "--jackpot-every",
    default=180.0,
    show_default=True,
    help="Seconds between demo royal flushes (real odds are 1 in 649,740 hands).",
)
@click.option(
    "--technician-after",
    default=90.0,
    show_default=True,
    help="Seconds a held table waits for a person on /tech before the demo technician "
    "verifies and resets it.",
)
@click.option("--seed", type=int, default=None, help="Repeatable play.")
@click.option(
    "--duration", type=float, default=None, help="Stop by itself after this many seconds."
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Web server address.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Web port."
)
def demo_cmd(
    folder: Path,
    round_seconds: float,
    jackpot_every: float,
    technician_after: float,
    seed: int | None,
    duration: float | None,
    host: str,
    port: int,
) -> None:
    """Simulated tables of all three games, the controller and the web server, on SQLite."""
    from app.demo import DemoOptions, run_demo

    folder.mkdir(parents=True, exist_ok=True)
    options = DemoOptions(
        folder=folder,
        round_seconds=round_seconds,
        jackpot_every_s=jackpot_every,
        release_after_s=technician_after,
        seed=seed,
        duration_s=duration,
        host=host,
        port=port,
    )
    _run(run_demo(options, say=lambda line: click.echo(line)))


# --------------------------------------------------------------------------------------- simulate


@main.command("simulate")
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A TOML file of gateways and tables (default: one TCP gateway per game, 15020-15022).",
)
@click.option(
    "--tables",
    type=click.IntRange(1, 247),
    default=None,
    help="Tables (unit ids 1..N) per gateway, without --config.  [default: 4]",
)
@click.option(
    "--rounds-per-second",
    type=click.FloatRange(min=0, max=10_000, min_open=True),
    default=None,
    help="Rounds each table deals per second (overrides the config).  [default: 1/60]",
)
@click.option("--seed", type=int, default=None, help="Repeatable cards and timing.")
@click.option(
    "--serial-port",
    default=None,
    help="Serve one game's tables over Modbus RTU on this serial device (needs --game).",
)
@click.option(
    "--baudrate",
    type=click.IntRange(min=1),
    default=19200,
    show_default=True,
    help="Serial line speed, with --serial-port.",
)
@click.option(
    "--game",
    type=click.Choice([g.value for g in Game]),
    default=None,
    help="Only this game's gateway.",
)
def simulate_cmd(
    config_file: Path | None,
    tables: int | None,
    rounds_per_second: float | None,
    seed: int | None,
    serial_port: str | None,
    baudrate: int,
    game: str | None,
) -> None:
    """Simulated table controllers on Modbus TCP or a serial line, until Ctrl-C."""
    from link_adapters.simulator.config import SimConfigError, load_config
    from link_adapters.simulator.server import (
        DEFAULT_PORTS,
        DEFAULT_ROUNDS_PER_SECOND,
        GatewaySpec,
        SimFloor,
        SimulatorError,
    )

    if config_file is not None:
        clash = [
            flag
            for flag, given in (
                ("--tables", tables is not None),
                ("--serial-port", serial_port is not None),
                ("--game", game is not None),
            )
            if given
        ]
        if clash:
            raise click.UsageError(f"--config and {', '.join(clash)} cannot be combined")
        try:
            config = load_config(config_file)
        except SimConfigError as exc:
            raise click.ClickException(str(exc)) from exc
        gateways = list(config.gateways)
        rate = rounds_per_second if rounds_per_second is not None else config.rounds_per_second
        seed = seed if seed is not None else config.seed
    else:
        if serial_port is not None and game is None:
            raise click.UsageError("--serial-port needs --game: a serial line carries one game")
        games = [Game(game)] if game is not None else list(Game)
        n = tables if tables is not None else 4
        gateways = [
            GatewaySpec(game=g, tables=n, serial_port=serial_port, baudrate=baudrate)
            if serial_port is not None
            else GatewaySpec(game=g, tables=n, port=DEFAULT_PORTS[g])
            for g in games
        ]
        rate = rounds_per_second if rounds_per_second is not None else DEFAULT_ROUNDS_PER_SECOND

    pace = f"a round every {1 / rate:g} s" if rate < 1 else f"{rate:g} rounds a second"

    async def go() -> None:
        floor = SimFloor(gateways, rounds_per_second=rate, seed=seed)
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        loop.add_signal_handler(signal.SIGINT, stop.set)
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        try:
            await floor.start()
            for line in floor.describe():
                click.echo(line)
            click.echo(f"each table deals {pace}; Ctrl-C stops")
            await stop.wait()
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)
            await floor.stop()
        click.echo("stopped")

    try:
        _run(go())
    except SimulatorError as exc:
        raise click.ClickException(str(exc)) from exc


# --------------------------------------------------------------------------------------- run


@main.command("run")
@click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The floor: buses, links, tables.",
)
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Web server address.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Web port."
)
@click.option(
    "--no-checkpoints",
    is_flag=True,
    help="Run without signed checkpoints (the checkpoints_off setting): a database restored "
    "from an earlier copy, or its newest entries deleted, would then go unnoticed.",
)
def run_cmd(
    config_path: Path, database_url: str | None, host: str, port: int, no_checkpoints: bool
) -> None:
    """The controller for real tables: poll, credit, pay and serve the web, until Ctrl-C."""
    from app.daemon import run_daemon
    from controller.runtime.config import ConfigError, load_floor_config

    try:
        floor = load_floor_config(config_path)  # the whole file, before anything is written
    except ConfigError as exc:
        raise BadFile(f"{exc}\nnothing was written; correct the file and run again") from None
    settings = _settings(database_url)
    if settings.checkpoint_key_file is None and not (no_checkpoints or settings.checkpoints_off):
        raise click.ClickException(
            "no checkpoint signing key: the meter history would not be anchored outside the "
            "database. Make one with `progressive ledger keygen --out DIR` and set "
            "PROGRESSIVE_CHECKPOINT_KEY_FILE, or run with --no-checkpoints knowingly"
        )
    _run(
        run_daemon(
            settings,
            floor,
            say=lambda line: click.echo(line, err=True),
            host=host,
            port=port,
        )
    )


@main.command("web")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Web server address.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Web port."
)
def web_cmd(database_url: str | None, host: str, port: int) -> None:
    """A web process only (PostgreSQL): displays, pages and API for controllers run elsewhere."""
    from app.daemon import WebOnlyError, run_web

    try:
        _run(
            run_web(
                _settings(database_url),
                say=lambda line: click.echo(line, err=True),
                host=host,
                port=port,
            )
        )
    except WebOnlyError as exc:
        raise click.ClickException(str(exc)) from exc


# --------------------------------------------------------------------------------------- db


@main.group()
def db() -> None:
    """The database."""


@db.command("upgrade")
@db_option
def db_upgrade(database_url: str | None) -> None:
    """Run the migrations to the newest schema (creates the ledger key on first use)."""
    settings = _settings(database_url)

    async def go() -> None:
        load_ledger_key(settings, create=True)
        engine = make_engine(settings.database_url)
        try:
            await upgrade(engine)
        finally:
            await engine.dispose()

    _run(go())
    click.echo(f"database at {settings.database_url} is up to date")


# --------------------------------------------------------------------------------------- ledger


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
def ledger_verify(
    database_url: str | None,
    links: tuple[str, ...],
    checkpoints: Path | None,
    public_key: Path | None,
) -> None:
    """Walk every hash chain; exit 0 when whole, 1 naming the first bad entry of each link.

    With signed checkpoints, also refuse a chain shorter than, or diverging from, any of them
    (entries taken away, a database put back from an earlier copy)."""
    settings = _settings(database_url)
    signed = _signed_checkpoints(settings, checkpoints, public_key, required=False)
    show = sys.stderr.isatty()

    def progress(n: int) -> None:
        if show:
            click.echo(f"\r  {n:,} entries checked", nl=False, err=True)

    async def go() -> Any:
        key = load_ledger_key(settings)
        engine = make_engine(settings.database_url)
        try:
            return await verify_ledger(
                engine,
                key,
                link_ids=list(links) or None,
                progress=progress,
                checkpoints=signed.checkpoints if signed else (),
            )
        finally:
            await engine.dispose()

    report = _run(go())
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
    if signed is None:
        click.echo("no signed checkpoints given: a history cut short would not be seen", err=True)
    else:
        click.echo(f"checked against {report.checkpoints:,} signed checkpoints")
    if report.ok and not file_problems:
        click.echo(f"ledger whole: {report.entries:,} entries in {len(report.links)} links")
    else:
        n = len(report.problems) + len(file_problems)
        click.echo(f"ledger NOT whole: {n} problem(s)", err=True)
        sys.exit(1)


@ledger.command("verify-export")
@click.argument("export_file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@checkpoints_option
@public_key_option
def ledger_verify_export(
    export_file: Path, checkpoints: Path | None, public_key: Path | None
) -> None:
    """Check a history export (``export history --format json``) offline, with the signed
    checkpoints and the public key alone: no database, no ledger key."""
    signed = _signed_checkpoints(_settings(None), checkpoints, public_key, required=True)
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


# --------------------------------------------------------------------------------------- retention


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
    settings = _settings(database_url)

    async def go() -> Any:
        service = FloorService(settings, retention_schedule=False)
        await service.start()
        try:
            return await run_retention(
                service.runtime,
                meter_years=settings.meter_retention_years if meter_years is None else meter_years,
                integrity_years=(
                    settings.integrity_retention_years
                    if integrity_years is None
                    else integrity_years
                ),
            )
        finally:
            await service.stop()

    try:
        report = _run(go())
    except RuleViolation as exc:
        raise click.ClickException(str(exc)) from None
    for link_id, manifest in sorted(report.links.items()):
        click.echo(
            f"link {link_id}: entries {manifest['first_seq']}-{manifest['last_seq']} removed "
            f"({manifest['counts']}), seals sha256 {manifest['seals_sha256']}"
        )
    records = report.integrity.get("records", [])
    click.echo(
        f"retention: {len(report.links)} link(s) purged, {len(records)} integrity record(s) removed"
    )


# --------------------------------------------------------------------------------------- export


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
    settings = _settings(database_url)
    try:
        since_us = parse_instant(since, where="--since")
        until_us = parse_instant(until, where="--until")
    except PeriodError as exc:
        raise click.BadParameter(str(exc)) from exc

    async def go() -> int:
        engine = make_engine(settings.database_url)
        try:
            if output is None:
                return await export(
                    engine,
                    sys.stdout,
                    kind=ExportKind(kind),
                    fmt=fmt,
                    since_us=since_us,
                    until_us=until_us,
                    link_id=link,
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
                )
            tmp.replace(output)
            return n
        finally:
            await engine.dispose()

    n = _run(go())
    click.echo(f"{n:,} {kind} rows from {iso(since_us)} to {iso(until_us)}", err=True)


# --------------------------------------------------------------------------------------- links


@main.group()
def links() -> None:
    """Links and their tables."""


def _table_spec(text: str, game: Game, min_round_s: int, max_credits: int) -> TableSpec:
    table_id, _, denom = text.partition(":")
    if not table_id:
        raise click.BadParameter(f"{text!r}: give a table as ID or ID:DENOMINATION, e.g. T1:$1")
    if (problem := id_problem(table_id)) is not None:
        raise click.BadParameter(f"table id {problem}", param_hint="--table")
    fixed = game.fixed_wager_cents
    try:
        cents = parse_cents(denom) if denom else (fixed or 100)
        check_cents(f"table {table_id}: denomination", cents, low=1, high=MAX_DENOMINATION_CENTS)
    except MoneyError as exc:
        raise click.BadParameter(str(exc), param_hint="--table") from exc
    try:
        check_denomination(game, cents)
    except RuleViolation as exc:
        raise click.BadParameter(f"table {table_id}: {exc}") from exc
    return TableSpec(
        config=TableConfig(
            table_id=table_id,
            denomination_cents=cents,
            max_credits_per_seat_round=max_credits,
            min_round_us=min_round_s * 1_000_000,
        )
    )


@links.command("create")
@db_option
@click.option("--id", "link_id", type=LINK_ID, required=True)
@click.option("--name", type=NAME, default=None)
@click.option("--game", type=click.Choice([g.value for g in Game]), required=True)
@click.option("--rate", required=True, help="Rate of progression, e.g. 82.5%.")
@click.option("--reset", "reset", required=True, help="Reset amount, e.g. $10,000.")
@click.option(
    "--table",
    "tables",
    multiple=True,
    required=True,
    help="ID or ID:DENOMINATION (e.g. T1:$1); repeat for each table.",
)
@click.option(
    "--policy",
    type=click.Choice([p.value for p in HitPolicy]),
    default="split",
    show_default=True,
    help="Several hits in one round: split or sequential.",
)
@click.option(
    "--min-round-seconds",
    type=click.IntRange(1, MIN_ROUND_MS[1] // 1000),
    default=10,
    show_default=True,
    help="The fastest a table can deal a round (bounds plausible wagers).",
)
@click.option(
    "--max-credits-per-seat",
    type=click.IntRange(*CREDITS_PER_SEAT),
    default=1,
    show_default=True,
    help="Credits one seat can wager on the progressive in one round.",
)
@click.option("--actor", type=NAME, default="operator", show_default=True)
def links_create(
    database_url: str | None,
    link_id: str,
    name: str | None,
    game: str,
    rate: str,
    reset: str,
    tables: tuple[str, ...],
    policy: str,
    min_round_seconds: int,
    max_credits_per_seat: int,
    actor: str,
) -> None:
    """Create a link with its tables and the game's default paytable."""
    settings = _settings(database_url)
    g = Game(game)
    for hint, problem in (
        ("--id", id_problem(link_id)),
        ("--name", None if name is None else text_problem(name)),
    ):
        if problem is not None:
            raise click.BadParameter(problem, param_hint=hint)
    try:
        rate_bp = check_rate_of_progression(parse_rate_bp(rate))
        reset_cents = check_cents("the reset amount", parse_cents(reset))
    except (MoneyError, RuleViolation) as exc:
        raise click.BadParameter(str(exc)) from exc
    specs = [_table_spec(t, g, min_round_seconds, max_credits_per_seat) for t in tables]

    async def go() -> str:
        key = load_ledger_key(settings)
        engine = make_engine(settings.database_url)
        try:
            store = LedgerStore(engine, key)
            await store.check_key()
            await store.create_link(
                link_id=link_id,
                name=name or link_id,
                game=g,
                rate_bp=rate_bp,
                reset_cents=reset_cents,
                tables=specs,
                at_us=SystemClock().now_us(),
                actor=actor,
                hit_policy=HitPolicy(policy),
            )
            # 68 IAC 10-1-3(c): a new link is filed with the commission and plays once approved.
            runtime = LinkRuntime(store)
            await runtime.load()
            filed = await SubmissionDesk(runtime).file_new_link(
                link_id, filed_by=actor, override=settings.notice_override
            )
            return str(filed.submission_id)
        finally:
            await engine.dispose()

    submission_id = _run(go())
    click.echo(
        f"link {link_id}: {g.label}, rate {format_bp(rate_bp)}, reset "
        f"{format_cents(reset_cents)}, {len(specs)} table(s)"
    )
    click.echo(
        f"filed with the commission as submission {submission_id}; the link plays once a "
        "commission agent approves it (/commission)"
    )


@links.command("list")
@db_option
def links_list(database_url: str | None) -> None:
    """Every link with its meter."""
    settings = _settings(database_url)

    async def go() -> tuple[dict[str, Any], dict[str, str]]:
        key = load_ledger_key(settings)
        engine = make_engine(settings.database_url)
        try:
            store = LedgerStore(engine, key)
            return await store.load_checked(await store.link_ids())
        finally:
            await engine.dispose()

    states, inoperable = _run(go())
    for link_id, s in sorted(states.items()):
        click.echo(
            f"{s.link_id}\t{s.game.label}\t{format_cents(s.meter_cents)}\t"
            f"rate {format_bp(s.rate_bp)}\treset {format_cents(s.reset_cents)}\t"
            f"{len(s.tables)} tables"
            + (f"\tINOPERABLE: {inoperable[link_id]}" if link_id in inoperable else "")
        )


@links.command("recover")
@db_option
@click.argument("link_id", type=LINK_ID)
@click.option(
    "--reason",
    type=Text(MULTILINE, required=True),
    required=True,
    help="Why the link's state was not what it should be.",
)
@click.option("--by", "by", type=NAME, required=True, help="Who asks for the recovery.")
@click.option(
    "--approved-by",
    type=NAME,
    required=True,
    help="A second person who approves it (not the same).",
)
def links_recover(
    database_url: str | None, link_id: str, reason: str, by: str, approved_by: str
) -> None:
    """Bring an inoperable link back on what its sealed history vouches for.

    Meter, chain head, rate, reset amount and paytable come from the history; each table is
    re-baselined from its next reading (nothing credited for what it counted meanwhile) and
    held until a technician releases it. The recovery is an entry of the history. A running
    controller on PostgreSQL picks it up at once; on SQLite, restart it.
    """
    settings = _settings(database_url)

    async def go() -> tuple[str | None, Any]:
        key = load_ledger_key(settings)
        engine = make_engine(settings.database_url)
        try:
            runtime = LinkRuntime(LedgerStore(engine, key))
            await runtime.load()
            found = runtime.is_inoperable(link_id)
            await runtime.recover(link_id, reason=reason, by=by, approved_by=approved_by)
            return found, runtime.states[link_id]
        finally:
            await engine.dispose()

    try:
        found, state = _run(go())
    except (StoreError, RuleViolation) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"link {link_id}: found {found or 'operable'}")
    click.echo(
        f"link {link_id} recovered: meter {format_cents(state.meter_cents)}, rate "
        f"{format_bp(state.rate_bp)}, reset {format_cents(state.reset_cents)}; its "
        f"{len(state.tables)} table(s) wait for a technician's release"
    )


# --------------------------------------------------------------------------------------- users


def _actor() -> str:
    import getpass

    try:
        return f"cli {getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def _users_run(database_url: str | None, work: Callable[[Any], Coroutine[Any, Any, T]]) -> T:
    """Run ``work(engine)`` against the database; refusals become one-line messages."""
    from controller.access.users import UserError
    from controller.storage.database import SchemaNotCurrent, check_schema

    settings = _settings(database_url)

    async def go() -> T:
        engine = make_engine(settings.database_url)
        try:
            await check_schema(engine)
            return await work(engine)
        finally:
            await engine.dispose()

    try:
        return _run(go())
    except (UserError, SchemaNotCurrent) as exc:
        raise click.ClickException(str(exc)) from exc


@main.group("users")
def users_group() -> None:
    """People who sign in to the web pages and the API (there are no default users)."""


@users_group.command("add")
@db_option
@click.argument("username", type=Text(USERNAME))
@click.option(
    "--role",
    required=True,
    type=click.Choice([r.value for r in Role]),
    help="What the user may do.",
)
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the password from the first line of standard input instead of asking twice.",
)
def users_add(database_url: str | None, username: str, role: str, password_stdin: bool) -> None:
    """Create a user. The first two admins are made this way; after them, admins, supervisors
    and commission agents are made by two admins through the API (one asks, another confirms).
    """
    from controller.access import duties, users

    try:
        users.check_username(username)
    except users.UserError as exc:
        raise click.BadParameter(str(exc), param_hint="USERNAME") from exc

    async def bootstrap_only(conn: Any) -> None:
        await duties.check_bootstrap(conn, users.Role(role))

    async def may_add(engine: Any) -> None:  # before asking for a password in vain
        async with engine.connect() as conn:
            await bootstrap_only(conn)

    _users_run(database_url, may_add)
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt(
            f"Password for {username}", hide_input=True, confirmation_prompt=True
        )
    try:
        users.check_password(password, username=username)
    except users.UserError as exc:
        raise click.ClickException(str(exc)) from exc

    async def work(engine: Any) -> Any:
        return await users.create_user(
            engine,
            username=username,
            role=role,
            password=password,
            actor=_actor(),
            at_us=SystemClock().now_us(),
            check=bootstrap_only,
        )

    user = _users_run(database_url, work)
    click.echo(f"user {user.username} created with the role {user.role.value}")


@users_group.command("list")
@db_option
def users_list(database_url: str | None) -> None:
    """Every user, their role and whether they may sign in."""
    from controller.access import users

    for user in _users_run(database_url, users.list_users):
        state = "disabled" if user.disabled else "enabled"
        click.echo(
            f"{user.username}\t{user.role.value}\t{state}\t"
            f"created {iso(user.created_at_us)} by {user.created_by}"
        )


@users_group.command("disable")
@db_option
@click.argument("username", type=Text(USERNAME))
def users_disable(database_url: str | None, username: str) -> None:
    """Stop a user signing in; their tokens stop working within seconds."""
    from controller.access import users

    async def work(engine: Any) -> Any:
        return await users.disable_user(
            engine, username=username, actor=_actor(), at_us=SystemClock().now_us()
        )

    _users_run(database_url, work)
    click.echo(f"user {username} disabled")


@main.group("display-tokens")
def display_tokens() -> None:
    """Read-only tokens for floor displays."""


@display_tokens.command("create")
@db_option
@click.argument("name", type=NAME)
def display_tokens_create(database_url: str | None, name: str) -> None:
    """A token for the display NAME, printed this once only (only its digest is kept)."""
    from controller.access import users

    async def work(engine: Any) -> Any:
        return await users.create_device_token(
            engine, name=name, actor=_actor(), at_us=SystemClock().now_us()
        )

    device, token = _users_run(database_url, work)
    click.echo(f"display token {device.token_id} for {device.name!r} (shown this once):", err=True)
    click.echo(token)


if __name__ == "__main__":  # pragma: no cover
    main()
