"""Every subsection of the regulations the controller is built from has its place in the map:
the rule that enforces it and the test that checks it, or why it is not the controller's.

The subsections are read from ``rulebook_sections.txt``, the text of 68 IAC 10-1-1.1, 10-1-3,
10-1-4, 10-1-6.2, 10-6-5, 10-7-5 and 10-8-5 as published. And the rulebook
(``controller.rules``) is the only code that cites a clause in a value or raises a refusal.
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = Path(__file__).with_name("rulebook_sections.txt")


@dataclass(frozen=True)
class Enforced:
    rules: tuple[str, ...]  # "module:qualified.name"
    tests: tuple[str, ...]  # "tests/path.py::test_name"


@dataclass(frozen=True)
class NotOurs:
    reason: str


MONEY = "tests/controller/core/test_money.py"
ENGINE = "tests/controller/core/test_reducer.py"
GOVERNANCE = "tests/controller/paperwork/test_governance.py"
PAPERWORK = "tests/controller/core/test_paperwork_rules.py"
STORE_PAPERWORK = "tests/storage/test_paperwork.py"
SUBMISSIONS = "tests/storage/test_submissions.py"
PAI_GOW = "tests/controller/core/test_pai_gow.py"
SUPER_SEVENS = "tests/controller/core/test_super_sevens.py"
GAME_MODULES = "tests/controller/core/test_game_modules.py"
LEVELS = "tests/controller/core/test_levels.py"
ANNOUNCEMENTS = "tests/controller/core/test_announcements.py"
SELF_CHECK = "tests/controller/test_self_check.py"
SELF_CHECK_CLI = "tests/app/test_self_check_cli.py"
SELF_CHECK_WEB = "tests/web/test_self_check.py"

# 68 IAC 10-6-5 and 10-8-5 say the same for their games (Caribbean Stud, Caribbean Draw).
_PROGRESSIVE_FEATURE: dict[str, Enforced | NotOurs] = {
    "(a)": NotOurs("which tables a licensee may link is the licensee's choice, not a rule"),
    "(b)": Enforced(
        ("controller.core.ledger:seal", "controller.storage.verify:verify_ledger"),
        ("tests/controller/core/test_ledger_chain.py::test_sealed_chain_verifies_whole",),
    ),
    "(c)": Enforced(
        (
            "controller.rules.records:check_reduction_explained",
            "controller.rules.records:check_reduction_documented",
            "controller.rules.records:check_correction_request",
        ),
        (
            f"{MONEY}::test_reduction_without_reason_refused",
            f"{PAPERWORK}::test_a_reduction_request_needs_a_reason_and_a_document",
            f"{ENGINE}::test_correction_with_a_document",
        ),
    ),
    "(d)": Enforced(
        (
            "controller.rules.records:check_retention_years",
            "controller.rules.records:check_retention_not_shortened",
        ),
        (
            f"{PAPERWORK}::test_retention_periods_can_only_lengthen",
            f"{STORE_PAPERWORK}::test_retention_purges_the_old_keeps_the_young_and_verify_stays_whole",
        ),
    ),
    "(e)": Enforced(
        ("controller.core.reducer:display_frame",),
        (f"{ENGINE}::test_display_is_live_without_a_win",),
    ),
    "(f)": Enforced(
        ("controller.core.money:contribution_units",),
        (f"{ENGINE}::test_contribution_is_credits_times_denomination_times_rate",),
    ),
    "(g)": Enforced(
        ("controller.core.reducer:display_frame", "controller.core.reducer.display:announcements"),
        (
            f"{ENGINE}::test_display_after_a_meter_paid_hit",
            f"{ANNOUNCEMENTS}::test_a_grand_after_a_mini_is_shown_at_once_and_the_mini_again_whole_after",
        ),
    ),
    "(h)": Enforced(
        ("controller.core.reducer:display_frame",),
        (f"{ENGINE}::test_display_is_live_without_a_win",),
    ),
    "(i)": Enforced(
        (
            "controller.core.reducer:display_frame",
            "controller.core.reducer:apply_reading",
            "controller.core.reducer.display:announcements",
        ),
        (
            f"{ENGINE}::test_royal_flush_pays_displayed_whole_cents_and_resets",
            f"{ENGINE}::test_display_reset_phase_shows_the_current_meter",
            f"{ANNOUNCEMENTS}::test_a_mini_after_the_grand_waits_out_the_grands_whole_time",
            f"{ANNOUNCEMENTS}::test_no_win_is_ever_dropped_or_announced_for_less_than_its_whole_time",
        ),
    ),
    "(j)": NotOurs("the patents describe the game's equipment; the controller follows (f)"),
}

RULEBOOK: dict[str, dict[str, Enforced | NotOurs]] = {
    "10-1-1.1": {
        "(a)": NotOurs("says to whom the section applies"),
        "(b)": Enforced(
            ("controller.core.money:contribution_units",),
            (f"{ENGINE}::test_contribution_is_credits_times_denomination_times_rate",),
        ),
        "(c)": Enforced(
            ("controller.rules.progression:check_rate_of_progression",),
            (
                f"{MONEY}::test_rate_outside_sixty_to_hundred_refused",
                f"{MONEY}::test_rate_inside_range_accepted",
            ),
        ),
        "(d)": Enforced(
            ("controller.rules.progression:check_rate_change",),
            (
                f"{MONEY}::test_rate_change_locked_until_a_jackpot",
                f"{SUBMISSIONS}::test_a_rate_change_filed_approved_and_applied_at_the_next_reset",
            ),
        ),
        "(e)": Enforced(
            (
                "controller.rules.filing:check_change",
                "controller.paperwork.governance:build_packet",
            ),
            (f"{GOVERNANCE}::test_a_rate_change_before_any_jackpot_is_refused",),
        ),
    },
    "10-1-3": {
        "(a)": NotOurs("says that rules of the game are submitted; (c) says how"),
        "(b)": NotOurs("the content of the rules of the game is the licensee's to write"),
        "(c)": Enforced(
            (
                "controller.rules.filing:check_notice",
                "controller.rules.filing:check_reviewer",
                "controller.rules.filing:check_live",
                "controller.rules.filing:check_not_yet_approved",
            ),
            (
                f"{GOVERNANCE}::test_a_notice_period_short_of_its_days_is_refused",
                f"{GOVERNANCE}::test_only_a_commission_agent_reviews",
                f"{SUBMISSIONS}::test_a_new_link_does_not_play_until_approved",
            ),
        ),
        "(d)": NotOurs("the executive director's direction is filed as an amendment (10-1-4)"),
    },
    "10-1-4": {
        "(1)": Enforced(
            ("controller.rules.filing:check_notice",),
            (
                f"{GOVERNANCE}::test_a_notice_period_short_of_its_days_is_refused",
                f"{GOVERNANCE}::test_the_executive_directors_override_lifts_the_notice_period",
            ),
        ),
        "(2)": Enforced(
            (
                "controller.rules.filing:check_reviewer",
                "controller.rules.filing:check_rejection_reason",
            ),
            (
                f"{GOVERNANCE}::test_only_a_commission_agent_reviews",
                f"{GOVERNANCE}::test_nobody_reviews_their_own_submission_and_a_rejection_has_a_reason",
            ),
        ),
        "(3)": Enforced(
            ("controller.rules.filing:check_nothing_armed", "controller.rules.filing:check_live"),
            (f"{SUBMISSIONS}::test_a_rate_change_filed_approved_and_applied_at_the_next_reset",),
        ),
    },
    "10-1-6.2": {
        "(a)": Enforced(
            ("controller.rules.integrity:check_return_to_play",),
            (
                f"{PAPERWORK}::test_a_table_out_of_play_credits_nothing_and_credits_again_after_return",
                f"{PAPERWORK}::test_return_to_play_needs_remedial_action_and_verification",
            ),
        ),
        "(b)": Enforced(
            (
                "controller.rules.integrity:check_removal",
                "controller.rules.integrity:check_remedial_action",
                "controller.rules.integrity:check_verification",
            ),
            (
                f"{STORE_PAPERWORK}::test_an_out_of_play_table_credits_nothing_until_returned",
                f"{STORE_PAPERWORK}::test_an_outside_company_is_recorded_whole",
            ),
        ),
        "(c)": Enforced(
            ("controller.rules.records:check_retention_years",),
            (f"{PAPERWORK}::test_retention_periods_can_only_lengthen",),
        ),
    },
    "10-6-5": _PROGRESSIVE_FEATURE,
    "10-7-5": {
        "(a)": NotOurs("whether a table offers the bonus feature is the licensee's choice"),
        "(b)": Enforced(
            ("controller.rules.wagers:check_denomination",),
            (
                f"{ENGINE}::test_a_let_it_ride_bonus_table_bets_one_dollar",
                "tests/controller/runtime/test_config.py::test_mistakes_are_refused_naming_the_place",
            ),
        ),
        "(c)": NotOurs(
            "the sensor light and lockout switch are the table controller's; the one dollar bet "
            "is (b)'s check"
        ),
        "(d)": Enforced(
            ("controller.core.games:Game.lowest_paying_hand",),
            ("tests/controller/core/test_games.py::test_let_it_ride_bonus_cannot_pay_one_pair",),
        ),
        "(e)": Enforced(
            (
                "controller.core.games:default_paytable",
                "controller.rules.pools:fixed_pay_only",
                "controller.rules.pools:check_pool",
            ),
            (
                "tests/controller/core/test_games.py::test_let_it_ride_bonus_default_is_68_iac_10_7_5_e",
                f"{LEVELS}::test_fixed_pay_link_registers_bets_and_holds_only_from_the_operators_amount",
            ),
        ),
    },
    "10-8-5": _PROGRESSIVE_FEATURE,
    "10-9-3": {
        "(a)": NotOurs("card manufacture (68 IAC 14-3) is the casino's, not the controller's"),
        "(b)": Enforced(
            ("controller.core.games.pai_gow:judge_cards",),
            (
                f"{PAI_GOW}::test_the_counts_are_the_published_ones",
                f"{GAME_MODULES}::test_a_five_card_link_still_refuses_the_joker",
            ),
        ),
        "(c)": Enforced(
            ("controller.core.games.pai_gow:seven_card_hand",),
            (f"{PAI_GOW}::test_the_judge_agrees_with_a_brute_force_joker",),
        ),
    },
    "10-9-14": {
        "(a)": Enforced(
            ("controller.core.games.pai_gow:judge_cards",),
            (f"{PAI_GOW}::test_the_game_s_odds_are_every_ranked_hand_over_all_hands",),
        ),
        "(b)": NotOurs(
            "ties between hands settle the base game; the progressive pays by ranking alone"
        ),
    },
    "10-12-3": {
        "(a)": NotOurs("the order of wagers at the table is the dealer's to keep"),
        "(b)": Enforced(
            ("controller.rules.wagers:check_denomination",),
            (f"{GAME_MODULES}::test_the_super_sevens_table_bets_one_dollar",),
        ),
        "(c)": NotOurs("the blackjack game itself (68 IAC 10-2) is not on the controller"),
        "(d)": NotOurs("which card a split hand counts is read by the table, which reports it"),
        "(e)": Enforced(
            ("controller.core.games.super_sevens:judge_cards",),
            (f"{SUPER_SEVENS}::test_the_judge_reads_the_first_cards_in_order",),
        ),
        "(f)": Enforced(
            (
                "controller.core.games.super_sevens:judge_cards",
                "controller.core.games:default_paytable",
                "controller.rules.pools:meterless",
            ),
            (
                f"{SUPER_SEVENS}::test_the_default_paytable_is_68_iac_10_12_3_f",
                f"{LEVELS}::test_a_level_no_hand_can_win_is_refused_and_fixed_pays_make_no_meter",
            ),
        ),
    },
}

# House policies: no subsection asks for them; each is cited as house policy, never as one.
HOUSE: dict[str, Enforced] = {
    "two-person correction": Enforced(
        ("controller.rules.house:check_correction_approval",),
        (
            f"{PAPERWORK}::test_a_correction_needs_a_second_different_person",
            f"{STORE_PAPERWORK}::test_a_correction_takes_two_people_and_a_document",
        ),
    ),
    "plausible credits": Enforced(
        ("controller.rules.house:most_credits",),
        (
            "tests/controller/core/test_reducer_properties.py::test_any_sequence_of_operations_keeps_every_invariant",
        ),
    ),
    # After NJ 13:69E-1.39B's dual control, a configured amount (Settings.second_signature_from).
    "second signature from an amount": Enforced(
        (
            "controller.rules.house:check_sign_off",
            "controller.rules.house:check_second_signature",
            "controller.rules.house:needs_second_signature",
        ),
        (
            "tests/controller/core/test_second_signature.py::test_a_second_different_person_signs_once_after_the_verification",
            "tests/controller/core/test_second_signature.py::test_the_reset_waits_for_every_signature_and_names_the_hits",
            "tests/controller/core/test_second_signature.py::test_only_an_award_from_a_meter_at_or_above_the_amount_needs_a_signature",
            "tests/web/test_api_tech_work.py::test_a_second_person_signs_off_before_the_reset",
            "tests/web/test_api_tech_work.py::test_below_the_amount_the_reset_needs_no_signature",
        ),
    ),
    # The operator's amount from which a fixed pay waits for a technician
    # (Settings.fixed_pay_technician_from); under it the dealer pays and play goes on.
    "fixed pays verified from an amount": Enforced(
        ("controller.rules.house:fixed_pay_needs_technician",),
        (
            "tests/controller/core/test_levels.py::test_fixed_pay_link_registers_bets_and_holds_only_from_the_operators_amount",
            "tests/web/test_api_tech_work.py::test_every_holding_hit_comes_whatever_the_other_work",
        ),
    ),
    # The operator's tax-reporting amount (Settings.tax_reporting_from): a tax form's
    # reference is recorded once, and only for an award that reaches it.
    "tax form reference from an amount": Enforced(
        ("controller.rules.house:check_tax_form", "controller.rules.house:needs_tax_form"),
        (
            "tests/controller/runtime/test_runtime_tax_form.py::test_recorded_once_from_the_amount_and_audited",
            "tests/web/test_api_slips_reports.py::test_slip_and_tax_form_of_a_royal_flush",
        ),
    ),
    # Adopted from NY 5321.18, Mississippi 13-8-2.9 and NJ 13:69O-1.5(c): the controller's
    # check of its own software at start, every 24 hours and on demand (Indiana asks none).
    "software self-check": Enforced(
        (
            "controller.rules.software:software_fault",
            "controller.rules.software:check_software",
            "controller.rules.software:check_interval",
            "controller.rules.software:check_digest",
            "controller.rules.software:held_reason",
            "controller.rules.software:check_recoverable",
        ),
        (
            f"{SELF_CHECK}::test_the_rule_names_the_first_file_and_how_many",
            f"{SELF_CHECK}::test_checked_at_least_every_24_hours_with_a_digest_strong_enough",
            f"{SELF_CHECK}::test_an_edited_missing_or_added_file_fails_the_check",
            f"{SELF_CHECK_CLI}::test_run_refuses_to_start_on_an_edited_file_naming_it",
            f"{SELF_CHECK_WEB}::test_a_check_on_demand_that_fails_holds_every_link_until_recovered",
            f"{SELF_CHECK_WEB}::test_the_schedule_finds_a_mismatch_while_running",
            "tests/storage/test_software_holds.py::test_a_hold_is_kept_until_two_people_recover_the_link",
        ),
    ),
    # Adopted from NJ 13:69D-1.52, a configured option (Settings.jackpot_odds_bound).
    "jackpot odds bound": Enforced(
        ("controller.rules.odds:check_jackpot_odds", "controller.rules.filing:check_paytable"),
        (
            "tests/controller/core/test_odds.py::test_a_jackpot_rarer_than_the_bound_is_refused_naming_it",
            "tests/controller/core/test_odds.py::test_the_default_bound_accepts_every_game",
            f"{SUBMISSIONS}::test_the_packet_carries_the_par_sheet_at_the_meter_and_the_bound_is_the_desks",
        ),
    ),
}


def subsections_in_text() -> dict[str, list[str]]:
    """Each section's subsections as the published text numbers them: lettered, or numbered
    where a section has no letters (10-1-4)."""
    text = SECTIONS.read_text()
    heads = list(re.finditer(r"^68 IAC (\S+) [A-Z]", text, re.M))
    found: dict[str, list[str]] = {}
    for i, head in enumerate(heads):
        body = text[head.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        letters = re.findall(r"^(?:Sec\. [\d.]+\. )?\(([a-z])\) ", body, re.M)
        numbers = re.findall(r"^(?:- )?\((\d+)\) ", body, re.M)
        found[head.group(1)] = [f"({x})" for x in letters] or [f"({x})" for x in numbers]
    return found


def resolve(target: str) -> object:
    module, _, name = target.partition(":")
    found: object = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


def test_the_text_has_every_section_and_its_subsections() -> None:
    found = subsections_in_text()
    assert set(found) == set(RULEBOOK)
    assert found["10-1-1.1"] == ["(a)", "(b)", "(c)", "(d)", "(e)"]
    assert found["10-1-4"] == ["(1)", "(2)", "(3)"]
    assert found["10-6-5"][-1] == "(j)" and found["10-7-5"][-1] == "(e)"


@pytest.mark.parametrize("section", sorted(RULEBOOK))
def test_every_subsection_is_mapped(section: str) -> None:
    assert list(RULEBOOK[section]) == subsections_in_text()[section]


def entries() -> list[tuple[str, Enforced]]:
    out = [
        (f"68 IAC {section}{sub}", entry)
        for section, subs in RULEBOOK.items()
        for sub, entry in subs.items()
        if isinstance(entry, Enforced)
    ]
    return out + [(f"house policy: {name}", entry) for name, entry in HOUSE.items()]


@pytest.mark.parametrize(("clause", "entry"), entries(), ids=[c for c, _ in entries()])
def test_each_mapped_rule_and_test_exists(clause: str, entry: Enforced) -> None:
    assert entry.rules and entry.tests, clause
    for rule in entry.rules:
        assert callable(resolve(rule)) or isinstance(resolve(rule), property), rule
    for test in entry.tests:
        path, _, name = test.partition("::")
        module = path.removesuffix(".py").replace("/", ".")
        assert callable(getattr(importlib.import_module(module), name, None)), test


def test_a_not_ours_entry_gives_its_reason() -> None:
    for section, subs in RULEBOOK.items():
        for sub, entry in subs.items():
            if isinstance(entry, NotOurs):
                assert len(entry.reason.split()) >= 4, f"{section}{sub}"


def test_house_policies_say_so() -> None:
    from controller.rules import house

    # Every house policy the rules cite is mapped above to its rule and its tests.
    cited = {
        value.removeprefix("house policy: ")
        for name, value in vars(house).items()
        if name.endswith("_CLAUSE") and value.startswith("house policy: ")
    }
    assert cited <= set(HOUSE), cited - set(HOUSE)

    assert house.TWO_PERSON_CLAUSE.startswith("house policy")
    assert house.SECOND_SIGNATURE_CLAUSE.startswith("house policy")
    doc = house.most_credits.__doc__ or ""
    assert "House policy" in doc and "10-6-5(f)(1)" in doc
    from controller.rules import odds
    from controller.settings import Settings

    # Copied from New Jersey: said to be house policy, and configurable with New Jersey's default.
    assert odds.JACKPOT_ODDS_CLAUSE.startswith("house policy adopted from NJ 13:69D")
    # The self-check follows New York's, Mississippi's and New Jersey's texts, as house policy.
    from controller.rules import software

    assert software.SOFTWARE_CLAUSE.startswith("house policy adopted from NY 5321.18")
    assert "68 IAC 10 asks for no such check" in (software.__doc__ or "")
    assert Settings().jackpot_odds_bound == odds.DEFAULT_JACKPOT_ODDS_BOUND == 100_000_000


# --------------------------------------------------------------------------------------------
# Only the rulebook cites a clause in a value or raises a refusal

# A clause as a value: "68 IAC ...", a section with a subsection ("10-1-1.1(", "10-7-5 ("), or
# the other jurisdictions' sections the rulebook adopts (New York's, New Jersey's, and
# Mississippi's for the software self-check). Comments and docstrings may cite a
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
