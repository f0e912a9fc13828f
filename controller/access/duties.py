"""No one acts alone: account changes that two admins make, and approvers independent of filers.

The roles that check someone else's work are admin (who makes accounts), technician (whose
second signature checks another's verification of a jackpot), supervisor (who requests a
correction of a meter and applies another's, and signs jackpots too) and commission agent
(who approves what others file). Whoever could make, revive, promote into or take over such an
account could act as two people, so each of those changes is asked for by one admin and
confirmed by a different one:

- a new account of one of those roles, re-enabling one, a role change into one, and a
  password reset of one are pending requests until a second admin confirms them; the admin
  who asked, or the account concerned, never confirms; both names are in the audit log;
- no admin ever knows a usable password of such an account: the account gets a one-time code
  instead, whose first half is shown to the admin who asks and whose second half to the admin
  who confirms; with both halves its person sets their own password, and until then the
  account can do nothing else (``must_set_password``); every earlier token ends;
- no admin, alone or with another, disables or demotes an admin when fewer than two enabled
  admins would be left (``BOOTSTRAP_ADMINS``): the two-person rule always has its two;
- the command line (a shell on the controller host) makes only an installation's first two
  admins; once it has had two, the audit log says so (``BOOTSTRAP_CLOSED``) and it makes no
  more, however many are later disabled (``check_bootstrap``); the way back is a recovery
  asked for on the host and confirmed by an enabled admin through the API
  (``file_recovery``): host access and a second person, both recorded;
- an approver is never the filer, nor tied to the filer by an account change either of them
  asked for or confirmed for the other (``check_independent``); the same holds for the
  second signature of a jackpot and its verifier.

Other roles (display, dealer, auditor, surveillance) check no one's work: one admin changes
their accounts at once, through the same records. Taking a role's powers away (disabling,
demoting out of it) is one admin's act, within the floor of two enabled admins.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from controller.access import passwords
from controller.access.roles import AlreadyExists, UnknownUser, UserError, check_role
from controller.access.users import (
    User,
    add_user,
    check_username,
    disable_in,
    new_credentials,
    shown,
    user_of,
)
from controller.refusal import Conflict, NotFound
from controller.roles import Role
from controller.rules.house import check_no_tie
from controller.storage import access_repo, audit
from controller.storage.access_repo import AccountRequestRecord, Credentials
from controller.storage.audit import write_audit
from controller.storage.errors import Duplicate
from controller.storage.handles import Connection, Database
from controller.storage.unit_of_work import connected, transaction

# House policy after NJ 13:69E-1.39B's dual control, and the house's second signature
# (controller.rules.house).
GUARDED_ROLES = frozenset({Role.ADMIN, Role.TECHNICIAN, Role.SUPERVISOR, Role.COMMISSION_AGENT})
# The command line makes the first this many admins; no change leaves fewer enabled.
BOOTSTRAP_ADMINS = 2
# The audit log's record that the installation has had its first admins: from it on, the
# command line makes no admin (never written twice, never undone).
BOOTSTRAP_CLOSED = "access.bootstrap_closed"
HOUR_US = 3_600 * 1_000_000
REQUEST_LIFETIME_US = 24 * HOUR_US  # a request not confirmed within a day lapses
CODE_LIFETIME_US = 24 * HOUR_US  # a code not used within a day of confirmation lapses


class RequestKind(StrEnum):
    CREATE = "create"
    ENABLE = "enable"
    ROLE = "role"
    RESET = "reset"
    # A new admin asked for on the controller's host (``file_recovery``), confirmed by an
    # enabled admin: the way back when the admins left cannot make one.
    RECOVER = "recover"


class RequestStatus(StrEnum):
    PENDING = "pending"
    CONFIRMED = "confirmed"
    REJECTED = "rejected"
    EXPIRED = "expired"  # shown for a pending request past its time; never stored


class DutyRefused(UserError, Conflict):
    """An account change refused because one person would be acting alone."""


class UnknownRequest(UserError, NotFound):
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountRequest:
    request_id: str
    kind: RequestKind
    username: str
    role: Role | None
    requested_by: str
    requested_at_us: int
    expires_at_us: int
    status: RequestStatus
    decided_by: str | None
    decided_at_us: int | None
    decision_reason: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """A request and the code halves this answer shows, once, to the admin it is given to."""

    request: AccountRequest
    first_half: str | None = None
    second_half: str | None = None


def needs_second_admin(role: Role) -> bool:
    """Does a change need a second admin? ``role``: the account's role after the change (for a
    reset or re-enabling, the role it has). Taking a role away never does."""
    return role in GUARDED_ROLES


def issues_code(kind: RequestKind, role: Role) -> bool:
    """Does the account get a one-time code in place of its password? A new account and a
    reset always; a role change into a role that checks others too, so that whoever knew the
    password before does not take the new powers with it."""
    return kind in (RequestKind.CREATE, RequestKind.RESET, RequestKind.RECOVER) or (
        kind is RequestKind.ROLE and role in GUARDED_ROLES
    )


def _request(row: AccountRequestRecord, now_us: int) -> AccountRequest:
    status = RequestStatus(row.status)
    if status is RequestStatus.PENDING and now_us > row.expires_at_us:
        status = RequestStatus.EXPIRED
    return AccountRequest(
        request_id=row.request_id,
        kind=RequestKind(row.kind),
        username=row.username,
        role=None if row.role is None else Role(row.role),
        requested_by=row.requested_by,
        requested_at_us=row.requested_at_us,
        expires_at_us=row.expires_at_us,
        status=status,
        decided_by=row.decided_by,
        decided_at_us=row.decided_at_us,
        decision_reason=row.decision_reason,
    )


async def _load(conn: Connection, request_id: str) -> AccountRequestRecord:
    row = await access_repo.load_request(conn, request_id)
    if row is None:
        raise UnknownRequest(f"no account request {request_id!r}")
    return row


async def _existing(conn: Connection, username: str) -> User:
    row = await access_repo.load_user(conn, username)
    if row is None:
        raise UnknownUser(f"no user {username!r}")
    return user_of(row)


async def _check_filable(
    conn: Connection, kind: RequestKind, username: str, role: Role | None, actor: str
) -> Role:
    """The role the account has after the change; refuses a change that makes no sense now."""
    if kind in (RequestKind.CREATE, RequestKind.RECOVER):
        check_username(username)
        if role is None:
            raise UserError("a new account needs a role")
        if await access_repo.load_user(conn, username) is not None:
            raise AlreadyExists(f"there is already a user {username!r}")
        return role
    user = await _existing(conn, username)
    if kind is RequestKind.ENABLE:
        if not user.disabled:
            raise UserError(f"the account {username!r} is not disabled")
        return user.role
    if kind is RequestKind.ROLE:
        if role is None:
            raise UserError("a role change names the new role")
        if username == actor:
            raise DutyRefused("you cannot change your own role; ask another admin")
        if role is user.role:
            raise UserError(f"{username!r} already has the role {role.value}")
        if user.role is Role.ADMIN and not user.disabled:
            await _check_admins_left(conn, username, gone=1)
        return role
    return user.role


async def file_request(
    engine: Database,
    *,
    kind: RequestKind,
    username: str,
    role: Role | str | None = None,
    actor: str,
    at_us: int,
) -> Answer:
    """An admin's request. When one admin suffices (``needs_second_admin``) it is confirmed at
    once and the answer carries the whole code (both halves); otherwise it waits for another
    admin and the answer carries the first half of the code it will issue."""
    wanted = None if role is None else check_role(role)
    request_id = uuid.uuid4().hex
    async with transaction(engine) as conn:
        after = await _check_filable(conn, kind, username, wanted, actor)
        first = passwords.new_half() if issues_code(kind, after) else None
        alone = not needs_second_admin(after)
        await _record_request(
            conn,
            request_id,
            kind,
            username,
            wanted,
            first,
            actor=actor,
            at_us=at_us,
            said={
                "role": after.value,
                "confirmed_by": "the same admin" if alone else "a second admin",
            },
        )
        if alone:
            done = await _confirm(conn, request_id, actor=actor, at_us=at_us, alone=True)
            return Answer(request=done.request, first_half=first, second_half=done.second_half)
        return Answer(request=_request(await _load(conn, request_id), at_us), first_half=first)


async def _record_request(
    conn: Connection,
    request_id: str,
    kind: RequestKind,
    username: str,
    role: Role | None,
    first: str | None,
    *,
    actor: str,
    at_us: int,
    said: Mapping[str, Any],
) -> None:
    """A pending request and its audit entry (``said``: what the entry adds to its id and
    kind). Only the first half's digest is kept: the code is never stored."""
    await access_repo.insert_request(
        conn,
        AccountRequestRecord(
            request_id=request_id,
            kind=kind.value,
            username=username,
            role=None if role is None else role.value,
            requested_by=actor,
            requested_at_us=at_us,
            expires_at_us=at_us + REQUEST_LIFETIME_US,
            first_half_sha256=None if first is None else passwords.half_digest(first),
            status=RequestStatus.PENDING.value,
            decided_by=None,
            decided_at_us=None,
            decision_reason=None,
        ),
    )
    await write_audit(
        conn,
        at_us=at_us,
        actor=actor,
        action="account.request",
        target=f"user {username}",
        after={"request_id": request_id, "kind": kind.value, **said},
    )


