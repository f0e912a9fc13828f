"""Simulated table controllers served over Modbus: one gateway per game, one unit per table.

A gateway is a Modbus TCP server (host, port) or a Modbus RTU server on a serial line; its
unit ids 1..N are the tables (``gateway.GatewaySpec``). Every unit implements the reference
register map its table speaks, v1 (shared/DESIGN.md) or v2 (docs/register-map-v2.md): a read
of registers 0-33 (v2: 0-37) is encoded live from the ``SimTable`` at the moment of the
request (``registers.encode_block``), a write to 100-105 goes to ``registers.apply_write``
(``units.ServedUnit``). Anything else is refused with a Modbus exception response: illegal
function for function codes other than 3 (read holding registers), 6, 16 (write) and 23
(read/write), illegal data address for addresses outside the map, illegal data value for a
write the table refuses (half of a 32-bit field, a register value out of range). A silent
unit (``set_silent``) sends no response at all; a gateway switched off (``close_gateway``)
serves nobody until it is switched on again (``open_gateway``), on the same address.

Rounds are dealt by one task on the floor's clock: every table has its own schedule, drawn
from its own random generator, so a seed fixes every table's cards and timing
(``dealer.Dealer``). With ``autodeal=False`` no task deals: rounds are dealt only when asked,
one at a table (``play_round_now``) or every round the schedule holds up to the clock's time
(``deal_due``), which with a ``VirtualClock`` makes the rounds a test sees exactly the ones
it stepped to.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from pymodbus.server import ModbusBaseServer, ModbusSerialServer, ModbusTcpServer

from controller.core.hands import HandCategory
from link_adapters.simulator.clock import wall_clock_us
from link_adapters.simulator.dealer import DEFAULT_ROUNDS_PER_SECOND, Dealer, DealtRound
from link_adapters.simulator.gateway import GatewaySpec, SimulatorError, address_text, why_not
from link_adapters.simulator.table import SimTable
from link_adapters.simulator.table_types import RoundRecord
from link_adapters.simulator.units import ServedUnit, absent_unit

__all__ = ["SimFloor"]


@dataclass(eq=False, slots=True)
class _Gateway:
    spec: GatewaySpec
    units: list[ServedUnit] = field(default_factory=list)
    server: ModbusTcpServer | ModbusSerialServer | None = None
    port: int | None = None


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
        self._schedule = Dealer(rounds_per_second, now_us)
        self._now_us = now_us
        self._autodeal = autodeal
        self._gateways: dict[str, _Gateway] = {}
        self._units: list[ServedUnit] = []
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
                    f"{address_text(spec, spec.port)}"
                )
            where[address] = spec.name
            gateway = _Gateway(spec)
            for unit in spec.units:
                config = spec.table_config(unit)
                table = SimTable(config, random.Random(master.getrandbits(64)))
                schedule = random.Random(master.getrandbits(64))
                gateway.units.append(ServedUnit(spec.name, unit, table, now_us))
                self._schedule.add(spec.name, unit, table, schedule)
            self._gateways[spec.name] = gateway
            self._units.extend(gateway.units)
        self._tables = MappingProxyType({(u.gateway, u.unit): u.table for u in self._units})
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
            lines.append(f"{name}: {spec.game.label} on {address_text(spec, port)}, {ids}")
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
        self._schedule.schedule_from(self._now_us())
        if self._autodeal:
            dealing = self._schedule.deal_forever()
            self._dealer = asyncio.create_task(dealing, name="sim-floor dealer")

    async def stop(self) -> None:
        """Stop dealing and close every gateway with its connections. Idempotent."""
        dealer, self._dealer = self._dealer, None
        if dealer is not None:
            dealer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await dealer
        for gateway in self._gateways.values():
            await self._close(gateway)
        # Let the transports deliver connection_lost before anyone checks for leftovers.
        await asyncio.sleep(0)
        self._started = False

    async def __aenter__(self) -> SimFloor:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _close(self, gateway: _Gateway) -> None:
        server, gateway.server = gateway.server, None
        if server is None:
            return
        await server.shutdown()  # type: ignore[no-untyped-call]  # pymodbus 3.16
        if ModbusBaseServer.active_server is server:
            ModbusBaseServer.active_server = None

    async def _open(self, gateway: _Gateway) -> None:
        spec = gateway.spec
        devices = [unit.device() for unit in gateway.units]
        devices.append(absent_unit(spec.is_serial))
        server: ModbusTcpServer | ModbusSerialServer
        if spec.serial_port is not None:
            server = ModbusSerialServer(
                devices,
                port=spec.serial_port,
                baudrate=spec.baudrate,
                ignore_missing_devices=True,
            )
        else:
            # Opened again (``open_gateway``), it serves where it served before.
            port = gateway.port if gateway.port is not None else spec.port
            assert port is not None
            server = ModbusTcpServer(
                devices, address=(spec.host, port), ignore_missing_devices=True
            )
        try:
            await server.serve_forever(background=True)
        except RuntimeError as exc:
            raise SimulatorError(
                f"gateway {spec.name}: cannot serve on {address_text(spec, spec.port)}: "
                f"{why_not(spec)}"
            ) from exc
        gateway.server = server
        transport = server.transport
        if isinstance(transport, asyncio.Server) and transport.sockets:
            gateway.port = int(transport.sockets[0].getsockname()[1])

    # --- test and fault hooks ------------------------------------------------------------

    def _gateway(self, name: str) -> _Gateway:
        found = self._gateways.get(name)
        if found is None:
            raise KeyError(f"no gateway {name!r}; the gateways are {sorted(self._gateways)}")
        return found

    def _unit(self, gateway: str, unit: int) -> ServedUnit:
        found = self._gateway(gateway)
        spec = found.spec
        if isinstance(unit, bool) or not isinstance(unit, int) or unit not in spec.units:
            raise KeyError(f"gateway {gateway!r} has unit ids 1-{spec.tables}, not {unit!r}")
        return found.units[unit - 1]

    def force_hand(self, gateway: str, unit: int, seat: int, hand: HandCategory) -> None:
        """The next round at that table deals ``hand`` to ``seat`` (which bets)."""
        self._unit(gateway, unit).table.force_hand(seat, hand)

    def force_hit(
        self,
        gateway: str,
        unit: int,
        seat: int,
        hand: HandCategory,
        cards: Sequence[int],
        *,
        level: int | None = None,
        lying: bool = False,
    ) -> None:
        """The next round at that table, ``seat`` (which bets) is dealt ``cards`` and reports
        a hit of ``hand`` with them and ``level`` (``SimTable.force_hit``: the cards must make
        the hand by the game's rules unless ``lying``; up to seven cards, the joker as 52, and
        a level on a map v2 table)."""
        self._unit(gateway, unit).table.force_hit(seat, hand, cards, level=level, lying=lying)

    def deal_due(self) -> list[DealtRound]:
        """Deal every round the tables' schedules hold up to the floor clock's time, in time
        order, none skipped; the rounds dealt (none if the clock has not moved on).

        The explicit step of a floor made with ``autodeal=False``: advance its clock (a
        ``VirtualClock``), then deal. The schedule starts at ``start()`` or at the first call.
        """
        now = self._now_us()
        if not self._schedule.scheduled:
            self._schedule.schedule_from(now)
        return self._schedule.deal_due(now, catch_up=True)

    def play_round_now(self, gateway: str, unit: int) -> RoundRecord:
        """Deal a round at that table now, besides its schedule."""
        return self._unit(gateway, unit).table.play_round(self._now_us())

    def power_cycle(self, gateway: str, unit: int, *, memory_cleared: bool = False) -> None:
        """The table restarts: its counters are zero again (``SimTable.power_cycle``)."""
        self._unit(gateway, unit).table.power_cycle(memory_cleared=memory_cleared)

    async def close_gateway(self, name: str) -> None:
        """The gateway goes away (switched off, its cable pulled): its server stops, every
        connection to it is dropped, its TCP port refuses new ones and its serial line goes
        quiet. Its tables deal on, and take no side bet once their heartbeat times out.
        Idempotent; ``open_gateway`` brings it back where it was."""
        if not self._started:
            raise RuntimeError("the floor is not serving: call start() first")
        await self._close(self._gateway(name))
        await asyncio.sleep(0)  # the connections' connection_lost, as in stop()

    async def open_gateway(self, name: str) -> None:
        """Serve a gateway ``close_gateway`` closed again, on the same port or serial line.
        Idempotent."""
        if not self._started:
            raise RuntimeError("the floor is not serving: call start() first")
        gateway = self._gateway(name)
        if gateway.server is None:
            await self._open(gateway)
            await asyncio.sleep(0)  # a serial transport registers its reader on the next turn

    def set_silent(self, gateway: str, unit: int, silent: bool) -> None:
        """A silent unit sends no response at all (the table keeps dealing)."""
        self._unit(gateway, unit).silent = bool(silent)
