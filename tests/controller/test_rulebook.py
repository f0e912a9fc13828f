"""Every subsection of the regulations the controller is built from has its place in the map
(``clause_map.py``): the rules that enforce it and the tests that fail when one of them stops
working, or why it is not the controller's. Checked here, per jurisdiction:

* the copy of the mapped sections (``rulebook_sections.txt`` for Indiana) is the published
  text: every paragraph of it is in the seed the section is published in, and each mapped
  section's subsections are read from the seed itself, so one deleted from the copy and the
  map alike is still missed;
* every rule named exists, and so does every test;
* every rule, broken on purpose (``tests/mutation_plugin.py``), fails its entry's tests: a
  rule whose tests still pass once it accepts everything is named in the failure;
* the rulebook (``controller.rules``) cites its jurisdiction's clauses or house policy, said
  to be house policy, and is the only code that cites a clause in a value or raises a refusal.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import pkgutil
import re
import resource
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType

import pytest

from tests.controller.clause_map import (
    RULEBOOKS,
    Enforced,
    NotOurs,
    Rulebook,
)
from tests.mutation_plugin import ACCEPT, ENV, MutationError, accept, resolve
from tests.pytest_forks import Lanes

ROOT = Path(__file__).resolve().parents[2]
HOUSE = "house policy"

# --------------------------------------------------------------------------------------------
# The copy of the sections is the published text

_LINK = re.compile(r"\[([^\]]*)\]\(#\)")  # [IC 4-33](#) -> IC 4-33
_ESCAPE = re.compile(r"\\([\\$*_\[\]().#-])")  # \$ -> $
_LIST_MARK = re.compile(r"^[ \t]*- ", re.M)
_LETTERED = re.compile(r"^(?:- )?(?:Sec\. [\d.]+\.\s+)?\(([a-z])\) ", re.M)
_NUMBERED = re.compile(r"^(?:- )?(?:Sec\. [\d.]+\.\s+)?\((\d+)\) ", re.M)


def plain(text: str) -> str:
    """Text as read: markdown links, escapes, list marks and emphasis gone, spaces single."""
    text = _ESCAPE.sub(r"\1", _LINK.sub(r"\1", text))
    return " ".join(_LIST_MARK.sub("", text).replace("*", "").split())


def subsections(body: str) -> list[str]:
    """A section's subsections as its text numbers them: lettered, or numbered where it has
    no letters (10-1-4); indented list items ((b)(8)(A)(i)) are not subsections."""
    letters = _LETTERED.findall(body)
    return [f"({x})" for x in letters] if letters else [f"({x})" for x in _NUMBERED.findall(body)]


def in_sequence(subs: list[str]) -> bool:
    """(a), (b), (c)... or (1), (2), (3)...: what a subsection list read right looks like."""
    if not subs:
        return False
    if subs[0] == "(a)":
        return subs == [f"({chr(ord('a') + i)})" for i in range(len(subs))]
    return subs == [f"({i})" for i in range(1, len(subs) + 1)]


@dataclass(frozen=True)
class Section:
    number: str  # "10-1-1.1"
    title: str  # "Rate of progression"
    body: str  # everything after its heading


def copied_sections(rb: Rulebook) -> dict[str, Section]:
    """The sections of the copy, by number; each starts with its heading line."""
    text = rb.text.read_text()
    heads = list(re.finditer(rf"^{re.escape(rb.clause_prefix)} (\S+) ([A-Z].*)$", text, re.M))
    return {
        h.group(1): Section(
            h.group(1),
            h.group(2).strip(),
            text[h.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)],
        )
        for i, h in enumerate(heads)
    }


def published(rb: Rulebook, section: Section) -> dict[str, str]:
    """The section's text in each seed that publishes it, by seed file name: from its heading
    (``68 IAC 10-12-3 Wagers; ...`` or ``Section 68 IAC 10-12-3 - Wagers; ...``, never a
    table of contents' line) to the next section's heading or rule's title."""
    prefix = re.escape(rb.clause_prefix)
    head = re.compile(
        rf"^(?:Section )?{prefix} {re.escape(section.number)}(?: -)? "
        rf"{re.escape(section.title)}[ \t]*$",
        re.M,
    )
    next_head = re.compile(rf"^(?:Section )?{prefix} \S+(?: -)? [A-Z]|^Rule \d+\.", re.M)
    found = {}
    for seed in rb.seeds:
        text = seed.read_text()
        start = head.search(text)
        if start is None:
            continue
        end = next_head.search(text, start.end())
        found[seed.name] = text[start.end() : end.start() if end else len(text)]
    return found


def paragraphs(body: str) -> list[str]:
    return [p for p in (plain(x) for x in re.split(r"\n[ \t]*\n", body)) if p]


def source_of(rb: Rulebook, section: Section) -> tuple[str, str]:
    """The seed the copied section is taken from, and its text there: the first that holds
    every paragraph of the copy."""
    texts = published(rb, section)
    assert texts, f"{rb.clause_prefix} {section.number} {section.title}: in no seed"
    for name, text in texts.items():
        if all(p in plain(text) for p in paragraphs(section.body)):
            return name, text
    missing = [
        p for p in paragraphs(section.body) if all(p not in plain(t) for t in texts.values())
    ]
    raise AssertionError(
        f"{rb.clause_prefix} {section.number}: the copy is not the published text "
        f"({', '.join(texts)}); not found as published: {missing or 'paragraphs of several seeds'}"
    )


def needs_seeds(rb: Rulebook) -> None:
    missing = [str(s) for s in rb.seeds if not s.is_file()]
    if missing:
        pytest.skip(f"the published texts are not here: {missing} (PROGRESSIVE_SEEDS)")


def jurisdictions() -> list[str]:
    return sorted(RULEBOOKS)


def mapped_sections() -> list[tuple[str, str]]:
    return [(j, s) for j in jurisdictions() for s in RULEBOOKS[j].sections]


@pytest.mark.parametrize("jurisdiction", jurisdictions())
def test_the_copy_is_the_published_text(jurisdiction: str) -> None:
    rb = RULEBOOKS[jurisdiction]
    needs_seeds(rb)
    copied = copied_sections(rb)
    assert set(copied) == set(rb.sections)
    for section in copied.values():
        source_of(rb, section)


@pytest.mark.parametrize(
    ("jurisdiction", "section"), mapped_sections(), ids=[f"{j}-{s}" for j, s in mapped_sections()]
)
def test_every_subsection_is_mapped(jurisdiction: str, section: str) -> None:
    rb = RULEBOOKS[jurisdiction]
    needs_seeds(rb)
    copy = copied_sections(rb)[section]
    _, text = source_of(rb, copy)
    published_subs = subsections(text)
    assert in_sequence(published_subs), published_subs
    assert subsections(copy.body) == published_subs, "the copy lacks a subsection"
    assert list(rb.sections[section]) == published_subs, "the map lacks a subsection"


def test_the_subsections_are_read_as_published() -> None:
    rb = RULEBOOKS["indiana"]
    needs_seeds(rb)
    found = {n: subsections(source_of(rb, s)[1]) for n, s in copied_sections(rb).items()}
    assert found["10-1-1.1"] == ["(a)", "(b)", "(c)", "(d)", "(e)"]
    assert found["10-1-4"] == ["(1)", "(2)", "(3)"]  # a section of numbers, no letters
    assert found["10-1-6.2"] == ["(a)", "(b)", "(c)"]  # (b)(8)(A)(i) is no subsection (i)
    assert found["10-6-5"][-1] == "(j)" and found["10-7-5"][-1] == "(e)"
    assert found["10-9-3"] == ["(a)", "(b)", "(c)"]  # "- (c)" in 68 IAC 10
    assert source_of(rb, copied_sections(rb)["10-12-3"])[0].startswith("003_")


def test_a_deletion_from_the_copy_and_the_map_is_missed(tmp_path: Path) -> None:
    rb = RULEBOOKS["indiana"]
    needs_seeds(rb)
    text = rb.text.read_text()
    gone = re.sub(r"\n\(d\) If the executive director determines.*?\n", "\n", text, flags=re.S)
    assert gone != text
    copy = tmp_path / "sections.txt"
    copy.write_text(gone)
    section = copied_sections(replace(rb, text=copy))["10-1-3"]
    # The copy still reads as published (a paragraph fewer), but the seed has its (d).
    assert source_of(rb, section)
    assert subsections(section.body) == ["(a)", "(b)", "(c)"]
    assert subsections(source_of(rb, section)[1]) == ["(a)", "(b)", "(c)", "(d)"]
    # A paragraph that is not the published text is caught.
    edited = Section(section.number, section.title, section.body.replace("sixty (60)", "ten (10)"))
    with pytest.raises(AssertionError, match="not the published text"):
        source_of(rb, edited)


# --------------------------------------------------------------------------------------------
# Every rule named exists, and so does every test


def entries(rb: Rulebook) -> list[tuple[str, Enforced]]:
    out: list[tuple[str, Enforced]] = [
        (f"{rb.clause_prefix} {section}{sub}", entry)
        for section, subs in rb.sections.items()
        for sub, entry in subs.items()
        if isinstance(entry, Enforced)
    ]
    return out + [(f"{HOUSE}: {name}", entry) for name, entry in rb.house.items()]


def all_entries() -> list[tuple[str, str, Enforced]]:
    return [(j, clause, e) for j in jurisdictions() for clause, e in entries(RULEBOOKS[j])]


@pytest.mark.parametrize(
    ("jurisdiction", "clause", "entry"),
    all_entries(),
    ids=[f"{j}: {c}" for j, c, _ in all_entries()],
)
def test_each_mapped_rule_and_test_exists(jurisdiction: str, clause: str, entry: Enforced) -> None:
    assert entry.rules and entry.tests, clause
    assert set(entry.mutants) <= set(entry.rules), "a mutant for a rule the entry does not name"
    for rule in entry.rules:
        found = resolve(rule)
        if rule in entry.mutants:
            assert callable(resolve(entry.mutants[rule])), entry.mutants[rule]
            continue
        # Broken generically: a check that refuses, made to accept everything (a method or a
        # property as its class holds it).
        module, _, qualname = rule.partition(":")
        owner, _, name = qualname.rpartition(".")
        try:
            accept(vars(resolve(f"{module}:{owner}"))[name] if owner else found)
        except MutationError as exc:
            pytest.fail(f"{clause}: {rule} needs a mutant of its own: {exc}")
    for test in entry.tests:
        path, _, name = test.partition("::")
        module = path.removesuffix(".py").replace("/", ".")
        assert callable(getattr(importlib.import_module(module), name, None)), test


@pytest.mark.parametrize("jurisdiction", jurisdictions())
def test_a_not_ours_entry_gives_its_reason(jurisdiction: str) -> None:
    for section, subs in RULEBOOKS[jurisdiction].sections.items():
        for sub, entry in subs.items():
            if isinstance(entry, NotOurs):
                assert len(entry.reason.split()) >= 4, f"{section}{sub}"


# --------------------------------------------------------------------------------------------
# Every rule fails its tests when it stops working

# A mutation run: a pytest run of its own process (a fork of a server of runs that has
# imported the project and collected every run's tests once, ``tests/pytest_forks.py``), with
# no workers (the suite's addopts, which ask for them, dropped), stopping at the first
# failure, its plugins loaded by name (the others, schemathesis's and hypothesis's among them,
# cost a second or two at every start); PostgreSQL's variants left to the suite itself: a rule
# is the same Python on either database.
PYTEST = (
    "-q", "-x", "-o", "addopts=", "-p", "no:cacheprovider",
    "-p", "pytest_asyncio.plugin", "-p", "tests.mutation_plugin", "-k", "not postgres",
)  # fmt: skip
RUN_TIMEOUT_S = 300
LANES = 2


@dataclass(frozen=True)
class Mutation:
    clauses: tuple[str, ...]  # the entries it serves (10-6-5 and 10-8-5 share theirs)
    rule: str
    mutant: str
    tests: tuple[str, ...]

    def __str__(self) -> str:
        how = "" if self.mutant == ACCEPT else f" ({self.mutant.rpartition(':')[2]})"
        return f"{', '.join(self.clauses)}: {self.rule}{how}"


def mutations(rb: Rulebook) -> list[Mutation]:
    """Each rule of each entry, broken alone, against its entry's tests."""
    found: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    for clause, entry in entries(rb):
        for rule in entry.rules:
            key = (rule, entry.mutants.get(rule, ACCEPT), entry.tests)
            found.setdefault(key, []).append(clause)
    return [Mutation(tuple(c), r, m, t) for (r, m, t), c in found.items()]


def mutation_lanes(every_test: tuple[str, ...]) -> Lanes:
    """The servers of the runs, every test of them collected, plugins loaded by name only."""
    env = {
        **{k: v for k, v in os.environ.items() if k != ENV},
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
    }
    return Lanes(LANES, [*PYTEST, *every_test], cwd=ROOT, env=env)


def run_pytest(
    lanes: Lanes, tests: tuple[str, ...], broken: list[tuple[str, str]]
) -> tuple[int, str]:
    code, out = lanes.run([*PYTEST, *tests], {ENV: json.dumps(broken)}, RUN_TIMEOUT_S)
    if code is None:
        return -1, f"no answer in {RUN_TIMEOUT_S} s"
    return code, out


# A rule no test of the run exercises: it must survive, or the check cannot tell one.
CANARY = Mutation(
    ("canary",),
    "controller.rules.integrity:check_removal",
    ACCEPT,
    ("tests/controller/core/test_money.py::test_rate_inside_range_accepted",),
)


# Two runs at a time; the jurisdictions' checks on one worker, one after the other, so that
# however many there are, the mutation runs never take more than two processors.
@pytest.mark.xdist_group("rulebook-mutations")
@pytest.mark.parametrize("jurisdiction", jurisdictions())
def test_every_rule_fails_its_tests_when_it_stops_working(jurisdiction: str) -> None:
    rb = RULEBOOKS[jurisdiction]
    runs = mutations(rb)
    every_test = tuple(sorted({t for m in runs for t in m.tests}))
    started, children = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    with mutation_lanes(every_test) as lanes, ThreadPoolExecutor(max_workers=LANES) as pool:
        control = pool.submit(run_pytest, lanes, every_test, [])
        canary = pool.submit(run_pytest, lanes, CANARY.tests, [(CANARY.rule, CANARY.mutant)])
        running = [(m, pool.submit(run_pytest, lanes, m.tests, [(m.rule, m.mutant)])) for m in runs]
        results = [(m, *done.result()) for m, done in running]
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = used.ru_utime + used.ru_stime - children.ru_utime - children.ru_stime
    took = (
        f"{rb.name}: {len(runs)} rules broken one at a time, over {len(entries(rb))} entries, "
        f"in {time.perf_counter() - started:.0f} s ({cpu:.0f} s of processor time)"
    )
    print(took)
    code, out = control.result()
    assert code == 0, f"the mapped tests do not all pass as they are:\n{out}"
    code, out = canary.result()
    assert code == 0, f"a rule no test exercises was not seen to survive:\n{out}"
    survived = [str(m) for m, code, _ in results if code == 0]
    unmade = [f"{m}: exit {code}\n{out}" for m, code, out in results if code not in (0, 1)]
    assert not survived and not unmade, (
        f"{took}\nRules that stopped working while their tests still passed:\n  "
        + ("\n  ".join(survived) or "none")
        + "\nRuns that could not be made:\n"
        + ("\n".join(unmade) or "none")
    )


# --------------------------------------------------------------------------------------------
# The rulebook cites its jurisdictions' clauses, or house policy said to be one


def rulebook_modules() -> Iterator[ModuleType]:
    import controller.rules

    for info in pkgutil.walk_packages(controller.rules.__path__, "controller.rules."):
        yield importlib.import_module(info.name)


def cited(module: ModuleType) -> Iterator[tuple[str, str]]:
    """(name, clause) of every clause the module names: ``*_CLAUSE`` values, or each value
    of a ``*_CLAUSE`` mapping."""
    for name, value in vars(module).items():
        if name.endswith("_CLAUSE") and isinstance(value, str):
            yield name, value
        elif name.endswith("_CLAUSE") and isinstance(value, dict):
            yield from ((f"{name}[{k}]", v) for k, v in value.items())


# The jurisdictions whose clause maps live apart from RULEBOOKS (tests/controller/
# clause_map_new_jersey.py), with the prefix their clauses begin with.
OTHER_JURISDICTIONS = {"controller.rules.jurisdictions.new_jersey": "N.J.A.C."}


def test_every_clause_is_a_jurisdictions_or_house_policy() -> None:
    wrong = []
    for module in rulebook_modules():
        prefixes = [rb.clause_prefix for rb in RULEBOOKS.values() if module.__name__ in rb.modules]
        prefixes += [p for m, p in OTHER_JURISDICTIONS.items() if module.__name__ == m]
        for name, clause in cited(module):
            if not clause.startswith((HOUSE, *prefixes)):
                wrong.append(f"{module.__name__}.{name} = {clause!r}")
    assert wrong == [], "neither a jurisdiction's clause nor said to be house policy"


def test_house_policies_say_so() -> None:
    from controller.rules import house, odds
    from controller.settings import Settings

    policies = [p for rb in RULEBOOKS.values() for p in rb.house.values()]
    named = {p.clause: resolve(p.clause) for p in policies if p.clause is not None}
    assert all(value.startswith(HOUSE) for value in named.values()), named
    # Every house policy the rulebook cites is mapped to its rules and its tests.
    cited_house = {
        f"{m.__name__}:{name}": c for m in rulebook_modules() for name, c in cited(m)
        if c.startswith(HOUSE) and m.__name__ not in OTHER_JURISDICTIONS
    }  # fmt: skip
    assert set(cited_house) <= set(named), set(cited_house) - set(named)
    # A policy that refuses nothing says so where it is written.
    for policy in policies:
        if policy.clause is None:
            assert "House policy" in (resolve(policy.rules[0]).__doc__ or ""), policy.rules[0]
    doc = house.most_credits.__doc__ or ""
    assert "House policy" in doc and "10-6-5(f)(1)" in doc
    # Adopted from New York and New Jersey: said to be house policy, never a rule in force.
    assert house.RECOVERY_CLAUSE == "house policy adopted from NY 5321.18, NJ 13:69E-1.39B"
    assert odds.JACKPOT_ODDS_CLAUSE.startswith("house policy adopted from NJ 13:69D")
    assert Settings().jackpot_odds_bound == odds.DEFAULT_JACKPOT_ODDS_BOUND == 100_000_000


# --------------------------------------------------------------------------------------------
# Only the rulebook cites a clause in a value or raises a refusal

# A clause as a value: "68 IAC ...", a section with a subsection ("10-1-1.1(", "10-7-5 ("), or
# the other jurisdictions' sections the rulebook adopts. Comments and docstrings may cite a
# clause (they say where a rule comes from); every other string literal, f-strings' text
# included, may not: a clause in a value is a rule restated.
CLAUSE = re.compile(
    r"68 IAC|\b10-\d{1,2}-\d+(?:\.\d+)?\s*\(|NY 5321|NJ 13:69[DEO]|Mississippi 13-8"
)
SOURCE_ROOTS = ("app", "controller", "link_adapters", "bench")
RULEBOOK_DIR = ROOT / "controller" / "rules"


def sources() -> list[Path]:
    return [
        p
        for root in SOURCE_ROOTS
        for p in sorted((ROOT / root).rglob("*.py"))
        if RULEBOOK_DIR not in p.parents
    ]


def docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def offences(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    docs = docstring_nodes(tree)
    where = path.relative_to(ROOT) if ROOT in path.parents else path
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docs
            and CLAUSE.search(node.value)
        ):
            found.append(f"{where}:{node.lineno}: clause in a string: {node.value[:60]!r}")
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name == "RuleViolation":
                found.append(f"{where}:{node.lineno}: RuleViolation made outside the rulebook")
    return found


def test_only_the_rulebook_cites_a_clause_or_refuses() -> None:
    assert len(sources()) > 50
    found = [o for p in sources() for o in offences(p)]
    assert found == []


def test_the_check_catches_what_it_looks_for(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        '"""Docstrings may cite 68 IAC 10-1-1.1(c)."""\n'
        "# comments too: 68 IAC 10-6-5(c)\n"
        'CLAUSE = "68 IAC 10-7-5(b)"\n'
        "def f(x):\n"
        '    raise RuleViolation(x, f"limit ({x}, 10-1-1.1(c))")\n'
    )
    found = sorted(o.split(": ", 1)[1][:20] for o in offences(probe))
    assert found == ["RuleViolation made o", "clause in a string: ", "clause in a string: "]