async def _enabled_admin(conn: Connection, username: str) -> bool:
    row = await access_repo.load_user(conn, username)
    return row is not None and row.role == Role.ADMIN.value and not row.disabled


async def confirm_request(engine: Database, request_id: str, *, actor: str, at_us: int) -> Answer:
    """A second admin's confirmation: the change is made now. For a code-issuing change the
    answer carries the code's second half. Of confirmations at the same moment one makes
    the change and the others are refused (``DutyRefused``: already confirmed)."""
    try:
        async with transaction(engine) as conn:
            return await _confirm(conn, request_id, actor=actor, at_us=at_us, alone=False)
    except Duplicate as exc:  # the account was made meanwhile, by this request or another
        raise DutyRefused(
            f"account request {request_id} cannot be confirmed: the account was made "
            "meanwhile (already confirmed)"
        ) from exc


async def _confirm(
    conn: Connection, request_id: str, *, actor: str, at_us: int, alone: bool
) -> Answer:
    row = await _load(conn, request_id)
    request = _request(row, at_us)
    if request.status is not RequestStatus.PENDING:
        raise DutyRefused(f"account request {request_id} is already {request.status.value}")
    if not alone:
        if actor == request.requested_by:
            raise DutyRefused(
                f"{actor} asked for this change and cannot also confirm it; a second admin confirms"
            )
        if actor == request.username:
            raise DutyRefused("a change to your own account is confirmed by another admin")
        if request.kind is RequestKind.RECOVER:
            # Asked for on the host, by someone with no account: the confirmation is the
            # second person, and must be an admin's, enabled now.
            if not await _enabled_admin(conn, actor):
                raise DutyRefused(f"a recovery is confirmed by an enabled admin; {actor} is not")
        elif not await _enabled_admin(conn, request.requested_by):
            raise DutyRefused(
                f"{request.requested_by}, who asked for this change, is no longer an "
                "enabled admin; reject it"
            )
    # Claimed first: of two confirmations at once, the second waits here and is refused,
    # having changed nothing.
    if not await access_repo.mark_decided(
        conn,
        request_id,
        status=RequestStatus.CONFIRMED.value,
        by=actor,
        at_us=at_us,
        while_status=RequestStatus.PENDING.value,
    ):
        raise DutyRefused(f"account request {request_id} was already decided meanwhile")
    before = None if request.kind in _NEW else await _existing(conn, request.username)
    leaves_admins = (
        before is not None and before.role is Role.ADMIN and not before.disabled
    )  # a demotion out of admin
    if leaves_admins:
        await access_repo.hold_enabled(conn, Role.ADMIN.value)
    after = await _check_filable(
        conn, request.kind, request.username, request.role, request.requested_by
    )
    second = passwords.new_half() if issues_code(request.kind, after) else None
    credentials: Credentials | None = None
    if second is not None:
        # A change that issues a code was filed with the code's first half (``file_request``).
        assert row.first_half_sha256 is not None
        credentials = new_credentials(
            code_sha256=passwords.code_digest(row.first_half_sha256, second),
            expires_at_us=at_us + CODE_LIFETIME_US,
        )
    who = {
        "request_id": request_id,
        "requested_by": request.requested_by,
        "confirmed_by": actor,
    }
    await _apply(conn, request, after, credentials, who, actor=actor, at_us=at_us)
    if after is Role.ADMIN:
        await close_bootstrap_when_due(conn, actor=actor, at_us=at_us)
    done = _request(await _load(conn, request_id), at_us)
    return Answer(request=done, second_half=second)


