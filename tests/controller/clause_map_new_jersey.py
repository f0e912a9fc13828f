"""New Jersey's clause map: every clause ``NEW_JERSEY`` cites (its clauses, its records, its
waiver) and the sections its allowances rest on, each with the rule that applies it and the
tests that check it; the house policies it keeps where N.J.A.C. sets no figure likewise.

Indiana's map is ``test_rulebook.RULEBOOK``; this one is checked by
``test_new_jersey_clause_map.py``. The texts: ``NEW_JERSEY.texts`` (the published sections;
not in the shared seeds), quoted in ``controller.rules.jurisdictions.new_jersey``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Enforced:
    rules: tuple[str, ...]  # "module:qualified.name"
    tests: tuple[str, ...]  # "tests/path.py::test_name"


@dataclass(frozen=True)
class Allowed:
    """A clause that allows a shape (``Allows`` field): nothing to refuse, the tests show the
    shape opening and playing under New Jersey."""

    shapes: tuple[str, ...]
    tests: tuple[str, ...]


NJ = "tests/controller/test_new_jersey.py"
FLOORS = "tests/app/test_demo_floors.py"
ENGINE = "tests/controller/core/test_reducer.py"
MONEY = "tests/controller/core/test_money.py"
GOVERNANCE = "tests/controller/paperwork/test_governance.py"
PAPERWORK = "tests/controller/core/test_paperwork_rules.py"
SUBMISSIONS = "tests/controller/storage/test_submissions.py"
METER_LINES = "tests/controller/paperwork/test_meter_lines.py"
OPEN_UNDER_NJ = f"{FLOORS}::test_new_jerseys_floor_opens_and_plays_every_shape_under_new_jersey"

NEW_JERSEY_RULEBOOK: dict[str, Enforced | Allowed] = {
    # 13:69D-1.52(e): the initial and reset amounts, the rate of progression and the probability
    # of each jackpot, submitted to the Division before the table is placed on the floor; no
    # period in days (new_game_notice_days 0), so no waiver.
    "N.J.A.C. 13:69D-1.52(e)": Enforced(
        (
            "controller.rules.filing:check_new_link",
            "controller.rules.filing:check_notice",
            "controller.rules.filing:check_reviewer",
            "controller.paperwork.governance:build_packet",
        ),
        (
            OPEN_UNDER_NJ,
            f"{NJ}::test_new_jerseys_numbers_are_its_own_or_the_houses",
            f"{GOVERNANCE}::test_only_a_commission_agent_reviews",
        ),
    ),
    # 13:69D-1.52(e)3: the rate "shall not be changed except upon notice to the casino
    # accounting department": a change is filed (amendment_notice_days 0).
    "N.J.A.C. 13:69D-1.52(e)3": Enforced(
        ("controller.rules.filing:check_change", "controller.rules.filing:check_notice"),
        (
            f"{SUBMISSIONS}::test_a_rate_change_filed_approved_and_applied_at_the_next_reset",
            f"{NJ}::test_new_jerseys_numbers_are_its_own_or_the_houses",
        ),
    ),
    # 13:69D-1.52(e)4: "shall not exceed 100 million to one".
    "N.J.A.C. 13:69D-1.52(e)4": Enforced(
        ("controller.rules.odds:check_jackpot_odds", "controller.rules.filing:check_paytable"),
        (
            f"{NJ}::test_a_paytable_rarer_than_new_jerseys_bound_is_refused",
            "tests/controller/core/test_odds.py::test_a_jackpot_rarer_than_the_bound_is_refused_naming_it",
        ),
    ),
    # 13:69D-1.52(f): a meter is decreased only for an amount paid and recorded (or as (f)
    # lists): every reduction names its hit or its documented correction.
    "N.J.A.C. 13:69D-1.52(f)": Enforced(
        (
            "controller.rules.meter_records:check_reduction_explained",
            "controller.rules.meter_records:check_reduction_documented",
        ),
        (
            f"{MONEY}::test_reduction_without_reason_refused",
            f"{ENGINE}::test_correction_with_a_document",
        ),
    ),
    # 13:69E-1.39A(a)1-5: the parameters of each progressive award, as each level keeps them.
    "N.J.A.C. 13:69E-1.39A(a)1-5": Enforced(
        (
            "controller.core.reducer.levels:LevelConfig.to_dict",
            "controller.paperwork.governance:build_packet",
        ),
        (
            f"{NJ}::test_a_pool_of_every_shape_opens_under_new_jersey",
            "tests/controller/paperwork/test_pool_packets.py::test_a_four_level_link_with_a_mystery_level_files_its_levels_and_their_par_sheet",
        ),
    ),
    # 13:69E-1.39A(a)3 and (a)5: the rate of progression and the hidden rate, two parameters.
    "N.J.A.C. 13:69E-1.39A(a)3, (a)5": Enforced(
        ("controller.rules.pools:check_levels_rate",),
        (f"{NJ}::test_new_jersey_allows_every_shape_indiana_forbids",),
    ),
    # 13:69E-1.39A(a)6: the unreasonable contribution, held rather than credited.
    "N.J.A.C. 13:69E-1.39A(a)6": Enforced(
        ("controller.rules.house:most_credits",),
        (
            f"{ENGINE}::test_plausibility_limit_by_elapsed_time",
            f"{ENGINE}::test_approve_anomaly_credits_exactly_its_units_in_the_reviewers_name",
        ),
    ),
    # 13:69E-1.39A(b)1: the qualifying wagers counted, the contribution they make.
    "N.J.A.C. 13:69E-1.39A(b)1": Enforced(
        ("controller.core.money:contribution_units",),
        (f"{ENGINE}::test_contribution_is_credits_times_denomination_times_rate",),
    ),
    # 13:69E-1.39A(b)2: the display meter.
    "N.J.A.C. 13:69E-1.39A(b)2": Enforced(
        ("controller.core.reducer:display_frame",),
        (f"{ENGINE}::test_display_is_live_without_a_win",),
    ),
    # 13:69E-1.39A(b)3-4: each level's hits and what they paid, read from its award entries.
    "N.J.A.C. 13:69E-1.39A(b)3": Enforced(
        ("controller.paperwork.meter_lines:level_hits",),
        (f"{METER_LINES}::test_each_levels_hits_come_from_its_award_entries",),
    ),
    "N.J.A.C. 13:69E-1.39A(b)4": Enforced(
        ("controller.paperwork.meter_lines:level_hits",),
        (f"{METER_LINES}::test_each_levels_hits_come_from_its_award_entries",),
    ),
    # 13:69E-1.39A(a)4 and (b)5: a limit, and the overflow meter past it.
    "N.J.A.C. 13:69E-1.39A(b)5": Enforced(
        ("controller.paperwork.meter_lines:meter_line_summary",),
        (
            f"{NJ}::test_above_its_limit_a_level_passes_on_or_overflows_under_new_jersey",
            f"{METER_LINES}::test_every_meter_reconciles_exactly_from_its_entries",
        ),
    ),
    # The limit is "the maximum progressive value that can be reached": a mystery level's
    # ceiling is one.
    "N.J.A.C. 13:69E-1.39A(a)4, (b)5": Allowed(
        ("level_limits", "mystery_levels"),
        (
            f"{NJ}::test_above_its_limit_a_level_passes_on_or_overflows_under_new_jersey",
            f"{NJ}::test_the_mystery_level_hits_by_its_trigger_under_new_jersey",
            OPEN_UNDER_NJ,
        ),
    ),
    # 13:69E-1.39A(a)5 and (b)6: the hidden rate and the reserved pool meter.
    "N.J.A.C. 13:69E-1.39A(b)6": Enforced(
        ("controller.paperwork.meter_lines:meter_line_summary",),
        (
            f"{NJ}::test_the_hidden_share_funds_the_reset_and_the_overflow_moves_in_under_new_jersey",
            f"{METER_LINES}::test_every_meter_reconciles_exactly_from_its_entries",
        ),
    ),
    "N.J.A.C. 13:69E-1.39A(a)5, (b)6": Allowed(
        ("hidden_shares",),
        (
            f"{NJ}::test_the_hidden_share_funds_the_reset_and_the_overflow_moves_in_under_new_jersey",
        ),
    ),
    # 13:69E-1.39B(d)3: unplayable when communication is lost (no time set: the table's own).
    "N.J.A.C. 13:69E-1.39B(d)3": Enforced(
        ("link_adapters.register_map:next_heartbeat",),
        (
            "tests/link_adapters/test_simulator_table.py::test_heartbeat_timeout_disables_and_fresh_heartbeat_reenables",
        ),
    ),
    # 13:69E-1.39C(a): devices in two or more casinos on an approved progressive system.
    "N.J.A.C. 13:69E-1.39C(a)": Allowed(
        ("links_across_properties",), (f"{NJ}::test_new_jersey_allows_every_shape_indiana_forbids",)
    ),
}

# Where N.J.A.C. sets no figure: the house's, each said to be house policy in its clause.
NEW_JERSEY_HOUSE: dict[str, Enforced] = {
    "house policy: a rate of progression of 60% to 100%": Enforced(
        ("controller.rules.progression:check_rate_of_progression",),
        (
            f"{GOVERNANCE}::test_a_rate_outside_60_to_100_percent_is_refused",
            f"{NJ}::test_new_jerseys_numbers_are_its_own_or_the_houses",
        ),
    ),
    "house policy: a rate fixed until its jackpot is won": Enforced(
        ("controller.rules.progression:check_rate_change",),
        (f"{GOVERNANCE}::test_a_rate_change_before_any_jackpot_is_refused",),
    ),
    "house policy: a link plays once its submission is approved": Enforced(
        ("controller.rules.filing:check_live", "controller.rules.filing:check_not_yet_approved"),
        (f"{SUBMISSIONS}::test_a_new_link_does_not_play_until_approved", OPEN_UNDER_NJ),
    ),
    "house policy: every linked table named with its location": Enforced(
        ("controller.paperwork.governance:build_packet",),
        (OPEN_UNDER_NJ,),
    ),
    "house policy: meter records kept five years": Enforced(
        ("controller.rules.meter_records:check_retention_years",),
        (f"{PAPERWORK}::test_retention_periods_can_only_lengthen",),
    ),
    "house policy: device records kept one year": Enforced(
        ("controller.rules.meter_records:check_retention_years",),
        (f"{PAPERWORK}::test_retention_periods_can_only_lengthen",),
    ),
    "house policy: a fixed-pay link has no meter": Enforced(
        ("controller.rules.pools:check_pool", "controller.rules.pools:fixed_pay_only"),
        (
            f"{NJ}::test_fixed_pay_links_open_under_new_jersey_with_no_meter",
            "tests/controller/core/test_levels.py::test_fixed_pay_link_registers_bets_and_holds_only_from_the_operators_amount",
        ),
    ),
}
