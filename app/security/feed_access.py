"""Open display feeds keep being checked: a feed read with a token ends when the token would
no longer be let in (a device token revoked, its person disabled or given another role, their
tokens revoked, or the token expired), as a new request with it would be refused at once.

One watcher per process checks every open feed's token together, twice a second, against the
users and device tokens as stored: two small reads however many feeds are open, and a change
made by another process is seen as soon as one made by this one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping

from app.security.authentication import Authority, Principal, TokenRefused, judge
from controller.access import users

__all__ = ["RECHECK_S", "FeedAccess", "refusal"]

log = logging.getLogger(__name__)

# How often open feeds are checked: a revoked token's feed ends within this and one read.
RECHECK_S = 0.5


def refusal(
    principal: Principal,
    *,
    people: Mapping[str, users.User],
    revoked_devices: set[str],
    known_devices: set[str],
    now_s: float,
) -> TokenRefused | None:
    """Why ``principal``'s token no longer holds against the stored users and device tokens
    (None: it holds)."""
    if principal.device:
        if principal.token_id in revoked_devices or principal.token_id not in known_devices:
            return TokenRefused("the device token has been revoked", why="token revoked")
        return None
    if principal.expires_at is not None and now_s >= principal.expires_at:
        return TokenRefused("the token has expired; sign in again", why="token expired")
    if principal.generation is None:
        return TokenRefused("the token is not valid; sign in again")
    try:
        judge(
            principal.username,
            principal.role,
            principal.generation,
            people.get(principal.username),
        )
    except TokenRefused as exc:
        return exc
    return None


class FeedAccess:
    """``await until_refused(principal)`` returns why its token stopped holding."""

    def __init__(self, authority: Authority) -> None:
        self.authority = authority
        self._watched: dict[asyncio.Future[TokenRefused], Principal] = {}
        self._task: asyncio.Task[None] | None = None

    async def until_refused(self, principal: Principal) -> TokenRefused:
        waiter: asyncio.Future[TokenRefused] = asyncio.get_running_loop().create_future()
        self._watched[waiter] = principal
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._watch(), name="display feed access")
        try:
            return await waiter
        finally:
            self._watched.pop(waiter, None)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _watch(self) -> None:
        while self._watched:
            await asyncio.sleep(RECHECK_S)
            try:
                await self.check_now()
            except Exception:
                # The database out of reach: the feeds go on showing their "delayed"
                # amounts, and the next round checks again.
                log.exception("checking the tokens of open display feeds failed")

    async def check_now(self) -> None:
        accounts = self.authority.service.accounts
        people = {u.username: u for u in await accounts.all_users()}
        devices = await accounts.all_device_tokens()
        revoked = {d.token_id for d in devices if d.revoked_at_us is not None}
        known = {d.token_id for d in devices}
        now_s = time.time()
        for waiter, principal in list(self._watched.items()):
            found = refusal(
                principal, people=people, revoked_devices=revoked, known_devices=known, now_s=now_s
            )
            if found is not None and not waiter.done():
                waiter.set_result(found)
