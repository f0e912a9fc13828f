"""``progressive links``: creating links (each filed with the commission), listing them and
recovering one that is inoperable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click

from app.cli.common import (
    AMOUNT,
    LINK_ID,
    NAME,
    RATE,
    Text,
    database,
    db_option,
    floor_service,
    main,
    refused,
    run,
    settings_for,
    stated_lines,
)
from app.cli.link_options import (
    LEVELS_HELP,
    LIST_HEADER,
    PAYTABLE_HELP,
    list_line,
    read_levels,
    read_paytables,
    show_lines,
    status_of,
    table_game,
)
from controller.core.games import Game
from controller.core.money import (
    MAX_DENOMINATION_CENTS,
    MissingUnit,
    MoneyError,
    check_cents,
    format_bp,
    format_cents,
    parse_cents,
)
from controller.core.reducer import HitPolicy, TableConfig
from controller.paperwork import record_views
from controller.rules import RuleViolation
from controller.rules.statement import Statement
from controller.rules.wagers import check_denomination
from controller.runtime.clock import SystemClock
from controller.runtime.config_entries import CREDITS_PER_SEAT, MIN_ROUND_MS
from controller.runtime.config_sections import id_problem, text_problem
from controller.runtime.floor_approvals import approvals_by_link, changes_in_force
from controller.runtime.link_specs import SpecError, plan_link
from controller.runtime.new_links import create_and_file_link
from controller.settings import Settings, load_ledger_key
from controller.storage.links import TableSpec
from controller.storage.store import LedgerStore
from controller.text import MULTILINE


@main.group()
def links() -> None:
    """Links and their tables."""


def _table_spec(text: str, game: Game, min_round_s: int, max_credits: int) -> TableSpec:
    table_id, _, rest = text.partition(":")
    denom, _, game_text = rest.partition(":")
    if not table_id:
        raise click.BadParameter(
            f"{text!r}: give a table as ID, ID:DENOMINATION or ID:DENOMINATION:GAME, e.g. T1:$1"
        )
    if (problem := id_problem(table_id)) is not None:
        raise click.BadParameter(f"table id {problem}", param_hint="--table")
    dealt = table_game(game_text, table_id) or game
    fixed = dealt.fixed_wager_cents
    try:
        cents = parse_cents(denom, unit_required=True) if denom else (fixed or 100)
        check_cents(f"table {table_id}: denomination", cents, low=1, high=MAX_DENOMINATION_CENTS)
    except MissingUnit as exc:
        problem = f"table {table_id}: denomination {exc}"
        raise click.BadParameter(problem, param_hint="--table") from exc
    except MoneyError as exc:
        raise click.BadParameter(str(exc), param_hint="--table") from exc
    try:
        check_denomination(dealt, cents)
    except RuleViolation as exc:
        raise click.BadParameter(f"table {table_id}: {refused(exc)}") from exc
    return TableSpec(
        config=TableConfig(
            table_id=table_id,
            denomination_cents=cents,
            max_credits_per_seat_round=max_credits,
            min_round_us=min_round_s * 1_000_000,
            game=None if dealt is game else dealt,
        )
    )


def _located(
    specs: list[TableSpec], locations: tuple[str, ...], settings: Settings
) -> list[TableSpec]:
    """The tables with their locations: one --location for all, or one per --table.
    68 IAC 10-1-1.1(e)(2): the filing gives the location of every table of the progressive."""
    if not locations:
        clause = settings.law.clauses.location
        raise click.BadParameter(
            f'give the tables\' location (e.g. --location "pit 3"), once for all or once '
            f"per --table: the filing gives the location of every table ({clause})",
            param_hint="--location",
        )
    if len(locations) == 1:
        locations = locations * len(specs)
    if len(locations) != len(specs):
        raise click.BadParameter(
            f"{len(locations)} locations for {len(specs)} tables: give one for all of them, "
            "or one per --table in the same order",
            param_hint="--location",
        )
    return [
        TableSpec(config=s.config, name=s.name, location=where)
        for s, where in zip(specs, locations, strict=True)
    ]


@links.command("create")
@db_option
@click.option("--id", "link_id", type=LINK_ID, required=True)
@click.option("--name", type=NAME, default=None)
@click.option("--game", type=click.Choice([g.value for g in Game]), required=True)
@click.option(
    "--rate",
    type=RATE,
    default=None,
    help="Rate of progression with its %, e.g. 82.5% (a classic link).",
)
@click.option(
    "--reset",
    "reset",
    type=AMOUNT,
    default=None,
    help="Reset amount with its $, e.g. $10,000 (a classic link).",
)
@click.option("--levels", "levels_file", type=click.Path(dir_okay=False), help=LEVELS_HELP)
@click.option("--paytable", "paytable_file", type=click.Path(dir_okay=False), help=PAYTABLE_HELP)
@click.option(
    "--fixed-pay",
    is_flag=True,
    help="A fixed-pay link: no meter, a paytable of fixed amounts only (the Let It Ride bonus "
    "always is one).",
)
@click.option(
    "--table",
    "tables",
    multiple=True,
    required=True,
    help="ID, ID:DENOMINATION or ID:DENOMINATION:GAME, the denomination with its $ (e.g. "
    "T1:$1, D1:$5:caribbean_draw); repeat for each table.",
)
@click.option(
    "--location",
    "locations",
    type=NAME,
    multiple=True,
    help='Where the tables stand on the floor, e.g. "pit 3": once for every table, or once '
    "per --table in the same order. The filing gives each table's location.",
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
    rate: int | None,
    reset: int | None,
    levels_file: str | None,
    paytable_file: str | None,
    fixed_pay: bool,
    tables: tuple[str, ...],
    locations: tuple[str, ...],
    policy: str,
    min_round_seconds: int,
    max_credits_per_seat: int,
    actor: str,
) -> None:
    """Create a link with its tables: a classic link (--rate, --reset), a link of levels
    (--levels) or a fixed-pay link, with the games' default paytables unless --paytable."""
    settings = settings_for(database_url)
    g = Game(game)
    for hint, problem in (
        ("--id", id_problem(link_id)),
        ("--name", None if name is None else text_problem(name)),
    ):
        if problem is not None:
            raise click.BadParameter(problem, param_hint=hint)
    try:
        rate_bp = None if rate is None else settings.law.check_rate_of_progression(rate)
        reset_cents = None if reset is None else check_cents("the reset amount", reset)
    except RuleViolation as exc:
        raise click.BadParameter(refused(exc)) from exc
    except MoneyError as exc:
        raise click.BadParameter(str(exc)) from exc
    specs = _located(
        [_table_spec(t, g, min_round_seconds, max_credits_per_seat) for t in tables],
        locations,
        settings,
    )
    try:
        plan = plan_link(
            game=g,
            rate_bp=rate_bp,
            reset_cents=reset_cents,
            levels=read_levels(levels_file),
            paytables=read_paytables(paytable_file, g),
            fixed_pay=fixed_pay,
            table_games=[t.config.game or g for t in specs],
            law=settings.law,
        )
    except SpecError as exc:
        raise click.BadParameter(str(exc)) from exc

    async def go() -> str:
        async with floor_service(settings) as service:
            filed = await create_and_file_link(
                service.runtime,
                service.filing_desk,
                link_id=link_id,
                name=name or link_id,
                game=g,
                rate_bp=plan.rate_bp,
                reset_cents=plan.reset_cents,
                hit_policy=HitPolicy(policy),
                tables=specs,
                at_us=service.now_us(),
                actor=actor,
                levels=plan.levels,
                paytable=plan.paytable,
                paytables=plan.paytables or None,
            )
            return str(filed.submission_id)

    submission_id = run(go())
    if plan.fixed_pay:
        terms = "fixed-pay link: no meter"
    elif plan.levels is not None:
        terms = f"{len(plan.levels)} levels, rate {format_bp(plan.rate_bp)}"
    else:
        terms = f"rate {format_bp(plan.rate_bp)}, reset {format_cents(plan.reset_cents)}"
    games = ", ".join(x.label for x in (g, *plan.paytables))
    click.echo(f"link {link_id}: {games}, {terms}, {len(specs)} table(s)")
    click.echo(
        f"filed with the commission as submission {submission_id}; the link plays once a "
        "commission agent approves it (/commission)"
    )
    for line in stated_lines(settings.statement([link_id] if settings.demonstration else ())):
        click.echo(line)