_NEW = (RequestKind.CREATE, RequestKind.RECOVER)


async def _apply(
    conn: Connection,
    request: AccountRequest,
    role: Role,
    credentials: Credentials | None,
    who: dict[str, str],
    *,
    actor: str,
    at_us: int,
) -> None:
    target = f"user {request.username}"
    if request.kind in _NEW:
        assert credentials is not None  # a new account always gets a one-time code
        await add_user(
            conn,
            username=request.username,
            role=role,
            credentials=credentials,
            actor=actor,
            created_by=request.requested_by,
            at_us=at_us,
            audit_after={**who, "password": "one-time code"},
        )
        return
    before = await _existing(conn, request.username)
    await access_repo.change_account(
        conn,
        request.username,
        role=role.value,
        credentials=credentials,
        enable=request.kind is RequestKind.ENABLE,
    )
    after = await _existing(conn, request.username)
    action = {
        RequestKind.ENABLE: "user.enable",
        RequestKind.ROLE: "user.set_role",
        RequestKind.RESET: "user.reset_password",
    }[request.kind]
    extra = {"password": "one-time code", "tokens": "revoked"} if credentials else {}
    await write_audit(
        conn,
        at_us=at_us,
        actor=actor,
        action=action,
        target=target,
        before=shown(before),
        after={**shown(after), **who, **extra},
    )


