"""People who sign in, and the read-only tokens of floor displays.

Passwords are kept only as argon2 hashes, display tokens only as their SHA-256: what the
database holds cannot be used to sign in. Hashing runs in a worker thread so a login never
stalls the polling loop. Every change lands in the audit log with who, when, and before and
after (never a secret). Every change of a password, role or state raises the user's token
generation, which ends every token issued before it.

These are the store's own operations: whether one admin may ask for a change, or two must
agree, is decided by ``controller.access.duties``.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import lru_cache
from typing import Any, TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from controller.access import passwords
from controller.access.passwords import MAX_PASSWORD as MAX_PASSWORD
from controller.access.passwords import MIN_PASSWORD as MIN_PASSWORD
from controller.storage.models import AuditRow, DeviceTokenRow, UserRow
from controller.storage.store import write_audit
from controller.text import ONE_LINE, USERNAME, TextRefused

T = TypeVar("T")


class Role(StrEnum):
    DISPLAY = "display"
    DEALER = "dealer"
    TECHNICIAN = "technician"
    SUPERVISOR = "supervisor"
    AUDITOR = "auditor"
    COMMISSION_AGENT = "commission_agent"
    ADMIN = "admin"


DEVICE_TOKEN_PREFIX = "pdt_"


class UserError(ValueError):
    """Input refused: a bad username, a short password, an unknown role."""


class UnknownUser(UserError):
    pass


class UnknownDeviceToken(UserError):
    pass


class AlreadyExists(UserError):
    pass


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


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceToken:
    token_id: str
    name: str
    role: Role
    created_at_us: int
    created_by: str
    revoked_at_us: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEntry:
    audit_id: int
    at_us: int
    actor: str
    action: str
    target: str
    before: str | None
    after: str | None


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


def check_role(role: str) -> Role:
    try:
        return Role(role)
    except ValueError:
        roles = ", ".join(r.value for r in Role)
        raise UserError(f"{role!r} is not a role; the roles are {roles}") from None


# ----------------------------------------------------------------------------- hashing

_hasher = PasswordHasher()
# Each argon2 hash takes 64 MiB: a burst of sign-ins must not take the machine's memory.
_hashing = threading.BoundedSemaphore(4)


def _bounded(fn: Callable[..., T], *args: Any) -> T:
    with _hashing:
        return fn(*args)


async def _off_loop(fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn`` in a thread of its own that ends with it: a slow hash never stalls polling,
    and no idle worker threads outlive the call."""
    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="argon2")
    try:
        return await loop.run_in_executor(pool, _bounded, fn, *args)
    finally:
        pool.shutdown(wait=False)


async def hash_password(password: str) -> str:
    return await _off_loop(_hasher.hash, password)


def _verify(hashed: str, password: str) -> bool:
    try:
        return _hasher.verify(hashed, password)
    except (VerificationError, InvalidHashError):
        return False


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return _hasher.hash(secrets.token_urlsafe(16))


def _verify_unknown(password: str) -> bool:
    _verify(_dummy_hash(), password)
    return False


async def verify_password(hashed: str | None, password: str) -> bool:
    """Argon2 verification; an unknown user costs the same time as a wrong password."""
    if hashed is None:
        return await _off_loop(_verify_unknown, password)
    return await _off_loop(_verify, hashed, password)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# ------------------------------------------------------------------------------- audit


_audit = write_audit


async def audit_entries(
    engine: AsyncEngine,
    *,
    since_us: int | None = None,
    until_us: int | None = None,
    limit: int = 1000,
) -> list[AuditEntry]:
    """The audit log of a period (``until`` exclusive), newest first."""
    query = select(AuditRow).order_by(AuditRow.at_us.desc(), AuditRow.audit_id.desc())
    if since_us is not None:
        query = query.where(AuditRow.at_us >= since_us)
    if until_us is not None:
        query = query.where(AuditRow.at_us < until_us)
    async with engine.connect() as conn:
        rows = (await conn.execute(query.limit(limit))).all()
    return [
        AuditEntry(
            audit_id=r.audit_id,
            at_us=r.at_us,
            actor=r.actor,
            action=r.action,
            target=r.target,
            before=r.before,
            after=r.after,
        )
        for r in rows
    ]


