"""The layers hold: ``link_adapters`` -> ``controller`` -> ``app``, and a pure core.

A connection library knows nothing of what a reading means, the controller nothing of the web,
and the rules that decide money (the meter, the hands, the paytables, the chain of seals) do no
I/O, so they can be read, tested and certified alone; storage alone speaks SQL. Every import
counts, those inside a function too. The checker is itself tested on module texts that break
each contract.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "controller", "link_adapters")

# The rules that decide money: every module of the core package. Each may import only modules
# that are themselves pure, however deep: a controller module is pure when nothing it reaches
# imports I/O.
PURE_CORE = "controller.core"
# The core's modules that must stay where a reader looks for them.
CORE_MODULES = ("money", "hands", "games", "reducer", "ledger", "state_seal", "verification")
# The rulebook and its jurisdictions: they import the core (its money, games and levels), the
# core never imports them; it is handed the law in force as a value (controller.core.law).
RULEBOOK = "controller.rules"
# Libraries that reach outside the process or read its clock and randomness.
IO = (
    "aiosqlite",
    "app",
    "asyncio",
    "asyncpg",
    "concurrent",
    "fastapi",
    "http",
    "httpx",
    "io",
    "link_adapters",
    "logging",
    "os",
    "pathlib",
    "pymodbus",
    "random",
    "secrets",
    "serial",
    "shutil",
    "socket",
    "sqlalchemy",
    "starlette",
    "subprocess",
    "tempfile",
    "threading",
    "time",
    "urllib",
    "uvicorn",
)
# Storage owns the SQL: elsewhere only the types of an engine and a connection, and the
# database's errors, may be named.
STORAGE = "controller.storage"
SQL_NAMED_OUTSIDE = ("sqlalchemy.ext.asyncio", "sqlalchemy.exc")
# Only the simulator may import the pure game rules: it deals real hands to real paytables.
SIMULATOR = "link_adapters.simulator"
GAME_RULES = ("controller.core.hands", "controller.core.games")


def within(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def imports_of(source: str, module: str, *, package: bool = False) -> set[str]:
    """Every name a module imports, anywhere in it, as full dotted names (``from a import b``
    gives ``a.b``; relative imports are resolved against ``module``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if package else module.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            found.update(
                base if alias.name == "*" else f"{base}.{alias.name}" for alias in node.names
            )
    return found


def tree_imports() -> dict[str, set[str]]:
    return {name: set(imported) for name, imported in _read_tree().items()}


@functools.cache
def _read_tree() -> dict[str, frozenset[str]]:
    modules: dict[str, set[str]] = {}
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if package else parts)
            modules[name] = frozenset(imports_of(path.read_text(), name, package=package))
    return modules


def impure(modules: Mapping[str, set[str]]) -> dict[str, str]:
    """Controller modules that reach I/O, each with the import that makes it so."""
    found: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for name, imported in modules.items():
            if not name.startswith("controller") or name in found:
                continue
            for imp in sorted(imported):
                target = next((m for m in found if within(imp, [m])), None)
                if within(imp, IO) or target is not None:
                    found[name] = imp if target is None else f"{imp} ({found[target]})"
                    changed = True
                    break
    return found


def violations(modules: Mapping[str, set[str]]) -> list[str]:
    problems: list[str] = []
    reaches_io = impure(modules)
    for name, imported in sorted(modules.items()):
        for imp in sorted(imported):
            if name.startswith("link_adapters"):
                if within(imp, ("app", "sqlalchemy", "controller.storage")):
                    problems.append(f"{name} imports {imp}: link_adapters stays below them")
                elif within(imp, ("controller",)) and not (
                    within(name, [SIMULATOR]) and within(imp, GAME_RULES)
                ):
                    problems.append(
                        f"{name} imports {imp}: only the simulator imports the pure game rules"
                    )
            if (
                within(imp, ("sqlalchemy",))
                and not within(name, [STORAGE])
                and not within(imp, SQL_NAMED_OUTSIDE)
                and not name.startswith("link_adapters")
            ):
                problems.append(f"{name} imports {imp}: SQL lives in {STORAGE}")
            if name.startswith("controller") and within(imp, ("app",)):
                problems.append(f"{name} imports {imp}: the controller knows nothing of app")
            if within(name, [PURE_CORE]) and within(imp, [RULEBOOK]):
                problems.append(
                    f"{name} imports {imp}: the core takes the law as a value handed in "
                    "(controller.core.law), it never imports the rulebook"
                )
        if within(name, [PURE_CORE]) and name in reaches_io:
            problems.append(f"{name} is not pure: it imports {reaches_io[name]}")
    return problems


def test_the_tree_keeps_its_layers() -> None:
    modules = tree_imports()
    missing = [m for m in CORE_MODULES if f"{PURE_CORE}.{m}" not in modules]
    assert missing == [], f"pure core modules moved or renamed: {missing}"
    assert violations(modules) == []


@pytest.mark.parametrize(
    ("module", "source", "refused"),
    [
        ("link_adapters.modbus", "from app.web import create_app", "link_adapters.modbus imports"),
        (
            "link_adapters.table",
            "def f():\n    import controller.core.reducer\n",
            "only the simulator",
        ),
        ("link_adapters.simulator.table", "from controller import runtime", "only the simulator"),
        ("link_adapters.simulator.server", "from controller.storage import store", "stays below"),
        ("link_adapters.profile_map", "import sqlalchemy", "stays below"),
        (
            "controller.runtime.poller",
            "def f():\n    from app import metrics\n",
            "knows nothing of app",
        ),
        ("controller.core.money", "import asyncio", "controller.core.money is not pure"),
        ("controller.runtime.link_locks", "from sqlalchemy import text", "SQL lives in"),
        ("app.api.links", "def f():\n    from sqlalchemy import select\n", "SQL lives in"),
        (
            "controller.core.hands",
            "from ..storage import store",
            "controller.core.hands is not pure",
        ),
        (
            "controller.core.reducer",
            "from controller.runtime.links import LinkRuntime",
            "reducer is not pure",
        ),
        (
            "controller.core.reducer.configuration",
            "from controller.rules.progression import check_rate_of_progression",
            "never imports the rulebook",
        ),
        (
            "controller.core.games.let_it_ride",
            "def f():\n    from controller.rules import wagers\n",
            "never imports the rulebook",
        ),
        # Pure in itself, but the clock it imports reads the time: the core may not import it.
        (
            "controller.core.ledger",
            "from controller.runtime.clock import Clock",
            "ledger is not pure",
        ),
    ],
)
def test_an_added_forbidden_import_is_refused(module: str, source: str, refused: str) -> None:
    modules = tree_imports()
    modules[module] = modules[module] | imports_of(source, module)
    assert any(refused in problem for problem in violations(modules)), violations(modules)


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("link_adapters.simulator.table", "from controller.core.hands import evaluate"),
        ("link_adapters.simulator.config", "from controller.core import games"),
        ("controller.core.games", "from . import money"),
        ("controller.rules.pools", "from controller.core.reducer.levels import LevelConfig"),
        ("controller.storage.hits", "from sqlalchemy import select"),
        ("controller.runtime.service", "from sqlalchemy.ext.asyncio import AsyncEngine"),
        ("app.web", "from sqlalchemy.exc import DBAPIError"),
        (
            "controller.core.reducer",
            "import hashlib\nfrom controller.core.hands import HandCategory",
        ),
    ],
)
def test_an_allowed_import_is_not_refused(module: str, source: str) -> None:
    modules = tree_imports()
    modules[module] = modules[module] | imports_of(source, module)
    assert violations(modules) == []
