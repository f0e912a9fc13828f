"""Register-map profiles: where a table controller model keeps each field, and decoding a read.

A profile is a data file (``link_adapters/profiles/*.json``, or any JSON file given by path)
naming the absolute holding-register address of every logical field of the reference map
(shared/DESIGN.md, "Reference table-controller register map, v1"), the word order of its
32-bit values and which optional parts (per-seat counters, card codes) the model has. The JSON
is the only place addresses are written down; this module knows field names and widths only.

``decode`` turns one block read into a ``TableRegisters``. It refuses a table that does not
report the configured profile id and version (``ProfileMismatch``) before looking at anything
else: a counter read through the wrong map is a wrong number, and money follows counters.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from dataclasses import field as dataclass_field
from importlib import resources
from itertools import pairwise
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, NamedTuple, get_args

from link_adapters.errors import DeviceError, ProfileMismatch
from link_adapters.reading import HeadHit, TableRegisters
from link_adapters.register_map import WordOrder, hit_hand, status_flags, u32_words

__all__ = [
    "CARD_COUNT",
    "CARD_NOT_REPORTED",
    "DEFAULT_PROFILE",
    "HeadHit",
    "Profile",
    "ProfileError",
    "TableRegisters",
    "WordOrder",
    "bundled_profiles",
    "decode",
    "decode_words",
    "encode_u32",
    "load_profile",
    "profile_from_dict",
]

DEFAULT_PROFILE: Final = "reference-v1"
CARD_COUNT: Final = 5
CARD_NOT_REPORTED: Final = 0xFFFF
MAX_SEATS: Final = 16  # the bet sensor bitmap is one 16-bit register
MAX_READ_COUNT: Final = 125  # the most registers one Modbus read (function 3) carries

_U16_MAX: Final = 0xFFFF

# Fields of the read block, in the order of the reference map. u32 fields take two registers,
# head_cards five, per_seat two per seat; every other field one.
_REQUIRED_FIELDS: Final = (
    "profile_id",
    "version",
    "status",
    "rounds",
    "credits",
    "bet_bitmap",
    "pending_hits",
    "head_seq",
    "head_seat",
    "head_hand",
    "head_round",
)
_U32_FIELDS: Final = frozenset({"rounds", "credits", "head_seq", "head_round"})
_CARDS_FIELD: Final = "head_cards"
_PER_SEAT_FIELD: Final = "per_seat"
_KNOWN_FIELDS: Final = (*_REQUIRED_FIELDS, _CARDS_FIELD, _PER_SEAT_FIELD)

# Write side: (Profile attribute, registers). ack and meter are u32.
_WRITE_FIELDS: Final = (
    ("ack_address", 2),
    ("command_address", 1),
    ("meter_address", 2),
    ("heartbeat_address", 1),
)
# What every poll writes: everything but the acknowledgement. A table pops its head hit when
# the acknowledgement written equals the head's number, and any number may come round again
# (a first hit numbered 0, a table that restarts its numbering), so the acknowledgement is
# written only on its own, right after a read showed that head recorded (link_adapters.table).
_ROUTINE_WRITE_FIELDS: Final = _WRITE_FIELDS[1:]

_BUNDLED_DIR: Final = "profiles"


class ProfileError(ValueError):
    """A profile file or a Profile's arguments are not a usable register map."""


def _int_in(name: str, value: object, low: int, high: int) -> int:
    # bool is an int subclass, but `"seats": true` in a file is a mistake, not a 1.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProfileError(f"{name}: expected an integer, got {value!r}")
    if not low <= value <= high:
        raise ProfileError(f"{name}: {value} is outside {low}-{high}")
    return value


def _span(start: int, width: int) -> str:
    return f"register {start}" if width == 1 else f"registers {start}-{start + width - 1}"


