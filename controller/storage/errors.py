"""What storage refuses with, how a failed commit tells the database's failure apart, and what
a database error means to the callers above storage (none of which names the driver's errors)."""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from controller import refusal
from controller.refusal import Refused

__all__ = [
    "DATABASE_ERRORS",
    "Conflict",
    "Duplicate",
    "LinkInoperable",
    "NotFound",
    "SoftwareFailed",
    "StaleState",
    "StorageUnavailable",
    "StoreError",
    "database_failed",
    "unavailable",
    "unstorable_text",
]

# What the database raises through storage, refusing or failing: a caller that answers for
# them (the web's error answers) catches these and asks ``unstorable_text`` what one means.
DATABASE_ERRORS: tuple[type[Exception], ...] = (DBAPIError,)


class StoreError(Refused):
    """A refusal by what is stored, for a person to read. Its type says what kind (answered
    409 over HTTP unless a subclass says otherwise); its message is never parsed."""


class NotFound(StoreError, refusal.NotFound):
    """What was named (a link, table, hit, record...) is not stored; the message names it."""


class Conflict(StoreError, refusal.Conflict):
    """Refused by the stored state: it was done already, or it changed meanwhile."""


class Duplicate(Conflict):
    """The database already holds a row with this key: written twice, by this command or by
    another at the same moment (``unit_of_work.transaction``)."""


class StaleState(Conflict):
    """The link's history moved on under us (another writer): reload before going on."""


class LinkInoperable(StoreError):
    """The state the link would resume from does not match its seals or its history: nothing
    is computed from it until it is recovered (house policy adopted from NY 5321.18,
    NJ 13:69E-1.39B: ``controller.rules.house.RECOVERY_CLAUSE``)."""

    def __init__(self, link_id: str, reason: str) -> None:
        super().__init__(f"link {link_id} is inoperable: {reason}")
        self.link_id = link_id
        self.reason = reason


class SoftwareFailed(StoreError):
    """The installed software failed its self-check: this process seals nothing until it
    passes again (``controller.rules.software``)."""


# SQLSTATE classes of a database that failed rather than refused what it was given
# (PostgreSQL, appendix A): connection exception, transaction rollback (serialization,
# deadlock), insufficient resources, operator intervention, system error.
_FAILED_SQLSTATE_CLASSES = frozenset({"08", "40", "53", "57", "58"})


def database_failed(exc: BaseException) -> bool:
    """Whether a failed commit is the database's failure (out of reach, busy, locked, out of
    room), to be tried again as it was, rather than a refusal of what was written."""
    if isinstance(exc, OSError | TimeoutError | OperationalError | InterfaceError):
        return True
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated:
            return True
        for cause in (exc.orig, getattr(exc.orig, "__cause__", None)):
            state = getattr(cause, "sqlstate", None)
            if isinstance(state, str) and state[:2] in _FAILED_SQLSTATE_CLASSES:
                return True
    return False


class StorageUnavailable(Exception):
    """The database cannot be reached or opened; the message is why, in the first line of what
    the driver or the system said (the failure's type when it said nothing)."""


def unavailable(exc: BaseException) -> StorageUnavailable | None:
    """A failure to connect to the database as ``StorageUnavailable``: any system or database
    error met while connecting; None for anything else (a fault, to be raised as it is)."""
    if not isinstance(exc, OSError | DBAPIError):
        return None
    said: BaseException = exc
    if isinstance(exc, DBAPIError):
        said = exc.orig or exc
    return StorageUnavailable((str(said).strip().splitlines() or [type(said).__name__])[0])


def unstorable_text(exc: BaseException) -> bool:
    """Whether the database refused a text it cannot keep: PostgreSQL keeps no NUL character
    (SQLSTATE 22021, character not in repertoire), so a value typed with one is refused input,
    not the database's failure."""
    if not isinstance(exc, DBAPIError):
        return False
    causes = (exc.orig, getattr(exc.orig, "__cause__", None))
    return any(getattr(c, "sqlstate", None) == "22021" for c in causes)
