"""People and displays, for admins: create and disable users, set passwords, display tokens."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path, status
from pydantic import BaseModel, ConfigDict, Field

from app.api.deps import get_service
from app.api.text_fields import Line, Reference, Username
from app.security import Principal, Role, authority, require
from controller import users
from controller.service import FloorService
from controller.text import USERNAME

router = APIRouter(prefix="/api/v1", tags=["users and displays"])

Admin = Annotated[Principal, Depends(require(Role.ADMIN))]
ServiceDep = Annotated[FloorService, Depends(get_service)]
UsernamePath = Annotated[Username, Path(description="the user's name", examples=["pat.tech"])]
TokenIdPath = Annotated[
    Reference, Path(description="the device token's id", examples=["3f9a1c0b2d4e5f60"])
]


def _refused(where: str, exc: users.UserError) -> HTTPException:
    if isinstance(exc, users.UnknownUser | users.UnknownDeviceToken):
        return HTTPException(status_code=404, detail=str(exc))
    if isinstance(exc, users.AlreadyExists):
        return HTTPException(status_code=409, detail=str(exc))
    problem = {"where": where, "problem": str(exc)}
    return HTTPException(
        status_code=422, detail={"message": "the request is not valid", "problems": [problem]}
    )


# ------------------------------------------------------------------------------ schemas


class UserRead(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "username": "pat.tech",
                    "role": "technician",
                    "created_at_us": 1767225600000000,
                    "created_by": "admin",
                    "disabled": False,
                }
            ]
        }
    )

    username: str
    role: Role
    created_at_us: int
    created_by: str
    disabled: bool

    @classmethod
    def of(cls, user: users.User) -> UserRead:
        return cls(
            username=user.username,
            role=user.role,
            created_at_us=user.created_at_us,
            created_by=user.created_by,
            disabled=user.disabled,
        )


Password = Annotated[
    str,
    Field(
        min_length=users.MIN_PASSWORD,
        max_length=users.MAX_PASSWORD,
        description=f"at least {users.MIN_PASSWORD} characters",
    ),
]


class UserCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"username": "pat.tech", "role": "technician", "password": "correct horse battery"}
            ]
        },
    )

    username: Username = Field(description=USERNAME.help)
    role: Role
    password: Password


class PasswordSet(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"password": "a new long passphrase"}]},
    )

    password: Password


class DeviceTokenRead(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "token_id": "3f9a1c0b2d4e5f60",
                    "name": "pit 1 stud display",
                    "role": "display",
                    "created_at_us": 1767225600000000,
                    "created_by": "admin",
                    "revoked_at_us": None,
                }
            ]
        }
    )

    token_id: str
    name: str
    role: Role
    created_at_us: int
    created_by: str
    revoked_at_us: int | None

    @classmethod
    def of(cls, device: users.DeviceToken) -> DeviceTokenRead:
        return cls(
            token_id=device.token_id,
            name=device.name,
            role=device.role,
            created_at_us=device.created_at_us,
            created_by=device.created_by,
            revoked_at_us=device.revoked_at_us,
        )


class DeviceTokenCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"name": "pit 1 stud display"}]}
    )

    name: Line = Field(description="which display")


class DeviceTokenCreated(DeviceTokenRead):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "token_id": "3f9a1c0b2d4e5f60",
                    "name": "pit 1 stud display",
                    "role": "display",
                    "created_at_us": 1767225600000000,
                    "created_by": "admin",
                    "revoked_at_us": None,
                    "token": "pdt_Zq8v3...",
                }
            ]
        }
    )

    token: str = Field(description="shown this once only: put it in the display's address")


# ------------------------------------------------------------------------------ users


@router.get("/users", summary="Every user and their role")
async def list_users(_: Admin, service: ServiceDep) -> list[UserRead]:
    return [UserRead.of(u) for u in await users.list_users(service.engine)]


@router.post(
    "/users",
    status_code=status.HTTP_201_CREATED,
    summary="Create a user",
    responses={409: {"description": "the username is taken"}},
)
async def create_user(body: UserCreate, admin: Admin, service: ServiceDep) -> UserRead:
    try:
        user = await users.create_user(
            service.engine,
            username=body.username,
            role=body.role,
            password=body.password,
            actor=admin.username,
            at_us=service.clock.now_us(),
        )
    except users.UserError as exc:
        raise _refused("body", exc) from None
    return UserRead.of(user)


@router.post(
    "/users/{username}/disable",
    summary="Disable a user: their sign-ins and tokens stop working",
    responses={404: {"description": "no such user"}, 409: {"description": "your own account"}},
)
async def disable_user(username: UsernamePath, admin: Admin, service: ServiceDep) -> UserRead:
    if username == admin.username:
        raise HTTPException(
            status_code=409, detail="you cannot disable your own account; ask another admin"
        )
    try:
        user = await users.disable_user(
            service.engine, username=username, actor=admin.username, at_us=service.clock.now_us()
        )
    except users.UserError as exc:
        raise _refused("path.username", exc) from None
    authority(service).forget(username)
    return UserRead.of(user)


@router.post(
    "/users/{username}/password",
    summary="Set a user's password",
    responses={404: {"description": "no such user"}},
)
async def set_password(
    username: UsernamePath, body: PasswordSet, admin: Admin, service: ServiceDep
) -> UserRead:
    try:
        await users.set_password(
            service.engine,
            username=username,
            password=body.password,
            actor=admin.username,
            at_us=service.clock.now_us(),
        )
        user = await users.get_user(service.engine, username)
    except users.UserError as exc:
        raise _refused("body.password", exc) from None
    if user is None:  # removed in between: there is no removing users, but be exact
        raise HTTPException(status_code=404, detail=f"no user {username!r}")
    return UserRead.of(user)


# ---------------------------------------------------------------------- device tokens


@router.get("/device-tokens", summary="Every display device token (never the token itself)")
async def list_device_tokens(_: Admin, service: ServiceDep) -> list[DeviceTokenRead]:
    return [DeviceTokenRead.of(d) for d in await users.list_device_tokens(service.engine)]


@router.post(
    "/device-tokens",
    status_code=status.HTTP_201_CREATED,
    summary="A read-only token for one floor display; the token is shown this once",
)
async def create_device_token(
    body: DeviceTokenCreate, admin: Admin, service: ServiceDep
) -> DeviceTokenCreated:
    try:
        device, token = await users.create_device_token(
            service.engine, name=body.name, actor=admin.username, at_us=service.clock.now_us()
        )
    except users.UserError as exc:
        raise _refused("body.name", exc) from None
    return DeviceTokenCreated(**DeviceTokenRead.of(device).model_dump(), token=token)


@router.post(
    "/device-tokens/{token_id}/revoke",
    summary="Revoke a display's token: it stops working at once",
    responses={404: {"description": "no such device token"}},
)
async def revoke_device_token(
    token_id: TokenIdPath, admin: Admin, service: ServiceDep
) -> DeviceTokenRead:
    try:
        device = await users.revoke_device_token(
            service.engine, token_id=token_id, actor=admin.username, at_us=service.clock.now_us()
        )
    except users.UserError as exc:
        raise _refused("path.token_id", exc) from None
    return DeviceTokenRead.of(device)
