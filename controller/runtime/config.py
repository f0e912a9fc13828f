"""The configuration of a floor for ``progressive run --config FILE`` (TOML).

Buses are the physical links (a TCP gateway, a serial line); links group tables; each table
names its bus and unit id. Money and rates are written as people write them (``$1``,
``82.5%``) and parsed exactly. The whole file is checked before anything is made of it: every
problem is collected and refused together, each naming its place in the file and the rule.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.core.games import Game
from controller.core.money import (
    MAX_AMOUNT_CENTS,
    MAX_DENOMINATION_CENTS,
    MoneyError,
    format_cents,
    parse_cents,
    parse_rate_bp,
)
from controller.core.reducer import HitPolicy, TableConfig
from controller.rules import RuleViolation
from controller.rules.progression import check_rate_of_progression
from controller.rules.wagers import check_denomination
from controller.text import ID, ONE_LINE, TextRefused, TextRule
from link_adapters.modbus import SerialParams, TcpParams
from link_adapters.profiles import Profile, ProfileError, load_profile

# Ids and names follow the rules for text wherever it enters (controller.text): ids short and
# plain, names printable with no control, bidirectional or invisible characters.

# The range of every whole-number setting (inclusive), where it is checked.
UNIT_IDS = (1, 247)  # Modbus unit ids
PORTS = (1, 65535)
BAUDRATES = (50, 4_000_000)  # what a serial line takes (link_adapters.modbus.SerialParams)
TIMEOUT_MS = (1, 60_000)
RETRIES = (0, 10)
GAP_MS = (0, 10_000)
POLL_INTERVAL_MS = (0, 60_000)  # 0: as fast as the line allows
SEATS = (1, 7)
# What one seat can wager in a round bounds how much a table can take between readings (house
# policy, ``rules.house.most_credits``): larger than any real side bet, small enough to mean it.
CREDITS_PER_SEAT = (1, 1_000)
MIN_ROUND_MS = (1, 3_600_000)
OFFLINE_AFTER_FAILURES = (1, 1_000)


class ConfigError(ValueError):
    """A configuration file the controller refuses: every problem, each naming its place."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = tuple(problems)
        if len(self.problems) == 1:
            text = f"{source}: {self.problems[0]}"
        else:
            listed = "\n".join(f"  {p}" for p in self.problems)
            text = f"{source}: {len(self.problems)} problems:\n{listed}"
        super().__init__(text)


def id_problem(value: object) -> str | None:
    """Why ``value`` is not an id (``controller.text.ID``), or None."""
    return _text_problem(ID, value)


def text_problem(value: object) -> str | None:
    """Why ``value`` is not a name or location people can read, or None."""
    return _text_problem(ONE_LINE, value)


def _text_problem(rule: TextRule, value: object) -> str | None:
    if not isinstance(value, str):
        return f"must be text, got {value!r}"
    try:
        rule.check(value)
    except TextRefused as exc:
        return str(exc)
    return None


@dataclass(frozen=True, kw_only=True, slots=True)
class BusConfig:
    name: str
    kind: str  # "tcp", "rtu_over_tcp" or "rtu"
    params: TcpParams | SerialParams  # what the link is opened with


@dataclass(frozen=True, kw_only=True, slots=True)
class TableEntry:
    config: TableConfig
    bus: str
    unit: int
    profile: Profile
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

_BUS_KEYS = {
    "name", "kind", "host", "port", "device", "baudrate", "parity", "timeout_ms", "retries",
    "min_gap_ms",
}  # fmt: skip
_LINK_KEYS = {"id", "name", "game", "rate", "reset", "policy", "table"}
_TABLE_KEYS = {
    "id", "bus", "unit", "denomination", "profile", "seats", "max_credits_per_seat",
    "min_round_ms", "poll_interval_ms", "name", "location",
}  # fmt: skip


class _Problems:
    """Every problem of one file, each with its place."""

    def __init__(self) -> None:
        self.found: list[str] = []

    def add(self, where: str, problem: str) -> None:
        self.found.append(f"{where}: {problem}")

    def add_at(self, where: str, key: str, problem: str) -> None:
        """A problem of the setting ``key`` of the entry at ``where`` (its key path)."""
        self.add(f"{where}, {key}" if where else key, problem)


