"""Where simulated tables are served: a gateway's game, address and unit ids, and the errors.

A gateway is a Modbus TCP server (host, port) or a Modbus RTU server on a serial line; its
unit ids 1..N are the tables of one game. ``default_gateways`` is the floor that
``progressive simulate`` serves with no config (shared/DESIGN.md): the three five-card games;
Super Sevens and Pai Gow Poker have default ports of their own (15023, 15024) for a gateway
that names them.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from controller.core.games import Game
from link_adapters.simulator.table_types import DEALT_GAMES, SimTableConfig

__all__ = [
    "DEFAULT_FLOOR",
    "DEFAULT_HOST",
    "DEFAULT_PORTS",
    "MAX_UNITS",
    "GatewaySpec",
    "SimulatorError",
    "address_text",
    "default_gateways",
    "why_not",
]

DEFAULT_HOST: Final = "127.0.0.1"
# Each game's port when a gateway names none.
DEFAULT_PORTS: Final[Mapping[Game, int]] = MappingProxyType(
    {
        Game.CARIBBEAN_STUD: 15020,
        Game.CARIBBEAN_DRAW: 15021,
        Game.LET_IT_RIDE_BONUS: 15022,
        Game.SUPER_SEVENS: 15023,
        Game.PAI_GOW_POKER: 15024,
    }
)
# shared/DESIGN.md: `progressive simulate` with no config serves these.
DEFAULT_FLOOR: Final = (Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW, Game.LET_IT_RIDE_BONUS)
MAX_UNITS: Final = 247  # Modbus unit ids 1-247 address devices; 0 is broadcast


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

    ``port=None`` and no ``serial_port`` means the game's default port (15020-15024);
    ``port=0`` lets the operating system choose (see ``SimFloor.ports``). ``table`` is the
    template every table of the gateway is built from (its game must be ``game``); the
    default is ``SimTableConfig(game=game)``. ``unit_tables`` gives a unit a config of its
    own instead (e.g. one table speaking register map v2 among v1 tables on the same line).
    ``name`` defaults to the game's value, e.g. ``"caribbean_stud"``, and must be unique on
    a floor. A Super Sevens or Pai Gow Poker gateway's tables speak register map v2 (their
    default); a v1 table config for them is refused.
    """

    game: Game
    tables: int = 4
    host: str = DEFAULT_HOST
    port: int | None = None
    serial_port: str | None = None
    baudrate: int = 19200
    table: SimTableConfig | None = None
    name: str = ""
    unit_tables: Mapping[int, SimTableConfig] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.game, Game):
            raise ValueError(
                f"game must be a Game, one of {', '.join(g.value for g in DEALT_GAMES)}"
            )
        if self.game not in DEALT_GAMES:
            raise ValueError(
                f"the simulator deals only {', '.join(g.value for g in DEALT_GAMES)}, "
                f"not {self.game.value}"
            )
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
            self._check_table("table", self.table)
        if not isinstance(self.unit_tables, Mapping):
            raise ValueError(f"gateway {self.name}: unit_tables must map unit ids to configs")
        for unit, config in self.unit_tables.items():
            if isinstance(unit, bool) or not isinstance(unit, int) or unit not in self.units:
                raise ValueError(
                    f"gateway {self.name}: unit_tables names unit {unit!r}; its unit ids are "
                    f"1-{self.tables}"
                )
            self._check_table(f"unit_tables[{unit}]", config)
        object.__setattr__(self, "unit_tables", MappingProxyType(dict(self.unit_tables)))

    def _check_table(self, what: str, config: object) -> None:
        if not isinstance(config, SimTableConfig):
            raise ValueError(f"gateway {self.name}: {what} must be a SimTableConfig")
        if config.game is not self.game:
            raise ValueError(
                f"gateway {self.name}: its tables are {config.game.value} tables, "
                f"but the gateway serves {self.game.value}"
            )

    @property
    def is_serial(self) -> bool:
        return self.serial_port is not None

    @property
    def units(self) -> range:
        """The unit ids of the tables: 1..tables."""
        return range(1, self.tables + 1)

    def table_config(self, unit: int | None = None) -> SimTableConfig:
        """The config of ``unit``'s table (its own in ``unit_tables``, else the template);
        without a unit, the template."""
        if unit is not None and unit in self.unit_tables:
            return self.unit_tables[unit]
        return self.table if self.table is not None else SimTableConfig(game=self.game)


def default_gateways(tables: int = 4, host: str = DEFAULT_HOST) -> list[GatewaySpec]:
    """The floor of shared/DESIGN.md: one TCP gateway per five-card game on ports
    15020-15022."""
    return [
        GatewaySpec(game=game, tables=tables, host=host, port=DEFAULT_PORTS[game])
        for game in DEFAULT_FLOOR
    ]


def address_text(spec: GatewaySpec, port: int | None) -> str:
    """How a message names the gateway's address, e.g. "Modbus TCP 127.0.0.1:15020"."""
    if spec.serial_port is not None:
        return f"Modbus RTU {spec.serial_port} at {spec.baudrate} baud"
    return f"Modbus TCP {spec.host}:{port}"


def why_not(spec: GatewaySpec) -> str:
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