async def reject_request(
    engine: Database, request_id: str, *, actor: str, reason: str, at_us: int
) -> AccountRequest:
    """Any admin, the one who asked included, turns a pending request down; nothing changes."""
    if not reason.strip():
        raise UserError("a rejection states its reason")
    async with transaction(engine) as conn:
        request = _request(await _load(conn, request_id), at_us)
        if request.status not in (RequestStatus.PENDING, RequestStatus.EXPIRED):
            raise DutyRefused(f"account request {request_id} is {request.status.value}")
        await access_repo.mark_decided(
            conn,
            request_id,
            status=RequestStatus.REJECTED.value,
            by=actor,
            at_us=at_us,
            reason=reason.strip(),
        )
        await write_audit(
            conn,
            at_us=at_us,
            actor=actor,
            action="account.reject",
            target=f"user {request.username}",
            before={"request_id": request_id, "status": request.status.value},
            after={"request_id": request_id, "status": "rejected", "reason": reason.strip()},
        )
        return _request(await _load(conn, request_id), at_us)


async def list_requests(
    engine: Database, *, at_us: int, status: RequestStatus | None = None
) -> list[AccountRequest]:
    """Account requests, newest first (``expired``: pending ones past their time)."""
    stored = status
    if status is RequestStatus.EXPIRED:  # an expired request is stored as pending
        stored = RequestStatus.PENDING
    async with connected(engine) as conn:
        rows = await access_repo.requests(conn, status=None if stored is None else stored.value)
    found = [_request(r, at_us) for r in rows]
    return [r for r in found if status is None or r.status is status]


# ---------------------------------------------------------------------------- the approvers


async def check_independent(
    engine: Database, *, approver: str, filer: str, clause: str, what: str
) -> None:
    """Refuse ``approver`` for what ``filer`` filed (the caller has refused the filer already)
    when either asked for or confirmed a change to the other's account: whoever made, revived,
    promoted or reset an account could be acting through it."""
    async with connected(engine) as conn:
        tie = await access_repo.tie(conn, a=approver, b=filer, status=RequestStatus.CONFIRMED.value)
    check_no_tie(clause=clause, what=what, approver=approver, filer=filer, tie=tie)


async def _check_admins_left(conn: Connection, username: str, *, gone: int) -> None:
    """Refuse a change that leaves fewer than ``BOOTSTRAP_ADMINS`` enabled admins, ``gone``
    of those counted now being about to go (``username``'s)."""
    left = await access_repo.count_enabled(conn, Role.ADMIN.value) - gone
    if left < BOOTSTRAP_ADMINS:
        raise DutyRefused(
            f"{username} is one of the last {BOOTSTRAP_ADMINS} enabled admins: without them no "
            "second admin confirms anything; two admins make another admin first"
        )


async def disable_account(engine: Database, *, username: str, actor: str, at_us: int) -> User:
    """Disable ``username`` (one admin's act, or the host's), unless it is an enabled admin
    and fewer than ``BOOTSTRAP_ADMINS`` would be left; of two such at once, the second waits
    and counts after the first."""
    async with transaction(engine) as conn:
        row = await access_repo.load_user(conn, username)
        if row is not None and row.role == Role.ADMIN.value and not row.disabled:
            await access_repo.hold_enabled(conn, Role.ADMIN.value)
            user = await disable_in(conn, username=username, actor=actor, at_us=at_us)
            await _check_admins_left(conn, username, gone=0)
            return user
        return await disable_in(conn, username=username, actor=actor, at_us=at_us)


