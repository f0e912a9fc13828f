"""Real peers for the link tests: pymodbus servers on loopback and on a serial line.

* ``loopback``: a pymodbus TCP server on 127.0.0.1 with a port the OS assigns (MBAP framing,
  or RTU frames over TCP), units laid out as register runs; a per-unit delay makes a slow
  unit, and every request that reaches a unit is recorded.
* ``junk_server``: a raw TCP server that answers every request with a chosen kind of garbage.
* ``serial_line``: a real serial line made of two pseudo-terminal pairs joined by an
  in-process bridge that plays the RS-485 bus: it timestamps every frame, can leave a unit
  silent (its requests never reach the server), hold answers back or corrupt one. A pymodbus RTU
  serial server sits on the far end.

Every fixture stops what it started, so the suite's leak guards stay quiet.
"""

from __future__ import annotations

import asyncio
import os
import pty
import time
import tty
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pytest
from pymodbus import FramerType
from pymodbus.framer.rtu import FramerRTU
from pymodbus.server import ModbusSerialServer, ModbusTcpServer
from pymodbus.simulator import DataType, SimData, SimDevice

from link_adapters.link_clock import LinkClock
from link_adapters.modbus import ModbusLink, SerialParams, TcpParams
from tests.modbus_faults import JUNK_MODES

# A unit's registers: runs of (first address, values). Anything outside a run is unmapped,
# and the server answers a request touching it with exception 2 (illegal data address).
Layout = Sequence[tuple[int, Sequence[int]]]

PROFILE_ID = 0x5450


def u32(value: int) -> list[int]:
    """High word first, as the reference map v1 stores 32-bit values."""
    return [value >> 16, value & 0xFFFF]


def reference_block(
    *,
    credits: int = 0,
    rounds: int = 0,
    status: int = 0,
    bet_bitmap: int = 0,
    profile_id: int = PROFILE_ID,
    version: int = 1,
    per_seat: Sequence[int] = (0,) * 7,
) -> list[int]:
    """Registers 0-33 of the reference map, written out from shared/DESIGN.md by hand."""
    block = [profile_id, version, status, *u32(rounds), *u32(credits), bet_bitmap, 0]
    block += [0, 0, 0, 0, 0, 0]  # head hit: sequence, seat, hand, round (no hit pending)
    block += [0xFFFF] * 5  # head cards: not reported
    for credits_of_seat in per_seat:
        block += u32(credits_of_seat)
    assert len(block) == 34
    return block


def reference_layout(**fields: Any) -> Layout:
    """One reference-map table: the read block at 0-33 and the write registers 100-105."""
    return [(0, reference_block(**fields)), (100, [0] * 6)]


class _Units:
    """The datastore side shared by the TCP and the serial servers."""

    def __init__(self, layouts: Mapping[int, Layout]) -> None:
        self.layouts = {unit: [(a, list(v)) for a, v in runs] for unit, runs in layouts.items()}
        self.delays: dict[int, float] = {}
        # (unit, function code, address, count) of every request that reached a unit.
        self.requests: list[tuple[int, int, int, int]] = []
        self._peeking = False
        self._server: Any = None

    def devices(self) -> list[SimDevice]:
        return [
            SimDevice(
                unit,
                simdata=[
                    SimData(address, values=values, datatype=DataType.REGISTERS)
                    for address, values in runs
                ],
                action=partial(self._action, unit),
            )
            for unit, runs in self.layouts.items()
        ]

    async def _action(
        self,
        unit: int,
        function_code: int,
        _start: int,
        address: int,
        count: int,
        _registers: list[int],
        values: object,
    ) -> None:
        # pymodbus answers a single-register write by reading the register back: that read
        # is not a request.
        if self._peeking or (function_code == 6 and values is None):
            return
        self.requests.append((unit, function_code, address, count))
        if delay := self.delays.get(unit):
            await asyncio.sleep(delay)

    async def registers(self, unit: int, address: int, count: int) -> list[int]:
        """What the unit holds now, without counting as a request."""
        self._peeking = True
        try:
            return list(await self._server.async_getValues(unit, 3, address, count))
        finally:
            self._peeking = False

    async def set_registers(self, unit: int, address: int, values: Sequence[int]) -> None:
        self._peeking = True
        try:
            await self._server.async_setValues(unit, 16, address, list(values))
        finally:
            self._peeking = False