class _Section:
    """One TOML table: its settings read with their types and ranges, unknown keys refused.

    A setting that is wrong is noted with its place and read as None; the caller goes on, so
    every problem of the file is found in one pass.
    """

    def __init__(self, problems: _Problems, data: object, where: str, known: set[str]) -> None:
        self.problems = problems
        self.where = where
        self.data: dict[str, Any] = {}
        if not isinstance(data, dict):
            problems.add(where, f"expected a table of settings, got {data!r}")
            return
        unknown = set(data) - known
        if unknown:
            problems.add(
                where or "top level",
                f"unknown setting(s) {sorted(unknown)}; known: {sorted(known)}",
            )
        self.data = data

    def bad(self, key: str, problem: str) -> None:
        self.problems.add_at(self.where, key, problem)

    def get(
        self,
        key: str,
        kind: type,
        default: Any = ...,
        *,
        choices: tuple[str, ...] = (),
        within: tuple[int, int] | None = None,
        rule: Callable[[object], str | None] | None = None,
    ) -> Any:
        if key not in self.data:
            if default is ...:
                self.bad(key, "is required")
                return None
            return default
        value = self.data[key]
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            self.bad(key, f"must be a whole number, got {value!r}")
            return None
        if kind is str and not isinstance(value, str):
            self.bad(key, f"must be text, got {value!r}")
            return None
        if kind is list and not isinstance(value, list):
            self.bad(key, f"must be a list of tables ([[{key}]]), got {value!r}")
            return None
        if kind is dict and not isinstance(value, dict):
            self.bad(key, f"must be a table ([{key}]), got {value!r}")
            return None
        if choices and value not in choices:
            self.bad(key, f"must be one of {list(choices)}, got {value!r}")
            return None
        if within is not None and not within[0] <= value <= within[1]:
            self.bad(key, f"must be {within[0]} to {within[1]}, got {value}")
            return None
        if rule is not None and (problem := rule(value)) is not None:
            self.bad(key, problem)
            return None
        return value

    def amount(self, key: str, default: Any = ..., *, low: int = 0, high: int) -> int | None:
        """An amount written as people write it (``$1,234.56``), whole cents within bounds."""
        text = self.get(key, str, default)
        if text is None:
            return None
        try:
            cents = parse_cents(text)
        except MoneyError as exc:
            self.bad(key, str(exc))
            return None
        if not low <= cents <= high:
            self.bad(key, f"must be {format_cents(low)} to {format_cents(high)}, got {text!r}")
            return None
        return cents


def _label(kind: str, number: int, raw: object, key: str) -> str:
    """``link #2 'stud'``: the place of an entry, named by its id when that is one."""
    value = raw.get(key) if isinstance(raw, dict) else None
    return f"{kind} #{number}" + (f" {value!r}" if id_problem(value) is None else "")