# ------------------------------------------------------------------------------- users


def user_of(row: Any) -> User:
    return User(
        username=row.username,
        role=Role(row.role),
        created_at_us=row.created_at_us,
        created_by=row.created_by,
        disabled=bool(row.disabled),
        must_set_password=bool(row.must_set_password),
        token_generation=row.token_generation,
    )


def shown(user: User) -> dict[str, Any]:
    """What the audit log says of a user (never a secret)."""
    return {"role": user.role.value, "disabled": user.disabled}


async def load_user_row(conn: AsyncConnection, username: str) -> Any:
    return (await conn.execute(select(UserRow).where(UserRow.username == username))).first()


# An argon2 hash no password matches: the stored "password" of an account that has a one-time
# code instead, until its person sets one.
NO_PASSWORD = ""


def new_credentials(
    *, password_hash: str = NO_PASSWORD, code_sha256: str | None = None, expires_at_us: int | None
) -> dict[str, Any]:
    """The column values that replace a user's credentials, ending every token they hold."""
    return {
        "password_hash": password_hash,
        "must_set_password": code_sha256 is not None,
        "reset_code_sha256": code_sha256,
        "reset_code_expires_at_us": expires_at_us,
        "token_generation": UserRow.token_generation + 1,
    }


async def get_user(engine: AsyncEngine, username: str) -> User | None:
    async with engine.connect() as conn:
        row = await load_user_row(conn, username)
    return None if row is None else user_of(row)


async def list_users(engine: AsyncEngine) -> list[User]:
    async with engine.connect() as conn:
        rows = (await conn.execute(select(UserRow).order_by(UserRow.username))).all()
    return [user_of(r) for r in rows]


async def create_user(
    engine: AsyncEngine,
    *,
    username: str,
    role: str,
    password: str,
    actor: str,
    at_us: int,
    check: Callable[[AsyncConnection], Awaitable[None]] | None = None,
) -> User:
    """A new user with the password ``actor`` chose for them. ``check`` runs first in the same
    transaction and may refuse (the command line's bootstrap rule)."""
    check_username(username)
    checked_role = check_role(role)
    check_password(password, username=username)
    hashed = await hash_password(password)
    try:
        async with engine.begin() as conn:
            if check is not None:
                await check(conn)
            return await add_user(
                conn,
                username=username,
                role=checked_role,
                credentials=new_credentials(password_hash=hashed, expires_at_us=None),
                actor=actor,
                at_us=at_us,
            )
    except IntegrityError as exc:  # created by someone else at the same moment
        raise AlreadyExists(f"there is already a user {username!r}") from exc


async def add_user(
    conn: AsyncConnection,
    *,
    username: str,
    role: Role,
    credentials: dict[str, Any],
    actor: str,
    at_us: int,
    created_by: str | None = None,
    audit_after: dict[str, Any] | None = None,
) -> User:
    """Insert a user with ``credentials`` (``new_credentials``) in the caller's transaction;
    ``actor`` does it (and is its creator unless ``created_by`` names another)."""
    if await load_user_row(conn, username) is not None:
        raise AlreadyExists(f"there is already a user {username!r}")
    values = {**credentials, "token_generation": 0}
    await conn.execute(
        insert(UserRow).values(
            username=username,
            role=role.value,
            created_at_us=at_us,
            created_by=created_by or actor,
            disabled=False,
            **values,
        )
    )
    user = user_of(await load_user_row(conn, username))
    await _audit(
        conn,
        at_us=at_us,
        actor=actor,
        action="user.create",
        target=f"user {username}",
        after={**shown(user), **(audit_after or {})},
    )
    return user


