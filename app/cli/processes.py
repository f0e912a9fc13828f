"""The commands that run until stopped: the demo, the table simulator, the controller and a
web process on its own."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import click
from pydantic import ValidationError

from app.cli.common import (
    BadFile,
    check_port,
    db_option,
    main,
    reach,
    run,
    serving_settings,
)
from controller.core.games import Game
from controller.rules.jurisdictions import jurisdiction
from controller.settings import settings_refused
from controller.storage.database import backend_of
from link_adapters.simulator.table_types import DEALT_GAMES


def _known_jurisdiction(
    _ctx: click.Context, _param: click.Parameter, value: str | None
) -> str | None:
    """A jurisdiction the controller knows, as its key; refused naming the ones it knows."""
    if value is None:
        return None
    try:
        return jurisdiction(value).key
    except KeyError as exc:
        raise click.BadParameter(str(exc.args[0])) from None


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
    help="Seconds between forced jackpot hands, in turn at the links with a meter (a royal "
    "flush's real odds are 1 in 649,740 hands).",
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
@click.option(
    "--jurisdiction",
    default=None,
    callback=_known_jurisdiction,
    help="The jurisdiction the demo runs under, and the floor it allows: indiana (no level "
    "limit, no mystery, no envy) or new-jersey (every jackpot shape).  [default: "
    "PROGRESSIVE_JURISDICTION, or indiana]",
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
    jurisdiction: str | None,
) -> None:
    """Simulated tables of every game, every jackpot shape the jurisdiction allows, the
    controller and the web server, on SQLite."""
    from app.demo import DemoError, DemoOptions, demo_settings, run_demo

    try:
        demo_settings(folder, jurisdiction)
    except ValidationError as exc:
        raise click.ClickException(f"settings refused: {settings_refused(exc)}") from None
    check_port(host, port)  # before the folder, its database and keys are made
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
        jurisdiction=jurisdiction,
    )
    try:
        run(run_demo(options, say=lambda line: click.echo(line)))
    except DemoError as exc:
        raise click.ClickException(str(exc)) from None


@main.command("simulate")
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A TOML file of gateways and tables (default: one TCP gateway per five-card game, "
    "15020-15022).",
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
    type=click.Choice([g.value for g in DEALT_GAMES]),
    default=None,
    help="Only this game's gateway (Super Sevens on 15023 and Pai Gow Poker on 15024 speak "
    "register map v2).",
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
    from link_adapters.simulator.dealer import DEFAULT_ROUNDS_PER_SECOND
    from link_adapters.simulator.gateway import (
        DEFAULT_FLOOR,
        DEFAULT_PORTS,
        GatewaySpec,
        SimulatorError,
    )
    from link_adapters.simulator.server import SimFloor

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
        games = [Game(game)] if game is not None else list(DEFAULT_FLOOR)
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
        run(go())
    except SimulatorError as exc:
        raise click.ClickException(str(exc)) from exc


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
    from controller.runtime.config import load_floor_config
    from controller.runtime.config_sections import ConfigError

    try:
        floor = load_floor_config(config_path)  # the whole file, before anything is written
    except ConfigError as exc:
        raise BadFile(f"{exc}\nnothing was written; correct the file and run again") from None
    settings = serving_settings(database_url)  # the database is checked below
    if settings.checkpoint_key_file is None and not (no_checkpoints or settings.checkpoints_off):
        raise click.ClickException(
            "no checkpoint signing key: the meter history would not be anchored outside the "
            "database. Make one with `progressive ledger keygen --out DIR` and set "
            "PROGRESSIVE_CHECKPOINT_KEY_FILE, or run with --no-checkpoints knowingly"
        )
    run(reach(settings))
    check_port(host, port)  # before the file's new links are created and filed
    run(
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

    check_port(host, port)
    settings = serving_settings(database_url)
    if backend_of(settings.database_url) != "sqlite":
        # run_web refuses SQLite itself, saying why: a web process needs PostgreSQL.
        run(reach(settings))
    try:
        run(
            run_web(
                settings,
                say=lambda line: click.echo(line, err=True),
                host=host,
                port=port,
            )
        )
    except WebOnlyError as exc:
        raise click.ClickException(str(exc)) from exc
