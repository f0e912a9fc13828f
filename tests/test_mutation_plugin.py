"""The plugin that breaks rules on purpose (``tests/mutation_plugin.py``), on modules of its
own: a refusing check made to accept everything, and a replacement put wherever the original
is bound, never where an equal value only happens to be."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.mutation_plugin import MutationError, accept, patch

RULES = """
from dataclasses import dataclass

from controller.rules import RuleViolation

YEARS = 1
OTHER = 1


def check_rate(rate: int) -> int:
    if rate < 60:
        raise RuleViolation("clause", "too low")
    if rate > 100:
        raise RuleViolation("clause", "too high")
    return rate


def check_change(*, old: int, new: int, unlocked: bool = False) -> int:
    check_rate(new)
    if new != old and not unlocked:
        raise RuleViolation("clause", "locked")
    return new - old


def judge(cards: int) -> int:
    return cards


@dataclass(frozen=True)
class Game:
    judge: object


GAME = Game(judge=judge)
BY_NAME = {"judge": judge}


class Table:
    judge = judge

    @property
    def bet(self) -> int:
        if self is None:
            raise RuleViolation("clause", "never")
        return 100
"""

USER = """
from mut_rules import YEARS, check_change as change, judge

SEATS = 1
"""


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ModuleType, ...]]:
    (tmp_path / "mut_rules.py").write_text(RULES)
    (tmp_path / "mut_user.py").write_text(USER)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        yield importlib.import_module("mut_rules"), importlib.import_module("mut_user")
    finally:
        for name in ("mut_rules", "mut_user"):
            sys.modules.pop(name, None)


def test_a_check_made_to_accept_everything_returns_what_it_returns_on_acceptance(
    modules: tuple[ModuleType, ...],
) -> None:
    rules, _ = modules
    assert accept(rules.check_rate)(7) == 7
    lenient = accept(rules.check_change)
    assert lenient(old=80, new=90) == 10
    # The rules it calls still refuse: only its own refusals are gone.
    with pytest.raises(ValueError, match="too low"):
        lenient(old=80, new=10)
    assert accept(rules.Table.__dict__["bet"]).fget(None) == 100
    with pytest.raises(MutationError, match="refuses nothing itself"):
        accept(rules.judge)


def test_the_replacement_is_put_wherever_the_original_is_bound(
    modules: tuple[ModuleType, ...],
) -> None:
    rules, user = modules
    original = rules.judge

    def never(_: object) -> object:
        return lambda cards: None

    # The module's own name, another module's import under another name, a dataclass's
    # field, a dict's value, a class attribute.
    assert patch("mut_rules:judge", never) == 5
    for holder in (rules.judge, user.judge, rules.GAME.judge, rules.BY_NAME["judge"]):
        assert holder is not original and holder(3) is None
    assert rules.Table.judge(3) is None
    # Imported as ``change``: replaced all the same, and calls within the module see it.
    assert patch("mut_rules:check_change", accept) == 2
    assert user.change(old=80, new=90) == 10


def test_a_constant_is_replaced_only_under_its_own_name(modules: tuple[ModuleType, ...]) -> None:
    rules, user = modules
    assert patch("mut_rules:YEARS", lambda _: 0) == 2
    assert rules.YEARS == user.YEARS == 0
    assert rules.OTHER == user.SEATS == 1  # the same 1, other names: untouched


def test_a_method_or_property_is_replaced_on_its_class(modules: tuple[ModuleType, ...]) -> None:
    rules, _ = modules
    assert patch("mut_rules:Table.bet", lambda _: property(lambda self: 0)) == 1
    assert rules.Table().bet == 0
