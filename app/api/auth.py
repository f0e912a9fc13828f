"""Signing in: the OAuth2 password flow, a person's own new password, and who the caller is."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, HTTPException, Request, status
from fastapi.security import OAuth2PasswordRequestForm
from pydantic import BaseModel, ConfigDict

from app.api.deps import ServiceDep
from app.api.text_fields import Username, optional_line
from app.security.authentication import Authority, Principal, authority, require
from app.throttle import GateFull
from controller.access import passwords, roles, users
from controller.refusal import at
from controller.roles import Role

router = APIRouter(prefix="/api/v1/auth", tags=["sign-in"])

EVERYONE = tuple(Role)
WRONG = "wrong username or password, or the account is disabled"
# Tells a page to ask for a new password, rather than reading the message's words.
PASSWORD_REQUIRED_HEADER = "X-Password-Required"
SET_PASSWORD_FIRST = (
    "this account waits for its person to choose a password: send the one-time code as the "
    "current password to POST /api/v1/auth/password"
)
GUARDED_ANSWERS: dict[int | str, dict[str, Any]] = {
    401: {"description": "wrong username or password, or the account is disabled"},
    422: {"description": "a name or password longer than any account can have"},
    429: {"description": "too many failed sign-ins; try again after Retry-After seconds"},
    503: {"description": "too many sign-ins are being checked; try again after Retry-After"},
}


OptionalLine = Annotated[str, optional_line()]


class SignInForm(OAuth2PasswordRequestForm):
    """The OAuth2 password form, its text bounded like every other input (a username that
    could not be anyone's is a 422, not a sign-in attempt)."""

    def __init__(
        self,
        *,
        grant_type: Annotated[str | None, Form(pattern="^password$", max_length=8)] = None,
        username: Annotated[Username, Form()],
        password: Annotated[
            str, Form(max_length=passwords.MAX_PASSWORD, json_schema_extra={"format": "password"})
        ],
        scope: Annotated[OptionalLine, Form()] = "",
        client_id: Annotated[OptionalLine | None, Form()] = None,
        client_secret: Annotated[OptionalLine | None, Form()] = None,
    ) -> None:
        super().__init__(
            grant_type=grant_type,
            username=username,
            password=password,
            scope=scope,
            client_id=client_id,
            client_secret=client_secret,
        )


class TokenRead(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "access_token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9...",
                    "token_type": "bearer",
                    "expires_in": 900,
                    "role": "technician",
                    "username": "pat.tech",
                }
            ]
        }
    )

    access_token: str
    token_type: str = "bearer"
    expires_in: int  # seconds
    role: Role
    username: str


class PrincipalRead(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"username": "pat.tech", "role": "technician", "device": False}]
        }
    )

    username: str
    role: Role
    device: bool


def _wait(
    seconds: float, detail: str, code: int = status.HTTP_429_TOO_MANY_REQUESTS
) -> HTTPException:
    wait = max(1, round(seconds + 0.5))
    return HTTPException(
        status_code=code,
        detail=f"{detail}; try again in {wait} s",
        headers={"Retry-After": str(wait)},
    )


async def _checked(
    auth: Authority,
    address: str,
    username: str,
    check: Callable[[], Awaitable[users.User | None]],
) -> users.User:
    """Run ``check`` (a password check) under the throttle and in the address's turn; the user
    it vouches for, or the refusal as an HTTP answer."""
    wait = auth.throttle.attempt(username, address)
    if wait > 0:
        raise _wait(wait, "too many failed sign-ins")
    try:
        async with auth.hashing.turn(address, known=auth.throttle.known(username, address)):
            user = await check()
    except GateFull as full:
        auth.throttle.unheard(username, address)
        if full.mine:
            raise _wait(1, "too many sign-ins from your address are being checked") from None
        raise _wait(1, "too many sign-ins are being checked", 503) from None
    except roles.UserError:
        auth.throttle.unheard(username, address)
        raise
    if user is None:
        raise HTTPException(
            status_code=status.HTTP_401_UNAUTHORIZED,
            detail=WRONG,
            headers={"WWW-Authenticate": "Bearer"},
        )
    auth.throttle.succeeded(username, address)
    auth.forget(user.username)
    return user


def _token(auth: Authority, user: users.User) -> TokenRead:
    return TokenRead(
        access_token=auth.issue(user.username, user.role, generation=user.token_generation),
        expires_in=auth.token_seconds,
        role=user.role,
        username=user.username,
    )


@router.post(
    "/token",
    summary="Sign in (OAuth2 password flow): a short-lived bearer token",
    responses={
        **GUARDED_ANSWERS,
        403: {
            "description": "the account must set its password first (one-time code)",
            "headers": {
                PASSWORD_REQUIRED_HEADER: {
                    "description": "present: ask the person for a new password",
                    "schema": {"type": "string"},
                }
            },
        },
    },
)
async def sign_in(
    request: Request,
    form: Annotated[SignInForm, Depends()],
    service: ServiceDep,
) -> TokenRead:
    auth = authority(service)
    user = await _checked(
        auth,
        auth.client(request),
        form.username,
        lambda: service.accounts.sign_in(form.username, form.password),
    )
    if user.must_set_password:
        raise HTTPException(
            status_code=status.HTTP_403_FORBIDDEN,
            detail=SET_PASSWORD_FIRST,
            headers={PASSWORD_REQUIRED_HEADER: "true"},
        )
    return _token(auth, user)


@router.post(
    "/password",
    summary="Choose your own new password (with the current one, or a one-time code)",
    description="Every token issued before stops working. The answer signs you in anew.",
    responses=GUARDED_ANSWERS,
)
async def change_password(
    request: Request,
    service: ServiceDep,
    username: Annotated[Username, Form()],
    password: Annotated[
        str,
        Form(
            max_length=passwords.MAX_PASSWORD,
            description="the current password, or the one-time code",
        ),
    ],
    new_password: Annotated[
        str, Form(max_length=passwords.MAX_PASSWORD, description=passwords.PASSWORD_HELP)
    ],
) -> TokenRead:
    with at("body.new_password"):
        users.check_password(new_password, username=username)
        auth = authority(service)
        user = await _checked(
            auth,
            auth.client(request),
            username,
            lambda: service.accounts.change_own_password(
                username=username, current=password, new=new_password
            ),
        )
    return _token(auth, user)


@router.get("/me", summary="Who the token signs in, and their role")
async def me(principal: Annotated[Principal, Depends(require(*EVERYONE))]) -> PrincipalRead:
    return PrincipalRead(username=principal.username, role=principal.role, device=principal.device)
