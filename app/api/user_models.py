"""The schemas of people and displays over HTTP: users, account requests and display
tokens, as they are read and as they are asked for."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from app.api.text_fields import Line, Username
from controller.access import device_tokens, duties, passwords, users
from controller.access.duties import GUARDED_ROLES, RequestKind, RequestStatus
from controller.roles import Role
from controller.text import USERNAME

GUARDED_NAMES = ", ".join(r.value for r in Role if r in GUARDED_ROLES)

__all__ = [
    "GUARDED_NAMES",
    "AccountRequestAnswer",
    "AccountRequestRead",
    "DeviceTokenCreate",
    "DeviceTokenCreated",
    "DeviceTokenRead",
    "Password",
    "PasswordSet",
    "RejectAccountRequest",
    "RoleSet",
    "UserCreate",
    "UserRead",
]


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
                    "must_set_password": False,
                }
            ]
        }
    )

    username: str
    role: Role
    created_at_us: int
    created_by: str
    disabled: bool
    must_set_password: bool = Field(
        description="waiting for its person to choose a password with a one-time code"
    )

    @classmethod
    def of(cls, user: users.User) -> UserRead:
        return cls(
            username=user.username,
            role=user.role,
            created_at_us=user.created_at_us,
            created_by=user.created_by,
            disabled=user.disabled,
            must_set_password=user.must_set_password,
        )


Password = Annotated[
    str,
    Field(
        min_length=passwords.MIN_PASSWORD,
        max_length=passwords.MAX_PASSWORD,
        description=passwords.PASSWORD_HELP,
    ),
]


class UserCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"username": "dee.dealer", "role": "dealer", "password": "correct horse battery"},
                {"username": "pat.tech", "role": "technician"},
            ]
        },
    )

    username: Username = Field(description=USERNAME.help)
    role: Role
    password: Password | None = Field(
        default=None,
        description=(
            f"required for a display, dealer or auditor; never given for "
            f"{GUARDED_NAMES}, whose person chooses it with a one-time code"
        ),
    )


class RoleSet(BaseModel):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"role": "supervisor"}]}
    )

    role: Role


class RejectAccountRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"reason": "not on the staff list"}]}
    )

    reason: str = Field(min_length=1, max_length=2000, pattern=r"\S")


class AccountRequestRead(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "request_id": "9c1f0e7a2b3d4c5e",
                    "kind": "create",
                    "username": "cara.agent",
                    "role": "commission_agent",
                    "requested_by": "root",
                    "requested_at_us": 1767225600000000,
                    "expires_at_us": 1767312000000000,
                    "status": "pending",
                    "decided_by": None,
                    "decided_at_us": None,
                    "decision_reason": None,
                }
            ]
        }
    )

    request_id: str
    kind: RequestKind
    username: str
    role: Role | None = Field(description="the new role (a new account, a role change)")
    requested_by: str
    requested_at_us: int
    expires_at_us: int = Field(description="not confirmed by then, it lapses")
    status: RequestStatus
    decided_by: str | None
    decided_at_us: int | None
    decision_reason: str | None

    @classmethod
    def of(cls, r: duties.AccountRequest) -> AccountRequestRead:
        return cls(
            request_id=r.request_id,
            kind=r.kind,
            username=r.username,
            role=r.role,
            requested_by=r.requested_by,
            requested_at_us=r.requested_at_us,
            expires_at_us=r.expires_at_us,
            status=r.status,
            decided_by=r.decided_by,
            decided_at_us=r.decided_at_us,
            decision_reason=r.decision_reason,
        )


class AccountRequestAnswer(AccountRequestRead):
    code_first_half: str | None = Field(
        description="shown this once, to the admin who asked: give it to the account's person"
    )
    code_second_half: str | None = Field(
        description="shown this once, to the admin who confirmed: give it to the person, who "
        "sends both halves in order as the current password to POST /api/v1/auth/password"
    )

    @classmethod
    def of_answer(cls, answer: duties.Answer) -> AccountRequestAnswer:
        return cls(
            **AccountRequestRead.of(answer.request).model_dump(),
            code_first_half=answer.first_half,
            code_second_half=answer.second_half,
        )


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
    def of(cls, device: device_tokens.DeviceToken) -> DeviceTokenRead:
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
