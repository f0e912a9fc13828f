"""A register-map profile: where one table controller model keeps each field of the reference
map, its word order and which optional parts it has, checked whoever builds it.

A profile is a data file (``link_adapters/profiles/*.json``, or any JSON file given by path)
naming the absolute holding-register address of every logical field of the reference map
(shared/DESIGN.md, "Reference table-controller register map, v1"; docs/register-map-v2.md),
the word order of its 32-bit values and which optional parts (per-seat counters, card codes,
map v2's level and seven cards) the model has. The JSON is the only place addresses are
written down; this package knows field names and widths only.

Loading a profile from its file is ``link_adapters.profile_files``; decoding a block read with
it is ``link_adapters.profile_decoding``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from itertools import pairwise
from types import MappingProxyType
from typing import Final, get_args

from link_adapters.register_map import HAND_CODE_TABLES, HandCodes, WordOrder

__all__ = [
    "BUNDLED_DIR",
    "CARDS_FIELD",
    "CARD_COUNT",
    "CARD_COUNT_FIELD",
    "CARD_NOT_REPORTED",
    "DEFAULT_PROFILE",
    "LEVEL_FIELD",
    "MAX_CARDS",
    "MAX_READ_COUNT",
    "MAX_SEATS",
    "MORE_CARDS_FIELD",
    "PER_SEAT_FIELD",
    "U16_MAX",
    "Profile",
    "ProfileError",
    "int_in",
]

DEFAULT_PROFILE: Final = "reference-v1"
CARD_COUNT: Final = 5  # the cards of map v1 (head_cards): a five-card hand
MAX_CARDS: Final = 7  # the most cards map v2 reports (head_cards, then head_more_cards)
CARD_NOT_REPORTED: Final = 0xFFFF
MAX_SEATS: Final = 16  # the bet sensor bitmap is one 16-bit register
MAX_READ_COUNT: Final = 125  # the most registers one Modbus read (function 3) carries

U16_MAX: Final = 0xFFFF

# Fields of the read block, in the order of the reference map. u32 fields take two registers,
# head_cards five, head_more_cards two (cards 6 and 7), per_seat two per seat; every other
# field one.
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
CARDS_FIELD: Final = "head_cards"
PER_SEAT_FIELD: Final = "per_seat"
# Map v2 (docs/register-map-v2.md): the level the head hit is for (has_level), how many of
# up to seven cards are reported and cards 6-7 (max_cards 7).
LEVEL_FIELD: Final = "head_level"
CARD_COUNT_FIELD: Final = "head_card_count"
MORE_CARDS_FIELD: Final = "head_more_cards"
_KNOWN_FIELDS: Final = (
    *_REQUIRED_FIELDS,
    CARDS_FIELD,
    PER_SEAT_FIELD,
    LEVEL_FIELD,
    CARD_COUNT_FIELD,
    MORE_CARDS_FIELD,
)
# The optional fields, each with the setting that asks for it.
_FLAG_OF: Final = {
    CARDS_FIELD: "has_cards",
    PER_SEAT_FIELD: "has_per_seat",
    LEVEL_FIELD: "has_level",
    CARD_COUNT_FIELD: "max_cards",
    MORE_CARDS_FIELD: "max_cards",
}

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

BUNDLED_DIR: Final = "profiles"


class ProfileError(ValueError):
    """A profile file or a Profile's arguments are not a usable register map."""


