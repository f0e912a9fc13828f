"""Accounts as the database holds them: users, display tokens and account requests. Typed
records in, typed records out; the rules live in ``controller.access``. (The audit log is
read back by ``storage.audit``.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, Select, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.storage.models import AccountRequestRow, DeviceTokenRow, UserRow
from controller.storage.typed_rows import columns

__all__ = [
    "AccountRequestRecord",
    "Credentials",
    "DeviceTokenRecord",
    "UserRecord",
    "all_device_tokens",
    "all_users",
    "change_account",
    "count_enabled",
    "device_token",
    "device_token_by_digest",
    "disable_user",
    "hold_accounts",
    "hold_enabled",
    "insert_device_token",
    "insert_request",
    "insert_user",
    "load_request",
    "load_user",
    "mark_decided",
    "requests",
    "revoke_device_token",
    "set_credentials",
    "tie",
]

# ------------------------------------------------------------------------------- users


@dataclass(frozen=True, slots=True, kw_only=True)
class UserRecord:
    username: str
    role: str
    password_hash: str
    created_at_us: int
    created_by: str
    disabled: bool
    token_generation: int
    must_set_password: bool
    reset_code_sha256: str | None
    reset_code_expires_at_us: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Credentials:
    """What replaces a user's credentials: a password's hash, or a one-time code's digest
    (with ``password_hash`` one that no password matches) until it expires."""

    password_hash: str
    code_sha256: str | None
    code_expires_at_us: int | None

    def values(self) -> dict[str, Any]:
        return {
            "password_hash": self.password_hash,
            "must_set_password": self.code_sha256 is not None,
            "reset_code_sha256": self.code_sha256,
            "reset_code_expires_at_us": self.code_expires_at_us,
        }


_u = UserRow
_USER = columns(
    UserRecord,
    _u.username, _u.role, _u.password_hash, _u.created_at_us, _u.created_by, _u.disabled,
    _u.token_generation, _u.must_set_password, _u.reset_code_sha256,
    _u.reset_code_expires_at_us,
)  # fmt: skip


def _user(row: Row[*tuple[Any, ...]]) -> UserRecord:
    return UserRecord(**row._mapping)


async def load_user(conn: AsyncConnection, username: str) -> UserRecord | None:
    row = (await conn.execute(select(*_USER).where(UserRow.username == username))).first()
    return None if row is None else _user(row)


async def all_users(conn: AsyncConnection) -> list[UserRecord]:
    return [_user(r) for r in await conn.execute(select(*_USER).order_by(UserRow.username))]


async def insert_user(
    conn: AsyncConnection,
    *,
    username: str,
    role: str,
    credentials: Credentials,
    created_at_us: int,
    created_by: str,
) -> None:
    """A new enabled user, its token generation the first."""
    await conn.execute(
        insert(UserRow).values(
            username=username,
            role=role,
            created_at_us=created_at_us,
            created_by=created_by,
            disabled=False,
            **credentials.values(),
            token_generation=0,
        )
    )


async def disable_user(conn: AsyncConnection, username: str) -> None:
    """Disabled, every token of the user ended."""
    await conn.execute(
        update(UserRow)
        .where(UserRow.username == username)
        .values(disabled=True, token_generation=UserRow.token_generation + 1)
    )


async def set_credentials(
    conn: AsyncConnection,
    username: str,
    credentials: Credentials,
    *,
    if_generation: int | None = None,
) -> bool:
    """New credentials, every token of the user ended. With ``if_generation``, only while the
    user is enabled and still at that token generation (nothing changed meanwhile); False if
    no user was changed."""
    query = update(UserRow).where(UserRow.username == username)
    if if_generation is not None:
        query = query.where(UserRow.token_generation == if_generation, UserRow.disabled.is_(False))
    result = await conn.execute(
        query.values(**credentials.values(), token_generation=UserRow.token_generation + 1)
    )
    return result.rowcount == 1


async def change_account(
    conn: AsyncConnection,
    username: str,
    *,
    role: str,
    credentials: Credentials | None,
    enable: bool,
) -> None:
    """The user's role set (and credentials replaced, and the account enabled, when asked);
    every token of the user ended."""
    values: dict[str, Any] = {} if credentials is None else credentials.values()
    values.update(role=role, token_generation=UserRow.token_generation + 1)
    if enable:
        values["disabled"] = False
    await conn.execute(update(UserRow).where(UserRow.username == username).values(values))


async def count_enabled(conn: AsyncConnection, role: str) -> int:
    count = await conn.scalar(
        select(func.count())
        .select_from(UserRow)
        .where(UserRow.role == role, UserRow.disabled.is_(False))
    )
    return count or 0


async def count_ever(conn: AsyncConnection, role: str) -> int:
    """Accounts of ``role``, enabled or disabled."""
    count = await conn.scalar(select(func.count()).select_from(UserRow).where(UserRow.role == role))
    return count or 0


# Any number, the same for every process: the lock of ``hold_accounts``.
ACCOUNTS_LOCK = 0x70726F67


async def hold_accounts(conn: AsyncConnection) -> None:
    """One such transaction at a time, until it ends: on PostgreSQL a transaction-level
    advisory lock; SQLite has one writer at a time already, counted after its write."""
    if conn.dialect.name == "postgresql":
        await conn.execute(select(func.pg_advisory_xact_lock(ACCOUNTS_LOCK)))


async def hold_enabled(conn: AsyncConnection, role: str) -> int:
    """How many enabled users have ``role``, their rows locked until the transaction ends
    (PostgreSQL: ``FOR UPDATE``; SQLite has one writer at a time), so that two changes that
    each leave enough of them cannot together leave too few."""
    names = await conn.scalars(
        select(UserRow.username)
        .where(UserRow.role == role, UserRow.disabled.is_(False))
        .order_by(UserRow.username)
        .with_for_update()
    )
    return len(list(names))


# ------------------------------------------------------------------------ device tokens


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceTokenRecord:
    token_id: str
    name: str
    role: str
    token_sha256: str
    created_at_us: int
    created_by: str
    revoked_at_us: int | None


_t = DeviceTokenRow
_DEVICE = columns(
    DeviceTokenRecord,
    _t.token_id, _t.name, _t.role, _t.token_sha256, _t.created_at_us, _t.created_by,
    _t.revoked_at_us,
)  # fmt: skip


def _device(row: Row[*tuple[Any, ...]]) -> DeviceTokenRecord:
    return DeviceTokenRecord(**row._mapping)


async def insert_device_token(conn: AsyncConnection, token: DeviceTokenRecord) -> None:
    await conn.execute(
        insert(DeviceTokenRow).values(
            token_id=token.token_id,
            name=token.name,
            role=token.role,
            token_sha256=token.token_sha256,
            created_at_us=token.created_at_us,
            created_by=token.created_by,
            revoked_at_us=token.revoked_at_us,
        )
    )


async def device_token_by_digest(conn: AsyncConnection, digest: str) -> DeviceTokenRecord | None:
    row = (
        await conn.execute(select(*_DEVICE).where(DeviceTokenRow.token_sha256 == digest))
    ).first()
    return None if row is None else _device(row)


async def device_token(conn: AsyncConnection, token_id: str) -> DeviceTokenRecord | None:
    row = (await conn.execute(select(*_DEVICE).where(DeviceTokenRow.token_id == token_id))).first()
    return None if row is None else _device(row)


async def all_device_tokens(conn: AsyncConnection) -> list[DeviceTokenRecord]:
    rows = await conn.execute(
        select(*_DEVICE).order_by(DeviceTokenRow.created_at_us, DeviceTokenRow.token_id)
    )
    return [_device(r) for r in rows]


async def revoke_device_token(conn: AsyncConnection, token_id: str, *, at_us: int) -> None:
    await conn.execute(
        update(DeviceTokenRow)
        .where(DeviceTokenRow.token_id == token_id)
        .values(revoked_at_us=at_us)
    )


# ---------------------------------------------------------------------- account requests


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountRequestRecord:
    request_id: str
    kind: str
    username: str
    role: str | None
    requested_by: str
    requested_at_us: int
    expires_at_us: int
    first_half_sha256: str | None
    status: str
    decided_by: str | None
    decided_at_us: int | None
    decision_reason: str | None


_r = AccountRequestRow
_REQUEST = columns(
    AccountRequestRecord,
    _r.request_id, _r.kind, _r.username, _r.role, _r.requested_by, _r.requested_at_us,
    _r.expires_at_us, _r.first_half_sha256, _r.status, _r.decided_by, _r.decided_at_us,
    _r.decision_reason,
)  # fmt: skip


def _request(row: Row[*tuple[Any, ...]]) -> AccountRequestRecord:
    return AccountRequestRecord(**row._mapping)


async def insert_request(conn: AsyncConnection, request: AccountRequestRecord) -> None:
    await conn.execute(
        insert(AccountRequestRow).values(
            request_id=request.request_id,
            kind=request.kind,
            username=request.username,
            role=request.role,
            requested_by=request.requested_by,
            requested_at_us=request.requested_at_us,
            expires_at_us=request.expires_at_us,
            first_half_sha256=request.first_half_sha256,
            status=request.status,
        )
    )


async def load_request(conn: AsyncConnection, request_id: str) -> AccountRequestRecord | None:
    row = (
        await conn.execute(select(*_REQUEST).where(AccountRequestRow.request_id == request_id))
    ).first()
    return None if row is None else _request(row)


async def mark_decided(
    conn: AsyncConnection,
    request_id: str,
    *,
    status: str,
    by: str,
    at_us: int,
    reason: str | None = None,
    while_status: str | None = None,
) -> bool:
    """The request's decision (with its reason, when one is given); with ``while_status``,
    only while the request still has that status. False if no request was changed."""
    r = AccountRequestRow
    query = update(r).where(r.request_id == request_id)
    if while_status is not None:
        query = query.where(r.status == while_status)
    values: dict[str, Any] = {"status": status, "decided_by": by, "decided_at_us": at_us}
    if reason is not None:
        values["decision_reason"] = reason
    result = await conn.execute(query.values(values))
    return result.rowcount == 1


async def requests(conn: AsyncConnection, *, status: str | None) -> list[AccountRequestRecord]:
    """Account requests stored with ``status`` (all when None), newest first."""
    query: Select[Any] = select(*_REQUEST).order_by(
        AccountRequestRow.requested_at_us.desc(), AccountRequestRow.request_id
    )
    if status is not None:
        query = query.where(AccountRequestRow.status == status)
    return [_request(r) for r in await conn.execute(query)]


async def tie(conn: AsyncConnection, *, a: str, b: str, status: str) -> tuple[str, str, str] | None:
    """A request with ``status`` for the account of one of ``a`` and ``b`` that the other asked
    for or decided, as (username, kind, request id); None when there is none."""
    r = AccountRequestRow
    row = (
        await conn.execute(
            select(r.request_id, r.kind, r.username)
            .where(
                r.status == status,
                or_(
                    (r.username == a) & or_(r.requested_by == b, r.decided_by == b),
                    (r.username == b) & or_(r.requested_by == a, r.decided_by == a),
                ),
            )
            .limit(1)
        )
    ).first()
    if row is None:
        return None
    request_id, kind, username = row
    return username, kind, request_id
