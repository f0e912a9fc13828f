"""Users and display tokens on both databases: hashes only, audit rows, no secrets kept."""

from __future__ import annotations

import json

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select

from controller.access import device_tokens, hashing, passwords, roles, users
from controller.roles import Role
from controller.storage.models import DeviceTokenRow, UserRow
from controller.storage.store import LedgerStore
from tests.conftest import T0

PASSWORD = "correct horse battery"


async def test_create_authenticate_and_list(store: LedgerStore) -> None:
    engine = store.engine
    user = await users.create_user(
        engine, username="pat.tech", role="technician", password=PASSWORD, actor="root", at_us=T0
    )
    assert user.role is Role.TECHNICIAN and not user.disabled
    assert await users.authenticate(engine, "pat.tech", PASSWORD) == user
    assert await users.authenticate(engine, "pat.tech", PASSWORD + "x") is None
    assert await users.authenticate(engine, "nobody", PASSWORD) is None
    assert [u.username for u in await users.list_users(engine)] == ["pat.tech"]
    async with engine.connect() as conn:
        stored = (await conn.execute(select(UserRow.password_hash))).scalar_one()
    assert stored.startswith("$argon2id$") and PASSWORD not in stored


def test_passwords_are_hashed_at_rfc_9106s_cost() -> None:
    """The service's own hasher (the tests' processes hash at the least cost, see conftest):
    argon2id, 3 passes over 64 MiB in 4 lanes, a 16-byte salt and a 32-byte hash."""
    assert (hashing.PASSES, hashing.MEMORY_KIB, hashing.LANES) == (3, 65_536, 4)
    made = PasswordHasher(
        time_cost=hashing.PASSES, memory_cost=hashing.MEMORY_KIB, parallelism=hashing.LANES
    )
    stored = made.hash(PASSWORD)
    assert stored.startswith("$argon2id$v=19$m=65536,t=3,p=4$"), stored
    assert made.salt_len == 16 and made.hash_len == 32


@pytest.mark.parametrize(
    ("username", "role", "password", "problem"),
    [
        ("Pat", "technician", PASSWORD, "not a valid username"),
        ("p", "technician", PASSWORD, "not a valid username"),
        ("pat tech", "technician", PASSWORD, "not a valid username"),
        ("pat", "wizard", PASSWORD, "'wizard' is not a role"),
        ("pat", "technician", "short", "at least 10 characters"),
        ("pat", "technician", "a" * 10, "may not repeat 'a'"),
        ("pat", "technician", "\x00" * 10, "control characters"),
        ("pat", "technician", "x" * 129, "at most 128 characters"),
        ("pat", "technician", "Password2026!", "most common"),
        ("pat", "technician", "pat1234567", "not be the username"),
    ],
)
async def test_bad_input_is_refused(
    store: LedgerStore, username: str, role: str, password: str, problem: str
) -> None:
    with pytest.raises(roles.UserError, match=problem):
        await users.create_user(
            store.engine, username=username, role=role, password=password, actor="a", at_us=T0
        )
    assert await users.list_users(store.engine) == []


async def test_a_username_is_taken_once(store: LedgerStore) -> None:
    for attempt in range(2):
        if attempt:
            with pytest.raises(roles.AlreadyExists):
                await users.create_user(
                    store.engine, username="alex", role="admin", password=PASSWORD, actor="r",
                    at_us=T0,
                )  # fmt: skip
        else:
            await users.create_user(
                store.engine, username="alex", role="auditor", password=PASSWORD, actor="r",
                at_us=T0,
            )  # fmt: skip
    assert [(u.username, u.role) for u in await users.list_users(store.engine)] == [
        ("alex", Role.AUDITOR)
    ]


