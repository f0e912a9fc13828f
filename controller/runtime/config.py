"""The configuration of a floor for ``progressive run --config FILE`` (TOML).

Buses are the physical links (a TCP gateway, a serial line); links group tables; each table
names its bus and unit id. Money and rates are written as people write them (``$1``,
``82.5%``) and parsed exactly. The whole file is checked before anything is made of it: every
problem is collected and refused together, each naming its place in the file and the rule.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from controller.runtime.config_entries import (
    OFFLINE_AFTER_FAILURES,
    BusConfig,
    FloorConfig,
    LinkEntry,
    Seen,
    read_bus,
    read_link,
)
from controller.runtime.config_sections import ConfigError, Problems, Section

__all__ = ["load_floor_config", "parse_floor_config"]


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
    problems = Problems()
    top = Section(problems, dict(data), "", {"controller", "bus", "link"})
    settings = top.get("controller", dict, {}) or {}
    ctl = Section(problems, settings, "controller", {"offline_after_failures"})
    offline_after = ctl.get("offline_after_failures", int, 3, within=OFFLINE_AFTER_FAILURES)
    buses: dict[str, BusConfig | None] = {}
    for i, raw in enumerate(top.get("bus", list, []) or [], start=1):
        read_bus(problems, i, raw, buses)
    links: list[LinkEntry] = []
    read = Seen()
    for i, raw in enumerate(top.get("link", list, []) or [], start=1):
        link = read_link(problems, i, raw, buses, read)
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
