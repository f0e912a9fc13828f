"""Reading a floor file's settings: each TOML table read with its types and ranges, every
problem collected with its place and refused together (``ConfigError``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from controller.core.money import MoneyError, format_cents, parse_cents
from controller.refusal import Invalid
from controller.text import ID, ONE_LINE, TextRefused, TextRule

# Ids and names follow the rules for text wherever it enters (controller.text): ids short and
# plain, names printable with no control, bidirectional or invisible characters.


class ConfigError(Invalid):
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


class Problems:
    """Every problem of one file, each with its place."""

    def __init__(self) -> None:
        self.found: list[str] = []

    def add(self, where: str, problem: str) -> None:
        self.found.append(f"{where}: {problem}")

    def add_at(self, where: str, key: str, problem: str) -> None:
        """A problem of the setting ``key`` of the entry at ``where`` (its key path)."""
        self.add(f"{where}, {key}" if where else key, problem)


class Section:
    """One TOML table: its settings read with their types and ranges, unknown keys refused.

    A setting that is wrong is noted with its place and read as None; the caller goes on, so
    every problem of the file is found in one pass.
    """

    def __init__(self, problems: Problems, data: object, where: str, known: set[str]) -> None:
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
        if kind is bool and not isinstance(value, bool):
            self.bad(key, f"must be true or false, got {value!r}")
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
        """An amount written as people write it (``$1,234.56``, its ``$`` required), whole
        cents within bounds."""
        text = self.get(key, str, default)
        if text is None:
            return None
        try:
            cents = parse_cents(text, unit_required=True)
        except MoneyError as exc:
            self.bad(key, str(exc))
            return None
        if not low <= cents <= high:
            self.bad(key, f"must be {format_cents(low)} to {format_cents(high)}, got {text!r}")
            return None
        return cents


def label(kind: str, number: int, raw: object, key: str) -> str:
    """``link #2 'stud'``: the place of an entry, named by its id when that is one."""
    value = raw.get(key) if isinstance(raw, dict) else None
    return f"{kind} #{number}" + (f" {value!r}" if id_problem(value) is None else "")
