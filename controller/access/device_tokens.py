"""The read-only tokens of floor displays: made, checked, listed and revoked, each change
audited. Only a token's SHA-256 is kept, so what the database holds cannot be used."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from controller.access.hashing import token_digest
from controller.access.roles import UnknownDeviceToken, UserError
from controller.roles import Role
from controller.storage import access_repo
from controller.storage.access_repo import DeviceTokenRecord
from controller.storage.audit import write_audit
from controller.storage.handles import Database
from controller.storage.unit_of_work import connected, transaction
from controller.text import ONE_LINE, TextRefused

DEVICE_TOKEN_PREFIX = "pdt_"


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceToken:
    token_id: str
    name: str
    role: Role
    created_at_us: int
    created_by: str
    revoked_at_us: int | None


def _device(record: DeviceTokenRecord) -> DeviceToken:
    return DeviceToken(
        token_id=record.token_id,
        name=record.name,
        role=Role(record.role),
        created_at_us=record.created_at_us,
        created_by=record.created_by,
        revoked_at_us=record.revoked_at_us,
    )


def check_device_name(name: str) -> str:
    try:
        return ONE_LINE.check(name, required=True)
    except TextRefused as exc:
        raise UserError(f"a display's name: {exc}") from None


async def create_device_token(
    engine: Database, *, name: str, actor: str, at_us: int
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
    async with transaction(engine) as conn:
        await access_repo.insert_device_token(
            conn,
            DeviceTokenRecord(
                token_id=device.token_id,
                name=name,
                role=device.role.value,
                token_sha256=token_digest(token),
                created_at_us=at_us,
                created_by=actor,
                revoked_at_us=None,
            ),
        )
        await write_audit(
            conn,
            at_us=at_us,
            actor=actor,
            action="device_token.create",
            target=f"device token {device.token_id}",
            after={"name": name, "role": device.role.value},
        )
    return device, token


async def verify_device_token(engine: Database, token: str) -> DeviceToken | None:
    """The display a token belongs to, unless unknown or revoked."""
    if not token.startswith(DEVICE_TOKEN_PREFIX):
        return None
    async with connected(engine) as conn:
        record = await access_repo.device_token_by_digest(conn, token_digest(token))
    if record is None or record.revoked_at_us is not None:
        return None
    return _device(record)


async def list_device_tokens(engine: Database) -> list[DeviceToken]:
    async with connected(engine) as conn:
        records = await access_repo.all_device_tokens(conn)
    return [_device(r) for r in records]


async def revoke_device_token(
    engine: Database, *, token_id: str, actor: str, at_us: int
) -> DeviceToken:
    async with transaction(engine) as conn:
        record = await access_repo.device_token(conn, token_id)
        if record is None:
            raise UnknownDeviceToken(f"no device token {token_id!r}")
        before = _device(record)
        if before.revoked_at_us is not None:
            return before  # revoking twice changes nothing
        await access_repo.revoke_device_token(conn, token_id, at_us=at_us)
        await write_audit(
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
