"""Account changes two admins make, one-time codes in halves, and independent approvers, on
both databases."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from controller.access import duties, roles, users
from controller.access.duties import RequestKind, RequestStatus
from controller.roles import Role
from controller.rules import RuleViolation
from controller.storage import access_repo
from controller.storage.store import LedgerStore
from tests.conftest import T0

PASSWORD = "correct horse battery"
HOUR = duties.HOUR_US


async def _admins(engine: AsyncEngine, *names: str) -> None:
    for name in names:
        await users.create_user(
            engine, username=name, role=Role.ADMIN, password=PASSWORD, actor="cli", at_us=T0
        )


async def test_a_new_supervisor_needs_two_admins_and_neither_knows_the_code(
    store: LedgerStore,
) -> None:
    engine = store.engine
    await _admins(engine, "ann", "bob")
    asked = await duties.file_request(
        engine, kind=RequestKind.CREATE, username="sue", role="supervisor", actor="ann", at_us=T0
    )
    assert asked.request.status is RequestStatus.PENDING
    assert asked.first_half and asked.second_half is None
    assert await users.get_user(engine, "sue") is None
    with pytest.raises(duties.DutyRefused, match="cannot also confirm"):
        await duties.confirm_request(engine, asked.request.request_id, actor="ann", at_us=T0 + 1)
    done = await duties.confirm_request(engine, asked.request.request_id, actor="bob", at_us=T0 + 2)
    assert done.request.status is RequestStatus.CONFIRMED and done.request.decided_by == "bob"
    assert done.second_half and done.first_half is None
    sue = await users.get_user(engine, "sue")
    assert sue is not None and sue.must_set_password and sue.created_by == "ann"

    code = f"{asked.first_half} {done.second_half}"
    for wrong in (asked.first_half, done.second_half, f"{done.second_half}{asked.first_half}"):
        assert await users.authenticate(engine, "sue", wrong, at_us=T0 + 3) is None
    assert await users.authenticate(engine, "sue", code) is None  # no time: no code
    late = T0 + 2 + duties.CODE_LIFETIME_US + 1
    assert await users.authenticate(engine, "sue", code, at_us=late) is None
    waiting = await users.authenticate(engine, "sue", code.lower(), at_us=T0 + 3)
    assert waiting is not None and waiting.must_set_password

    with pytest.raises(roles.UserError, match="not be the username"):
        await users.change_own_password(
            engine, username="sue", current=code, new="sue2026!!!!", at_us=T0 + 4
        )
    mine = await users.change_own_password(
        engine, username="sue", current=code, new="sue's own passphrase", at_us=T0 + 4
    )
    assert mine is not None and not mine.must_set_password
    assert mine.token_generation == sue.token_generation + 1
    assert await users.authenticate(engine, "sue", code, at_us=T0 + 5) is None  # used once
    assert await users.authenticate(engine, "sue", "sue's own passphrase") is not None

    log = [(e.action, e.actor) for e in await users.audit_entries(engine, since_us=T0)]
    assert log[:3] == [
        ("user.change_password", "sue"),
        ("user.create", "bob"),
        ("account.request", "ann"),
    ]


async def test_requests_lapse_are_rejected_and_check_the_account_when_confirmed(
    store: LedgerStore,
) -> None:
    engine = store.engine
    await _admins(engine, "ann", "bob")
    await users.create_user(
        engine, username="tina", role=Role.TECHNICIAN, password=PASSWORD, actor="ann", at_us=T0
    )
    # A technician: one admin, at once, and the old password stays.
    demoted = await duties.file_request(
        engine, kind=RequestKind.ROLE, username="tina", role="dealer", actor="ann", at_us=T0
    )
    assert demoted.request.status is RequestStatus.CONFIRMED
    assert demoted.first_half is None and demoted.second_half is None
    assert await users.authenticate(engine, "tina", PASSWORD) is not None
    # Into a role that checks others: pending, and it lapses unconfirmed.
    promote = await duties.file_request(
        engine, kind=RequestKind.ROLE, username="tina", role="supervisor", actor="ann", at_us=T0
    )
    lapse = T0 + duties.REQUEST_LIFETIME_US + 1
    listed = await duties.list_requests(engine, at_us=lapse, status=RequestStatus.EXPIRED)
    assert [r.request_id for r in listed] == [promote.request.request_id]
    with pytest.raises(duties.DutyRefused, match="expired"):
        await duties.confirm_request(engine, promote.request.request_id, actor="bob", at_us=lapse)
    with pytest.raises(roles.UserError, match="reason"):
        await duties.reject_request(
            engine, promote.request.request_id, actor="ann", reason=" ", at_us=lapse
        )
    rejected = await duties.reject_request(
        engine, promote.request.request_id, actor="ann", reason="lapsed", at_us=lapse
    )
    assert rejected.status is RequestStatus.REJECTED
    # Checked again when confirmed: the account changed meanwhile.
    again = await duties.file_request(
        engine, kind=RequestKind.ROLE, username="tina", role="supervisor", actor="ann", at_us=T0
    )
    twice = await duties.file_request(
        engine, kind=RequestKind.ROLE, username="tina", role="supervisor", actor="bob", at_us=T0
    )
    await duties.confirm_request(engine, again.request.request_id, actor="bob", at_us=T0 + 1)
    with pytest.raises(roles.UserError, match="already has the role supervisor"):
        await duties.confirm_request(engine, twice.request.request_id, actor="ann", at_us=T0 + 2)
    with pytest.raises(duties.UnknownRequest):
        await duties.confirm_request(engine, "nope", actor="ann", at_us=T0)
    with pytest.raises(roles.UnknownUser):
        await duties.file_request(
            engine, kind=RequestKind.RESET, username="ghost", actor="ann", at_us=T0
        )


async def test_an_approver_tied_to_the_filer_by_an_account_change_is_refused(
    store: LedgerStore,
) -> None:
    engine = store.engine
    await _admins(engine, "ann", "bob", "cid")
    asked = await duties.file_request(
        engine, kind=RequestKind.RESET, username="cid", actor="ann", at_us=T0
    )

    async def check(approver: str, filer: str) -> None:
        await duties.check_independent(
            engine, approver=approver, filer=filer, clause="the rule", what="submission"
        )

    await check("cid", "ann")  # only asked: no tie yet
    await duties.confirm_request(engine, asked.request.request_id, actor="bob", at_us=T0 + 1)
    for approver, filer in (("cid", "ann"), ("cid", "bob"), ("ann", "cid"), ("bob", "cid")):
        with pytest.raises(RuleViolation, match="took part in the reset of cid's account"):
            await check(approver, filer)
    await check("ann", "bob")


async def test_the_command_line_makes_only_the_first_two_admins(store: LedgerStore) -> None:
    engine = store.engine

    async def bootstrap(role: Role) -> None:
        async with engine.connect() as conn:
            await duties.check_bootstrap(conn, role)

    async def add_admin(name: str) -> None:  # as ``progressive users add`` does
        async def close(conn: AsyncConnection) -> None:
            await duties.close_bootstrap_when_due(conn, actor="cli", at_us=T0)

        await users.create_user(
            engine, username=name, role=Role.ADMIN, password=PASSWORD, actor="cli", at_us=T0,
            check=lambda conn: duties.check_bootstrap(conn, Role.ADMIN), then=close,
        )  # fmt: skip

    for role in (Role.TECHNICIAN, Role.SUPERVISOR, Role.COMMISSION_AGENT):
        with pytest.raises(duties.DutyRefused, match="made by two admins"):
            await bootstrap(role)
    await bootstrap(Role.DEALER)
    await bootstrap(Role.ADMIN)
    await add_admin("ann")
    async with engine.connect() as conn:
        assert not await duties.bootstrap_closed(conn)
    await add_admin("bob")
    async with engine.connect() as conn:
        assert await duties.bootstrap_closed(conn)
    with pytest.raises(duties.DutyRefused, match="first two admins"):
        await bootstrap(Role.ADMIN)
    # The last two admins are not disabled, by the host either.
    with pytest.raises(duties.DutyRefused, match="last 2 enabled admins"):
        await duties.disable_account(engine, username="bob", actor="cli", at_us=T0)
    # Fewer than two enabled however it came about (the store's own operation here): closed.
    await users.disable_user(engine, username="bob", actor="ann", at_us=T0)
    with pytest.raises(duties.DutyRefused, match="first two admins"):
        await bootstrap(Role.ADMIN)
    with pytest.raises(duties.DutyRefused, match="first two admins"):
        await add_admin("cid")
    entries = await users.audit_entries(engine, action=duties.BOOTSTRAP_CLOSED)
    assert len(entries) == 1


async def test_a_database_error_names_no_parameter(store: LedgerStore) -> None:
    """A refused write's error (and so a logged traceback) never carries its parameters: here
    the digest of a one-time code."""
    digest = "ab" * 32
    credentials = users.new_credentials(code_sha256=digest, expires_at_us=T0)
    async with store.engine.connect() as conn:  # never committed
        await access_repo.insert_user(
            conn, username="tech-z", role="technician", credentials=credentials,
            created_at_us=T0, created_by="test",
        )  # fmt: skip
        with pytest.raises(IntegrityError) as raised:
            await access_repo.insert_user(
                conn, username="tech-z", role="technician", credentials=credentials,
                created_at_us=T0, created_by="test",
            )  # fmt: skip
    assert digest not in str(raised.value)
    assert "hidden due to hide_parameters" in str(raised.value)


async def test_first_admins_asked_for_at_once_are_two(store: LedgerStore) -> None:
    """Two first admins asked for on the command line at the same moment, with one there:
    one of them is made and the way closes behind it."""
    engine = store.engine
    await _admins(engine, "ann")
    a_checked, go_a = asyncio.Event(), asyncio.Event()

    async def add(name: str, *, wait: bool) -> users.User:
        async def check(conn: AsyncConnection) -> None:
            await duties.check_bootstrap(conn, Role.ADMIN)
            if wait:  # checked, not yet written: the other one comes now
                a_checked.set()
                await go_a.wait()

        async def then(conn: AsyncConnection) -> None:
            await duties.after_bootstrap(conn, Role.ADMIN, actor="cli", at_us=T0)

        return await users.create_user(
            engine, username=name, role=Role.ADMIN, password=PASSWORD, actor="cli", at_us=T0,
            check=check, then=then,
        )  # fmt: skip

    first = asyncio.create_task(add("bob", wait=True))
    await a_checked.wait()
    second = asyncio.create_task(add("cid", wait=False))
    await asyncio.sleep(0.5)  # SQLite: made meanwhile; PostgreSQL: waiting for the first
    go_a.set()
    answers = await asyncio.gather(first, second, return_exceptions=True)
    refused = [a for a in answers if isinstance(a, duties.DutyRefused)]
    assert len(refused) == 1 and "first two admins" in str(refused[0]), answers
    admins = [u for u in await users.list_users(engine) if u.role is Role.ADMIN]
    assert len(admins) == 2, admins
    assert len(await users.audit_entries(engine, action=duties.BOOTSTRAP_CLOSED)) == 1


async def test_an_installation_from_before_the_mark_that_had_two_admins_stays_closed(
    store: LedgerStore,
) -> None:
    """Two admin accounts made before the bootstrap was recorded closed, one of them disabled
    since: the command line still makes no admin."""
    engine = store.engine
    for name in ("ann", "bob"):
        await users.create_user(
            engine, username=name, role=Role.ADMIN, password=PASSWORD, actor="cli", at_us=T0
        )
    await users.disable_user(engine, username="bob", actor="ann", at_us=T0)
    assert await users.audit_entries(engine, action=duties.BOOTSTRAP_CLOSED) == []
    async with engine.connect() as conn:
        assert await duties.bootstrap_closed(conn)
        with pytest.raises(duties.DutyRefused, match="first two admins"):
            await duties.check_bootstrap(conn, Role.ADMIN)
