"""What a Modbus request may be and what its answer means: function codes, register limits,
the prepared read/write request, the Modbus exception codes and which failures are retried.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Final

from pymodbus.client.base import ModbusBaseClient
from pymodbus.pdu import ModbusPDU

from link_adapters.errors import AdapterError, DeviceError
from link_adapters.modbus_connection import LinkConnection

__all__ = [
    "EXCEPTION_NAMES",
    "FC_READ_HOLDING",
    "FC_READ_WRITE",
    "FC_WRITE_MULTIPLE",
    "FC_WRITE_SINGLE",
    "GATEWAY_NO_ANSWER",
    "MAX_READ",
    "MAX_READ_WRITE_WRITE",
    "MAX_WRITE",
    "U16_MAX",
    "Check",
    "ReadWrite",
    "Send",
    "What",
    "all_words",
    "retryable",
]

U16_MAX: Final = 0xFFFF
MAX_READ: Final = 125  # registers per read holding registers (function 3)
MAX_WRITE: Final = 123  # registers per write multiple registers (function 16)

FC_READ_HOLDING: Final = 3
FC_WRITE_SINGLE: Final = 6
FC_WRITE_MULTIPLE: Final = 16
FC_READ_WRITE: Final = 23
MAX_READ_WRITE_WRITE: Final = 121  # registers written by one read/write request (function 23)

# Modbus exception codes the unit (or a gateway) may answer with.
EXCEPTION_NAMES: Final = {
    1: "illegal function",
    2: "illegal data address",
    3: "illegal data value",
    4: "server device failure",
    5: "acknowledge (still processing)",
    6: "server device busy",
    8: "memory parity error",
    10: "gateway path unavailable",
    11: "gateway target device failed to respond",
}
# A gateway answering 10 or 11 says the unit behind it did not answer: that is a timeout of
# the unit, not a refusal, and is retried like one.
GATEWAY_NO_ANSWER: Final = frozenset({10, 11})
# Busy is a transient refusal; every other exception is the unit's deliberate answer.
RETRYABLE_EXCEPTIONS: Final = frozenset({6})

Send = Callable[[ModbusBaseClient], Awaitable[ModbusPDU]]
Check = Callable[[ModbusPDU], str | None]
# Says what a request was ("read of 34 registers at 0"), for error messages only: called
# only when one is made.
What = Callable[[], str]


def all_words(values: Sequence[int]) -> bool:
    """Every value an int 0-65535 (not a bool)."""
    for value in values:  # noqa: SIM110 (a loop: no generator made at every poll)
        if type(value) is not int or not 0 <= value <= U16_MAX:
            return False
    return True


class ReadWrite:
    """One unit's read/write request (function 23), addresses checked once by
    ``ModbusLink.prepare_read_write``; ``link`` is the connection of the link it was
    prepared for, and only that link sends it."""

    __slots__ = ("link", "read_address", "read_count", "unit", "write_address", "write_count")

    def __init__(
        self,
        link: LinkConnection,
        unit: int,
        read_address: int,
        read_count: int,
        write_address: int,
        write_count: int,
    ) -> None:
        self.link = link
        self.unit = unit
        self.read_address = read_address
        self.read_count = read_count
        self.write_address = write_address
        self.write_count = write_count

    def __repr__(self) -> str:
        return f"ReadWrite(unit {self.unit} on {self.link.name}: {self.describe()})"

    def describe(self) -> str:
        return (
            f"read of {self.read_count} registers at {self.read_address} with a write of "
            f"{self.write_count} at {self.write_address}"
        )

    def check(self, pdu: ModbusPDU) -> str | None:
        if pdu.function_code != FC_READ_WRITE:
            return f"answered function {pdu.function_code} to a read/write (function 23)"
        if len(pdu.registers) != self.read_count:
            return f"answered {len(pdu.registers)} registers where {self.read_count} were asked"
        return None


def retryable(error: AdapterError) -> bool:
    if isinstance(error, DeviceError):
        return error.exception_code is None or error.exception_code in RETRYABLE_EXCEPTIONS
    return True