async def authenticate(
    engine: AsyncEngine, username: str, password: str, *, at_us: int | None = None
) -> User | None:
    """The user when the password is right and the account enabled; otherwise None.

    An account waiting for its password is returned (``must_set_password``) when ``password``
    is its one-time code and the code has not expired at ``at_us``; the caller lets it do
    nothing but set its password. The same work is done whatever the reason for refusing, so
    the answer's timing does not tell whether a username exists or waits for a password.
    """
    async with engine.connect() as conn:
        row = await load_user_row(conn, username)
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


async def disable_user(engine: AsyncEngine, *, username: str, actor: str, at_us: int) -> User:
    async with engine.begin() as conn:
        row = await load_user_row(conn, username)
        if row is None:
            raise UnknownUser(f"no user {username!r}")
        before = user_of(row)
        after = replace(before, disabled=True, token_generation=before.token_generation + 1)
        await conn.execute(
            update(UserRow)
            .where(UserRow.username == username)
            .values(disabled=True, token_generation=UserRow.token_generation + 1)
        )
        await _audit(
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
    engine: AsyncEngine, *, username: str, password: str, actor: str, at_us: int
) -> None:
    """A new password for ``username``, set by ``actor``; every token of theirs ends."""
    check_password(password, username=username)
    hashed = await hash_password(password)
    async with engine.begin() as conn:
        row = await load_user_row(conn, username)
        if row is None:
            raise UnknownUser(f"no user {username!r}")
        await _store_password(conn, username, hashed, actor=actor, at_us=at_us)


async def _store_password(
    conn: AsyncConnection, username: str, hashed: str, *, actor: str, at_us: int
) -> None:
    await conn.execute(
        update(UserRow)
        .where(UserRow.username == username)
        .values(new_credentials(password_hash=hashed, expires_at_us=None))
    )
    # The fact of the change is recorded, never the password or its hash.
    await _audit(
        conn,
        at_us=at_us,
        actor=actor,
        action="user.set_password",
        target=f"user {username}",
        before={"password": "previous"},
        after={"password": "changed", "tokens": "revoked"},
    )


