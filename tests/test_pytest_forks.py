"""The server of pytest runs (``tests/pytest_forks.py``) on a project of its own: a run finds
its test modules imported once, by the server, and a rule broken in one run is broken there
only, a test module's ``from x import f`` included."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.mutation_plugin import ACCEPT, ENV
from tests.pytest_forks import Lanes

ROOT = Path(__file__).resolve().parents[1]

RULES = """
from controller.rules import RuleViolation


def check_rate(rate: int) -> int:
    if rate < 60:
        raise RuleViolation("clause", "too low")
    return rate
"""

TESTS = """
import os
import time

import pytest

from controller.rules import RuleViolation
from fork_rules import check_rate

with open(os.environ["FORK_IMPORTS"], "a") as imports:
    imports.write(f"{os.getpid()}\\n")


def test_a_low_rate_is_refused():
    with pytest.raises(RuleViolation):
        check_rate(10)


def test_slow():
    time.sleep(30)
"""

ARGS = ("-q", "-x", "-o", "addopts=", "-p", "no:cacheprovider", "-p", "tests.mutation_plugin")
REFUSED = "test_fork_user.py::test_a_low_rate_is_refused"


def test_runs_are_forks_of_one_import_and_break_only_themselves(tmp_path: Path) -> None:
    (tmp_path / "fork_rules.py").write_text(RULES)
    (tmp_path / "test_fork_user.py").write_text(TESTS)
    imports = tmp_path / "imports.txt"
    env = {
        **{k: v for k, v in os.environ.items() if k != ENV},
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONPATH": os.pathsep.join((str(ROOT), str(tmp_path))),
        "FORK_IMPORTS": str(imports),
    }
    broken = {ENV: json.dumps([["fork_rules:check_rate", ACCEPT]])}
    with Lanes(1, [*ARGS, REFUSED], cwd=tmp_path, env=env) as lanes:
        code, out = lanes.run([*ARGS, REFUSED], broken, 60)
        assert code == 1, out
        assert "1 failed" in out and "DID NOT RAISE" in out
        code, out = lanes.run([*ARGS, REFUSED], {}, 60)
        assert code == 0, out  # the rule broken in the run before is whole again
        code, _ = lanes.run([*ARGS, "test_fork_user.py::test_slow"], {}, 0.5)
        assert code is None  # killed, and the server answers the next
        code, out = lanes.run([*ARGS, REFUSED, "-p", "no_such_plugin"], {}, 60)
        assert code not in (0, 1, None) and "no_such_plugin" in out
    # Imported once, by the server, before any run: every run used its module.
    assert len(imports.read_text().split()) == 1
