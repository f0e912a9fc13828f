"""The few errors that leave ``link_adapters``: what went wrong, in words a technician reads.

Everything pymodbus, pyserial or the operating system raises is mapped to one of these at the
boundary (``link_adapters.modbus``), so the controller decides what a failure means without
knowing which library talked to the table. ``str()`` of each is a complete sentence naming
the link or table, the unit and the request.
"""

from __future__ import annotations

__all__ = [
    "AdapterError",
    "DeviceError",
    "LinkDown",
    "ProfileMismatch",
    "ResponseTimeout",
]


class AdapterError(Exception):
    """Base of every error raised by a link or a table handle."""


class LinkDown(AdapterError):
    """The link could not be opened, or was lost: nothing on it can be reached."""


class ResponseTimeout(AdapterError):
    """No complete answer within the timeout, after every retry.

    The link itself is still usable: other units on it may answer.
    """


class DeviceError(AdapterError):
    """The unit answered, but not with what was asked.

    Either a Modbus exception response (``exception_code`` holds its code, e.g. 2 for an
    illegal data address) or an answer that cannot be right: garbled bytes, the wrong
    function, the wrong number of registers, a value outside its range
    (``exception_code`` is None).
    """

    def __init__(self, message: str, *, exception_code: int | None = None) -> None:
        super().__init__(message)
        self.exception_code = exception_code


class ProfileMismatch(AdapterError):
    """The table does not report the profile id or version it was configured with.

    Reading a table with the wrong register map would turn its counters into nonsense, so
    nothing is decoded; the message names the table, the address and the value read.
    """