async def change_own_password(
    engine: AsyncEngine, *, username: str, current: str, new: str, at_us: int
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
    async with engine.begin() as conn:
        # Changed meanwhile (another reset, disabled): this password is not for that account.
        changed = await conn.execute(
            update(UserRow)
            .where(
                UserRow.username == username,
                UserRow.token_generation == user.token_generation,
                UserRow.disabled.is_(False),
            )
            .values(new_credentials(password_hash=hashed, expires_at_us=None))
        )
        if changed.rowcount != 1:
            return None
        await _audit(
            conn,
            at_us=at_us,
            actor=username,
            action="user.change_password",
            target=f"user {username}",
            before={"password": "one-time code" if user.must_set_password else "previous"},
            after={"password": "chosen by the user", "tokens": "revoked"},
        )
        row = await load_user_row(conn, username)
    return user_of(row)


async def ensure_demo_users(engine: AsyncEngine, *, at_us: int) -> list[tuple[str, str, str]]:
    """One user per role, named after the role, each with a fresh random password.

    For the demo only: it prints what this returns (username, role, password). Users that
    exist from an earlier demo run get a new password, and are enabled with their role.
    """
    made: list[tuple[str, str, str]] = []
    for role in Role:
        password = secrets.token_urlsafe(12)
        hashed = await hash_password(password)
        async with engine.begin() as conn:
            row = await load_user_row(conn, role.value)
            if row is None:
                await conn.execute(
                    insert(UserRow).values(
                        username=role.value,
                        role=role.value,
                        password_hash=hashed,
                        created_at_us=at_us,
                        created_by="demo",
                        disabled=False,
                    )
                )
                action, before = "user.create", None
            else:
                await conn.execute(
                    update(UserRow)
                    .where(UserRow.username == role.value)
                    .values(
                        {
                            **new_credentials(password_hash=hashed, expires_at_us=None),
                            "role": role.value,
                            "disabled": False,
                        }
                    )
                )
                action = "user.set_password"
                before = {"role": row.role, "disabled": bool(row.disabled)}
            await _audit(
                conn,
                at_us=at_us,
                actor="demo",
                action=action,
                target=f"user {role.value}",
                before=before,
                after={"role": role.value, "disabled": False, "password": "demo"},
            )
        made.append((role.value, role.value, password))
    return made


# ------------------------------------------------------------------------ device tokens


def _device(row: Any) -> DeviceToken:
    return DeviceToken(
        token_id=row.token_id,
        name=row.name,
        role=Role(row.role),
        created_at_us=row.created_at_us,
        created_by=row.created_by,
        revoked_at_us=row.revoked_at_us,
    )


def check_device_name(name: str) -> str:
    try:
        return ONE_LINE.check(name, required=True)
    except TextRefused as exc:
        raise UserError(f"a display's name: {exc}") from None


async def create_device_token(
    engine: AsyncEngine, *, name: str, actor: str, at_us: int
) -> tuple[DeviceToken, str]:
    """A new display token: the record, and the token itself, shown this once only."""
    check_device_name(name)
    token = DEVICE_TOKEN_PREFIX + secrets.token_urlsafe(32)
    device = DeviceToken(
        token_id=secrets.token_hex(8),
        name=name,
        role=Role.DISPLAY,
        created_at_us=at_us,
        created_by=actor,
        revoked_at_us=None,
    )
    async with engine.begin() as conn:
        await conn.execute(
            insert(DeviceTokenRow).values(
                token_id=device.token_id,
                name=name,
                role=device.role.value,
                token_sha256=token_digest(token),
                created_at_us=at_us,
                created_by=actor,
                revoked_at_us=None,
            )
        )
        await _audit(
            conn,
            at_us=at_us,
            actor=actor,
            action="device_token.create",
            target=f"device token {device.token_id}",
            after={"name": name, "role": device.role.value},
        )
    return device, token


async def verify_device_token(engine: AsyncEngine, token: str) -> DeviceToken | None:
    """The display a token belongs to, unless unknown or revoked."""
    if not token.startswith(DEVICE_TOKEN_PREFIX):
        return None
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                select(DeviceTokenRow).where(DeviceTokenRow.token_sha256 == token_digest(token))
            )
        ).first()
    if row is None or row.revoked_at_us is not None:
        return None
    return _device(row)


async def list_device_tokens(engine: AsyncEngine) -> list[DeviceToken]:
    async with engine.connect() as conn:
        rows = (
            await conn.execute(
                select(DeviceTokenRow).order_by(
                    DeviceTokenRow.created_at_us, DeviceTokenRow.token_id
                )
            )
        ).all()
    return [_device(r) for r in rows]


async def revoke_device_token(
    engine: AsyncEngine, *, token_id: str, actor: str, at_us: int
) -> DeviceToken:
    async with engine.begin() as conn:
        row = (
            await conn.execute(select(DeviceTokenRow).where(DeviceTokenRow.token_id == token_id))
        ).first()
        if row is None:
            raise UnknownDeviceToken(f"no device token {token_id!r}")
        before = _device(row)
        if before.revoked_at_us is not None:
            return before  # revoking twice changes nothing
        await conn.execute(
            update(DeviceTokenRow)
            .where(DeviceTokenRow.token_id == token_id)
            .values(revoked_at_us=at_us)
        )
        await _audit(
            conn,
            at_us=at_us,
            actor=actor,
            action="device_token.revoke",
            target=f"device token {token_id}",
            before={"name": before.name, "revoked_at_us": None},
            after={"name": before.name, "revoked_at_us": at_us},
        )
    return DeviceToken(
        token_id=before.token_id,
        name=before.name,
        role=before.role,
        created_at_us=before.created_at_us,
        created_by=before.created_by,
        revoked_at_us=at_us,
    )