async def bootstrap_closed(conn: Connection) -> bool:
    """Has this installation had its first admins (``BOOTSTRAP_CLOSED`` in the audit log)?

    An installation from before the mark has had them too when it holds two admin accounts,
    disabled or not: disabling them does not reopen the command line."""
    if await _bootstrap_marked(conn):
        return True
    return await access_repo.count_ever(conn, Role.ADMIN.value) >= BOOTSTRAP_ADMINS


async def _bootstrap_marked(conn: Connection) -> bool:
    marks = await audit.audit_entries(
        conn, since_us=None, until_us=None, limit=1, action=BOOTSTRAP_CLOSED
    )
    return bool(marks)


async def close_bootstrap_when_due(conn: Connection, *, actor: str, at_us: int) -> None:
    """Record, once, that the installation has had ``BOOTSTRAP_ADMINS`` enabled admins: from
    then on the command line makes none, whatever happens to them."""
    if await _bootstrap_marked(conn):
        return
    admins = await access_repo.count_enabled(conn, Role.ADMIN.value)
    if admins < BOOTSTRAP_ADMINS:
        return
    await write_audit(
        conn,
        at_us=at_us,
        actor=actor,
        action=BOOTSTRAP_CLOSED,
        target="installation",
        after={
            "enabled_admins": admins,
            "command_line": "makes no more admins; a recovery is asked for on the host and "
            "confirmed by an enabled admin",
        },
    )


async def check_bootstrap(conn: Connection, role: Role) -> None:
    """The command line's rule: accounts of the roles that check others are made by two
    admins through the API, except an installation's first two admins; once it has had them
    (``bootstrap_closed``), never again, even when admins are disabled later."""
    if role not in GUARDED_ROLES:
        return
    await access_repo.hold_accounts(conn)  # two first admins asked for at once: one by one
    closed = await bootstrap_closed(conn)
    admins = await access_repo.count_enabled(conn, Role.ADMIN.value)
    if role is Role.ADMIN and not closed and admins < BOOTSTRAP_ADMINS:
        return
    if role is Role.ADMIN:
        raise DutyRefused(
            "this installation has had its first two admins, which alone the command line "
            "makes; an admin is made by two admins (POST /api/v1/users, confirmed by "
            "another), or, when they cannot, asked for here with `progressive users recover` "
            "and confirmed by an enabled admin"
        )
    raise DutyRefused(
        f"a {role.value} account is made by two admins: one asks for it with "
        "POST /api/v1/users and another confirms it"
    )


async def after_bootstrap(conn: Connection, role: Role, *, actor: str, at_us: int) -> None:
    """After the command line made a ``role`` account, in its transaction: refuse an admin
    past the first two (asked for at the same moment as another), and record the bootstrap
    closed behind the second."""
    if role is not Role.ADMIN:
        return
    if await access_repo.count_enabled(conn, Role.ADMIN.value) > BOOTSTRAP_ADMINS:
        raise DutyRefused(
            "this installation has had its first two admins, which alone the command line "
            "makes (another was made meanwhile)"
        )
    await close_bootstrap_when_due(conn, actor=actor, at_us=at_us)


async def file_recovery(
    engine: Database, *, username: str, reason: str, actor: str, at_us: int
) -> Answer:
    """A new admin asked for on the controller's host (``actor``: who ran the command), with
    the reason: pending until an enabled admin confirms it through the API, who is shown the
    second half of its code as the host is shown the first. Two people, both recorded."""
    if not reason.strip():
        raise UserError("a recovery states its reason")
    request_id = uuid.uuid4().hex
    first = passwords.new_half()
    async with transaction(engine) as conn:
        await _check_filable(conn, RequestKind.RECOVER, username, Role.ADMIN, actor)
        await _record_request(
            conn,
            request_id,
            RequestKind.RECOVER,
            username,
            Role.ADMIN,
            first,
            actor=actor,
            at_us=at_us,
            said={
                "role": Role.ADMIN.value,
                "reason": reason.strip(),
                "enabled_admins": await access_repo.count_enabled(conn, Role.ADMIN.value),
                "confirmed_by": "an enabled admin",
            },
        )
        return Answer(request=_request(await _load(conn, request_id), at_us), first_half=first)
