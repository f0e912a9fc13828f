"""The layers hold: ``link_adapters`` -> ``controller`` -> ``app``, and a pure core.

A connection library knows nothing of what a reading means, the controller nothing of the web,
and the rules that decide money (the meter, the hands, the paytables, the chain of seals) do no
I/O, so they can be read, tested and certified alone; storage alone speaks SQL. Every import
counts, those inside a function too. The checker is itself tested on module texts that break
each contract.

No module imports itself through others: the import graph of the three packages has no
circle, and inside the controller each part stands on a floor (``CONTROLLER_FLOORS``) and
imports only the parts on floors below it. For both, an import made only for the type checker
(under ``if TYPE_CHECKING:``) counts too: the type it names is needed all the same
(``import_graph``).
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
# Storage owns the SQL: elsewhere its own handles (``controller.storage.handles``) and errors
# are named, never the driver's, and a connection or a transaction is opened by storage only
# (``controller.storage.unit_of_work``).
STORAGE = "controller.storage"
# Only the simulator may import the pure game rules: it deals real hands to real paytables.
SIMULATOR = "link_adapters.simulator"
GAME_RULES = ("controller.core.hands", "controller.core.games")
# The controller's parts, lowest floor first. A module imports modules of its own part and of
# parts on lower floors only; parts on one floor know nothing of each other. The refusals
# (``controller.refusal``) stand on nothing, so that every part refuses with them; the core,
# the rules for text taken in and the roles people act in on the refusals; the rulebook on the
# core; the periods asked of the records and the software's manifest on the rulebook; storage
# (the SQL) on those; the settings on storage (their database); the accounts on storage; the
# paperwork on all of these; on top the runtime, which drives the links and runs the
# paperwork's jobs. What the paperwork needs of the runtime it names as protocols of its own
# (``controller.paperwork.links``, ``controller.paperwork.jobs``), which the runtime fits.
CONTROLLER_FLOORS: tuple[tuple[str, ...], ...] = (
    ("refusal",),
    ("core", "roles", "text"),
    ("rules",),
    ("manifest", "periods", "schedule"),
    ("storage",),
    ("settings",),
    ("access",),
    ("paperwork",),
    ("runtime",),
)


def within(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST, *, typing: bool) -> Iterable[ast.AST]:
    """Every node of ``tree``; without ``typing``, none of an ``if TYPE_CHECKING:`` body."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if not typing and isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
        else:
            stack.extend(ast.iter_child_nodes(node))


def imports_of(source: str, module: str, *, package: bool = False, typing: bool = True) -> set[str]:
    """Every name a module imports, anywhere in it, as full dotted names (``from a import b``
    gives ``a.b``; relative imports are resolved against ``module``). Without ``typing``, the
    imports made only for the type checker (under ``if TYPE_CHECKING:``) are left out: those
    that run when the module is imported."""
    found: set[str] = set()
    for node in _nodes(ast.parse(source), typing=typing):
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


def tree_imports(*, typing: bool = True) -> dict[str, set[str]]:
    """Every module of the tree and what it imports (without ``typing``: what runs)."""
    return {name: set(imported) for name, imported in _read_tree(typing).items()}


@functools.cache
def _read_tree(typing: bool) -> dict[str, frozenset[str]]:
    modules: dict[str, frozenset[str]] = {}
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if package else parts)
            found = imports_of(path.read_text(), name, package=package, typing=typing)
            modules[name] = frozenset(found)
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


def imported_module(name: str, modules: Iterable[str]) -> str | None:
    """The module of the tree an imported name is, or is in: the longest of ``modules`` the
    name starts with (``from pkg import sub`` is the module ``pkg.sub`` where there is one, and
    otherwise the package ``pkg``, whose ``__init__`` defines or re-exports ``sub``); None for
    a name from outside the tree."""
    known = modules if isinstance(modules, (set, frozenset, dict)) else set(modules)
    parts = name.split(".")
    while parts:
        if (candidate := ".".join(parts)) in known:
            return candidate
        parts.pop()
    return None


