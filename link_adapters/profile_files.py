"""Loading register-map profiles: the bundled ones by name, any other from a JSON file, each
refused with the file and the key at fault when it is no usable map.
"""

from __future__ import annotations

import json
from dataclasses import fields
from importlib import resources
from pathlib import Path
from typing import Any, Final

from link_adapters.profile_map import (
    BUNDLED_DIR,
    DEFAULT_PROFILE,
    U16_MAX,
    Profile,
    ProfileError,
    int_in,
)

__all__ = ["bundled_profiles", "load_profile", "profile_from_dict"]

_FILE_KEYS: Final = tuple(f.name for f in fields(Profile) if f.init)
_OPTIONAL_FILE_KEYS: Final = frozenset(
    {"description", "read_write", "has_level", "max_cards", "hand_codes"}
)


def bundled_profiles() -> tuple[str, ...]:
    """Names of the profiles shipped in ``link_adapters/profiles/``."""
    folder = resources.files(__package__ or "link_adapters") / BUNDLED_DIR
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
        entry = resources.files(__package__ or "link_adapters") / BUNDLED_DIR
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
    return int_in(key, value, 0, U16_MAX)
