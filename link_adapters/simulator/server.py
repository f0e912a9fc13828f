"""Simulated table controllers served over Modbus: one gateway per game, one unit per table.

A gateway is a Modbus TCP server (host, port) or a Modbus RTU server on a serial line; its
unit ids 1..N are the tables. Every unit implements the reference register map v1
(shared/DESIGN.md): a read of registers 0-33 is encoded live from the ``SimTable`` at the
moment of the request (``registers.encode_block``), a write to 100-105 goes to
``registers.apply_write``. Anything else is refused with a Modbus exception response:
illegal function for function codes other than 3 (read holding registers), 6, 16 (write)
and 23 (read/write), illegal data address for addresses outside the map, illegal data value
for a write the table refuses (half of a 32-bit field, a register value out of range).

pymodbus 3.16 serves every datastore through its ``SimDevice`` runtime; the old
``ModbusDeviceContext``/``ModbusSequentialDataBlock`` classes only copy their initial values
into it, so overriding ``getValues`` on a datablock no longer reaches the wire. Live values
therefore come from the ``SimDevice.action`` hook, which pymodbus awaits on every access
before it answers and which may fill the registers in place or return an exception code.

A silent unit (``set_silent``) raises ``NoSuchIdException`` from that hook; with
``ignore_missing_devices`` the server then sends nothing at all, as a dead table on an RS-485
line would. A unit id the gateway does not have gets exception 0x0B (gateway target failed
to respond) over TCP and silence on a serial line.

Rounds are dealt by one task on the floor's clock: every table has its own schedule, drawn
from its own random generator, so a seed fixes every table's cards and timing. With
``autodeal=False`` no task deals: rounds are dealt only when asked, one at a table
(``play_round_now``) or every round the schedule holds up to the clock's time (``deal_due``),
which with a ``VirtualClock`` makes the rounds a test sees exactly the ones it stepped to.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import math
import random
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, NamedTuple

from pymodbus.constants import ExcCodes
from pymodbus.exceptions import NoSuchIdException
from pymodbus.server import ModbusBaseServer, ModbusSerialServer, ModbusTcpServer
from pymodbus.simulator import DataType, SimData, SimDevice

from controller.core.games import Game
from controller.core.hands import HandCategory
from link_adapters.simulator.clock import wall_clock_us
from link_adapters.simulator.registers import (
    READ_COUNT,
    READ_START,
    WRITE_COUNT,
    WRITE_START,
    apply_write,
    encode_block,
)
from link_adapters.simulator.table import RoundRecord, SimTable, SimTableConfig

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORTS",
    "DEFAULT_ROUNDS_PER_SECOND",
    "MAX_ROUNDS_PER_SECOND",
    "MAX_UNITS",
    "DealtRound",
    "GatewaySpec",
    "SimFloor",
    "SimulatorError",
    "default_gateways",
    "wall_clock_us",
]

DEFAULT_HOST: Final = "127.0.0.1"
# shared/DESIGN.md: `progressive simulate` with no config serves these.
DEFAULT_PORTS: Final[Mapping[Game, int]] = MappingProxyType(
    {
        Game.CARIBBEAN_STUD: 15020,
        Game.CARIBBEAN_DRAW: 15021,
        Game.LET_IT_RIDE_BONUS: 15022,
    }
)
DEFAULT_ROUNDS_PER_SECOND: Final = 1 / 60  # a live table deals about one round a minute
MAX_ROUNDS_PER_SECOND: Final = 10_000.0
MAX_UNITS: Final = 247  # Modbus unit ids 1-247 address devices; 0 is broadcast

# Function codes a table controller implements: read holding registers, write single
# register, write multiple registers, read/write multiple registers.
_FC_READ: Final = 3
_FC_WRITE_SINGLE: Final = 6
_FC_WRITE_MULTIPLE: Final = 16
_FC_READ_WRITE: Final = 23
_SUPPORTED_FC: Final = frozenset({_FC_READ, _FC_WRITE_SINGLE, _FC_WRITE_MULTIPLE, _FC_READ_WRITE})

_MAX_SLEEP_S: Final = 0.5  # the dealer looks at the clock at least this often
_MAX_BEHIND_US: Final = 1_000_000  # a table this late skips the rounds it missed
_MAX_ROUNDS_PER_PASS: Final = 10_000  # then let the servers answer before dealing on


class SimulatorError(Exception):
    """The simulator cannot run as asked (a port in use, a serial device missing ...)."""


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, got {value}")
    return value


@dataclass(frozen=True, kw_only=True, slots=True)
class GatewaySpec:
    """One Modbus gateway: the tables of one game behind one TCP port or one serial line.

    ``port=None`` and no ``serial_port`` means the game's default port (15020-15022);
    ``port=0`` lets the operating system choose (see ``SimFloor.ports``). ``table`` is the
    template every table of the gateway is built from (its game must be ``game``); the
    default is ``SimTableConfig(game=game)``. ``name`` defaults to the game's value, e.g.
    ``"caribbean_stud"``, and must be unique on a floor.
    """

    game: Game
    tables: int = 4
    host: str = DEFAULT_HOST
    port: int | None = None
    serial_port: str | None = None
    baudrate: int = 19200
    table: SimTableConfig | None = None
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.game, Game):
            raise ValueError(f"game must be a Game, one of {', '.join(g.value for g in Game)}")
        _check_int("tables", self.tables, 1, MAX_UNITS)
        if not isinstance(self.name, str):
            raise ValueError(f"name must be a string, got {self.name!r}")
        if not self.name:
            object.__setattr__(self, "name", self.game.value)
        if self.serial_port is not None:
            if self.port is not None:
                raise ValueError(
                    f"gateway {self.name}: give port (Modbus TCP) or serial_port (Modbus RTU), "
                    "not both"
                )
            if not isinstance(self.serial_port, str) or not self.serial_port:
                raise ValueError(f"gateway {self.name}: serial_port must be a device path")
        else:
            if self.port is None:
                object.__setattr__(self, "port", DEFAULT_PORTS[self.game])
            _check_int(f"gateway {self.name}: port", self.port, 0, 65535)
            if not isinstance(self.host, str) or not self.host:
                raise ValueError(f"gateway {self.name}: host must be a host name or address")
        _check_int(f"gateway {self.name}: baudrate", self.baudrate, 1, 10_000_000)
        if self.table is not None:
            if not isinstance(self.table, SimTableConfig):
                raise ValueError(f"gateway {self.name}: table must be a SimTableConfig")
            if self.table.game is not self.game:
                raise ValueError(
                    f"gateway {self.name}: its tables are {self.table.game.value} tables, "
                    f"but the gateway serves {self.game.value}"
                )

    @property
    def is_serial(self) -> bool:
        return self.serial_port is not None

    @property
    def units(self) -> range:
        """The unit ids of the tables: 1..tables."""
        return range(1, self.tables + 1)

    def table_config(self) -> SimTableConfig:
        return self.table if self.table is not None else SimTableConfig(game=self.game)


def default_gateways(tables: int = 4, host: str = DEFAULT_HOST) -> list[GatewaySpec]:
    """The floor of shared/DESIGN.md: one TCP gateway per game on ports 15020-15022."""
    return [
        GatewaySpec(game=game, tables=tables, host=host, port=port)
        for game, port in DEFAULT_PORTS.items()
    ]


@dataclass(eq=False, slots=True)
class _Unit:
    """One table as its gateway serves it."""

    gateway: str
    unit: int
    table: SimTable
    schedule: random.Random
    now_us: Callable[[], int]
    silent: bool = False
    next_us: int = 0

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
        if address < READ_START or end > READ_START + READ_COUNT:
            return ExcCodes.ILLEGAL_ADDRESS
        offset = READ_START - start_address
        registers[offset : offset + READ_COUNT] = encode_block(self.table, self.now_us())
        return None

    def device(self) -> SimDevice:
        return SimDevice(
            id=self.unit,
            simdata=[
                SimData(READ_START, count=READ_COUNT, datatype=DataType.REGISTERS),
                SimData(WRITE_START, count=WRITE_COUNT, datatype=DataType.REGISTERS),
            ],
            action=self.access,
        )


def _absent_unit(serial: bool) -> SimDevice:
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


@dataclass(eq=False, slots=True)
class _Gateway:
    spec: GatewaySpec
    units: list[_Unit] = field(default_factory=list)
    server: ModbusTcpServer | ModbusSerialServer | None = None
    port: int | None = None


class DealtRound(NamedTuple):
    """One round a floor dealt: where, and what the table did."""

    gateway: str
    unit: int
    record: RoundRecord


class SimFloor:
    """Simulated table controllers behind Modbus gateways; rounds dealt on a clock.

    ``now_us`` is the floor's clock (default: the wall clock); every table's schedule and
    every register read and write take their time from it. ``autodeal`` (default) deals the
    rounds in a background task as the clock reaches them; without it rounds are dealt only
    by ``deal_due`` and ``play_round_now``.
    """

    def __init__(
        self,
        gateways: Sequence[GatewaySpec],
        *,
        rounds_per_second: float = DEFAULT_ROUNDS_PER_SECOND,
        seed: int | None = None,
        now_us: Callable[[], int] = wall_clock_us,
        autodeal: bool = True,
    ) -> None:
        if not isinstance(autodeal, bool):
            raise ValueError(f"autodeal must be a bool, got {autodeal!r}")
        if not gateways:
            raise ValueError("a floor needs at least one gateway")
        if (
            isinstance(rounds_per_second, bool)
            or not isinstance(rounds_per_second, int | float)
            or not math.isfinite(rounds_per_second)
            or not 0 < rounds_per_second <= MAX_ROUNDS_PER_SECOND
        ):
            raise ValueError(
                f"rounds_per_second must be a number above 0 and at most "
                f"{MAX_ROUNDS_PER_SECOND:g}, got {rounds_per_second!r}"
            )
        self._period_us = 1_000_000 / rounds_per_second
        self._now_us = now_us
        self._autodeal = autodeal
        self._gateways: dict[str, _Gateway] = {}
        self._units: list[_Unit] = []
        where: dict[object, str] = {}
        master = random.Random(seed)
        for spec in gateways:
            if not isinstance(spec, GatewaySpec):
                raise ValueError(f"gateways must be GatewaySpec values, got {spec!r}")
            if spec.name in self._gateways:
                raise ValueError(
                    f"two gateways are named {spec.name!r}: give each a name of its own"
                )
            address: object = spec.serial_port if spec.is_serial else (spec.host, spec.port)
            if address in where and spec.port != 0:
                raise ValueError(
                    f"gateways {where[address]!r} and {spec.name!r} both use "
                    f"{_address_text(spec, spec.port)}"
                )
            where[address] = spec.name
            gateway = _Gateway(spec)
            config = spec.table_config()
            for unit in spec.units:
                table = SimTable(config, random.Random(master.getrandbits(64)))
                schedule = random.Random(master.getrandbits(64))
                gateway.units.append(_Unit(spec.name, unit, table, schedule, now_us))
            self._gateways[spec.name] = gateway
            self._units.extend(gateway.units)
        self._tables = MappingProxyType({(u.gateway, u.unit): u.table for u in self._units})
        self._heap: list[tuple[int, int]] = []  # (next round time, index into _units)
        self._dealer: asyncio.Task[None] | None = None
        self._started = False

    # --- what it is ----------------------------------------------------------------------

    @property
    def tables(self) -> Mapping[tuple[str, int], SimTable]:
        """(gateway name, unit id) -> table."""
        return self._tables

    @property
    def gateways(self) -> tuple[GatewaySpec, ...]:
        return tuple(g.spec for g in self._gateways.values())

    @property
    def ports(self) -> dict[str, int]:
        """The TCP port each TCP gateway listens on (the one the OS chose for port 0)."""
        if not self._started:
            raise RuntimeError("the floor is not serving: call start() first")
        return {name: g.port for name, g in self._gateways.items() if g.port is not None}

    def describe(self) -> list[str]:
        """One line per gateway: name, game, address, unit ids."""
        lines = []
        for name, gateway in self._gateways.items():
            spec = gateway.spec
            port = gateway.port if gateway.port is not None else spec.port
            units = spec.units
            ids = f"unit id {units[0]}" if len(units) == 1 else f"unit ids {units[0]}-{units[-1]}"
            lines.append(f"{name}: {spec.game.label} on {_address_text(spec, port)}, {ids}")
        return lines

    def records(self) -> dict[tuple[str, int], list[RoundRecord]]:
        """Every round dealt at every table, oldest first."""
        return {key: list(table.records) for key, table in self._tables.items()}

    def take_records(self) -> dict[tuple[str, int], list[RoundRecord]]:
        """Every round dealt since the last call at every table; the tables forget them."""
        return {key: table.take_records() for key, table in self._tables.items()}

    # --- running -------------------------------------------------------------------------

    async def start(self) -> None:
        """Open every gateway and start dealing; returns once all accept requests."""
        if self._started:
            raise RuntimeError("the floor is already serving")
        self._started = True
        try:
            for gateway in self._gateways.values():
                await self._open(gateway)
            # A serial transport registers its reader on the next turn of the loop.
            await asyncio.sleep(0)
        except BaseException:
            await self.stop()
            raise
        self._schedule(self._now_us())
        if self._autodeal:
            self._dealer = asyncio.create_task(self._deal_forever(), name="sim-floor dealer")

    async def stop(self) -> None:
        """Stop dealing and close every gateway with its connections. Idempotent."""
        dealer, self._dealer = self._dealer, None
        if dealer is not None:
            dealer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await dealer
        for gateway in self._gateways.values():
            server, gateway.server = gateway.server, None
            if server is None:
                continue
            await server.shutdown()  # type: ignore[no-untyped-call]  # pymodbus 3.16
            if ModbusBaseServer.active_server is server:
                ModbusBaseServer.active_server = None
        # Let the transports deliver connection_lost before anyone checks for leftovers.
        await asyncio.sleep(0)
        self._started = False

    async def __aenter__(self) -> SimFloor:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _open(self, gateway: _Gateway) -> None:
        spec = gateway.spec
        devices = [unit.device() for unit in gateway.units]
        devices.append(_absent_unit(spec.is_serial))
        server: ModbusTcpServer | ModbusSerialServer
        if spec.serial_port is not None:
            server = ModbusSerialServer(
                devices,
                port=spec.serial_port,
                baudrate=spec.baudrate,
                ignore_missing_devices=True,
            )
        else:
            assert spec.port is not None
            server = ModbusTcpServer(
                devices, address=(spec.host, spec.port), ignore_missing_devices=True
            )
        try:
            await server.serve_forever(background=True)
        except RuntimeError as exc:
            raise SimulatorError(
                f"gateway {spec.name}: cannot serve on {_address_text(spec, spec.port)}: "
                f"{_why_not(spec)}"
            ) from exc
        gateway.server = server
        transport = server.transport
        if isinstance(transport, asyncio.Server) and transport.sockets:
            gateway.port = int(transport.sockets[0].getsockname()[1])

    # --- dealing -------------------------------------------------------------------------

    def _interval_us(self, unit: _Unit) -> int:
        # Half to one and a half times the mean: tables do not deal in lockstep.
        return max(1, round(self._period_us * (0.5 + unit.schedule.random())))

    def _schedule(self, now: int) -> None:
        heap = []
        for index, unit in enumerate(self._units):
            unit.next_us = now + round(self._period_us * unit.schedule.random())
            heap.append((unit.next_us, index))
        heapq.heapify(heap)
        self._heap = heap

    def _deal_due(self, now: int, *, catch_up: bool) -> list[DealtRound]:
        """Deal the rounds the schedule holds up to ``now``, in time order.

        Without ``catch_up`` (the background dealer) at most ``_MAX_ROUNDS_PER_PASS`` are
        dealt and a table more than ``_MAX_BEHIND_US`` late skips the rounds it missed.
        """
        heap = self._heap
        dealt: list[DealtRound] = []
        while heap and heap[0][0] <= now and (catch_up or len(dealt) < _MAX_ROUNDS_PER_PASS):
            due, index = heapq.heappop(heap)
            unit = self._units[index]
            dealt.append(DealtRound(unit.gateway, unit.unit, unit.table.play_round(due)))
            unit.next_us = due + self._interval_us(unit)
            if not catch_up and now - unit.next_us > _MAX_BEHIND_US:
                # The loop stalled: a real dealer does not catch up at machine speed.
                unit.next_us = now + self._interval_us(unit)
            heapq.heappush(heap, (unit.next_us, index))
        return dealt

    async def _deal_forever(self) -> None:
        while True:
            now = self._now_us()
            if self._heap and self._heap[0][0] - now > 2 * self._period_us:
                self._schedule(now)  # the clock went back
            self._deal_due(now, catch_up=False)
            wait_us = max(0, self._heap[0][0] - self._now_us())
            await asyncio.sleep(min(wait_us / 1_000_000, _MAX_SLEEP_S))

    # --- test and fault hooks ------------------------------------------------------------

    def _unit(self, gateway: str, unit: int) -> _Unit:
        found = self._gateways.get(gateway)
        if found is None:
            raise KeyError(f"no gateway {gateway!r}; the gateways are {sorted(self._gateways)}")
        spec = found.spec
        if isinstance(unit, bool) or not isinstance(unit, int) or unit not in spec.units:
            raise KeyError(f"gateway {gateway!r} has unit ids 1-{spec.tables}, not {unit!r}")
        return found.units[unit - 1]

    def force_hand(self, gateway: str, unit: int, seat: int, hand: HandCategory) -> None:
        """The next round at that table deals ``hand`` to ``seat`` (which bets)."""
        self._unit(gateway, unit).table.force_hand(seat, hand)

    def deal_due(self) -> list[DealtRound]:
        """Deal every round the tables' schedules hold up to the floor clock's time, in time
        order, none skipped; the rounds dealt (none if the clock has not moved on).

        The explicit step of a floor made with ``autodeal=False``: advance its clock (a
        ``VirtualClock``), then deal. The schedule starts at ``start()`` or at the first call.
        """
        now = self._now_us()
        if not self._heap:
            self._schedule(now)
        return self._deal_due(now, catch_up=True)

    def play_round_now(self, gateway: str, unit: int) -> RoundRecord:
        """Deal a round at that table now, besides its schedule."""
        return self._unit(gateway, unit).table.play_round(self._now_us())

    def power_cycle(self, gateway: str, unit: int, *, memory_cleared: bool = False) -> None:
        """The table restarts: its counters are zero again (``SimTable.power_cycle``)."""
        self._unit(gateway, unit).table.power_cycle(memory_cleared=memory_cleared)

    def set_silent(self, gateway: str, unit: int, silent: bool) -> None:
        """A silent unit sends no response at all (the table keeps dealing)."""
        self._unit(gateway, unit).silent = bool(silent)


def _address_text(spec: GatewaySpec, port: int | None) -> str:
    if spec.serial_port is not None:
        return f"Modbus RTU {spec.serial_port} at {spec.baudrate} baud"
    return f"Modbus TCP {spec.host}:{port}"


def _why_not(spec: GatewaySpec) -> str:
    """Why pymodbus could not open the gateway (it logs the reason and returns False)."""
    if spec.serial_port is not None:
        import serial  # pyserial, which pymodbus uses for serial lines

        try:
            serial.serial_for_url(spec.serial_port, baudrate=spec.baudrate).close()
        except (OSError, ValueError) as exc:
            return str(exc)
        return "the serial device could not be opened"
    try:
        infos = socket.getaddrinfo(spec.host, spec.port, type=socket.SOCK_STREAM)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        return exc.strerror or str(exc)
    return "the address could not be bound"
