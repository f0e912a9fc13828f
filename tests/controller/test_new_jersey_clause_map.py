"""New Jersey's clause map (``clause_map_new_jersey``) is whole: every clause the jurisdiction
cites is in it with a rule and a test that exist, and every house policy says so."""

from __future__ import annotations

import importlib

import pytest

from controller.rules.jurisdictions import NEW_JERSEY, new_jersey
from tests.controller.clause_map_new_jersey import (
    NEW_JERSEY_HOUSE,
    NEW_JERSEY_RULEBOOK,
    Allowed,
    Enforced,
)

ENTRIES: dict[str, Enforced | Allowed] = {**NEW_JERSEY_RULEBOOK, **NEW_JERSEY_HOUSE}


def resolve(target: str) -> object:
    module, _, name = target.partition(":")
    found: object = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


def cited() -> set[str]:
    """Every clause ``NEW_JERSEY`` and its module cite."""
    c = NEW_JERSEY.clauses
    by_name = [getattr(c, name) for name in c.__slots__]  # type: ignore[attr-defined]
    found = {v for v in by_name if isinstance(v, str)}
    found |= {v for m in by_name if not isinstance(m, str) for v in m.values()}
    found |= {clause for _, clause in NEW_JERSEY.records}
    found.add(NEW_JERSEY.waiver.clause)
    found |= {v for k, v in vars(new_jersey).items() if k.endswith("_CLAUSE")}
    return found


def test_every_clause_new_jersey_cites_is_mapped() -> None:
    assert cited() <= set(ENTRIES), sorted(cited() - set(ENTRIES))


def test_house_policies_say_so_and_new_jerseys_clauses_are_new_jerseys() -> None:
    for clause in NEW_JERSEY_HOUSE:
        assert clause.startswith("house policy: "), clause
    for clause in NEW_JERSEY_RULEBOOK:
        assert clause.startswith(("N.J.A.C. 13:69D-", "N.J.A.C. 13:69E-")), clause


def test_each_allowance_names_a_shape_new_jersey_allows() -> None:
    for clause, entry in NEW_JERSEY_RULEBOOK.items():
        if isinstance(entry, Allowed):
            assert all(getattr(NEW_JERSEY.allows, shape) for shape in entry.shapes), clause


@pytest.mark.parametrize("clause", sorted(ENTRIES))
def test_each_mapped_rule_and_test_exists(clause: str) -> None:
    entry = ENTRIES[clause]
    rules = entry.rules if isinstance(entry, Enforced) else ()
    assert entry.tests, clause
    assert rules or isinstance(entry, Allowed), clause
    for rule in rules:
        assert callable(resolve(rule)), rule
    for test in entry.tests:
        path, _, name = test.partition("::")
        module = path.removesuffix(".py").replace("/", ".")
        assert callable(getattr(importlib.import_module(module), name, None)), test
