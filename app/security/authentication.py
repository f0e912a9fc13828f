"""Who may do what: sign-in tokens, roles, and the dependencies routers declare.

People sign in with the OAuth2 password flow (``POST /api/v1/auth/token``) and get a short-lived
signed token (JWT, HS256) naming them and their role. Floor displays get a long-lived,
revocable device token of role ``display`` from an admin. A route states the roles it admits
with ``Depends(require(Role.TECHNICIAN, Role.SUPERVISOR))``; there is no implicit admin: an
admin does what the admin role is given and nothing more (a commission approval is a
commission agent's alone).

A token names the user's token generation, which every change of their password, role or
state raises: a disabled user's tokens, and every token issued before a password change or
reset, stop working within ``USER_CHECK_S`` seconds (at once in the process that made the
change).
"""

from __future__ import annotations

import os
import time
import weakref
from dataclasses import dataclass
from typing import Annotated, Any

import jwt
from fastapi import Depends, HTTPException, Query, Request, status
from fastapi.security import OAuth2PasswordBearer

from app.api.deps import get_service
from app.throttle import HashingGate, LoginThrottle, client_address
from controller.access import users
from controller.access.device_tokens import DEVICE_TOKEN_PREFIX
from controller.roles import Role
from controller.runtime.service import FloorService
from controller.settings import load_secret_key

__all__ = [
    "ALGORITHM",
    "HASHING_SLOTS",
    "ISSUER",
    "STAFF_VIEWERS",
    "TABLE_VIEWERS",
    "TOKEN_URL",
    "USER_CHECK_S",
    "Authority",
    "DisplayAccess",
    "DisplayReader",
    "Principal",
    "RoleRequirement",
    "TokenQuery",
    "TokenRefused",
    "authority",
    "display_access",
    "display_access_ok",
    "display_reader",
    "oauth2_scheme",
    "require",
]

TOKEN_URL = "/api/v1/auth/token"
ALGORITHM = "HS256"
ISSUER = "progressive"
USER_CHECK_S = 3.0
# Password checks at once (each argon2 check takes 64 MiB and a core for a moment).
HASHING_SLOTS = max(1, min(4, os.cpu_count() or 1))

oauth2_scheme = OAuth2PasswordBearer(
    tokenUrl=TOKEN_URL,
    auto_error=False,
    description="A person's token from the password flow, or a display's device token.",
)


@dataclass(frozen=True)
class Principal:
    username: str
    role: Role
    device: bool = False
    # What the token was checked against, so that an open feed can be checked again: a
    # device token's id, a sign-in token's generation and when it expires (epoch seconds).
    token_id: str | None = None
    generation: int | None = None
    expires_at: int | None = None


class TokenRefused(Exception):
    """Why a token does not sign anyone in, in words for the person holding it; ``why`` is the
    same in a few words, for a display told it is signed out."""

    def __init__(self, detail: str, *, why: str = "token not valid") -> None:
        super().__init__(detail)
        self.why = why


def judge(username: str, role: Role, generation: int, current: users.User | None) -> None:
    """``TokenRefused`` unless a sign-in token of ``username`` naming ``role`` and
    ``generation`` still holds for the user as they are now (``current``)."""
    if current is None or current.disabled:
        raise TokenRefused(
            f"the account {username!r} is disabled or no longer exists", why="account disabled"
        )
    if current.role is not role:
        raise TokenRefused(
            f"the role of {username!r} has changed; sign in again", why="role changed"
        )
    if current.token_generation != generation or current.must_set_password:
        raise TokenRefused(
            f"the token of {username!r} was revoked (password or account changed); sign in again",
            why="token revoked",
        )


