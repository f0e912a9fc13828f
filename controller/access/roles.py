"""The roles people and displays act in, and the refusals of account input."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    DISPLAY = "display"
    DEALER = "dealer"
    TECHNICIAN = "technician"
    SUPERVISOR = "supervisor"
    AUDITOR = "auditor"
    COMMISSION_AGENT = "commission_agent"
    ADMIN = "admin"


class UserError(ValueError):
    """Input refused: a bad username, a short password, an unknown role."""


class UnknownUser(UserError):
    pass


class UnknownDeviceToken(UserError):
    pass


class AlreadyExists(UserError):
    pass


def check_role(role: str) -> Role:
    try:
        return Role(role)
    except ValueError:
        roles = ", ".join(r.value for r in Role)
        raise UserError(f"{role!r} is not a role; the roles are {roles}") from None