@dataclass(frozen=True, slots=True)
class _Links:
    states: dict[str, Any]
    inoperable: dict[str, str]
    go_live: dict[str, int | None]
    names: dict[str, str]
    changes: dict[str, list[str]]  # each link's terms set by an approved change
    settings: Settings

    def statement(self, *link_ids: str) -> Statement:
        """What the output states: the jurisdiction, and demonstration mode (the installation
        in it, or the links shown, ``link_ids`` or every one, that were opened in it)."""
        shown = link_ids or tuple(self.states)
        return self.settings.statement(
            lid for lid in shown if lid in self.states and self.states[lid].demonstration
        )


async def _read_links(database_url: str | None, link_ids: tuple[str, ...] = ()) -> _Links:
    settings = settings_for(database_url)
    key = load_ledger_key(settings)
    async with database(settings, schema="check", links=link_ids) as engine:
        store = LedgerStore(engine, key, law=settings.law)
        states, inoperable = await store.load_checked(await store.link_ids())
        go_live = await store.go_live_times()
        names = await record_views.link_names(engine)
        approvals = await approvals_by_link(engine)
    changes = {
        link_id: changes_in_force(state, approvals.get(link_id, []))
        for link_id, state in states.items()
    }
    return _Links(states, inoperable, go_live, names, changes, settings)


