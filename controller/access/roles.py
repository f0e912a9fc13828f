"""The refusals of account input, and the check of a role's name (the roles themselves:
``controller.roles``)."""

from __future__ import annotations

from controller.refusal import Conflict, Invalid, NotFound
from controller.roles import Role


class UserError(Invalid):
    """Input refused: a bad username, a short password, an unknown role."""


class UnknownUser(UserError, NotFound):
    pass


class UnknownDeviceToken(UserError, NotFound):
    pass


class AlreadyExists(UserError, Conflict):
    pass


def check_role(role: str) -> Role:
    try:
        return Role(role)
    except ValueError:
        roles = ", ".join(r.value for r in Role)
        raise UserError(f"{role!r} is not a role; the roles are {roles}") from None
