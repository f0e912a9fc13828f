"""One simulated table as a Modbus unit: the pymodbus device that reads and writes its map.

pymodbus 3.16 serves every datastore through its ``SimDevice`` runtime; the old
``ModbusDeviceContext``/``ModbusSequentialDataBlock`` classes only copy their initial values
into it, so overriding ``getValues`` on a datablock no longer reaches the wire. Live values
therefore come from the ``SimDevice.action`` hook, which pymodbus awaits on every access
before it answers and which may fill the registers in place or return an exception code.

A silent unit raises ``NoSuchIdException`` from that hook; with ``ignore_missing_devices``
the server then sends nothing at all, as a dead table on an RS-485 line would. A unit id the
gateway does not have gets exception 0x0B (gateway target failed to respond) over TCP and
silence on a serial line (``absent_unit``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from pymodbus.constants import ExcCodes
from pymodbus.exceptions import NoSuchIdException
from pymodbus.simulator import DataType, SimData, SimDevice

from link_adapters.simulator.registers import (
    READ_START,
    WRITE_COUNT,
    WRITE_START,
    apply_write,
    encode_block,
    read_count,
)
from link_adapters.simulator.table import SimTable

__all__ = ["ServedUnit", "absent_unit"]

# Function codes a table controller implements: read holding registers, write single
# register, write multiple registers, read/write multiple registers.
_FC_READ: Final = 3
_FC_WRITE_SINGLE: Final = 6
_FC_WRITE_MULTIPLE: Final = 16
_FC_READ_WRITE: Final = 23
_SUPPORTED_FC: Final = frozenset({_FC_READ, _FC_WRITE_SINGLE, _FC_WRITE_MULTIPLE, _FC_READ_WRITE})


@dataclass(eq=False, slots=True)
class ServedUnit:
    """One table as its gateway serves it."""

    gateway: str
    unit: int
    table: SimTable
    now_us: Callable[[], int]
    silent: bool = False

    async def access(
        self,
        function_code: int,
        start_address: int,
        address: int,
        count: int,
        registers: list[int],
        values: list[int] | list[bool] | None,
    ) -> ExcCodes | None:
        """pymodbus ``SimDevice.action``: called on every read and write of this unit."""
        if self.silent:
            # With ignore_missing_devices the request handler sends no response at all.
            raise NoSuchIdException(f"{self.gateway} unit {self.unit} is silent")
        if function_code not in _SUPPORTED_FC:
            return ExcCodes.ILLEGAL_FUNCTION
        end = address + count
        if values is not None:
            if address < WRITE_START or end > WRITE_START + WRITE_COUNT:
                return ExcCodes.ILLEGAL_ADDRESS
            try:
                apply_write(self.table, address, [int(v) for v in values], self.now_us())
            except ValueError:
                return ExcCodes.ILLEGAL_VALUE
            return None
        if function_code == _FC_WRITE_SINGLE:
            # pymodbus reads the register back to build the echo of a write it just stored.
            return None
        count_of_map = read_count(self.table)  # 34 (map v1) or 38 (map v2)
        if address < READ_START or end > READ_START + count_of_map:
            return ExcCodes.ILLEGAL_ADDRESS
        offset = READ_START - start_address
        registers[offset : offset + count_of_map] = encode_block(self.table, self.now_us())
        return None

    def device(self) -> SimDevice:
        return SimDevice(
            id=self.unit,
            simdata=[
                SimData(READ_START, count=read_count(self.table), datatype=DataType.REGISTERS),
                SimData(WRITE_START, count=WRITE_COUNT, datatype=DataType.REGISTERS),
            ],
            action=self.access,
        )


def absent_unit(serial: bool) -> SimDevice:
    """Unit id 0 of a gateway's device list: pymodbus's catch-all for unknown unit ids."""

    async def access(
        function_code: int,
        start_address: int,
        address: int,
        count: int,
        registers: list[int],
        values: list[int] | list[bool] | None,
    ) -> ExcCodes | None:
        if serial:
            raise NoSuchIdException("no such unit on this line")  # nobody answers
        return ExcCodes.GATEWAY_NO_RESPONSE

    # The whole address space, so that every request reaches the hook.
    return SimDevice(
        id=0,
        simdata=[SimData(0, count=65536, datatype=DataType.REGISTERS)],
        action=access,
    )
