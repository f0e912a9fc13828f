"""Signing in: the OAuth2 password flow, and who the caller is."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, HTTPException, Request, status
from fastapi.security import OAuth2PasswordRequestForm
from pydantic import BaseModel, ConfigDict

from app.api.deps import get_service
from app.api.text_fields import Username, optional_line
from app.security import Principal, Role, authority, require
from controller import users
from controller.service import FloorService

router = APIRouter(prefix="/api/v1/auth", tags=["sign-in"])

EVERYONE = tuple(Role)

OptionalLine = Annotated[str, optional_line()]


class SignInForm(OAuth2PasswordRequestForm):
    """The OAuth2 password form, its text bounded like every other input (a username that
    could not be anyone's is a 422, not a sign-in attempt)."""

    def __init__(
        self,
        *,
        grant_type: Annotated[str | None, Form(pattern="^password$")] = None,
        username: Annotated[Username, Form()],
        password: Annotated[
            str, Form(max_length=users.MAX_PASSWORD, json_schema_extra={"format": "password"})
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


@router.post(
    "/token",
    summary="Sign in (OAuth2 password flow): a short-lived bearer token",
    responses={
        401: {"description": "wrong username or password, or the account is disabled"},
        429: {"description": "too many failed sign-ins; try again after Retry-After seconds"},
    },
)
async def sign_in(
    request: Request,
    form: Annotated[SignInForm, Depends()],
    service: Annotated[FloorService, Depends(get_service)],
) -> TokenRead:
    auth = authority(service)
    address = request.client.host if request.client else "unknown"
    keys = (f"user:{form.username}", f"address:{address}")
    wait = auth.throttle.wait_s(*keys)
    if wait > 0:
        seconds = max(1, round(wait + 0.5))
        raise HTTPException(
            status_code=status.HTTP_429_TOO_MANY_REQUESTS,
            detail=f"too many failed sign-ins; try again in {seconds} s",
            headers={"Retry-After": str(seconds)},
        )
    user = await users.authenticate(service.engine, form.username, form.password)
    if user is None:
        auth.throttle.failed(*keys)
        raise HTTPException(
            status_code=status.HTTP_401_UNAUTHORIZED,
            detail="wrong username or password, or the account is disabled",
            headers={"WWW-Authenticate": "Bearer"},
        )
    auth.throttle.succeeded(*keys)
    auth.forget(user.username)
    return TokenRead(
        access_token=auth.issue(user.username, user.role),
        expires_in=auth.token_seconds,
        role=user.role,
        username=user.username,
    )


@router.get("/me", summary="Who the token signs in, and their role")
async def me(principal: Annotated[Principal, Depends(require(*EVERYONE))]) -> PrincipalRead:
    return PrincipalRead(username=principal.username, role=principal.role, device=principal.device)