@links.command("list")
@db_option
def links_list(database_url: str | None) -> None:
    """Every link, one a line under a header: its STATE (approved, AWAITING APPROVAL by the
    commission, INOPERABLE), games, meter, rate, reset, tables, kind, and the terms it plays
    by an approved change (what a floor file's starting terms give way to). Above the table,
    on standard error (the table stays one header and its rows for scripts), the
    jurisdiction the links play under and, when it applies, demonstration mode."""
    found = run(_read_links(database_url))
    if not found.states:
        click.echo("no links yet: `progressive links create` files one", err=True)
        return
    now_us = SystemClock().now_us()
    for line in stated_lines(found.statement()):
        click.echo(line, err=True)
    click.echo(LIST_HEADER)
    for link_id, s in sorted(found.states.items()):
        status = status_of(link_id, found.go_live, found.inoperable, now_us)
        click.echo(list_line(s, status, found.changes[link_id]))


@links.command("show")
@db_option
@click.argument("link_id", type=LINK_ID)
def links_show(database_url: str | None, link_id: str) -> None:
    """One link: its levels, games, paytables (with levels and envy) and tables."""
    found = run(_read_links(database_url, (link_id,)))
    state = found.states[link_id]
    status = status_of(link_id, found.go_live, found.inoperable, SystemClock().now_us())
    name = found.names.get(link_id, link_id)
    for line in show_lines(state, name, status, found.changes[link_id]):
        click.echo(line)
    for line in stated_lines(found.statement(link_id)):
        click.echo(line)


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
    controller on PostgreSQL picks it up at once; on SQLite, restart it. A link held by a
    failed check of the software is recovered so too, once the install passes its check again
    (made here first).
    """
    settings = settings_for(database_url)

    async def go() -> tuple[str | None, Any]:
        # The install this command runs from is the controller's: the service started for it
        # checks it first, and while it fails its check, no link is recovered
        # (controller.rules.software).
        async with floor_service(settings, links=(link_id,)) as service:
            found = service.memory.is_inoperable(link_id)
            await service.commands.recover(link_id, reason=reason, by=by, approved_by=approved_by)
            return found, service.memory.states[link_id]

    found, state = run(go())
    click.echo(f"link {link_id}: found {found or 'operable'}")
    click.echo(
        f"link {link_id} recovered: meter {format_cents(state.meter_cents)}, rate "
        f"{format_bp(state.rate_bp)}, reset {format_cents(state.reset_cents)}; its "
        f"{len(state.tables)} table(s) wait for a technician's release"
    )