def load_floor_config(path: Path) -> FloorConfig:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(str(path), ["no such file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), [f"cannot be read: {exc}"]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message gives the line and column
        raise ConfigError(str(path), [f"not valid TOML: {exc}"]) from None
    return parse_floor_config(data, source=str(path))


def parse_floor_config(data: Mapping[str, Any], *, source: str = "config") -> FloorConfig:
    """The floor the file describes; a ConfigError listing every problem of it otherwise."""
    problems = _Problems()
    top = _Section(problems, dict(data), "", {"controller", "bus", "link"})
    settings = top.get("controller", dict, {}) or {}
    ctl = _Section(problems, settings, "controller", {"offline_after_failures"})
    offline_after = ctl.get("offline_after_failures", int, 3, within=OFFLINE_AFTER_FAILURES)
    buses: dict[str, BusConfig | None] = {}
    for i, raw in enumerate(top.get("bus", list, []) or [], start=1):
        _read_bus(problems, i, raw, buses)
    links: list[LinkEntry] = []
    read = _Seen()
    for i, raw in enumerate(top.get("link", list, []) or [], start=1):
        link = _read_link(problems, i, raw, buses, read)
        if link is not None:
            links.append(link)
    if top.data.get("link", []) == []:
        problems.add("link", "no [[link]] configured")
    if problems.found:
        raise ConfigError(source, problems.found)
    return FloorConfig(
        buses={name: bus for name, bus in buses.items() if bus is not None},
        links=tuple(links),
        offline_after_failures=offline_after,
    )


def _read_bus(problems: _Problems, i: int, raw: object, buses: dict[str, BusConfig | None]) -> None:
    where = _label("bus", i, raw, "name")
    b = _Section(problems, raw, where, _BUS_KEYS)
    before = len(problems.found)
    name = b.get("name", str, rule=id_problem)
    if name is not None and name in buses:
        b.bad("name", f"{name!r} is the name of another bus")
        name = None
    kind = b.get("kind", str, choices=("tcp", "rtu_over_tcp", "rtu"))
    timing: dict[str, Any] = {}
    timeout_ms = b.get("timeout_ms", int, None, within=TIMEOUT_MS)
    if timeout_ms is not None:
        timing["timeout_s"] = timeout_ms / 1000
    gap_ms = b.get("min_gap_ms", int, None, within=GAP_MS)
    if gap_ms is not None:
        timing["min_gap_s"] = gap_ms / 1000
    retries = b.get("retries", int, 1, within=RETRIES)
    params: TcpParams | SerialParams | None = None
    if kind == "rtu":
        device = b.get("device", str, rule=_device_problem)
        baudrate = b.get("baudrate", int, 19200, within=BAUDRATES)
        parity = b.get("parity", str, "N", choices=("N", "E", "O"))
        if len(problems.found) == before:
            params = _built(
                b,
                lambda: SerialParams(
                    port=device, baudrate=baudrate, parity=parity, retries=retries, **timing
                ),
            )
    elif kind is not None:
        host = b.get("host", str, rule=_host_problem)
        port = b.get("port", int, 502, within=PORTS)
        if len(problems.found) == before:
            params = _built(
                b,
                lambda: TcpParams(
                    host=host,
                    port=port,
                    rtu_over_tcp=kind == "rtu_over_tcp",
                    retries=retries,
                    **timing,
                ),
            )
    if name is not None:
        # A bus with problems is still known by name, so its tables are not refused for it.
        buses[name] = None if params is None else BusConfig(name=name, kind=kind, params=params)


def _built(section: _Section, make: Callable[[], Any]) -> Any:
    try:
        return make()
    except ValueError as exc:  # the adapter's own check, should it find more
        section.problems.add(section.where, str(exc))
        return None


def _device_problem(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip() or not value.isprintable():
        return f"must be a serial device path (e.g. /dev/ttyUSB0), got {value!r}"
    return None


def _host_problem(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip() or not value.isprintable():
        return f"must be a host name or address, got {value!r}"
    if len(value) > 253:
        return "must be at most 253 characters (a DNS name)"
    return None


@dataclass(slots=True)
class _Seen:
    """What the entries read so far took: ids and units with their places, profiles."""

    links: dict[str, str] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)
    units: dict[tuple[str, int], str] = field(default_factory=dict)
    profiles: dict[str, Profile | ProfileError] = field(default_factory=dict)


def _read_link(
    problems: _Problems,
    i: int,
    raw: object,
    buses: Mapping[str, BusConfig | None],
    seen: _Seen,
) -> LinkEntry | None:
    where = _label("link", i, raw, "id")
    s = _Section(problems, raw, where, _LINK_KEYS)
    before = len(problems.found)
    link_id = _unique_id(s, seen.links)
    name = s.get("name", str, link_id or "", rule=text_problem)
    game_value = s.get("game", str, choices=tuple(g.value for g in Game))
    game = None if game_value is None else Game(game_value)
    rate_bp = None
    rate = s.get("rate", str)
    if rate is not None:
        try:
            rate_bp = check_rate_of_progression(parse_rate_bp(rate))
        except (MoneyError, RuleViolation) as exc:
            s.bad("rate", str(exc))
    reset_cents = s.amount("reset", high=MAX_AMOUNT_CENTS)
    policy = s.get("policy", str, "split", choices=tuple(p.value for p in HitPolicy))
    tables: list[TableEntry] = []
    raw_tables = s.get("table", list, [])
    if raw_tables == []:
        s.bad("table", "is required: a link needs at least one [[link.table]]")
    for j, traw in enumerate(raw_tables or [], start=1):
        table_where = f"{where}, {_label('table', j, traw, 'id')}"
        table = _read_table(problems, table_where, traw, game, buses, seen)
        if table is not None:
            tables.append(table)
    if len(problems.found) != before:
        return None
    assert link_id is not None and game is not None and rate_bp is not None
    assert reset_cents is not None and policy is not None
    return LinkEntry(
        link_id=link_id,
        name=name,
        game=game,
        rate_bp=rate_bp,
        reset_cents=reset_cents,
        policy=HitPolicy(policy),
        tables=tuple(tables),
    )


def _unique_id(section: _Section, taken: dict[str, str]) -> str | None:
    """The section's ``id``: an id, not ``taken`` by another entry of its kind."""
    value = section.get("id", str, rule=id_problem)
    if value is None:
        return None
    if value in taken:
        section.bad("id", f"{value!r} is already the id of {taken[value]}")
        return None
    taken[value] = section.where
    return str(value)


def _read_table(
    problems: _Problems,
    where: str,
    raw: object,
    game: Game | None,
    buses: Mapping[str, BusConfig | None],
    seen: _Seen,
) -> TableEntry | None:
    t = _Section(problems, raw, where, _TABLE_KEYS)
    before = len(problems.found)
    table_id = _unique_id(t, seen.tables)
    bus_name = t.get("bus", str)
    bus = None
    if bus_name is not None:
        if bus_name not in buses:
            t.bad("bus", f"no bus is named {bus_name!r}; buses: {sorted(buses)}")
        bus = buses.get(bus_name)
    unit = t.get("unit", int, within=UNIT_IDS)
    if bus_name in buses and unit is not None:
        other = seen.units.setdefault((bus_name, unit), where)
        if other != where:
            t.bad("unit", f"unit {unit} on bus {bus_name!r} is already {other}")
    denom = t.amount("denomination", "$1", low=1, high=MAX_DENOMINATION_CENTS)
    if game is not None and denom is not None:
        try:
            check_denomination(game, denom)
        except RuleViolation as exc:
            t.bad("denomination", str(exc))
    profile = None
    profile_name = t.get("profile", str, "reference-v1")
    if profile_name is not None:
        if profile_name not in seen.profiles:
            try:
                seen.profiles[profile_name] = load_profile(profile_name)
            except ProfileError as exc:
                seen.profiles[profile_name] = exc
        found = seen.profiles[profile_name]
        if isinstance(found, ProfileError):
            t.bad("profile", str(found))
        else:
            profile = found
    seats = t.get("seats", int, 7, within=SEATS)
    credits = t.get("max_credits_per_seat", int, 1, within=CREDITS_PER_SEAT)
    min_round_ms = t.get("min_round_ms", int, 10_000, within=MIN_ROUND_MS)
    default_interval = (
        _DEFAULT_SERIAL_INTERVAL_MS
        if bus is not None and bus.kind == "rtu"
        else _DEFAULT_TCP_INTERVAL_MS
    )
    interval = t.get("poll_interval_ms", int, default_interval, within=POLL_INTERVAL_MS)
    name = t.get("name", str, table_id or "", rule=text_problem)
    location = t.get("location", str, "", rule=text_problem)
    if len(problems.found) != before or bus is None or profile is None:
        return None
    assert table_id is not None and unit is not None and denom is not None
    config = _built(
        t,
        lambda: TableConfig(
            table_id=table_id,
            denomination_cents=denom,
            seats=seats,
            max_credits_per_seat_round=credits,
            min_round_us=min_round_ms * 1_000,
        ),
    )
    if config is None:
        return None
    return TableEntry(
        config=config,
        bus=bus_name,
        unit=unit,
        profile=profile,
        poll_interval_ms=interval,
        name=name,
        location=location,
    )