class LoopbackServer(_Units):
    """A pymodbus TCP server on 127.0.0.1; ``port`` is assigned by the OS at first start."""

    def __init__(self, layouts: Mapping[int, Layout], *, framer: FramerType) -> None:
        super().__init__(layouts)
        self.framer = framer
        self.port = 0

    async def start(self) -> None:
        """Start (again, on the same port after a stop); the datastore starts afresh."""
        server = ModbusTcpServer(
            self.devices(), framer=self.framer, address=("127.0.0.1", self.port)
        )
        await server.serve_forever(background=True)
        self._server = server
        self.port = server.transport.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        listener = server.transport
        await server.shutdown()
        await listener.wait_closed()


@pytest.fixture
async def loopback() -> AsyncIterator[Callable[..., Awaitable[LoopbackServer]]]:
    """Factory: ``await loopback({unit: layout}, framer=FramerType.SOCKET)``."""
    servers: list[LoopbackServer] = []

    async def start(
        layouts: Mapping[int, Layout], *, framer: FramerType = FramerType.SOCKET
    ) -> LoopbackServer:
        server = LoopbackServer(layouts, framer=framer)
        await server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


@pytest.fixture
async def links() -> AsyncIterator[Callable[..., ModbusLink]]:
    """Factory for links that are closed when the test ends, whatever it did."""
    made: list[ModbusLink] = []

    def make(
        params: TcpParams | SerialParams, *, name: str = "", clock: LinkClock | None = None
    ) -> ModbusLink:
        link = ModbusLink(params, name=name, clock=clock)
        made.append(link)
        return link

    yield make
    for link in made:
        await link.close()


# --- garbage on TCP --------------------------------------------------------------------------


class _JunkProtocol(asyncio.Protocol):
    def __init__(self, owner: JunkServer) -> None:
        self._owner = owner
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._owner.transports.append(transport)

    def data_received(self, data: bytes) -> None:
        assert self._transport is not None
        if len(data) >= 8:
            self._transport.write(JUNK_MODES[self._owner.mode](data[0:2], data[6]))


@dataclass
class JunkServer:
    mode: str = "noise"
    port: int = 0
    transports: list[asyncio.Transport] = field(default_factory=list)


@pytest.fixture
async def junk_server() -> AsyncIterator[JunkServer]:
    owner = JunkServer()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _JunkProtocol(owner), "127.0.0.1", 0)
    owner.port = server.sockets[0].getsockname()[1]
    yield owner
    server.close()
    for transport in owner.transports:
        transport.close()
    await server.wait_closed()


# --- a serial line -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BusFrame:
    """One frame seen on the bus: ``started`` is its first byte, ``ended`` when it was
    delivered to the other end (answers held by the bridge end late)."""

    kind: str  # "request" or "answer"
    unit: int
    started: float
    ended: float
    data: bytes


def _request_length(buffer: bytes) -> int | None:
    if len(buffer) < 2:
        return None
    if buffer[1] in (3, 6):
        return 8
    if buffer[1] == 16:
        return 9 + buffer[6] if len(buffer) >= 7 else None
    raise AssertionError(f"the tests send no function {buffer[1]}: {buffer.hex()}")


def _answer_length(buffer: bytes) -> int | None:
    if len(buffer) < 2:
        return None
    if buffer[1] & 0x80:
        return 5
    if buffer[1] == 3:
        return 5 + buffer[2] if len(buffer) >= 3 else None
    return 8


