"""A test run with rules broken on purpose: a rule's tests must fail once the rule stops
working (the clause map's check, ``tests/controller/test_rulebook.py``).

Loaded with ``-p tests.mutation_plugin``; it does nothing unless ``PROGRESSIVE_TEST_MUTANTS``
names what to break, as JSON: a list of ``[target, mutant]``. ``target`` is
``"module:qualified.name"``, a function, a method or property of a class, or a constant;
``mutant`` is ``"module:factory"``, and ``factory(original)`` returns what takes its place
(``accept``: the function with its own refusals taken out).

At configuration, before the test modules are collected (after they are imported, in a fork
of a server that has imported them: ``tests/pytest_forks.py``), the replacement is put
wherever the original is bound: every module attribute that *is* the original (a module that
did ``from x import f`` holds its own reference), the fields of module-level dataclass
instances and the values of module-level dicts that hold it (a game's rules hold its judge),
class attributes that hold it; a method or property is replaced on its class. A constant is
replaced only where it is bound under its own name, since small numbers are shared by
unrelated names; a value that a module already imported computed from it (a field's
default) stays what it was. A target bound nowhere is a usage error, so a misnamed target
never passes for a rule that broke nothing.
"""

from __future__ import annotations
import __future__

import ast
import dataclasses
import importlib
import inspect
import json
import os
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

ENV = "PROGRESSIVE_TEST_MUTANTS"
ACCEPT = "tests.mutation_plugin:accept"
REFUSAL = "RuleViolation"


class MutationError(Exception):
    """A mutant that cannot be made or put in place."""


def resolve(ref: str) -> Any:
    """``"module:qualified.name"`` -> the object."""
    module, _, name = ref.partition(":")
    found: Any = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


class _TakeOutRefusals(ast.NodeTransformer):
    def __init__(self) -> None:
        self.taken = 0

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        made = node.exc.func if isinstance(node.exc, ast.Call) else None
        name = getattr(made, "id", None) or getattr(made, "attr", None)
        if name != REFUSAL:
            return node
        self.taken += 1
        return ast.copy_location(ast.Pass(), node)


def accept(original: Any) -> Any:
    """The rule that accepts everything: the same function with every ``raise
    RuleViolation(...)`` of its own body taken out, so it returns what it returns on
    acceptance (its argument, a computed value, None). The rules it calls still refuse."""
    if isinstance(original, property):
        return property(accept(original.fget))
    if not inspect.isfunction(original):
        raise MutationError(f"{original!r} is not a function: name its mutant")
    if original.__code__.co_freevars:
        raise MutationError(f"{original.__qualname__} is a closure: name its mutant")
    lines, first = inspect.getsourcelines(original)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    func = tree.body[0]
    if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
        raise MutationError(f"{original.__qualname__}: no function in its source")
    func.decorator_list = []
    taker = _TakeOutRefusals()
    taker.visit(func)
    if not taker.taken:
        raise MutationError(f"{original.__qualname__} refuses nothing itself: name its mutant")
    ast.increment_lineno(tree, first - 1)
    code = compile(
        tree,
        inspect.getsourcefile(original) or "<mutant>",
        "exec",
        flags=__future__.annotations.compiler_flag,
        dont_inherit=True,
    )
    made: dict[str, Any] = {}
    exec(code, original.__globals__, made)  # the rule's own source, recompiled
    mutant = made[func.name]
    mutant.__qualname__ = original.__qualname__
    mutant.__module__ = original.__module__
    mutant.__defaults__ = original.__defaults__
    mutant.__kwdefaults__ = original.__kwdefaults__
    return mutant


def _bind(holder: Any, name: str, value: Any) -> None:
    try:
        setattr(holder, name, value)
    except (AttributeError, TypeError, dataclasses.FrozenInstanceError):
        object.__setattr__(holder, name, value)


def _replace_in(value: Any, original: Any, replacement: Any) -> int:
    """Replace ``original`` one level inside a module-level value; how many places."""
    done = 0
    if isinstance(value, dict):
        for key, item in list(value.items()):
            if item is original:
                value[key] = replacement
                done += 1
    elif isinstance(value, type):
        for attr, item in list(vars(value).items()):
            if item is original:
                _bind(value, attr, replacement)
                done += 1
    elif dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            if getattr(value, f.name, None) is original:
                _bind(value, f.name, replacement)
                done += 1
    return done


def patch(target: str, factory: Callable[[Any], Any]) -> int:
    """Put ``factory(original)`` wherever ``target`` is bound; how many places."""
    module_name, _, qualname = target.partition(":")
    module = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    owner: Any = module
    for part in path:
        owner = getattr(owner, part)
    if owner is not module:  # a method or a property: replaced on its class
        original = vars(owner)[name]
        setattr(owner, name, factory(original))
        return 1
    original = getattr(module, name)
    replacement = factory(original)
    constant = not callable(original)
    done = 0
    for mod in list(sys.modules.values()):
        names = getattr(mod, "__dict__", None)
        if not isinstance(names, dict):
            continue
        for attr, value in list(names.items()):
            if value is original:
                if attr == name or not constant:
                    names[attr] = replacement
                    done += 1
            elif not constant and not attr.startswith("__"):
                done += _replace_in(value, original, replacement)
    return done


def mutants_wanted() -> list[tuple[str, str]]:
    raw = os.environ.get(ENV)
    return [(str(t), str(m)) for t, m in json.loads(raw)] if raw else []


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    done = []
    for target, mutant in mutants_wanted():
        try:
            places = patch(target, resolve(mutant))
        except (MutationError, ImportError, AttributeError, KeyError, OSError) as exc:
            raise pytest.UsageError(f"cannot break {target} with {mutant}: {exc}") from exc
        if not places:
            raise pytest.UsageError(f"{target} is bound nowhere: nothing broken")
        done.append(f"{target} <- {mutant} ({places} places)")
    config.stash[_DONE] = done


_DONE = pytest.StashKey[list[str]]()


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"broken on purpose: {line}" for line in config.stash.get(_DONE, [])]
