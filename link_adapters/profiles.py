"""Register-map profiles: where a table controller model keeps each field, and decoding a read.

A profile is a data file (``link_adapters/profiles/*.json``, or any JSON file given by path)
naming the absolute holding-register address of every logical field of the reference map
(shared/DESIGN.md, "Reference table-controller register map, v1"; docs/register-map-v2.md),
the word order of its 32-bit values and which optional parts (per-seat counters, card codes,
map v2's level and seven cards) the model has. The JSON
is the only place addresses are written down; this package knows field names and widths only.

The profile itself is ``link_adapters.profile_map``, loading it ``link_adapters.profile_files``
and decoding with it ``link_adapters.profile_decoding``; this module names them all.

``decode`` turns one block read into a ``TableRegisters``. It refuses a table that does not
report the configured profile id and version (``ProfileMismatch``) before looking at anything
else: a counter read through the wrong map is a wrong number, and money follows counters.
"""

from __future__ import annotations

from link_adapters.profile_decoding import decode, decode_words, encode_u32
from link_adapters.profile_files import bundled_profiles, load_profile, profile_from_dict
from link_adapters.profile_map import (
    CARD_COUNT,
    CARD_NOT_REPORTED,
    DEFAULT_PROFILE,
    MAX_CARDS,
    MAX_READ_COUNT,
    MAX_SEATS,
    Profile,
    ProfileError,
    WordOrder,
)
from link_adapters.reading import HeadHit, TableRegisters

__all__ = [
    "CARD_COUNT",
    "CARD_NOT_REPORTED",
    "DEFAULT_PROFILE",
    "MAX_CARDS",
    "MAX_READ_COUNT",
    "MAX_SEATS",
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