class PtyBus:
    """Two pseudo-terminal pairs joined by a bridge that plays the RS-485 bus."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._client_master, self._client_slave = pty.openpty()
        self._server_master, self._server_slave = pty.openpty()
        # The slave ends stay open here too: with none open, reading a master fails (EIO)
        # between a client closing its port and the next one opening it.
        for fd in (self._client_slave, self._server_slave):
            tty.setraw(fd)
        for fd in (self._client_master, self._server_master):
            os.set_blocking(fd, False)
        self.client_port = os.ttyname(self._client_slave)
        self.server_port = os.ttyname(self._server_slave)
        self.frames: list[BusFrame] = []
        self.silent: set[int] = set()  # units not on the bus: their requests vanish
        self.hold: dict[int, list[float]] = {}  # unit -> delays of its next answers (s)
        self.corrupt_next: set[int] = set()  # units whose next answer gets a bad CRC
        self._to_server = _Framer(_request_length)
        self._to_client = _Framer(_answer_length)
        self._held: list[asyncio.TimerHandle] = []
        self._loop.add_reader(self._client_master, self._from_client)
        self._loop.add_reader(self._server_master, self._from_server)

    def close(self) -> None:
        for handle in self._held:
            handle.cancel()
        self._loop.remove_reader(self._client_master)
        self._loop.remove_reader(self._server_master)
        for fd in (
            self._client_master,
            self._client_slave,
            self._server_master,
            self._server_slave,
        ):
            os.close(fd)

    def requests(self) -> list[BusFrame]:
        return [frame for frame in self.frames if frame.kind == "request"]

    def _from_client(self) -> None:
        for started, frame in self._to_server.feed(os.read(self._client_master, 4096)):
            unit = frame[0]
            self.frames.append(BusFrame("request", unit, started, time.monotonic(), frame))
            if unit not in self.silent:
                os.write(self._server_master, frame)

    def _from_server(self) -> None:
        for started, frame in self._to_client.feed(os.read(self._server_master, 4096)):
            unit = frame[0]
            if unit in self.corrupt_next:
                self.corrupt_next.discard(unit)
                frame = frame[:-1] + bytes([frame[-1] ^ 0xFF])
            if self.hold.get(unit):
                delay = self.hold[unit].pop(0)
                self._held.append(self._loop.call_later(delay, self._deliver, started, frame))
            else:
                self._deliver(started, frame)

    def _deliver(self, started: float, frame: bytes) -> None:
        self.frames.append(BusFrame("answer", frame[0], started, time.monotonic(), frame))
        os.write(self._client_master, frame)


class _Framer:
    """Cuts a byte stream into frames by their announced length, noting each first byte."""

    def __init__(self, length: Callable[[bytes], int | None]) -> None:
        self._length = length
        self._buffer = b""
        self._started = 0.0

    def feed(self, data: bytes) -> list[tuple[float, bytes]]:
        if not self._buffer:
            self._started = time.monotonic()
        self._buffer += data
        frames = []
        while (size := self._length(self._buffer)) is not None and len(self._buffer) >= size:
            frame, self._buffer = self._buffer[:size], self._buffer[size:]
            assert FramerRTU.check_CRC(frame[:-2], int.from_bytes(frame[-2:], "big")), frame
            frames.append((self._started, frame))
            self._started = time.monotonic()
        return frames


class SerialServer(_Units):
    """A pymodbus RTU server on the far end of a ``PtyBus``."""

    async def start(self, port: str) -> None:
        server = ModbusSerialServer(self.devices(), framer=FramerType.RTU, port=port)
        await server.serve_forever(background=True)
        self._server = server

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            await server.shutdown()


@dataclass
class SerialLine:
    bus: PtyBus
    server: SerialServer

    @property
    def port(self) -> str:
        return self.bus.client_port


@pytest.fixture
async def serial_line() -> AsyncIterator[Callable[[Mapping[int, Layout]], Awaitable[SerialLine]]]:
    """Factory: ``await serial_line({unit: layout})``; the link opens ``line.port``."""
    lines: list[SerialLine] = []

    async def start(layouts: Mapping[int, Layout]) -> SerialLine:
        bus = PtyBus()
        server = SerialServer(layouts)
        line = SerialLine(bus, server)
        lines.append(line)
        await server.start(bus.server_port)
        return line

    yield start
    for line in lines:
        await line.server.stop()
        line.bus.close()
