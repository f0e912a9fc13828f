"""The accounts as the web and the command line work on them: people, their roles and
passwords, the account changes two admins make, the displays' tokens and the audit log.

``Accounts`` holds the database and the clock, so that whoever asks names only what is asked
for and who asks; each change is dated by the clock when it is made. The work itself is done
by ``controller.access.users``, ``controller.access.duties`` and
``controller.access.device_tokens``.
"""

from __future__ import annotations

from controller.access import device_tokens, duties, users
from controller.access.device_tokens import DeviceToken
from controller.access.duties import AccountRequest, Answer, RequestKind, RequestStatus
from controller.access.users import User
from controller.periods import Clock
from controller.roles import Role
from controller.storage.audit import AuditEntry
from controller.storage.handles import Connection, Database
from controller.storage.unit_of_work import connected

__all__ = ["Accounts"]


class Accounts:
    """Every account operation of one database, dated by ``clock``."""

    def __init__(self, engine: Database, clock: Clock) -> None:
        self.engine = engine
        self.clock = clock

    # ------------------------------------------------------------------------------ people

    async def user(self, username: str) -> User | None:
        """The user, as stored now; None when there is none."""
        return await users.get_user(self.engine, username)

    async def all_users(self) -> list[User]:
        """Every user."""
        return await users.list_users(self.engine)

    async def create_user(self, *, username: str, role: Role, password: str, actor: str) -> User:
        """A user of a role one admin may make alone, with the password chosen."""
        return await users.create_user(
            self.engine,
            username=username,
            role=role,
            password=password,
            actor=actor,
            at_us=self.clock.now_us(),
        )

    async def check_host_may_add(self, role: Role) -> None:
        """Refuse a user of ``role`` made on the controller's host rather than by two admins
        (``duties.check_bootstrap``)."""
        async with connected(self.engine) as conn:
            await duties.check_bootstrap(conn, role)

    async def add_on_host(self, *, username: str, role: Role, password: str, actor: str) -> User:
        """A user made on the controller's host: an installation's first two admins, or a
        role one admin may make alone; the second admin closes the way behind it."""
        at_us = self.clock.now_us()

        async def may_add(conn: Connection) -> None:
            await duties.check_bootstrap(conn, role)

        async def close_behind(conn: Connection) -> None:
            await duties.after_bootstrap(conn, role, actor=actor, at_us=at_us)

        return await users.create_user(
            self.engine,
            username=username,
            role=role,
            password=password,
            actor=actor,
            at_us=at_us,
            check=may_add,
            then=close_behind,
        )

    async def disable(self, *, username: str, actor: str) -> User:
        """Disable ``username``, unless one of the last enabled admins
        (``duties.disable_account``)."""
        return await duties.disable_account(
            self.engine, username=username, actor=actor, at_us=self.clock.now_us()
        )

    async def set_password(self, *, username: str, password: str, actor: str) -> None:
        """An admin sets another's password; their tokens stop."""
        await users.set_password(
            self.engine,
            username=username,
            password=password,
            actor=actor,
            at_us=self.clock.now_us(),
        )

    # ------------------------------------------------------------------------ signing in

    async def sign_in(self, username: str, password: str) -> User | None:
        """The user when the password (or a one-time code not yet expired) is right and the
        account enabled; otherwise None (``users.authenticate``)."""
        return await users.authenticate(self.engine, username, password, at_us=self.clock.now_us())

    async def change_own_password(self, *, username: str, current: str, new: str) -> User | None:
        """A person's own new password, given their current one or their one-time code; None
        when that is wrong (``users.change_own_password``)."""
        return await users.change_own_password(
            self.engine, username=username, current=current, new=new, at_us=self.clock.now_us()
        )

    # ------------------------------------------------------------------ account requests

    async def ask(
        self, kind: RequestKind, *, username: str, actor: str, role: Role | None = None
    ) -> Answer:
        """An admin asks for an account change: made at once when one admin suffices,
        otherwise pending until another confirms (``duties.file_request``)."""
        return await duties.file_request(
            self.engine,
            kind=kind,
            username=username,
            role=role,
            actor=actor,
            at_us=self.clock.now_us(),
        )

    async def ask_recovery(self, *, username: str, reason: str, actor: str) -> Answer:
        """A new admin asked for on the controller's host (``duties.file_recovery``)."""
        return await duties.file_recovery(
            self.engine, username=username, reason=reason, actor=actor, at_us=self.clock.now_us()
        )

    async def requests(self, status: RequestStatus | None = None) -> list[AccountRequest]:
        """Account requests, newest first, of ``status`` when given."""
        return await duties.list_requests(self.engine, at_us=self.clock.now_us(), status=status)

    async def confirm(self, request_id: str, *, actor: str) -> Answer:
        """A second admin confirms a request: the change is made now."""
        return await duties.confirm_request(
            self.engine, request_id, actor=actor, at_us=self.clock.now_us()
        )

    async def reject(self, request_id: str, *, actor: str, reason: str) -> AccountRequest:
        """A pending request turned down, with its reason; nothing changes."""
        return await duties.reject_request(
            self.engine, request_id, actor=actor, reason=reason, at_us=self.clock.now_us()
        )

    # ---------------------------------------------------------------------- device tokens

    async def all_device_tokens(self) -> list[DeviceToken]:
        """Every display's token record (never the token itself)."""
        return await device_tokens.list_device_tokens(self.engine)

    async def device_of(self, token: str) -> DeviceToken | None:
        """The display ``token`` belongs to, unless unknown or revoked."""
        return await device_tokens.verify_device_token(self.engine, token)

    async def create_device_token(self, *, name: str, actor: str) -> tuple[DeviceToken, str]:
        """A new display token: its record, and the token itself, shown this once only."""
        return await device_tokens.create_device_token(
            self.engine, name=name, actor=actor, at_us=self.clock.now_us()
        )

    async def revoke_device_token(self, *, token_id: str, actor: str) -> DeviceToken:
        """Revoke a display's token: it stops working at once."""
        return await device_tokens.revoke_device_token(
            self.engine, token_id=token_id, actor=actor, at_us=self.clock.now_us()
        )

    # ---------------------------------------------------------------------------- audit

    async def audit_entries(
        self,
        *,
        since_us: int | None = None,
        until_us: int | None = None,
        limit: int = 1000,
        actor: str | None = None,
        action: str | None = None,
    ) -> list[AuditEntry]:
        """The audit log of a period (``until`` exclusive), newest first."""
        return await users.audit_entries(
            self.engine,
            since_us=since_us,
            until_us=until_us,
            limit=limit,
            actor=actor,
            action=action,
        )
