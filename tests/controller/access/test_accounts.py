"""The accounts' one face: each change dated by the clock it was given, when it is made."""

from __future__ import annotations

from controller.access.accounts import Accounts
from controller.access.duties import RequestKind
from controller.roles import Role
from controller.runtime.clock import FixedClock
from controller.storage.store import LedgerStore
from tests.conftest import T0

PASSWORD = "correct horse battery"


async def test_changes_are_dated_by_the_clock(store: LedgerStore) -> None:
    clock = FixedClock(T0)
    accounts = Accounts(store.engine, clock)
    made = await accounts.create_user(
        username="ann.dealer", role=Role.DEALER, password=PASSWORD, actor="root"
    )
    assert made.created_at_us == T0
    assert await accounts.user("ann.dealer") == made
    assert await accounts.sign_in("ann.dealer", PASSWORD) == made
    assert await accounts.sign_in("ann.dealer", PASSWORD + "x") is None

    clock.advance(1_000)
    device, token = await accounts.create_device_token(name="bar screen", actor="root")
    assert device.created_at_us == T0 + 1_000
    assert await accounts.device_of(token) == device
    clock.advance(1_000)
    revoked = await accounts.revoke_device_token(token_id=device.token_id, actor="root")
    assert revoked.revoked_at_us == T0 + 2_000
    assert await accounts.device_of(token) is None
    assert [d.token_id for d in await accounts.all_device_tokens()] == [device.token_id]

    clock.advance(1_000)
    answer = await accounts.ask(
        RequestKind.ROLE, username="ann.dealer", role=Role.AUDITOR, actor="root"
    )
    assert answer.request.username == "ann.dealer"
    assert [r.request_id for r in await accounts.requests()] == [answer.request.request_id]
    disabled = await accounts.disable(username="ann.dealer", actor="root")
    assert disabled.disabled
    assert [u.username for u in await accounts.all_users()] == ["ann.dealer"]
    entries = await accounts.audit_entries(actor="root")
    assert entries and entries[0].at_us == T0 + 3_000
