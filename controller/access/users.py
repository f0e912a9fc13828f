"""People who sign in, and the read-only tokens of floor displays.

Passwords are kept only as argon2 hashes (``hashing``), display tokens only as their SHA-256
(``device_tokens``): what the database holds cannot be used to sign in. Every change lands in
the audit log with who, when, and before and after (never a secret). Every change of a
password, role or state raises the user's token generation, which ends every token issued
before it.

These are the store's own operations: whether one admin may ask for a change, or two must
agree, is decided by ``controller.access.duties``.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from controller.access import passwords
from controller.access.device_tokens import (
    DeviceToken,
)
from controller.access.hashing import hash_password, verify_password
from controller.access.roles import (
    AlreadyExists,
    UnknownDeviceToken,
    UnknownUser,
    UserError,
    check_role,
)
from controller.roles import Role
from controller.storage import access_repo, audit
from controller.storage.access_repo import Credentials, UserRecord
from controller.storage.audit import AuditEntry, write_audit
from controller.storage.errors import Duplicate
from controller.storage.handles import Connection, Database
from controller.storage.unit_of_work import connected, transaction
from controller.text import USERNAME, TextRefused

__all__ = [
    "NO_PASSWORD",
    "AlreadyExists",
    "AuditEntry",
    "DeviceToken",
    "UnknownDeviceToken",
    "UnknownUser",
    "User",
    "add_user",
    "audit_entries",
    "authenticate",
    "change_own_password",
    "check_password",
    "check_username",
    "create_user",
    "disable_in",
    "disable_user",
    "ensure_demo_users",
    "get_user",
    "list_users",
    "new_credentials",
    "set_password",
    "shown",
    "user_of",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class User:
    username: str
    role: Role
    created_at_us: int
    created_by: str
    disabled: bool
    # Waiting for its person to set a password with a one-time code; nothing else until then.
    must_set_password: bool = False
    token_generation: int = 0


# ------------------------------------------------------------------------------ checks


def check_username(username: str) -> str:
    try:
        return USERNAME.check(username)
    except TextRefused as exc:
        raise UserError(str(exc)) from None


def check_password(password: str, *, username: str | None = None) -> str:
    try:
        return passwords.check_password(password, username=username)
    except passwords.PasswordRefused as exc:
        raise UserError(str(exc)) from None


# ------------------------------------------------------------------------------- audit


async def audit_entries(
    engine: Database,
    *,
    since_us: int | None = None,
    until_us: int | None = None,
    limit: int = 1000,
    actor: str | None = None,
    action: str | None = None,
) -> list[AuditEntry]:
    """The audit log of a period (``until`` exclusive), newest first, of ``actor`` and of
    ``action`` when given."""
    async with connected(engine) as conn:
        return await audit.audit_entries(
            conn, since_us=since_us, until_us=until_us, limit=limit, actor=actor, action=action
        )


# ------------------------------------------------------------------------------- users


def user_of(record: UserRecord) -> User:
    return User(
        username=record.username,
        role=Role(record.role),
        created_at_us=record.created_at_us,
        created_by=record.created_by,
        disabled=record.disabled,
        must_set_password=record.must_set_password,
        token_generation=record.token_generation,
    )


def shown(user: User) -> dict[str, Any]:
    """What the audit log says of a user (never a secret)."""
    return {"role": user.role.value, "disabled": user.disabled}


# An argon2 hash no password matches: the stored "password" of an account that has a one-time
# code instead, until its person sets one.
NO_PASSWORD = ""


def new_credentials(
    *, password_hash: str = NO_PASSWORD, code_sha256: str | None = None, expires_at_us: int | None
) -> Credentials:
    """What replaces a user's credentials; storing them ends every token the user holds."""
    return Credentials(
        password_hash=password_hash, code_sha256=code_sha256, code_expires_at_us=expires_at_us
    )


async def _existing(conn: Connection, username: str) -> User:
    record = await access_repo.load_user(conn, username)
    if record is None:
        raise UnknownUser(f"no user {username!r}")
    return user_of(record)


