"""What a floor file describes (buses, links, tables) and how each entry of it is read."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.core.games import Game, Paytable
from controller.core.money import (
    MAX_AMOUNT_CENTS,
    MAX_DENOMINATION_CENTS,
    MoneyError,
    parse_rate_bp,
)
from controller.core.reducer import HitPolicy, TableConfig
from controller.core.reducer.levels import LevelConfig
from controller.rules import RuleViolation
from controller.rules.pools import fixed_pay_only
from controller.rules.progression import check_rate_of_progression
from controller.rules.wagers import check_denomination
from controller.runtime.config_sections import Problems, Section, id_problem, label, text_problem
from controller.runtime.link_specs import SpecError, parse_levels, parse_paytables, plan_link
from link_adapters.modbus import SerialParams, TcpParams
from link_adapters.profile_files import load_profile
from link_adapters.profile_map import Profile, ProfileError

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
    # A link of levels (``[[link.level]]``); empty: a fixed-pay link; None: a classic link.
    levels: tuple[LevelConfig, ...] | None = None
    # The paytables given (``[[link.paytable]]``), by game; each game's default otherwise.
    paytable: Paytable | None = None
    paytables: Mapping[Game, Paytable] = field(default_factory=dict)
    # Whether the file wrote paytable lines: a link that gives none asks for none at a
    # restart, whatever the games' defaults have become.
    paytable_given: bool = False

    @property
    def fixed_pay(self) -> bool:
        return self.levels == ()


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
    "name", "kind", "host", "port", "device", "baudrate", "parity", "stopbits", "timeout_ms",
    "retries", "min_gap_ms",
}  # fmt: skip
_LINK_KEYS = {
    "id", "name", "game", "rate", "reset", "policy", "table", "level", "paytable", "fixed_pay",
}  # fmt: skip
_TABLE_KEYS = {
    "id", "bus", "unit", "denomination", "profile", "seats", "max_credits_per_seat",
    "min_round_ms", "poll_interval_ms", "name", "location", "game",
}  # fmt: skip


def read_bus(problems: Problems, i: int, raw: object, buses: dict[str, BusConfig | None]) -> None:
    where = label("bus", i, raw, "name")
    b = Section(problems, raw, where, _BUS_KEYS)
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
        # Modbus over serial line v1.02, 2.5.1: 8N2 when there is no parity (two stop bits);
        # many devices take 8N1 too, the default here.
        stopbits = b.get("stopbits", int, 1, rule=_stopbits_problem)
        if len(problems.found) == before:
            params = _built(
                b,
                lambda: SerialParams(
                    port=device,
                    baudrate=baudrate,
                    parity=parity,
                    stopbits=stopbits,
                    retries=retries,
                    **timing,
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


def _stopbits_problem(value: object) -> str | None:
    return None if value in (1, 2) else f"must be 1 or 2, got {value!r}"


def _built(section: Section, make: Callable[[], Any]) -> Any:
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
class Seen:
    """What the entries read so far took: ids and units with their places, profiles."""

    links: dict[str, str] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)
    units: dict[tuple[str, int], str] = field(default_factory=dict)
    profiles: dict[str, Profile | ProfileError] = field(default_factory=dict)


def read_link(
    problems: Problems,
    i: int,
    raw: object,
    buses: Mapping[str, BusConfig | None],
    seen: Seen,
) -> LinkEntry | None:
    where = label("link", i, raw, "id")
    s = Section(problems, raw, where, _LINK_KEYS)
    before = len(problems.found)
    link_id = _unique_id(s, seen.links)
    name = s.get("name", str, link_id or "", rule=text_problem)
    game_value = s.get("game", str, choices=tuple(g.value for g in Game))
    game = None if game_value is None else Game(game_value)
    fixed_pay = s.get("fixed_pay", bool, False)
    legacy = game is not None and fixed_pay_only(game)
    rate_bp = None
    rate = s.get("rate", str, None if legacy or "level" in s.data or fixed_pay else ...)
    if rate is not None:
        try:
            rate_bp = check_rate_of_progression(parse_rate_bp(rate, unit_required=True))
        except (MoneyError, RuleViolation) as exc:
            s.bad("rate", str(exc))
    reset_given = "reset" in s.data
    reset_cents = s.amount(
        "reset", None if legacy or "level" in s.data or fixed_pay else ..., high=MAX_AMOUNT_CENTS
    )
    policy = s.get("policy", str, "split", choices=tuple(p.value for p in HitPolicy))
    levels = _read_specs(s, "level", parse_levels)
    tables: list[TableEntry] = []
    raw_tables = s.get("table", list, [])
    if raw_tables == []:
        s.bad("table", "is required: a link needs at least one [[link.table]]")
    for j, traw in enumerate(raw_tables or [], start=1):
        table_where = f"{where}, {label('table', j, traw, 'id')}"
        table = _read_table(problems, table_where, traw, game, buses, seen)
        if table is not None:
            tables.append(table)
    paytables = None
    if game is not None and "paytable" in s.data:
        paytables = _read_specs(s, "paytable", lambda raw: parse_paytables(raw, game))
    if len(problems.found) != before:
        return None
    assert link_id is not None and game is not None and policy is not None
    try:
        # A Let It Ride bonus link is fixed-pay (68 IAC 10-7-5(e)); the rate and reset amount
        # a file from before levels gives it are kept on its row and used for nothing.
        plan = plan_link(
            game=game,
            rate_bp=None if legacy else rate_bp,
            reset_cents=None if legacy else reset_cents,
            levels=levels,
            paytables=paytables,
            fixed_pay=fixed_pay,
            table_games=[t.config.game or game for t in tables],
        )
    except SpecError as exc:
        s.bad("level" if levels is not None else "game", str(exc))
        return None
    if legacy and rate_bp is not None and reset_given and reset_cents is not None:
        row_rate, row_reset = rate_bp, reset_cents
    else:
        row_rate, row_reset = plan.rate_bp, plan.reset_cents
    return LinkEntry(
        link_id=link_id,
        name=name,
        game=game,
        rate_bp=row_rate,
        reset_cents=row_reset,
        policy=HitPolicy(policy),
        tables=tuple(tables),
        levels=plan.levels,
        paytable=plan.paytable,
        paytables=plan.paytables,
        paytable_given=paytables is not None,
    )


def _read_specs(s: Section, key: str, parse: Callable[[Any], Any]) -> Any:
    """``[[link.level]]`` or ``[[link.paytable]]``, read with their units (``link_specs``)."""
    raw = s.get(key, list, None)
    if raw is None:
        return None
    try:
        return parse(raw)
    except SpecError as exc:
        s.bad(key, str(exc))
        return None


def _unique_id(section: Section, taken: dict[str, str]) -> str | None:
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
    problems: Problems,
    where: str,
    raw: object,
    game: Game | None,
    buses: Mapping[str, BusConfig | None],
    seen: Seen,
) -> TableEntry | None:
    t = Section(problems, raw, where, _TABLE_KEYS)
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
    game_value = t.get("game", str, None, choices=tuple(g.value for g in Game))
    dealt = game if game_value is None else Game(game_value)
    denom = t.amount("denomination", "$1", low=1, high=MAX_DENOMINATION_CENTS)
    if dealt is not None and denom is not None:
        try:
            check_denomination(dealt, denom)
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
            game=None if dealt is game else dealt,
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
