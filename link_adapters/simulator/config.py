"""The ``progressive simulate --config FILE`` file: simulated gateways and tables, in TOML.

```toml
seed = 7                      # optional: repeatable cards and timing
rounds_per_second = 0.5       # optional: per table; default one round a minute

[[gateway]]
game = "caribbean_stud"       # caribbean_stud, caribbean_draw, let_it_ride_bonus,
                              # super_sevens or pai_gow_poker
port = 15020                  # Modbus TCP (0: any free port; default: the game's) ...
# serial_port = "/dev/ttyUSB0"  # ... or Modbus RTU on a serial line
# baudrate = 19200
# host = "127.0.0.1"
# name = "stud"               # default: the game; unique per file
tables = 4                    # unit ids 1..tables
start_credits = 4294967000    # optional: counters start near the 32-bit wrap
report_cards = true
# register_map = 2            # optional: reference map v2 (default: v1 for the five-card
                              # games; Super Sevens and Pai Gow Poker speak v2 only)
```

Every other table setting of ``SimTableConfig`` may be given per gateway too: ``seats``,
``bet_probability_pct``, ``seat_change_pct``, ``credits_per_bet``, ``start_rounds``,
``first_hit_seq``, ``register_map`` and ``heartbeat_timeout_seconds``. Unknown keys are
refused, and every message names the file, the gateway (counted from 1, in file order) and
the key. A Super Sevens table (blackjack from a six-deck shoe, $1 side bet) or a Pai Gow
Poker table (52 cards and the joker, six seats at most) refuses ``register_map = 1``.

Faults (``faults.TableFaults``), for every table of the gateway; each shows only in the
registers:

```toml
rigged = { hand = "royal_flush", factor = 20 }  # dealt at 20 times its odds (five-card games)
dead_sensor_seat = 3          # register 7 never shows seat 3; its credits still count
stuck_sensor_seat = 5         # register 7 always shows seat 5
false_claims_per_round = 0.001  # a seat claims the top hand with cards that do not make it
late_bets_per_round = 0.01    # a side bet taken after the lockout (rounds dealt in phases)
unreported_hand = "flush"     # flushes are dealt but never reported
```

Hands are named as ``HandCategory`` names in lower case (``royal_flush``, ``four_of_a_kind``).
A gateway with ``late_bets_per_round`` deals its rounds in phases (``dealer.Dealer``).
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from controller.core.games import Game
from controller.core.hands import HandCategory
from link_adapters.simulator.dealer import DEFAULT_ROUNDS_PER_SECOND, MAX_ROUNDS_PER_SECOND
from link_adapters.simulator.faults import FaultError, RiggedHand, TableFaults
from link_adapters.simulator.gateway import DEFAULT_HOST, MAX_UNITS, GatewaySpec
from link_adapters.simulator.table_types import DEALT_GAMES, U32, SimTableConfig

__all__ = ["SimConfig", "SimConfigError", "load_config", "parse_config"]


class SimConfigError(ValueError):
    """A simulate config file the simulator refuses; the message names the key."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SimConfig:
    gateways: tuple[GatewaySpec, ...]
    rounds_per_second: float = DEFAULT_ROUNDS_PER_SECOND
    seed: int | None = None


_Fail = Callable[[str], SimConfigError]

_TOP_KEYS: Final = ("seed", "rounds_per_second", "gateway")
# key -> (lowest, highest) for the integer settings of a table.
_TABLE_INTS: Final[Mapping[str, tuple[int, int]]] = {
    "seats": (1, 7),
    "bet_probability_pct": (0, 100),
    "seat_change_pct": (0, 100),
    "credits_per_bet": (1, 0xFFFF),
    "start_credits": (0, U32 - 1),
    "start_rounds": (0, U32 - 1),
    "first_hit_seq": (0, U32 - 1),
    "register_map": (1, 2),  # reference map v1 or v2 (docs/register-map-v2.md)
}
_FAULT_KEYS: Final = (
    "rigged",
    "dead_sensor_seat",
    "stuck_sensor_seat",
    "false_claims_per_round",
    "late_bets_per_round",
    "unreported_hand",
)
_GATEWAY_KEYS: Final = (
    "game",
    "name",
    "host",
    "port",
    "serial_port",
    "baudrate",
    "tables",
    *_TABLE_INTS,
    "heartbeat_timeout_seconds",
    "report_cards",
    *_FAULT_KEYS,
)
_RIGGED_KEYS: Final = ("hand", "factor")
# The hands a fault can name, by the lower-case name of their HandCategory.
_HANDS: Final[Mapping[str, HandCategory]] = {
    h.name.lower(): h for h in HandCategory if h is not HandCategory.MYSTERY
}