async def get_user(engine: Database, username: str) -> User | None:
    async with connected(engine) as conn:
        record = await access_repo.load_user(conn, username)
    return None if record is None else user_of(record)


async def list_users(engine: Database) -> list[User]:
    async with connected(engine) as conn:
        records = await access_repo.all_users(conn)
    return [user_of(r) for r in records]


async def create_user(
    engine: Database,
    *,
    username: str,
    role: str,
    password: str,
    actor: str,
    at_us: int,
    check: Callable[[Connection], Awaitable[None]] | None = None,
    then: Callable[[Connection], Awaitable[None]] | None = None,
) -> User:
    """A new user with the password ``actor`` chose for them. ``check`` runs first in the same
    transaction and may refuse (the command line's bootstrap rule); ``then`` runs after the
    user is added, in it too (the bootstrap closing behind the second admin)."""
    check_username(username)
    checked_role = check_role(role)
    check_password(password, username=username)
    hashed = await hash_password(password)
    try:
        async with transaction(engine) as conn:
            if check is not None:
                await check(conn)
            user = await add_user(
                conn,
                username=username,
                role=checked_role,
                credentials=new_credentials(password_hash=hashed, expires_at_us=None),
                actor=actor,
                at_us=at_us,
            )
            if then is not None:
                await then(conn)
            return user
    except Duplicate as exc:  # created by someone else at the same moment
        raise AlreadyExists(f"there is already a user {username!r}") from exc


async def add_user(
    conn: Connection,
    *,
    username: str,
    role: Role,
    credentials: Credentials,
    actor: str,
    at_us: int,
    created_by: str | None = None,
    audit_after: dict[str, Any] | None = None,
) -> User:
    """Insert a user with ``credentials`` (``new_credentials``) in the caller's transaction;
    ``actor`` does it (and is its creator unless ``created_by`` names another)."""
    if await access_repo.load_user(conn, username) is not None:
        raise AlreadyExists(f"there is already a user {username!r}")
    await access_repo.insert_user(
        conn,
        username=username,
        role=role.value,
        credentials=credentials,
        created_at_us=at_us,
        created_by=created_by or actor,
    )
    user = await _existing(conn, username)
    await write_audit(
        conn,
        at_us=at_us,
        actor=actor,
        action="user.create",
        target=f"user {username}",
        after={**shown(user), **(audit_after or {})},
    )
    return user


async def authenticate(
    engine: Database, username: str, password: str, *, at_us: int | None = None
) -> User | None:
    """The user when the password is right and the account enabled; otherwise None.

    An account waiting for its password is returned (``must_set_password``) when ``password``
    is its one-time code and the code has not expired at ``at_us``; the caller lets it do
    nothing but set its password. The same work is done whatever the reason for refusing, so
    the answer's timing does not tell whether a username exists or waits for a password.
    """
    async with connected(engine) as conn:
        row = await access_repo.load_user(conn, username)
    if row is None or row.must_set_password:
        await verify_password(None, password)
        ok = (
            row is not None
            and at_us is not None
            and row.reset_code_expires_at_us is not None
            and at_us <= row.reset_code_expires_at_us
            and passwords.code_matches(row.reset_code_sha256, password)
        )
    else:
        ok = await verify_password(row.password_hash, password)
    if row is None or not ok or row.disabled:
        return None
    return user_of(row)


async def disable_user(engine: Database, *, username: str, actor: str, at_us: int) -> User:
    async with transaction(engine) as conn:
        return await disable_in(conn, username=username, actor=actor, at_us=at_us)


async def disable_in(conn: Connection, *, username: str, actor: str, at_us: int) -> User:
    """``disable_user`` in the caller's transaction (which may refuse after it)."""
    row = await access_repo.load_user(conn, username)
    if row is None:
        raise UnknownUser(f"no user {username!r}")
    before = user_of(row)
    after = replace(before, disabled=True, token_generation=before.token_generation + 1)
    await access_repo.disable_user(conn, username)
    await write_audit(
        conn,
        at_us=at_us,
        actor=actor,
        action="user.disable",
        target=f"user {username}",
        before=shown(before),
        after=shown(after),
    )
    return after