@dataclass(frozen=True, kw_only=True, slots=True)
class Profile:
    """One controller model's register map. Arguments are checked here, whoever builds it."""

    name: str
    profile_id: int
    version: int
    read_start: int
    read_count: int
    word_order: WordOrder
    addresses: Mapping[str, int]
    has_per_seat: bool
    has_cards: bool
    seats: int
    ack_address: int
    command_address: int
    meter_address: int
    heartbeat_address: int
    # The controller answers function 23 (read/write multiple registers): a poll is then one
    # request that writes the whole write span and reads the block, half the round trips.
    read_write: bool = False
    description: str = ""
    _write_span: tuple[int, int] | None = dataclass_field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ProfileError(f"name: expected a non-empty string, got {self.name!r}")
        if not isinstance(self.description, str):
            raise ProfileError(f"description: expected a string, got {self.description!r}")
        _int_in("profile_id", self.profile_id, 0, _U16_MAX)
        _int_in("version", self.version, 0, _U16_MAX)
        _int_in("read_start", self.read_start, 0, _U16_MAX)
        _int_in("read_count", self.read_count, 1, MAX_READ_COUNT)
        if self.read_start + self.read_count - 1 > _U16_MAX:
            raise ProfileError(
                f"read_count: the block {self.read_start}-"
                f"{self.read_start + self.read_count - 1} runs past register {_U16_MAX}"
            )
        if self.word_order not in get_args(WordOrder):
            raise ProfileError(
                f"word_order: expected 'high_first' or 'low_first', got {self.word_order!r}"
            )
        for flag in ("has_per_seat", "has_cards", "read_write"):
            if not isinstance(getattr(self, flag), bool):
                raise ProfileError(f"{flag}: expected true or false, got {getattr(self, flag)!r}")
        _int_in("seats", self.seats, 1, MAX_SEATS)
        if not isinstance(self.addresses, Mapping):
            raise ProfileError(f"addresses: expected a mapping, got {self.addresses!r}")
        # A private copy: the caller's dict may change later; the profile may not.
        object.__setattr__(self, "addresses", MappingProxyType(dict(self.addresses)))
        self._check_read_fields()
        self._check_write_fields()
        object.__setattr__(self, "_write_span", self._find_write_span())
        if self.read_write and self.write_span is None:
            raise ProfileError(
                "read_write: one read/write request needs the command, meter and heartbeat "
                "registers to form one run"
            )

    # --- checks --------------------------------------------------------------------------

    def field_width(self, field: str) -> int:
        """Registers taken by a read field."""
        if field in _U32_FIELDS:
            return 2
        if field == _CARDS_FIELD:
            return CARD_COUNT
        if field == _PER_SEAT_FIELD:
            return 2 * self.seats
        return 1

    def _check_read_fields(self) -> None:
        names = set(self.addresses)
        unknown = sorted(names - set(_KNOWN_FIELDS))
        if unknown:
            raise ProfileError(
                f"addresses.{unknown[0]}: not a field of the register map "
                f"(known: {', '.join(_KNOWN_FIELDS)})"
            )
        expected = set(_REQUIRED_FIELDS)
        for flag, field in (("has_cards", _CARDS_FIELD), ("has_per_seat", _PER_SEAT_FIELD)):
            if getattr(self, flag):
                expected.add(field)
            elif field in names:
                raise ProfileError(f"addresses.{field}: given, but {flag} is false")
        for field in _KNOWN_FIELDS:
            if field in expected and field not in names:
                reason = "" if field in _REQUIRED_FIELDS else f" ({_flag_of(field)} is true)"
                raise ProfileError(f"addresses.{field}: missing{reason}")
        block_end = self.read_start + self.read_count  # exclusive
        taken: list[tuple[int, int, str]] = []
        for field in _KNOWN_FIELDS:
            if field not in names:
                continue
            start = _int_in(f"addresses.{field}", self.addresses[field], 0, _U16_MAX)
            width = self.field_width(field)
            if start < self.read_start or start + width > block_end:
                raise ProfileError(
                    f"addresses.{field}: {_span(start, width)} lie outside the read block "
                    f"{self.read_start}-{block_end - 1} (read_start, read_count)"
                )
            taken.append((start, width, f"addresses.{field}"))
        _check_no_overlap(taken)

    def _check_write_fields(self) -> None:
        taken: list[tuple[int, int, str]] = []
        for attribute, width in _WRITE_FIELDS:
            start = _int_in(attribute, getattr(self, attribute), 0, _U16_MAX - width + 1)
            taken.append((start, width, attribute))
        _check_no_overlap(taken)

    # --- the write side ------------------------------------------------------------------

    @property
    def write_span(self) -> tuple[int, int] | None:
        """(start, count) when command, meter and heartbeat tile one run of registers.

        Then a single write_registers request (or the write half of a read/write request)
        carries all three at every poll; otherwise each is written where it lives. The
        acknowledgement is never part of it.
        """
        return self._write_span

    def _find_write_span(self) -> tuple[int, int] | None:
        spans = sorted(
            (getattr(self, attribute), width) for attribute, width in _ROUTINE_WRITE_FIELDS
        )
        start = spans[0][0]
        at = start
        for address, width in spans:
            if address != at:
                return None
            at += width
        return start, at - start


