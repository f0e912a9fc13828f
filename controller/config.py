"""The configuration of a floor for ``progressive run --config FILE`` (TOML).

Buses are the physical links (a TCP gateway, a serial line); links group tables; each table
names its bus and unit id. Money and rates are written as people write them (``$1``,
``82.5%``) and parsed exactly; anything wrong is refused naming the place in the file.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.engine import HitPolicy, TableConfig
from controller.games import Game
from controller.money import MoneyError, format_cents, parse_cents, parse_rate_bp
from controller.regulations import RuleViolation, check_rate_of_progression
from controller.text import ID, ONE_LINE, TextRefused, TextRule


class ConfigError(ValueError):
    """A configuration file the controller refuses; the message names where and why."""


@dataclass(frozen=True, kw_only=True, slots=True)
class BusConfig:
    name: str
    kind: str  # "tcp", "rtu_over_tcp" or "rtu"
    host: str | None = None
    port: int | None = None  # TCP port
    device: str | None = None  # serial device path
    baudrate: int = 19200
    parity: str = "N"
    timeout_ms: int | None = None
    retries: int = 1
    min_gap_ms: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class TableEntry:
    config: TableConfig
    bus: str
    unit: int
    profile: str
    poll_interval_ms: int
    name: str
    location: str


@dataclass(frozen=True, kw_only=True, slots=True)
class LinkEntry:
    link_id: str
    name: str
    game: Game
    rate_bp: int
    reset_cents: int
    policy: HitPolicy
    tables: tuple[TableEntry, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class FloorConfig:
    buses: Mapping[str, BusConfig]
    links: tuple[LinkEntry, ...]
    offline_after_failures: int = 3

    @property
    def tables(self) -> list[TableEntry]:
        return [t for link in self.links for t in link.tables]


_DEFAULT_TCP_INTERVAL_MS = 250
_DEFAULT_SERIAL_INTERVAL_MS = 0  # as fast as the line allows


class _Section:
    """Reads one TOML table, remembering where it is for messages, refusing unknown keys."""

    def __init__(self, data: Any, where: str, known: set[str]) -> None:
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: expected a table of settings")
        unknown = set(data) - known
        if unknown:
            raise ConfigError(
                f"{where}: unknown setting(s) {sorted(unknown)}; known: {sorted(known)}"
            )
        self.data = data
        self.where = where

    def get(
        self,
        key: str,
        kind: type,
        default: Any = ...,
        *,
        choices: tuple[str, ...] = (),
        rule: TextRule | None = None,
    ) -> Any:
        if key not in self.data:
            if default is ...:
                raise ConfigError(f"{self.where}: '{key}' is required")
            return default
        value = self.data[key]
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise ConfigError(f"{self.where}: '{key}' must be a whole number, got {value!r}")
        if kind is str and not isinstance(value, str):
            raise ConfigError(f"{self.where}: '{key}' must be text, got {value!r}")
        if choices and value not in choices:
            raise ConfigError(
                f"{self.where}: '{key}' must be one of {list(choices)}, got {value!r}"
            )
        if rule is not None:
            try:
                rule.check(value)
            except TextRefused as exc:
                raise ConfigError(f"{self.where}: '{key}': {exc}") from None
        return value


def load_floor_config(path: Path) -> FloorConfig:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return parse_floor_config(data, source=str(path))


def parse_floor_config(data: Mapping[str, Any], *, source: str = "config") -> FloorConfig:
    top = _Section(dict(data), source, {"controller", "bus", "link"})
    ctl = _Section(
        top.get("controller", dict, {}), f"{source} [controller]", {"offline_after_failures"}
    )
    offline_after = ctl.get("offline_after_failures", int, 3)
    if offline_after < 1:
        raise ConfigError(f"{source} [controller]: 'offline_after_failures' must be at least 1")

    buses: dict[str, BusConfig] = {}
    for i, raw in enumerate(top.get("bus", list, []), start=1):
        where = f"{source} [[bus]] #{i}"
        b = _Section(
            raw,
            where,
            {
                "name",
                "kind",
                "host",
                "port",
                "device",
                "baudrate",
                "parity",
                "timeout_ms",
                "retries",
                "min_gap_ms",
            },
        )
        name = b.get("name", str)
        where = f"{source} bus {name!r}"
        kind = b.get("kind", str, choices=("tcp", "rtu_over_tcp", "rtu"))
        if name in buses:
            raise ConfigError(f"{where}: the name is used twice")
        if kind == "rtu":
            if "device" not in raw:
                raise ConfigError(f"{where}: a serial bus needs 'device' (e.g. /dev/ttyUSB0)")
        elif "host" not in raw:
            raise ConfigError(f"{where}: a TCP bus needs 'host'")
        buses[name] = BusConfig(
            name=name,
            kind=kind,
            host=b.get("host", str, None),
            port=b.get("port", int, 502),
            device=b.get("device", str, None),
            baudrate=b.get("baudrate", int, 19200),
            parity=b.get("parity", str, "N", choices=("N", "E", "O")),
            timeout_ms=b.get("timeout_ms", int, None),
            retries=b.get("retries", int, 1),
            min_gap_ms=b.get("min_gap_ms", int, None),
        )

    links: list[LinkEntry] = []
    seen_tables: set[str] = set()
    seen_units: set[tuple[str, int]] = set()
    for i, raw in enumerate(top.get("link", list, []), start=1):
        l_where = f"{source} [[link]] #{i}"
        ls = _Section(raw, l_where, {"id", "name", "game", "rate", "reset", "policy", "table"})
        link_id = ls.get("id", str, rule=ID)
        l_where = f"{source} link {link_id!r}"
        game = Game(ls.get("game", str, choices=tuple(g.value for g in Game)))
        try:
            rate_bp = check_rate_of_progression(parse_rate_bp(str(ls.get("rate", str))))
            reset_cents = parse_cents(str(ls.get("reset", str)))
        except (MoneyError, RuleViolation) as exc:
            raise ConfigError(f"{l_where}: {exc}") from None
        policy = HitPolicy(ls.get("policy", str, "split", choices=("split", "sequential")))
        tables: list[TableEntry] = []
        for j, traw in enumerate(ls.get("table", list, []), start=1):
            t_where = f"{l_where} [[link.table]] #{j}"
            ts = _Section(
                traw,
                t_where,
                {
                    "id",
                    "bus",
                    "unit",
                    "denomination",
                    "profile",
                    "seats",
                    "max_credits_per_seat",
                    "min_round_ms",
                    "poll_interval_ms",
                    "name",
                    "location",
                },
            )
            table_id = ts.get("id", str, rule=ID)
            t_where = f"{l_where} table {table_id!r}"
            if table_id in seen_tables:
                raise ConfigError(f"{t_where}: the table id is used twice")
            bus = ts.get("bus", str)
            if bus not in buses:
                raise ConfigError(f"{t_where}: no bus named {bus!r}; buses: {sorted(buses)}")
            unit = ts.get("unit", int)
            if not 1 <= unit <= 247:
                raise ConfigError(f"{t_where}: 'unit' must be a Modbus unit id 1-247, got {unit}")
            if (bus, unit) in seen_units:
                raise ConfigError(f"{t_where}: unit {unit} on bus {bus!r} is already another table")
            fixed = game.fixed_wager_cents
            try:
                denom = parse_cents(str(ts.get("denomination", str, "$1")))
            except MoneyError as exc:
                raise ConfigError(f"{t_where}: denomination: {exc}") from None
            if fixed is not None and denom != fixed:
                raise ConfigError(
                    f"{t_where}: the {game.label} bet is {format_cents(fixed)} (68 IAC 10-7-5(b))"
                )
            default_interval = (
                _DEFAULT_SERIAL_INTERVAL_MS
                if buses[bus].kind == "rtu"
                else _DEFAULT_TCP_INTERVAL_MS
            )
            try:
                cfg = TableConfig(
                    table_id=table_id,
                    denomination_cents=denom,
                    seats=ts.get("seats", int, 7),
                    max_credits_per_seat_round=ts.get("max_credits_per_seat", int, 1),
                    min_round_us=ts.get("min_round_ms", int, 10_000) * 1_000,
                )
            except ValueError as exc:
                raise ConfigError(f"{t_where}: {exc}") from None
            tables.append(
                TableEntry(
                    config=cfg,
                    bus=bus,
                    unit=unit,
                    profile=ts.get("profile", str, "reference-v1"),
                    poll_interval_ms=ts.get("poll_interval_ms", int, default_interval),
                    name=ts.get("name", str, table_id, rule=ONE_LINE),
                    location=ts.get("location", str, "", rule=ONE_LINE),
                )
            )
            seen_tables.add(table_id)
            seen_units.add((bus, unit))
        if not tables:
            raise ConfigError(f"{l_where}: a link needs at least one [[link.table]]")
        links.append(
            LinkEntry(
                link_id=link_id,
                name=ls.get("name", str, link_id, rule=ONE_LINE),
                game=game,
                rate_bp=rate_bp,
                reset_cents=reset_cents,
                policy=policy,
                tables=tuple(tables),
            )
        )
    if not links:
        raise ConfigError(f"{source}: no [[link]] configured")
    return FloorConfig(buses=buses, links=tuple(links), offline_after_failures=offline_after)