async def set_password(
    engine: Database, *, username: str, password: str, actor: str, at_us: int
) -> None:
    """A new password for ``username``, set by ``actor``; every token of theirs ends."""
    check_password(password, username=username)
    hashed = await hash_password(password)
    async with transaction(engine) as conn:
        row = await access_repo.load_user(conn, username)
        if row is None:
            raise UnknownUser(f"no user {username!r}")
        await _store_password(conn, username, hashed, actor=actor, at_us=at_us)


async def _store_password(
    conn: Connection, username: str, hashed: str, *, actor: str, at_us: int
) -> None:
    await access_repo.set_credentials(
        conn, username, new_credentials(password_hash=hashed, expires_at_us=None)
    )
    # The fact of the change is recorded, never the password or its hash.
    await write_audit(
        conn,
        at_us=at_us,
        actor=actor,
        action="user.set_password",
        target=f"user {username}",
        before={"password": "previous"},
        after={"password": "changed", "tokens": "revoked"},
    )


async def change_own_password(
    engine: Database, *, username: str, current: str, new: str, at_us: int
) -> User | None:
    """A person's own new password, given their current one or their one-time code.

    None when ``current`` is wrong, the code expired or the account is disabled (nothing
    changes); ``UserError`` when the new password is refused. Every earlier token ends.
    """
    check_password(new, username=username)
    if new == current:
        raise UserError("the new password must differ from the current one")
    user = await authenticate(engine, username, current, at_us=at_us)
    if user is None:
        return None
    hashed = await hash_password(new)
    async with transaction(engine) as conn:
        # Changed meanwhile (another reset, disabled): this password is not for that account.
        if not await access_repo.set_credentials(
            conn,
            username,
            new_credentials(password_hash=hashed, expires_at_us=None),
            if_generation=user.token_generation,
        ):
            return None
        await write_audit(
            conn,
            at_us=at_us,
            actor=username,
            action="user.change_password",
            target=f"user {username}",
            before={"password": "one-time code" if user.must_set_password else "previous"},
            after={"password": "chosen by the user", "tokens": "revoked"},
        )
        return await _existing(conn, username)


# The demo's second admin, technician and supervisor: every two-person step (an account
# change confirmed by a second admin, a second signature other than the verifier's, a
# correction approved by a supervisor other than the one who asked) can be tried from the
# pages alone.
DEMO_SECONDS = (
    ("admin-2", Role.ADMIN),
    ("technician-2", Role.TECHNICIAN),
    ("supervisor-2", Role.SUPERVISOR),
)


async def ensure_demo_users(engine: Database, *, at_us: int) -> list[tuple[str, str, str]]:
    """One user per role, named after the role, then a second admin, technician and
    supervisor (``DEMO_SECONDS``), each with a fresh random password.

    For the demo only: it prints what this returns (username, role, password). Users that
    exist from an earlier demo run get a new password, and are enabled with their role.
    """
    made: list[tuple[str, str, str]] = []
    for username, role in [*((r.value, r) for r in Role), *DEMO_SECONDS]:
        password = secrets.token_urlsafe(12)
        hashed = await hash_password(password)
        async with transaction(engine) as conn:
            row = await access_repo.load_user(conn, username)
            if row is None:
                await access_repo.insert_user(
                    conn,
                    username=username,
                    role=role.value,
                    credentials=new_credentials(password_hash=hashed, expires_at_us=None),
                    created_at_us=at_us,
                    created_by="demo",
                )
                action, before = "user.create", None
            else:
                await access_repo.change_account(
                    conn,
                    username,
                    role=role.value,
                    credentials=new_credentials(password_hash=hashed, expires_at_us=None),
                    enable=True,
                )
                action = "user.set_password"
                before = {"role": row.role, "disabled": bool(row.disabled)}
            await write_audit(
                conn,
                at_us=at_us,
                actor="demo",
                action=action,
                target=f"user {username}",
                before=before,
                after={"role": role.value, "disabled": False, "password": "demo"},
            )
        made.append((username, role.value, password))
    return made