class Authority:
    """Signs and checks tokens for one running service; holds the sign-in throttle and the
    gate that shares password hashing fairly between addresses."""

    def __init__(self, service: FloorService) -> None:
        self.service = service
        self._key = load_secret_key(service.settings, create=True)
        self.throttle = LoginThrottle()
        self.hashing = HashingGate(slots=HASHING_SLOTS)
        # username -> (checked at, the user or None when there is none)
        self._checked: dict[str, tuple[float, users.User | None]] = {}

    def client(self, request: Request) -> str:
        """The address a request comes from (``client_address``, under the settings)."""
        settings = self.service.settings
        return client_address(
            request.client.host if request.client else None,
            [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw],
            proxies=settings.trusted_proxies,
            header=settings.proxy_header,
        )

    @property
    def token_seconds(self) -> int:
        return self.service.settings.token_minutes * 60

    def issue(
        self, username: str, role: Role, *, generation: int = 0, lifetime_s: int | None = None
    ) -> str:
        now = int(time.time())
        lifetime = self.token_seconds if lifetime_s is None else lifetime_s
        claims = {
            "iss": ISSUER,
            "sub": username,
            "role": role.value,
            "gen": generation,
            "iat": now,
            "exp": now + lifetime,
        }
        return jwt.encode(claims, self._key, algorithm=ALGORITHM)

    def forget(self, username: str) -> None:
        """Re-read the user at the next request (after disabling them, say)."""
        self._checked.pop(username, None)

    async def _current(self, username: str) -> users.User | None:
        now = time.monotonic()
        seen = self._checked.get(username)
        if seen is not None and now - seen[0] < USER_CHECK_S:
            return seen[1]
        user = await self.service.accounts.user(username)
        if len(self._checked) > 10_000:
            self._checked.clear()
        self._checked[username] = (now, user)
        return user

    async def principal(self, token: str) -> Principal:
        """Who ``token`` signs in, or ``TokenRefused`` saying why not."""
        if token.startswith(DEVICE_TOKEN_PREFIX):
            device = await self.service.accounts.device_of(token)
            if device is None:
                raise TokenRefused(
                    "the device token is unknown or has been revoked", why="token revoked"
                )
            return Principal(
                username=f"display {device.name}",
                role=device.role,
                device=True,
                token_id=device.token_id,
            )
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                self._key,
                algorithms=[ALGORITHM],
                issuer=ISSUER,
                options={"require": ["exp", "iat", "sub", "iss"]},
            )
        except jwt.ExpiredSignatureError:
            raise TokenRefused(
                "the token has expired; sign in again", why="token expired"
            ) from None
        except jwt.InvalidTokenError:
            raise TokenRefused("the token is not valid; sign in again") from None
        username, role_name = claims.get("sub"), claims.get("role")
        generation, expires_at = claims.get("gen"), claims.get("exp")
        if (
            not isinstance(username, str)
            or role_name not in {r.value for r in Role}
            or not isinstance(generation, int)
            or not isinstance(expires_at, int)
        ):
            raise TokenRefused("the token is not valid; sign in again")
        role = Role(role_name)
        judge(username, role, generation, await self._current(username))
        return Principal(username=username, role=role, generation=generation, expires_at=expires_at)


_authorities: weakref.WeakKeyDictionary[FloorService, Authority] = weakref.WeakKeyDictionary()


def authority(service: FloorService) -> Authority:
    found = _authorities.get(service)
    if found is None:
        found = _authorities[service] = Authority(service)
    return found


def _unauthorized(detail: str) -> HTTPException:
    return HTTPException(
        status_code=status.HTTP_401_UNAUTHORIZED,
        detail=detail,
        headers={"WWW-Authenticate": "Bearer"},
    )


def _roles_text(roles: frozenset[Role]) -> str:
    names = [r.value for r in Role if r in roles]  # in the enum's order, always the same
    if len(names) == 1:
        return f"the role {names[0]}"
    return "the role " + ", ".join(names[:-1]) + f" or {names[-1]}"


