"""People and displays, for admins: users, account changes two admins make, display tokens.

A change to an account of a role that checks others (``controller.access.duties``) answers 202 with
a pending account request that a different admin confirms; other accounts change at once.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Response, status
from fastapi.responses import JSONResponse

from app.api.deps import ServiceDep
from app.api.floor_models import bad_input
from app.api.text_fields import Reference, Username
from app.api.user_models import (
    GUARDED_NAMES,
    AccountRequestAnswer,
    AccountRequestRead,
    DeviceTokenCreate,
    DeviceTokenCreated,
    DeviceTokenRead,
    PasswordSet,
    RejectAccountRequest,
    RoleSet,
    UserCreate,
    UserRead,
)
from app.security.authentication import Principal, authority, require
from controller.access import duties, roles, users
from controller.access.duties import GUARDED_ROLES, RequestKind, RequestStatus
from controller.refusal import at
from controller.roles import Role
from controller.runtime.service import FloorService

__all__ = [
    "PENDING",
    "Admin",
    "RequestIdPath",
    "TokenIdPath",
    "UsernamePath",
    "confirm_account_request",
    "create_device_token",
    "create_user",
    "disable_user",
    "enable_user",
    "list_account_requests",
    "list_device_tokens",
    "list_users",
    "reject_account_request",
    "reset_password",
    "revoke_device_token",
    "router",
    "set_password",
    "set_role",
]

router = APIRouter(prefix="/api/v1", tags=["users and displays"])

Admin = Annotated[Principal, Depends(require(Role.ADMIN))]
UsernamePath = Annotated[Username, Path(description="the user's name", examples=["pat.tech"])]
TokenIdPath = Annotated[
    Reference, Path(description="the device token's id", examples=["3f9a1c0b2d4e5f60"])
]
RequestIdPath = Annotated[
    str, Path(description="the account request's id", examples=["9c1f0e7a2b3d4c5e"])
]
PENDING = (
    f"pending: the account ({GUARDED_NAMES}) changes when a different admin confirms it at "
    "POST /api/v1/account-requests/{request_id}/confirm"
)


# ------------------------------------------------------------------------------ users

ANSWERED_LATER: dict[int | str, dict[str, Any]] = {
    202: {"model": AccountRequestAnswer, "description": PENDING},
    404: {"description": "no such user"},
    409: {"description": "the change makes no sense now, or one admin would act alone"},
}


def _answer(
    answer: duties.Answer, response: Response, service: FloorService
) -> AccountRequestAnswer:
    if answer.request.status is RequestStatus.PENDING:
        response.status_code = status.HTTP_202_ACCEPTED
    else:
        authority(service).forget(answer.request.username)
    return AccountRequestAnswer.of_answer(answer)


async def _file(
    kind: RequestKind,
    username: str,
    admin: Principal,
    service: FloorService,
    *,
    role: Role | None = None,
    where: str = "path.username",
) -> duties.Answer:
    with at(where):
        return await service.accounts.ask(kind, username=username, role=role, actor=admin.username)


@router.get("/users", summary="Every user and their role")
async def list_users(_: Admin, service: ServiceDep) -> list[UserRead]:
    return [UserRead.of(u) for u in await service.accounts.all_users()]


@router.post(
    "/users",
    status_code=status.HTTP_201_CREATED,
    response_model=UserRead,
    summary="Create a user (a role that checks others: ask for it, another admin confirms)",
    responses={202: ANSWERED_LATER[202], 409: {"description": "the username is taken"}},
)
async def create_user(body: UserCreate, admin: Admin, service: ServiceDep) -> Any:
    if body.role in GUARDED_ROLES:
        if body.password is not None:
            raise bad_input(
                "body.password",
                f"no admin chooses the password of a {body.role.value}: leave it out; the "
                "account gets a one-time code, half shown to you and half to the admin who "
                "confirms, with which its person chooses their own",
            )
        answer = await _file(
            RequestKind.CREATE, body.username, admin, service, role=body.role, where="body"
        )
        return JSONResponse(
            status_code=status.HTTP_202_ACCEPTED,
            content=AccountRequestAnswer.of_answer(answer).model_dump(mode="json"),
        )
    if body.password is None:
        raise bad_input("body.password", "a password is needed")
    with at("body.password"):
        # Checked here first so that a refused password is answered at its own field.
        users.check_password(body.password, username=body.username)
    with at("body"):
        user = await service.accounts.create_user(
            username=body.username, role=body.role, password=body.password, actor=admin.username
        )
    return UserRead.of(user)


@router.post(
    "/users/{username}/disable",
    summary="Disable a user: their sign-ins and tokens stop working",
    responses={
        404: {"description": "no such user"},
        409: {"description": "your own account, or one of the last two enabled admins"},
    },
)
async def disable_user(username: UsernamePath, admin: Admin, service: ServiceDep) -> UserRead:
    if username == admin.username:
        raise HTTPException(
            status_code=409, detail="you cannot disable your own account; ask another admin"
        )
    with at("path.username"):
        user = await service.accounts.disable(username=username, actor=admin.username)
    authority(service).forget(username)
    return UserRead.of(user)


@router.post(
    "/users/{username}/enable",
    summary="Enable a disabled user again (a role that checks others: another admin confirms)",
    responses=ANSWERED_LATER,
)
async def enable_user(
    username: UsernamePath, admin: Admin, service: ServiceDep, response: Response
) -> AccountRequestAnswer:
    answer = await _file(RequestKind.ENABLE, username, admin, service)
    return _answer(answer, response, service)


@router.post(
    "/users/{username}/role",
    summary="Change a user's role (into one that checks others: another admin confirms, and "
    "the account gets a one-time code in place of its password)",
    responses=ANSWERED_LATER,
)
async def set_role(
    username: UsernamePath, body: RoleSet, admin: Admin, service: ServiceDep, response: Response
) -> AccountRequestAnswer:
    answer = await _file(RequestKind.ROLE, username, admin, service, role=body.role)
    return _answer(answer, response, service)


@router.post(
    "/users/{username}/reset",
    summary="Reset a user's password to a one-time code; their tokens stop working (a role "
    "that checks others: another admin confirms, and each admin sees half the code)",
    responses=ANSWERED_LATER,
)
async def reset_password(
    username: UsernamePath, admin: Admin, service: ServiceDep, response: Response
) -> AccountRequestAnswer:
    answer = await _file(RequestKind.RESET, username, admin, service)
    return _answer(answer, response, service)


@router.post(
    "/users/{username}/password",
    summary="Set the password of a display, dealer or auditor; their tokens stop",
    responses={
        404: {"description": "no such user"},
        409: {"description": "a role that checks others: its person chooses the password"},
    },
)
async def set_password(
    username: UsernamePath, body: PasswordSet, admin: Admin, service: ServiceDep
) -> UserRead:
    user = await service.accounts.user(username)
    if user is None:
        raise roles.UnknownUser(f"no user {username!r}")
    if user.role in GUARDED_ROLES:
        raise duties.DutyRefused(
            f"no admin sets the password of a {user.role.value}: ask for a reset "
            f"(POST /api/v1/users/{username}/reset), which another admin confirms"
        )
    with at("body.password"):
        await service.accounts.set_password(
            username=username, password=body.password, actor=admin.username
        )
    user = await service.accounts.user(username)
    if user is None:  # removed in between: there is no removing users, but be exact
        raise HTTPException(status_code=404, detail=f"no user {username!r}")
    authority(service).forget(username)
    return UserRead.of(user)


# ------------------------------------------------------------------------ account requests


@router.get("/account-requests", summary="Account changes asked for, newest first")
async def list_account_requests(
    _: Admin,
    service: ServiceDep,
    status_: Annotated[
        Literal["pending", "confirmed", "rejected", "expired"] | None, Query(alias="status")
    ] = None,
) -> list[AccountRequestRead]:
    found = await service.accounts.requests(None if status_ is None else RequestStatus(status_))
    return [AccountRequestRead.of(r) for r in found]


@router.post(
    "/account-requests/{request_id}/confirm",
    summary="Confirm another admin's account request: the change is made now",
    responses={
        404: {"description": "no such request"},
        409: {"description": "you asked for it, it is your account, or it is decided"},
    },
)
async def confirm_account_request(
    request_id: RequestIdPath, admin: Admin, service: ServiceDep
) -> AccountRequestAnswer:
    with at("path.request_id"):
        answer = await service.accounts.confirm(request_id, actor=admin.username)
    authority(service).forget(answer.request.username)
    return AccountRequestAnswer.of_answer(answer)


@router.post(
    "/account-requests/{request_id}/reject",
    summary="Turn an account request down, with a reason (the admin who asked may too)",
    responses={404: {"description": "no such request"}, 409: {"description": "decided"}},
)
async def reject_account_request(
    request_id: RequestIdPath, body: RejectAccountRequest, admin: Admin, service: ServiceDep
) -> AccountRequestRead:
    with at("body.reason"):
        found = await service.accounts.reject(request_id, actor=admin.username, reason=body.reason)
    return AccountRequestRead.of(found)


# ---------------------------------------------------------------------- device tokens


@router.get("/device-tokens", summary="Every display device token (never the token itself)")
async def list_device_tokens(_: Admin, service: ServiceDep) -> list[DeviceTokenRead]:
    return [DeviceTokenRead.of(d) for d in await service.accounts.all_device_tokens()]


@router.post(
    "/device-tokens",
    status_code=status.HTTP_201_CREATED,
    summary="A read-only token for one floor display; the token is shown this once",
)
async def create_device_token(
    body: DeviceTokenCreate, admin: Admin, service: ServiceDep
) -> DeviceTokenCreated:
    with at("body.name"):
        device, token = await service.accounts.create_device_token(
            name=body.name, actor=admin.username
        )
    return DeviceTokenCreated(**DeviceTokenRead.of(device).model_dump(), token=token)


@router.post(
    "/device-tokens/{token_id}/revoke",
    summary="Revoke a display's token: it stops working at once",
    responses={404: {"description": "no such device token"}},
)
async def revoke_device_token(
    token_id: TokenIdPath, admin: Admin, service: ServiceDep
) -> DeviceTokenRead:
    with at("path.token_id"):
        device = await service.accounts.revoke_device_token(token_id=token_id, actor=admin.username)
    return DeviceTokenRead.of(device)