def load_config(path: Path) -> SimConfig:
    """Read and check a simulate config file."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SimConfigError(f"{path}: cannot read the config file ({exc.strerror})") from exc
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SimConfigError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise SimConfigError(f"{path}: not valid TOML: {exc}") from exc
    return parse_config(data, source=str(path))


def parse_config(data: Mapping[str, Any], *, source: str = "config") -> SimConfig:
    """Check parsed TOML and build the gateways; ``source`` prefixes every message."""

    def fail(message: str) -> SimConfigError:
        return SimConfigError(f"{source}: {message}")

    _refuse_unknown(data, _TOP_KEYS, fail, "at the top level")
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise fail(f"key 'seed': must be an integer, got {seed!r}")
    rate = data.get("rounds_per_second", DEFAULT_ROUNDS_PER_SECOND)
    if (
        isinstance(rate, bool)
        or not isinstance(rate, int | float)
        or not math.isfinite(rate)
        or not 0 < rate <= MAX_ROUNDS_PER_SECOND
    ):
        raise fail(
            f"key 'rounds_per_second': must be a number above 0 and at most "
            f"{MAX_ROUNDS_PER_SECOND:g} (per table), got {rate!r}"
        )
    tables = data.get("gateway")
    if tables is None:
        raise fail('no [[gateway]] given: add at least one, e.g. game = "caribbean_stud"')
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise fail("'gateway' must be an array of tables, written [[gateway]]")
    gateways = [_gateway(entry, number, fail) for number, entry in enumerate(tables, start=1)]
    _refuse_clashes(gateways, fail)
    return SimConfig(gateways=tuple(gateways), rounds_per_second=float(rate), seed=seed)


def _refuse_unknown(
    data: Mapping[str, Any],
    known: tuple[str, ...],
    fail: _Fail,
    where: str,
) -> None:
    for key in data:
        if key not in known:
            where_text = f" {where}" if where else ""
            raise fail(f"unknown key {key!r}{where_text}; the keys are {', '.join(known)}")


def _gateway(entry: Mapping[str, Any], number: int, outer: _Fail) -> GatewaySpec:
    def fail(message: str) -> SimConfigError:
        return outer(f"[[gateway]] #{number}: {message}")

    _refuse_unknown(entry, _GATEWAY_KEYS, fail, "")

    def integer(key: str, low: int, high: int) -> int | None:
        if (value := entry.get(key)) is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail(f"key {key!r}: must be an integer, got {value!r}")
        if not low <= value <= high:
            raise fail(f"key {key!r}: must be between {low} and {high}, got {value}")
        return value

    def text(key: str) -> str | None:
        value = entry.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise fail(f"key {key!r}: must be a non-empty string, got {value!r}")
        return value

    game_text = entry.get("game")
    if game_text is None:
        raise fail(f"key 'game' is missing; one of {', '.join(g.value for g in DEALT_GAMES)}")
    try:
        game = Game(game_text)
    except ValueError:
        game = None
    if game not in DEALT_GAMES:
        raise fail(
            f"key 'game': {game_text!r} is not a game the simulator deals; one of "
            f"{', '.join(g.value for g in DEALT_GAMES)}"
        )
    serial_port = text("serial_port")
    port = integer("port", 0, 65535)
    if serial_port is not None and port is not None:
        raise fail("give 'port' (Modbus TCP) or 'serial_port' (Modbus RTU), not both")
    if serial_port is None and "baudrate" in entry:
        raise fail("key 'baudrate' only applies with 'serial_port'")
    if serial_port is not None and "host" in entry:
        raise fail("key 'host' only applies with 'port' (Modbus TCP)")

    overrides: dict[str, Any] = {}
    for key, (low, high) in _TABLE_INTS.items():
        if (value := integer(key, low, high)) is not None:
            overrides[key] = value
    if "heartbeat_timeout_seconds" in entry:
        seconds = entry["heartbeat_timeout_seconds"]
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not math.isfinite(seconds)
            or not 0 < seconds <= 86_400
        ):
            raise fail(
                "key 'heartbeat_timeout_seconds': must be a number of seconds above 0 and at "
                f"most 86400, got {seconds!r}"
            )
        overrides["heartbeat_timeout_us"] = max(1, round(seconds * 1_000_000))
    if "report_cards" in entry:
        if not isinstance(entry["report_cards"], bool):
            raise fail(f"key 'report_cards': must be true or false, got {entry['report_cards']!r}")
        overrides["report_cards"] = entry["report_cards"]

    if any(key in entry for key in _FAULT_KEYS):
        overrides["faults"] = _faults(entry, fail)

    tables = integer("tables", 1, MAX_UNITS)
    baudrate = integer("baudrate", 1, 10_000_000)
    try:
        table = SimTableConfig(game=game, **overrides)
        return GatewaySpec(
            game=game,
            tables=4 if tables is None else tables,
            host=text("host") or DEFAULT_HOST,
            port=port,  # None: the game's default port, unless serial_port is given
            serial_port=serial_port,
            baudrate=19200 if baudrate is None else baudrate,
            table=table if overrides else None,
            name=text("name") or "",
        )
    except FaultError as exc:  # a fault the game or the seats cannot have
        raise fail(f"key {exc.key!r}: {exc.message}") from exc
    except ValueError as exc:  # a rule of SimTableConfig or GatewaySpec not checked above
        raise fail(str(exc)) from exc


def _faults(entry: Mapping[str, Any], fail: _Fail) -> TableFaults:
    """The gateway's fault keys as a TableFaults; types here, the rest in TableFaults."""

    def hand(key: str, value: object) -> HandCategory:
        if not isinstance(value, str) or value not in _HANDS:
            raise fail(f"key {key!r}: {value!r} is not a hand; one of {', '.join(_HANDS)}")
        return _HANDS[value]

    def number(key: str, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise fail(f"key {key!r}: must be a number, got {value!r}")
        return float(value)

    def seat(key: str) -> int | None:
        value = entry.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise fail(f"key {key!r}: must be a seat number, got {value!r}")
        return value

    rigged: tuple[HandCategory, float] | None = None
    if "rigged" in entry:
        table = entry["rigged"]
        if not isinstance(table, dict):
            raise fail(
                f"key 'rigged': must be a table, e.g. {{ hand = \"royal_flush\", factor = 20 }}, "
                f"got {table!r}"
            )
        _refuse_unknown(table, _RIGGED_KEYS, fail, "in 'rigged'")
        for key in _RIGGED_KEYS:
            if key not in table:
                raise fail(f"key 'rigged.{key}' is missing")
        rigged = hand("rigged.hand", table["hand"]), number("rigged.factor", table["factor"])
    unreported = entry.get("unreported_hand")
    try:
        return TableFaults(
            rigged=None if rigged is None else RiggedHand(hand=rigged[0], factor=rigged[1]),
            dead_sensor_seat=seat("dead_sensor_seat"),
            stuck_sensor_seat=seat("stuck_sensor_seat"),
            false_claims_per_round=number(
                "false_claims_per_round", entry.get("false_claims_per_round", 0)
            ),
            late_bets_per_round=number("late_bets_per_round", entry.get("late_bets_per_round", 0)),
            unreported_hand=None if unreported is None else hand("unreported_hand", unreported),
        )
    except FaultError as exc:
        raise fail(f"key {exc.key!r}: {exc.message}") from exc


def _refuse_clashes(gateways: list[GatewaySpec], fail: _Fail) -> None:
    names: dict[str, int] = {}
    addresses: dict[object, int] = {}
    for number, spec in enumerate(gateways, start=1):
        if spec.name in names:
            raise fail(
                f"[[gateway]] #{number}: name {spec.name!r} is already used by [[gateway]] "
                f"#{names[spec.name]}; give one of them a key 'name' of its own"
            )
        names[spec.name] = number
        if spec.port == 0:
            continue
        address = spec.serial_port if spec.serial_port is not None else (spec.host, spec.port)
        if address in addresses:
            if spec.serial_port is not None:
                what = f"key 'serial_port': {spec.serial_port}"
            else:
                what = f"key 'port': {spec.host}:{spec.port}"
            raise fail(
                f"[[gateway]] #{number}: {what} is already used by [[gateway]] "
                f"#{addresses[address]}"
            )
        addresses[address] = number
