"""``progressive users`` and ``progressive display-tokens``: the people who sign in and the
floor displays' read-only tokens."""

from __future__ import annotations

import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import click

from app.cli.common import NAME, Text, database, db_option, main, run, settings_for
from controller.access.accounts import Accounts
from controller.access.roles import UserError
from controller.paperwork.export import iso
from controller.roles import Role
from controller.runtime.clock import SystemClock
from controller.text import USERNAME

T = TypeVar("T")


def _actor() -> str:
    import getpass

    try:
        return f"cli {getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def _users_run(database_url: str | None, work: Callable[[Accounts], Coroutine[Any, Any, T]]) -> T:
    """Run ``work(accounts)`` on the database's accounts, dated by this host's clock (a refusal
    is said in one line, as by every command: ``app.cli.common.Commands``)."""
    settings = settings_for(database_url)

    async def go() -> T:
        async with database(settings, schema="check") as engine:
            return await work(Accounts(engine, SystemClock()))

    return run(go())


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
    """Create a user. An installation's first two admins are made this way, and displays,
    dealers and auditors; technicians, supervisors, commission agents and, once the
    installation has had two admins, every admin are made by two admins through the API (one
    asks, another confirms). When the admins cannot, see ``progressive users recover``.
    """
    from controller.access import users

    try:
        users.check_username(username)
    except UserError as exc:
        raise click.BadParameter(str(exc), param_hint="USERNAME") from exc

    async def may_add(accounts: Accounts) -> None:  # before asking for a password in vain
        await accounts.check_host_may_add(Role(role))

    _users_run(database_url, may_add)
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt(
            f"Password for {username}", hide_input=True, confirmation_prompt=True
        )
    users.check_password(password, username=username)

    async def work(accounts: Accounts) -> Any:
        return await accounts.add_on_host(
            username=username, role=Role(role), password=password, actor=_actor()
        )

    user = _users_run(database_url, work)
    click.echo(f"user {user.username} created with the role {user.role.value}")


@users_group.command("list")
@db_option
def users_list(database_url: str | None) -> None:
    """Every user, their role and whether they may sign in."""
    for user in _users_run(database_url, Accounts.all_users):
        state = "disabled" if user.disabled else "enabled"
        click.echo(
            f"{user.username}\t{user.role.value}\t{state}\t"
            f"created {iso(user.created_at_us)} by {user.created_by}"
        )


@users_group.command("disable")
@db_option
@click.argument("username", type=Text(USERNAME))
def users_disable(database_url: str | None, username: str) -> None:
    """Stop a user signing in; their tokens stop working within seconds. The last two enabled
    admins are not disabled: two admins make another first."""

    async def work(accounts: Accounts) -> Any:
        return await accounts.disable(username=username, actor=_actor())

    _users_run(database_url, work)
    click.echo(f"user {username} disabled")


@users_group.command("recover")
@db_option
@click.argument("username", type=Text(USERNAME))
@click.option("--reason", required=True, help="Why the admins left cannot make an admin.")
def users_recover(database_url: str | None, username: str, reason: str) -> None:
    """Ask for a new admin from this host, when the admins left cannot make one (one of the
    last two locked out, or gone). An enabled admin confirms it through the API; this
    command shows the first half of the new admin's one-time code, and the confirming admin
    is shown the second: no one person makes an admin. Both are in the audit log."""

    async def work(accounts: Accounts) -> Any:
        return await accounts.ask_recovery(username=username, reason=reason, actor=_actor())

    answer = _users_run(database_url, work)
    request = answer.request
    click.echo(
        f"recovery of admin {username} asked for (account request {request.request_id}); an "
        "enabled admin confirms it with "
        f"POST /api/v1/account-requests/{request.request_id}/confirm and is shown the second "
        f"half of the code, before {iso(request.expires_at_us)}",
        err=True,
    )
    click.echo(f"request {request.request_id}")
    click.echo(f"first half of the code, for {username} only: {answer.first_half}")


@main.group("display-tokens")
def display_tokens() -> None:
    """Read-only tokens for floor displays."""


@display_tokens.command("create")
@db_option
@click.argument("name", type=NAME)
def display_tokens_create(database_url: str | None, name: str) -> None:
    """A token for the display NAME, printed this once only (only its digest is kept)."""

    async def work(accounts: Accounts) -> Any:
        return await accounts.create_device_token(name=name, actor=_actor())

    device, token = _users_run(database_url, work)
    click.echo(f"display token {device.token_id} for {device.name!r} (shown this once):", err=True)
    click.echo(token)