class RoleRequirement:
    """A dependency admitting only signed-in callers of ``roles``; returns the Principal."""

    def __init__(self, roles: frozenset[Role]) -> None:
        if not roles:
            raise ValueError("a route must admit at least one role")
        self.roles = roles

    def __repr__(self) -> str:
        return f"require({', '.join(sorted(r.value for r in self.roles))})"

    async def __call__(
        self,
        request: Request,
        token: Annotated[str | None, Depends(oauth2_scheme)],
    ) -> Principal:
        if not token:
            raise _unauthorized(
                f"this needs a sign-in: send a bearer token from POST {TOKEN_URL} "
                f"({_roles_text(self.roles)})"
            )
        try:
            principal = await authority(get_service(request)).principal(token)
        except TokenRefused as exc:
            raise _unauthorized(str(exc)) from None
        if principal.role not in self.roles:
            raise HTTPException(
                status_code=status.HTTP_403_FORBIDDEN,
                detail=(
                    f"this needs {_roles_text(self.roles)}; "
                    f"you are signed in as {principal.role.value}"
                ),
            )
        request.state.principal = principal
        return principal


def require(*roles: Role) -> RoleRequirement:
    """``Depends(require(Role.X, ...))``: the caller's Principal when their role is one of these."""
    return RoleRequirement(frozenset(roles))


# ------------------------------------------------------------------------- public reading


async def display_access_ok(service: FloorService, token: str | None) -> bool:
    """May this caller read current amounts? Always, unless the setting asks for a token;
    then a display device token or any signed-in person's token will do."""
    if not service.settings.display_requires_token:
        return True
    if not token:
        return False
    try:
        await authority(service).principal(token)
    except TokenRefused:
        return False
    return True


# Longer than any token this server makes (a device token is 47 characters, a sign-in token a
# few hundred): a longer one is refused before anything reads it.
MAX_TOKEN_CHARS = 2048

TokenQuery = Annotated[
    str | None,
    Query(
        max_length=MAX_TOKEN_CHARS,
        description=(
            "A display device token or a sign-in token, for displays that cannot send "
            "headers; needed only when the installation requires display tokens."
        ),
    ),
]


async def display_access(
    request: Request,
    bearer: Annotated[str | None, Depends(oauth2_scheme)],
    token: TokenQuery = None,
) -> None:
    """Dependency of the public read paths: refuses with 401 when a token is required and
    neither the ``Authorization`` header nor ``?token=`` carries a valid one."""
    service = get_service(request)
    if not await display_access_ok(service, bearer or token):
        raise _unauthorized(
            "this installation shows current amounts to its displays and signed-in people "
            "only: send a display device token (Authorization: Bearer, or ?token=)"
        )


DisplayAccess = Annotated[None, Depends(display_access)]

# Who sees what a patron does not: a pool's hidden (reserve) meters are shown to signed-in
# staff of these roles, never to a display or a dealer's screen facing the table.
STAFF_VIEWERS = frozenset(
    {Role.TECHNICIAN, Role.SUPERVISOR, Role.AUDITOR, Role.COMMISSION_AGENT, Role.ADMIN}
)
# Each table's state, counters, bets and switches: to the people who work the tables and
# those who check them (GET /api/v1/tables, and the tables of a link), no one else.
TABLE_VIEWERS = frozenset({Role.DEALER, Role.TECHNICIAN, Role.SUPERVISOR, Role.AUDITOR, Role.ADMIN})


async def display_reader(
    request: Request,
    bearer: Annotated[str | None, Depends(oauth2_scheme)],
    token: TokenQuery = None,
) -> Principal | None:
    """``display_access``, and the signed-in person reading (None: a display or nobody signed
    in), for paths that show some roles more (``STAFF_VIEWERS``, ``TABLE_VIEWERS``)."""
    await display_access(request, bearer, token)
    found = bearer or token
    if not found:
        return None
    try:
        principal = await authority(get_service(request)).principal(found)
    except TokenRefused:
        return None
    if principal.device:
        return None
    return principal


DisplayReader = Annotated[Principal | None, Depends(display_reader)]