def packages_above(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def import_graph(
    imports: Mapping[str, Iterable[str]], runs: Mapping[str, Iterable[str]] | None = None
) -> dict[str, set[str]]:
    """The modules of the tree each module needs, from what it imports (``imports_of``).

    Every import needs the module it names, an import made only for the type checker too: a
    type named is a dependency all the same. An import that runs (``runs``: each module's
    imports outside ``if TYPE_CHECKING:``, by default all of them) first runs each package
    above the module it names, ``__init__`` and all it imports, and needs those packages too,
    except the importer's own (already being imported when the importer runs). So a package
    whose ``__init__`` imports its submodules makes no circle with them, a submodule that
    takes a name from its package's ``__init__`` needs the ``__init__``, and a module
    elsewhere that imports one submodule needs the whole ``__init__``."""
    names = set(imports)
    graph: dict[str, set[str]] = {}
    for module, imported in imports.items():
        own = set(packages_above(module))
        ran = set(imported if runs is None else runs.get(module, ()))
        needs: set[str] = set()
        for name in imported:
            target = imported_module(name, names)
            if target is None:
                continue
            needs.add(target)
            if name in ran:
                needs.update(p for p in packages_above(target) if p in names and p not in own)
        needs.discard(module)
        graph[module] = needs
    return graph


def circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The circles of modules: the strongly connected components of more than one module
    (Tarjan's algorithm), each sorted, the list sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in sorted(graph.get(module, ())):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component: list[str] = []
            while not component or component[-1] != module:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def circle_problems(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Each circle, with the imports that close it."""
    problems: list[str] = []
    for circle in circles(graph):
        inside = set(circle)
        steps = "; ".join(
            f"{m} imports {', '.join(sorted(set(graph.get(m, ())) & inside))}" for m in circle
        )
        problems.append(f"a circle of {len(circle)} modules: {steps}")
    return problems


def part_of(module: str) -> str | None:
    """The controller's part a module is in (``controller.<part>...``); None outside it, and
    for the ``controller`` package itself."""
    parts = module.split(".")
    return parts[1] if parts[0] == "controller" and len(parts) > 1 else None


def floor_of(part: str) -> int | None:
    return next((i for i, floor in enumerate(CONTROLLER_FLOORS) if part in floor), None)


def floor_problems(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Controller modules that import a part on their own floor or above, or stand on none."""
    problems: list[str] = []
    for module, needs in sorted(graph.items()):
        if (part := part_of(module)) is None:
            continue
        floor = floor_of(part)
        if floor is None:
            problems.append(f"{module} is on no floor: name controller.{part} in CONTROLLER_FLOORS")
            continue
        for other in sorted(needs):
            theirs = part_of(other)
            if theirs is None or theirs == part or (their_floor := floor_of(theirs)) is None:
                continue  # outside the controller, its own part, or said of that part's modules
            if their_floor > floor:
                problems.append(
                    f"{module} imports {other}: controller.{part} stands below controller.{theirs}"
                )
            elif their_floor == floor:
                problems.append(
                    f"{module} imports {other}: controller.{part} and controller.{theirs} "
                    "share a floor and know nothing of each other"
                )
    return problems


def tree_graph(*, packages_run: bool = True) -> dict[str, set[str]]:
    """The tree's import graph; without ``packages_run``, only the modules each import names
    (not the packages above them that it runs), as the floors are judged."""
    return import_graph(tree_imports(), tree_imports(typing=False) if packages_run else {})


def graph_of(sources: Mapping[str, str]) -> dict[str, set[str]]:
    """The import graph of modules given by their text (``pkg.__init__`` for a package)."""
    imports: dict[str, set[str]] = {}
    runs: dict[str, set[str]] = {}
    for key, source in sources.items():
        package = key.endswith(".__init__")
        name = key.removesuffix(".__init__")
        imports[name] = imports_of(source, name, package=package)
        runs[name] = imports_of(source, name, package=package, typing=False)
    return import_graph(imports, runs)


TYPE_ONLY = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    {}\n"


@pytest.mark.parametrize(
    ("sources", "found"),
    [
        # Two modules that import each other.
        ({"m.a": "from m.b import f", "m.b": "from m.a import g"}, [["m.a", "m.b"]]),
        # An import inside a function counts.
        (
            {"m.a": "from m.b import f", "m.b": "def g():\n    from m.a import h\n"},
            [["m.a", "m.b"]],
        ),
        # So does an import made only for the type checker: the type is needed all the same.
        (
            {"m.a": "from m.b import f", "m.b": TYPE_ONLY.format("from m.a import A")},
            [["m.a", "m.b"]],
        ),
        # Round three modules, one import relative; a fourth module outside the circle.
        (
            {
                "x.a": "import x.b",
                "x.b": "from x import c",
                "x.c": "from . import a",
                "x.d": "from x.a import f",
            },
            [["x.a", "x.b", "x.c"]],
        ),
        # A package's __init__ importing its submodules, which import each other through the
        # package's name: no circle.
        (
            {
                "p.__init__": "from p.a import f\nfrom .b import g\n",
                "p.a": "from p import b",
                "p.b": "from p.c import h",
                "p.c": "",
            },
            [],
        ),
        # A submodule that takes a name its package's __init__ re-exports needs the __init__.
        (
            {
                "p.__init__": "from .a import f\nfrom .b import g\n",
                "p.a": "from p import g",
                "p.b": "",
            },
            [["p", "p.a"]],
        ),
        # Importing one submodule from elsewhere runs the package's __init__ first.
        (
            {
                "p.__init__": "from p.a import f",
                "p.a": "import q",
                "p.b": "",
                "q": "from p.b import h",
            },
            [["p", "p.a", "q"]],
        ),
        # ... unless the import is only for the type checker: it runs nothing.
        (
            {
                "p.__init__": "from p.a import f",
                "p.a": "import q",
                "p.b": "",
                "q": TYPE_ONLY.format("from p.b import H"),
            },
            [],
        ),
        # Two circles apart, and names from outside the tree ignored.
        (
            {
                "a": "import b\nimport os",
                "b": "import a",
                "c": "from d import x\nfrom sqlalchemy import text",
                "d": "from c import y",
            },
            [["a", "b"], ["c", "d"]],
        ),
    ],
)
def test_circles_are_found(sources: dict[str, str], found: list[list[str]]) -> None:
    graph = graph_of(sources)
    assert circles(graph) == found
    problems = circle_problems(graph)
    assert len(problems) == len(found)
    for problem, circle in zip(problems, found, strict=True):
        assert all(module in problem for module in circle), problem


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
        ("controller.runtime.service", "from sqlalchemy.ext.asyncio import AsyncEngine", "SQL"),
        ("app.web", "from sqlalchemy.exc import DBAPIError", "SQL lives in"),
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
        ("controller.runtime.service", "from controller.storage.handles import Database"),
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


OPENED_BY_STORAGE = frozenset({"begin", "connect"})


def openings(source: str) -> list[int]:
    """The lines of ``source`` that open a database connection or transaction themselves
    (``x.begin()``, ``x.connect()``, awaited or in ``async with``)."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in OPENED_BY_STORAGE
        and not node.args
        and not node.keywords
    )


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("async def f(e):\n    async with e.begin() as c:\n        pass\n", [2]),
        ("async def f(s):\n    c = await (await s.engine.connect()).x()\n", [2]),
        ("async def f(db):\n    async with transaction(db) as c:\n        pass\n", []),
    ],
)
def test_openings_are_found(source: str, lines: list[int]) -> None:
    assert openings(source) == lines


def test_only_storage_opens_a_connection() -> None:
    """The app and the controller above storage open connections and transactions through
    storage's unit of work, never on the engine themselves."""
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for package in ("app", "controller")
        for path in sorted((ROOT / package).rglob("*.py"))
        if not path.is_relative_to(ROOT / "controller" / "storage")
        for line in openings(path.read_text())
    ]
    assert found == []


def test_no_module_imports_itself_through_others() -> None:
    assert circle_problems(tree_graph()) == []


def test_the_controller_keeps_its_floors() -> None:
    graph = tree_graph(packages_run=False)
    parts = {part for module in graph if (part := part_of(module)) is not None}
    named = {part for floor in CONTROLLER_FLOORS for part in floor}
    assert sorted(named - parts) == [], "parts named on a floor that the controller no longer has"
    assert floor_problems(graph) == []


def _with(module: str, source: str) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The tree's imports (all, and those that run) with ``source`` added to ``module``."""
    imports, runs = tree_imports(), tree_imports(typing=False)
    imports[module] = imports.get(module, set()) | imports_of(source, module)
    runs[module] = runs.get(module, set()) | imports_of(source, module, typing=False)
    return imports, runs


@pytest.mark.parametrize(
    ("module", "source", "circle"),
    [
        (
            "controller.core.money",
            "def f():\n    from controller.core.odds import percent_text\n",
            ["controller.core.money", "controller.core.odds"],
        ),
        (
            "link_adapters.modbus_requests",
            TYPE_ONLY.format("from link_adapters.modbus import ModbusLink"),
            ["link_adapters.modbus", "link_adapters.modbus_requests"],
        ),
        (
            "controller.core.games.module",
            "from controller.core.games.registry import rules_of",
            ["controller.core.games.module", "controller.core.games.registry"],
        ),
        # The rules a jurisdiction applies may not name it: its package imports them all.
        (
            "controller.rules.pools",
            "from controller.rules.jurisdictions.base import Jurisdiction",
            ["controller.rules.jurisdictions.base", "controller.rules.pools"],
        ),
        (
            "controller.rules.terms",
            "from controller.rules.jurisdictions import INDIANA",
            ["controller.rules.jurisdictions", "controller.rules.terms"],
        ),
        (
            "app.floor_gauges",
            TYPE_ONLY.format("from app.metrics import FloorMetrics"),
            ["app.floor_gauges", "app.metrics"],
        ),
    ],
)
def test_an_added_circle_is_found(module: str, source: str, circle: list[str]) -> None:
    found = circles(import_graph(*_with(module, source)))
    assert any(set(circle) <= set(c) for c in found), found


@pytest.mark.parametrize(
    ("module", "source", "refused"),
    [
        # Parts on one floor know nothing of each other.
        ("controller.core.money", "from controller.text import ONE_LINE", "share a floor"),
        ("controller.periods", "from controller.manifest import ROOT", "share a floor"),
        ("controller.rules.filing", "from controller.access.users import User", "stands below"),
        (
            "controller.storage.verify",
            "from controller.paperwork.checkpoints import CheckpointError",
            "stands below",
        ),
        (
            "controller.paperwork.retention",
            "def f():\n    from controller.runtime.links import LinkRuntime\n",
            "stands below",
        ),
        # A type named for the checker only is a dependency all the same.
        (
            "controller.paperwork.corrections",
            TYPE_ONLY.format("from controller.runtime.links import LinkRuntime"),
            "stands below",
        ),
        ("controller.settings", "from controller.access import users", "stands below"),
        ("controller.gauges", "", "on no floor"),
    ],
)
def test_an_import_against_the_floors_is_refused(module: str, source: str, refused: str) -> None:
    imports, _ = _with(module, source)
    problems = floor_problems(import_graph(imports, {}))
    assert any(problem.startswith(module) and refused in problem for problem in problems), problems


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("controller.runtime.poller", "from controller.paperwork.slips import slip"),
        ("controller.paperwork.export", "from controller.access.duties import check_independent"),
        ("controller.settings", "from controller.storage.database import make_engine"),
        ("controller.storage.store", "from controller.periods import at_text"),
        ("controller.rules.filing", "from controller.roles import Role"),
        ("controller.access.users", "from controller.text import USERNAME"),
        ("controller.core.games.paytables", "from controller.core.hands import HandCategory"),
    ],
)
def test_an_import_down_the_floors_is_not_refused(module: str, source: str) -> None:
    imports, _ = _with(module, source)
    assert floor_problems(import_graph(imports, {})) == []