async def test_disable_and_set_password_are_audited_without_secrets(store: LedgerStore) -> None:
    engine = store.engine
    await users.create_user(
        engine, username="sam", role="supervisor", password=PASSWORD, actor="root", at_us=T0
    )
    new_password = "another long passphrase"
    await users.set_password(
        engine, username="sam", password=new_password, actor="root", at_us=T0 + 1
    )
    assert await users.authenticate(engine, "sam", PASSWORD) is None
    assert await users.authenticate(engine, "sam", new_password) is not None

    disabled = await users.disable_user(engine, username="sam", actor="root", at_us=T0 + 2)
    assert disabled.disabled
    assert await users.authenticate(engine, "sam", new_password) is None

    with pytest.raises(roles.UnknownUser):
        await users.disable_user(engine, username="ghost", actor="root", at_us=T0 + 3)
    with pytest.raises(roles.UnknownUser):
        await users.set_password(
            engine, username="ghost", password=new_password, actor="root", at_us=T0 + 3
        )

    log = await users.audit_entries(engine)
    assert [(e.action, e.actor, e.target, e.at_us) for e in log] == [
        ("user.disable", "root", "user sam", T0 + 2),
        ("user.set_password", "root", "user sam", T0 + 1),
        ("user.create", "root", "user sam", T0),
    ]
    assert json.loads(log[0].before or "") == {"role": "supervisor", "disabled": False}
    assert json.loads(log[0].after or "") == {"role": "supervisor", "disabled": True}
    async with engine.connect() as conn:
        hashed = (await conn.execute(select(UserRow.password_hash))).scalar_one()
    for e in log:
        for text in (e.before or "", e.after or ""):
            assert PASSWORD not in text and new_password not in text and hashed not in text
    # A period and a limit.
    assert [e.action for e in await users.audit_entries(engine, since_us=T0 + 1)] == [
        "user.disable",
        "user.set_password",
    ]
    assert [e.action for e in await users.audit_entries(engine, until_us=T0 + 1)] == ["user.create"]
    assert len(await users.audit_entries(engine, limit=1)) == 1


async def test_display_tokens_keep_only_a_digest_and_can_be_revoked(store: LedgerStore) -> None:
    engine = store.engine
    device, token = await device_tokens.create_device_token(
        engine, name="pit 1 stud", actor="root", at_us=T0
    )
    assert token.startswith(device_tokens.DEVICE_TOKEN_PREFIX)
    assert device.role is Role.DISPLAY
    assert await device_tokens.verify_device_token(engine, token) == device
    assert await device_tokens.verify_device_token(engine, token + "x") is None
    assert await device_tokens.verify_device_token(engine, "not-a-device-token") is None
    async with engine.connect() as conn:
        digests = (await conn.execute(select(DeviceTokenRow.token_sha256))).scalars().all()
    assert digests == [hashing.token_digest(token)]

    revoked = await device_tokens.revoke_device_token(
        engine, token_id=device.token_id, actor="root", at_us=T0 + 5
    )
    assert revoked.revoked_at_us == T0 + 5
    assert await device_tokens.verify_device_token(engine, token) is None
    again = await device_tokens.revoke_device_token(
        engine, token_id=device.token_id, actor="root", at_us=T0 + 9
    )
    assert again.revoked_at_us == T0 + 5
    assert [d.revoked_at_us for d in await device_tokens.list_device_tokens(engine)] == [T0 + 5]
    with pytest.raises(roles.UnknownDeviceToken):
        await device_tokens.revoke_device_token(engine, token_id="nope", actor="root", at_us=T0)
    with pytest.raises(roles.UserError):
        await device_tokens.create_device_token(engine, name="  ", actor="root", at_us=T0)

    actions = [(e.action, e.target) for e in await users.audit_entries(engine)]
    assert actions == [
        ("device_token.revoke", f"device token {device.token_id}"),
        ("device_token.create", f"device token {device.token_id}"),
    ]
    for e in await users.audit_entries(engine):
        assert token not in (e.before or "") + (e.after or "")


async def test_demo_users_one_per_role_with_fresh_passwords(store: LedgerStore) -> None:
    engine = store.engine
    first = await users.ensure_demo_users(engine, at_us=T0)
    # One per role, then a second admin, technician and supervisor for the two-person steps.
    assert [(name, role) for name, role, _ in first] == [(r.value, r.value) for r in Role] + [
        ("admin-2", "admin"),
        ("technician-2", "technician"),
        ("supervisor-2", "supervisor"),
    ]
    await users.disable_user(engine, username="technician", actor="root", at_us=T0 + 1)
    await users.disable_user(engine, username="admin-2", actor="root", at_us=T0 + 1)
    second = await users.ensure_demo_users(engine, at_us=T0 + 2)
    assert len(await users.list_users(engine)) == len(Role) + 3
    for (name, _, old), (_, role, new) in zip(first, second, strict=True):
        assert old != new and len(new) >= passwords.MIN_PASSWORD
        assert await users.authenticate(engine, name, old) is None
        user = await users.authenticate(engine, name, new)
        assert user is not None and user.role is Role(role)