def int_in(name: str, value: object, low: int, high: int) -> int:
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
    # Map v2: the head hit says its level; up to seven cards (5: map v1's five, no count);
    # the hand codes of map v2 (10 five aces, 11-15 the sevens) besides v1's 1-9.
    has_level: bool = False
    max_cards: int = CARD_COUNT
    hand_codes: HandCodes = 1
    _write_span: tuple[int, int] | None = dataclass_field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ProfileError(f"name: expected a non-empty string, got {self.name!r}")
        if not isinstance(self.description, str):
            raise ProfileError(f"description: expected a string, got {self.description!r}")
        int_in("profile_id", self.profile_id, 0, U16_MAX)
        int_in("version", self.version, 0, U16_MAX)
        int_in("read_start", self.read_start, 0, U16_MAX)
        int_in("read_count", self.read_count, 1, MAX_READ_COUNT)
        if self.read_start + self.read_count - 1 > U16_MAX:
            raise ProfileError(
                f"read_count: the block {self.read_start}-"
                f"{self.read_start + self.read_count - 1} runs past register {U16_MAX}"
            )
        if self.word_order not in get_args(WordOrder):
            raise ProfileError(
                f"word_order: expected 'high_first' or 'low_first', got {self.word_order!r}"
            )
        for flag in ("has_per_seat", "has_cards", "read_write", "has_level"):
            if not isinstance(getattr(self, flag), bool):
                raise ProfileError(f"{flag}: expected true or false, got {getattr(self, flag)!r}")
        int_in("seats", self.seats, 1, MAX_SEATS)
        if int_in("max_cards", self.max_cards, CARD_COUNT, MAX_CARDS) not in (
            CARD_COUNT,
            MAX_CARDS,
        ):
            raise ProfileError(
                f"max_cards: expected {CARD_COUNT} or {MAX_CARDS}, got {self.max_cards}"
            )
        if self.max_cards == MAX_CARDS and not self.has_cards:
            raise ProfileError(f"max_cards: {MAX_CARDS} cards need has_cards true")
        if isinstance(self.hand_codes, bool) or self.hand_codes not in HAND_CODE_TABLES:
            raise ProfileError(
                f"hand_codes: expected 1 (map v1) or 2 (map v2), got {self.hand_codes!r}"
            )
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
        if field == CARDS_FIELD:
            return CARD_COUNT
        if field == MORE_CARDS_FIELD:
            return MAX_CARDS - CARD_COUNT
        if field == PER_SEAT_FIELD:
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
        for field, flag in _FLAG_OF.items():
            if self._asks_for(field):
                expected.add(field)
            elif field in names:
                raise ProfileError(f"addresses.{field}: given, but {_setting(self, flag)}")
        for field in _KNOWN_FIELDS:
            if field in expected and field not in names:
                reason = (
                    "" if field in _REQUIRED_FIELDS else f" ({_setting(self, _FLAG_OF[field])})"
                )
                raise ProfileError(f"addresses.{field}: missing{reason}")
        block_end = self.read_start + self.read_count  # exclusive
        taken: list[tuple[int, int, str]] = []
        for field in _KNOWN_FIELDS:
            if field not in names:
                continue
            start = int_in(f"addresses.{field}", self.addresses[field], 0, U16_MAX)
            width = self.field_width(field)
            if start < self.read_start or start + width > block_end:
                raise ProfileError(
                    f"addresses.{field}: {_span(start, width)} lie outside the read block "
                    f"{self.read_start}-{block_end - 1} (read_start, read_count)"
                )
            taken.append((start, width, f"addresses.{field}"))
        _check_no_overlap(taken)

    def _asks_for(self, field: str) -> bool:
        flag = _FLAG_OF[field]
        if flag == "max_cards":
            return self.max_cards == MAX_CARDS
        return bool(getattr(self, flag))

    def _check_write_fields(self) -> None:
        taken: list[tuple[int, int, str]] = []
        for attribute, width in _WRITE_FIELDS:
            start = int_in(attribute, getattr(self, attribute), 0, U16_MAX - width + 1)
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


def _setting(profile: Profile, flag: str) -> str:
    """How a message names the setting that asks for a field, or not: "has_cards is true"."""
    value = getattr(profile, flag)
    return f"{flag} is {str(value).lower() if isinstance(value, bool) else value}"


def _check_no_overlap(taken: list[tuple[int, int, str]]) -> None:
    taken.sort()
    for (a_start, a_width, a_name), (b_start, b_width, b_name) in pairwise(taken):
        if b_start < a_start + a_width:
            raise ProfileError(
                f"{b_name}: {_span(b_start, b_width)} overlap {a_name} ({_span(a_start, a_width)})"
            )