def _flag_of(field: str) -> str:
    return "has_cards" if field == _CARDS_FIELD else "has_per_seat"


def _check_no_overlap(taken: list[tuple[int, int, str]]) -> None:
    taken.sort()
    for (a_start, a_width, a_name), (b_start, b_width, b_name) in pairwise(taken):
        if b_start < a_start + a_width:
            raise ProfileError(
                f"{b_name}: {_span(b_start, b_width)} overlap {a_name} ({_span(a_start, a_width)})"
            )


# --- loading -------------------------------------------------------------------------------

_FILE_KEYS: Final = tuple(f.name for f in fields(Profile) if f.init)
_OPTIONAL_FILE_KEYS: Final = frozenset({"description", "read_write"})


def bundled_profiles() -> tuple[str, ...]:
    """Names of the profiles shipped in ``link_adapters/profiles/``."""
    folder = resources.files(__package__ or "link_adapters") / _BUNDLED_DIR
    return tuple(
        sorted(
            entry.name.removesuffix(".json")
            for entry in folder.iterdir()
            if entry.name.endswith(".json") and entry.is_file()
        )
    )


def load_profile(name_or_path: str = DEFAULT_PROFILE) -> Profile:
    """A bundled profile by name (``"reference-v1"``) or a JSON file by path.

    Anything wrong raises ProfileError naming the file and the key at fault.
    """
    if not isinstance(name_or_path, str) or not name_or_path:
        raise ProfileError(f"a profile is named by a non-empty string, got {name_or_path!r}")
    text, source = _read_profile_text(name_or_path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProfileError(
            f"profile file {source}: not valid JSON (line {exc.lineno}, column {exc.colno}: "
            f"{exc.msg})"
        ) from None
    try:
        return profile_from_dict(data)
    except ProfileError as exc:
        raise ProfileError(f"profile file {source}: {exc}") from None


def _read_profile_text(name_or_path: str) -> tuple[str, str]:
    looks_like_path = "/" in name_or_path or "\\" in name_or_path or name_or_path.endswith(".json")
    if not looks_like_path:
        entry = resources.files(__package__ or "link_adapters") / _BUNDLED_DIR
        entry = entry / f"{name_or_path}.json"
        if not entry.is_file():
            raise ProfileError(
                f"no bundled profile is named {name_or_path!r} (bundled: "
                f"{', '.join(bundled_profiles())}); give the path of a JSON file for another"
            )
        return entry.read_text(encoding="utf-8"), str(entry)
    path = Path(name_or_path)
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except OSError as exc:
        raise ProfileError(f"profile file {path}: cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ProfileError(f"profile file {path}: is not UTF-8 text") from None


def profile_from_dict(data: object) -> Profile:
    """A Profile from the decoded JSON of a profile file; keys are Profile's field names.

    ``profile_id`` may also be written as a hex string ("0x5450"), as the map documents it.
    """
    if not isinstance(data, dict):
        raise ProfileError(f"expected a JSON object at the top, got {type(data).__name__}")
    unknown = sorted(set(data) - set(_FILE_KEYS))
    if unknown:
        raise ProfileError(f"unknown key {unknown[0]!r} (known: {', '.join(_FILE_KEYS)})")
    missing = [key for key in _FILE_KEYS if key not in data and key not in _OPTIONAL_FILE_KEYS]
    if missing:
        raise ProfileError(f"key {missing[0]!r} is missing")
    values: dict[str, Any] = dict(data)
    values["profile_id"] = _parse_register_value("profile_id", data["profile_id"])
    addresses = data["addresses"]
    if not isinstance(addresses, dict):
        raise ProfileError(f"addresses: expected an object of field: address, got {addresses!r}")
    return Profile(**values)


def _parse_register_value(key: str, value: object) -> int:
    if isinstance(value, str):
        text = value.strip().lower()
        if not text.startswith("0x"):
            raise ProfileError(f"{key}: expected an integer or a hex string like '0x5450'")
        try:
            return int(text, 16)
        except ValueError:
            raise ProfileError(f"{key}: {value!r} is not a hex number") from None
    return _int_in(key, value, 0, _U16_MAX)


# --- decoding ------------------------------------------------------------------------------


def encode_u32(profile: Profile, value: int) -> list[int]:
    """Two registers carrying ``value`` in the profile's word order."""
    return u32_words(value, profile.word_order)


def decode(profile: Profile, block: Sequence[int], *, table: str = "") -> TableRegisters:
    """The registers of one read of ``profile.read_start``/``read_count``, decoded.

    Raises ProfileMismatch when the table reports another profile id or version, and
    DeviceError when a value cannot be what the map allows (a head hit at a seat the table
    does not have, a card code that is no card). Messages name ``table``, the address and the
    value read. Raises ValueError when ``block`` is not ``read_count`` values 0-65535.
    """
    if len(block) != profile.read_count:
        raise ValueError(
            f"profile {profile.name} decodes {profile.read_count} registers, got {len(block)}"
        )
    for offset, word in enumerate(block):
        if type(word) is not int or not 0 <= word <= _U16_MAX:  # not a bool either
            raise ValueError(
                f"register {profile.read_start + offset} holds {word!r}, not a value 0-65535"
            )
    return decode_words(profile, block, table=table)


def decode_words(profile: Profile, words: Sequence[int], *, table: str = "") -> TableRegisters:
    """``decode`` of a block known to hold ``read_count`` ints 0-65535, as a Modbus link
    hands back (the registers of an answer are unpacked from 16-bit fields): the block is
    not checked again, every value it holds is."""
    plan = _plan_of(profile)
    if (found := words[plan.profile_id]) != profile.profile_id:
        raise ProfileMismatch(
            f"{_where(table)}address {profile.addresses['profile_id']} reads 0x{found:04X}, "
            f"expected profile id 0x{profile.profile_id:04X}"
        )
    if (found := words[plan.version]) != profile.version:
        raise ProfileMismatch(
            f"{_where(table)}address {profile.addresses['version']} reads {found}, expected "
            f"profile version {profile.version}"
        )
    first, second = plan.u32_order
    pending = words[plan.pending]
    head = _decode_head(profile, _BlockReader(profile, words), _where(table)) if pending else None
    per_seat = None
    if plan.per_seat is not None:
        start, end, as_words, as_u32 = plan.per_seat
        # Unpacked in C: the seats' words packed in the profile's word order, read as u32s.
        per_seat = as_u32.unpack(as_words.pack(*words[start:end]))
    rounds, credits = plan.rounds, plan.credits
    # Positional, in the field order of TableRegisters: one is built at every poll.
    return TableRegisters(
        profile.profile_id,
        profile.version,
        status_flags(words[plan.status]),
        words[rounds + first] << 16 | words[rounds + second],
        words[credits + first] << 16 | words[credits + second],
        words[plan.bet_bitmap],
        pending,
        head,
        per_seat,
    )


def _where(table: str) -> str:
    return f"table {table}: " if table else ""


class _Plan(NamedTuple):
    """Where each field of a profile sits in its read block (offsets, not addresses)."""

    profile_id: int
    version: int
    status: int
    rounds: int
    credits: int
    bet_bitmap: int
    pending: int
    # The per-seat counters: (first offset, end offset, their words as 16-bit fields, the
    # same bytes as 32-bit fields), both in the profile's byte order.
    per_seat: tuple[int, int, struct.Struct, struct.Struct] | None
    u32_order: tuple[int, int]  # offsets of the high and the low word within a u32


_PLANS: dict[int, tuple[Profile, _Plan]] = {}


def _plan_of(profile: Profile) -> _Plan:
    known = _PLANS.get(id(profile))
    if known is not None and known[0] is profile:
        return known[1]
    start = profile.read_start

    def offset(field: str) -> int:
        return profile.addresses[field] - start

    per_seat = None
    if profile.has_per_seat:
        seats, first = profile.seats, offset(_PER_SEAT_FIELD)
        order = ">" if profile.word_order == "high_first" else "<"
        per_seat = (
            first,
            first + 2 * seats,
            struct.Struct(f"{order}{2 * seats}H"),
            struct.Struct(f"{order}{seats}I"),
        )
    plan = _Plan(
        profile_id=offset("profile_id"),
        version=offset("version"),
        status=offset("status"),
        rounds=offset("rounds"),
        credits=offset("credits"),
        bet_bitmap=offset("bet_bitmap"),
        pending=offset("pending_hits"),
        per_seat=per_seat,
        u32_order=(0, 1) if profile.word_order == "high_first" else (1, 0),
    )
    if len(_PLANS) > 256:  # profiles are few; never grow without bound
        _PLANS.clear()
    _PLANS[id(profile)] = (profile, plan)
    return plan


def _decode_head(profile: Profile, reader: _BlockReader, where: str) -> HeadHit:
    seat = reader.u16("head_seat")
    if not 1 <= seat <= profile.seats:
        raise DeviceError(
            f"{where}head hit seat (address {profile.addresses['head_seat']}) reads {seat}, "
            f"expected 1-{profile.seats}"
        )
    cards: tuple[int, ...] | None = None
    if profile.has_cards:
        start = profile.addresses[_CARDS_FIELD]
        codes = tuple(reader.at(start + index) for index in range(CARD_COUNT))
        if CARD_NOT_REPORTED not in codes:
            for index, code in enumerate(codes):
                if not 0 <= code <= 51:
                    raise DeviceError(
                        f"{where}head hit card (address {start + index}) reads {code}, "
                        f"expected a card code 0-51 or 0xFFFF (not reported)"
                    )
            cards = codes
    return HeadHit(
        seq=reader.u32("head_seq"),
        seat=seat,
        hand=hit_hand(reader.u16("head_hand")),
        round=reader.u32("head_round"),
        cards=cards,
    )


class _BlockReader:
    """Registers of a block by absolute address, 32-bit values in the profile's word order."""

    __slots__ = ("_block", "_high_first", "_profile")

    def __init__(self, profile: Profile, block: Sequence[int]) -> None:
        self._profile = profile
        self._block = block
        self._high_first = profile.word_order == "high_first"

    def at(self, address: int) -> int:
        return self._block[address - self._profile.read_start]

    def u16(self, field: str) -> int:
        return self.at(self._profile.addresses[field])

    def u32_at(self, address: int) -> int:
        first, second = self.at(address), self.at(address + 1)
        high, low = (first, second) if self._high_first else (second, first)
        return high << 16 | low

    def u32(self, field: str) -> int:
        return self.u32_at(self._profile.addresses[field])
