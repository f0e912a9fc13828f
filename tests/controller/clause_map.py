"""The clause map: for each jurisdiction, every subsection of the regulations the controller
is built from, with the rules that enforce it and the tests that fail when one of them stops
working, or why it is not the controller's; and the house policies, which no subsection asks
for, mapped the same way.

``RULEBOOKS`` holds one ``Rulebook`` per jurisdiction; a jurisdiction added to the rulebook
(``controller.rules``) adds its own here: its published texts, the copy of the sections it
maps, its clauses' prefix, the rulebook modules holding them, and its map.

A rule is named ``"module:qualified.name"``. ``test_rulebook.py`` breaks each one on purpose
and runs its entry's tests, which must fail: a check that refuses is made to accept
everything (``tests.mutation_plugin.accept``); anything else names in ``mutants`` how it is
broken (``tests/controller/mutants.py``). Keep each entry's tests few and fast: one or two
that truly exercise its rules.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

# The published texts (shared/seeds/, not part of this tree).
SEEDS = Path(os.environ.get("PROGRESSIVE_SEEDS", "/work/shared/seeds"))
HERE = Path(__file__).parent


@dataclass(frozen=True)
class Enforced:
    rules: tuple[str, ...]  # "module:qualified.name"
    tests: tuple[str, ...]  # "tests/path.py::test_name"
    # How a rule is broken when accepting everything does not fit it: rule -> "module:factory".
    mutants: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NotOurs:
    reason: str


@dataclass(frozen=True)
class HousePolicy(Enforced):
    """A rule of the controller's own, cited as house policy: ``clause`` names the constant
    the rulebook cites it by (``"module:NAME_CLAUSE"``); None for a rule that refuses nothing
    and says it is house policy in its docstring."""

    clause: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, kw_only=True)
class Rulebook:
    name: str
    clause_prefix: str  # how the jurisdiction's clauses begin: "68 IAC"
    seeds: tuple[Path, ...]  # the published texts
    text: Path  # the copy of the sections mapped, as published
    modules: tuple[str, ...]  # the rulebook modules that hold its clauses
    sections: Mapping[str, Mapping[str, Enforced | NotOurs]]
    house: Mapping[str, HousePolicy]


# --- how rules are broken (tests/controller/mutants.py) ---------------------------------------

_M = "tests.controller.mutants"
ZERO = f"{_M}:zero"
GIVES_ZERO = f"{_M}:gives_zero"
NEVER = f"{_M}:never"
FINDS_NOTHING = f"{_M}:finds_nothing"
DOES_NOTHING = f"{_M}:does_nothing"
RECORDS_NOTHING = f"{_M}:records_nothing"
FINDS_NONE_OF_THEM = f"{_M}:records_nothing"
COUNTS_HIDDEN = f"{_M}:counts_hidden"
NO_LIMIT = f"{_M}:no_limit"
ANY_HAND_PAYS = f"{_M}:any_hand_pays"
PAYS_A_CENT_MORE = f"{_M}:pays_a_cent_more"
JOKER_WILD = f"{_M}:joker_wild"
WITHOUT_PROGRESSIVE_GAMES = f"{_M}:without_progressive_games"
IGNORES_THE_BOUND = f"{_M}:ignores_the_bound"
SHOWS_THE_RESET_AMOUNT = f"{_M}:shows_the_reset_amount"
SHOWS_NOTHING = f"{_M}:shows_nothing"
WON_AMOUNT_NOT_SHOWN = f"{_M}:won_amount_not_shown"
RESET_AMOUNT_NOT_SHOWN = f"{_M}:reset_amount_not_shown"
ANNOUNCES_NOTHING = f"{_M}:announces_nothing"
ANNOUNCES_THE_LAST_ONLY = f"{_M}:announces_the_last_only"

# --- rules named by more than one entry ---------------------------------------------------------

CONTRIBUTION = "controller.core.money:contribution_units"
DISPLAY = "controller.core.reducer.display:display_frame"
ANNOUNCEMENTS = "controller.core.reducer.display:announcements"
DEFAULT_PAYTABLE = "controller.core.games.paytables:default_paytable"
DENOMINATION = "controller.rules.wagers:check_denomination"
NOTICE = "controller.rules.filing:check_notice"
REVIEWER = "controller.rules.filing:check_reviewer"
LIVE = "controller.rules.filing:check_live"
RETENTION = "controller.rules.meter_records:check_retention_years"
PAI_GOW_JUDGE = "controller.core.games.pai_gow:judge_cards"
SEVENS_JUDGE = "controller.core.games.super_sevens:judge_cards"
FIXED_PAYS = "controller.rules.fixed_pays:fixed_pay_problems"
FIXED_PAYS_TESTS = "tests/controller/test_fixed_pays.py"

# --- the tests ----------------------------------------------------------------------------------

MONEY = "tests/controller/core/test_money.py"
INDIANA_LEVELS = "tests/controller/core/test_indiana_levels.py"
SELF_CHECK = "tests/controller/test_self_check.py"
POOL_FILING = "tests/controller/paperwork/test_pool_filing.py"
RATE_READ = "controller.rules.pools:rate_of_progression_bp"
RATE_PROBLEM = "controller.rules.pools:rate_problem"
ENGINE = "tests/controller/core/test_reducer.py"
GOVERNANCE = "tests/controller/paperwork/test_governance.py"
PACKET = "tests/controller/paperwork/test_packet.py"
PAPERWORK = "tests/controller/core/test_paperwork_rules.py"
SUBMISSIONS = "tests/controller/storage/test_submissions.py"
PAI_GOW = "tests/controller/core/test_pai_gow.py"
SUPER_SEVENS = "tests/controller/core/test_super_sevens.py"
GAMES = "tests/controller/core/test_games.py"
GAME_MODULES = "tests/controller/core/test_game_modules.py"
LEVELS = "tests/controller/core/test_levels.py"
ANNOUNCED = "tests/controller/core/test_announcements.py"
CHAIN = "tests/controller/core/test_ledger_chain.py"
SIGNATURE = "tests/controller/core/test_second_signature.py"
ODDS = "tests/controller/core/test_odds.py"
SLIPS = "tests/controller/paperwork/test_slips.py"

# --- Indiana: 68 IAC 10 -------------------------------------------------------------------------

# 68 IAC 10-6-5 and 10-8-5 say the same for their games (Caribbean Stud, Caribbean Draw).
_PROGRESSIVE_FEATURE: dict[str, Enforced | NotOurs] = {
    "(a)": NotOurs("which tables a licensee may link is the licensee's choice, not a rule"),
    "(b)": Enforced(
        ("controller.core.ledger:seal", "controller.core.ledger:ChainVerifier.feed"),
        (f"{CHAIN}::test_sealed_chain_verifies_whole", f"{CHAIN}::test_edited_amount_is_caught"),
        mutants={
            "controller.core.ledger:seal": RECORDS_NOTHING,
            "controller.core.ledger:ChainVerifier.feed": FINDS_NOTHING,
        },
    ),
    "(c)": Enforced(
        (
            "controller.rules.meter_records:check_reduction_explained",
            "controller.rules.meter_records:check_reduction_documented",
            "controller.rules.meter_records:check_correction_request",
        ),
        (
            f"{MONEY}::test_reduction_without_reason_refused",
            f"{PAPERWORK}::test_a_reduction_request_needs_a_reason_and_a_document",
        ),
    ),
    "(d)": Enforced(
        (
            RETENTION,
            "controller.rules.meter_records:METER_RETENTION_YEARS",
            "controller.rules.meter_records:check_retention_not_shortened",
        ),
        (f"{PAPERWORK}::test_retention_periods_can_only_lengthen",),
        mutants={"controller.rules.meter_records:METER_RETENTION_YEARS": ZERO},
    ),
    "(e)": Enforced(
        (DISPLAY,),
        (f"{ENGINE}::test_display_is_live_without_a_win",),
        mutants={DISPLAY: SHOWS_THE_RESET_AMOUNT},
    ),
    "(f)": Enforced(
        (CONTRIBUTION,),
        (f"{ENGINE}::test_contribution_is_credits_times_denomination_times_rate",),
        mutants={CONTRIBUTION: GIVES_ZERO},
    ),
    "(g)": Enforced(
        (DISPLAY, ANNOUNCEMENTS),
        (
            f"{ENGINE}::test_display_after_a_meter_paid_hit",
            f"{ANNOUNCED}::test_a_grand_after_a_mini_is_shown_at_once_and_the_mini_again_whole_after",
        ),
        mutants={DISPLAY: WON_AMOUNT_NOT_SHOWN, ANNOUNCEMENTS: ANNOUNCES_NOTHING},
    ),
    "(h)": Enforced(
        (DISPLAY,),
        (f"{ENGINE}::test_display_is_live_without_a_win",),
        mutants={DISPLAY: SHOWS_NOTHING},
    ),
    "(i)": Enforced(
        (DISPLAY, ANNOUNCEMENTS, "controller.core.reducer.hits:reset_after_jackpot"),
        (
            f"{ENGINE}::test_royal_flush_pays_displayed_whole_cents_and_resets",
            f"{ENGINE}::test_display_reset_phase_shows_the_current_meter",
            f"{ANNOUNCED}::test_no_win_is_ever_dropped_or_announced_for_less_than_its_whole_time",
        ),
        mutants={
            DISPLAY: RESET_AMOUNT_NOT_SHOWN,
            ANNOUNCEMENTS: ANNOUNCES_THE_LAST_ONLY,
            "controller.core.reducer.hits:reset_after_jackpot": DOES_NOTHING,
        },
    ),
    "(j)": NotOurs("the patents describe the game's equipment; the controller follows (f)"),
}

INDIANA_SECTIONS: dict[str, dict[str, Enforced | NotOurs]] = {
    "10-1-1.1": {
        "(a)": NotOurs("says to whom the section applies"),
        # The rate is what the jackpot a patron can win grows by for each credit: the shown
        # shares; a hidden share does not count where the jurisdiction says so.
        "(b)": Enforced(
            (CONTRIBUTION, RATE_READ, RATE_PROBLEM),
            (
                f"{ENGINE}::test_contribution_is_credits_times_denomination_times_rate",
                f"{INDIANA_LEVELS}::test_only_the_shown_shares_are_the_rate_of_progression",
            ),
            mutants={
                CONTRIBUTION: GIVES_ZERO,
                RATE_READ: COUNTS_HIDDEN,
                RATE_PROBLEM: FINDS_NOTHING,
            },
        ),
        "(c)": Enforced(
            ("controller.rules.progression:check_rate_of_progression",),
            (
                f"{MONEY}::test_rate_outside_sixty_to_hundred_refused",
                f"{MONEY}::test_rate_inside_range_accepted",
                f"{INDIANA_LEVELS}::test_a_classic_link_outside_the_bounds_is_refused_with_the_jurisdictions_figures",
            ),
        ),
        # Level by level: only a level's own win unlocks its share.
        "(d)": Enforced(
            (
                "controller.rules.progression:check_rate_change",
                "controller.rules.progression:check_shares_change",
            ),
            (
                f"{MONEY}::test_rate_change_locked_until_a_jackpot",
                f"{GOVERNANCE}::test_a_rate_change_before_any_jackpot_is_refused",
                f"{POOL_FILING}::test_a_mini_win_unlocks_the_minis_share_and_never_the_grands",
            ),
        ),
        # (e)(2): a new link is filed with every table's location (``check_table_locations``).
        "(e)": Enforced(
            (
                "controller.rules.filing:check_change",
                "controller.paperwork.governance:build_packet",
                "controller.rules.filing:check_table_locations",
            ),
            (
                f"{PACKET}::test_the_packet_gives_each_table_s_game_location_rate_and_reset",
                f"{GOVERNANCE}::test_a_change_gives_what_it_changes",
                f"{GOVERNANCE}::test_a_new_link_is_filed_with_every_tables_location",
            ),
            mutants={"controller.paperwork.governance:build_packet": WITHOUT_PROGRESSIVE_GAMES},
        ),
    },
    "10-1-3": {
        "(a)": NotOurs("says that rules of the game are submitted; (c) says how"),
        "(b)": NotOurs("the content of the rules of the game is the licensee's to write"),
        # (c)(1): sixty days before a new game plays, never waived (``check_waiver``).
        "(c)": Enforced(
            (
                NOTICE,
                REVIEWER,
                LIVE,
                "controller.rules.filing:check_not_yet_approved",
                "controller.rules.filing:check_waiver",
            ),
            (
                f"{GOVERNANCE}::test_a_notice_period_short_of_its_days_is_refused",
                f"{GOVERNANCE}::test_no_waiver_lifts_a_new_links_sixty_days",
                f"{GOVERNANCE}::test_only_a_commission_agent_reviews",
                f"{SUBMISSIONS}::test_a_new_link_does_not_play_until_approved",
            ),
        ),
        "(d)": NotOurs("the executive director's direction is filed as an amendment (10-1-4)"),
    },
    "10-1-4": {
        # "Unless otherwise provided by the executive director": the director's written
        # direction for one amendment, filed with it and confirmed by the agent who approves.
        "(1)": Enforced(
            (
                NOTICE,
                "controller.rules.filing:check_waiver",
                "controller.rules.filing:check_waiver_confirmed",
            ),
            (
                f"{GOVERNANCE}::test_a_notice_period_short_of_its_days_is_refused",
                f"{GOVERNANCE}::test_the_executive_directors_waiver_lets_an_amendment_take_effect_sooner",
                f"{GOVERNANCE}::test_a_waiver_names_who_gave_it_its_reference_date_and_document",
                f"{GOVERNANCE}::test_a_submission_with_a_waiver_is_approved_only_once_the_agent_confirms_it",
            ),
        ),
        "(2)": Enforced(
            (REVIEWER, "controller.rules.filing:check_rejection_reason"),
            (
                f"{GOVERNANCE}::test_only_a_commission_agent_reviews",
                f"{GOVERNANCE}::test_nobody_reviews_their_own_submission_and_a_rejection_has_a_reason",
            ),
        ),
        "(3)": Enforced(
            ("controller.rules.filing:check_nothing_armed", LIVE),
            (
                f"{SUBMISSIONS}::test_a_rate_change_filed_approved_and_applied_at_the_next_reset",
                f"{SUBMISSIONS}::test_a_new_link_does_not_play_until_approved",
            ),
        ),
    },
    "10-1-5": {
        "(a)": NotOurs("table limits of the base game are posted at the table, not on the link"),
        "(b)": NotOurs("minimum and maximum wagers are amended at the table by signs and dealers"),
        "(c)": NotOurs("raising a patron's house limit is a procedure of the rules of the game"),
        "(d)": Enforced(
            ("controller.rules.pools:shape_problems",),
            (
                f"{INDIANA_LEVELS}::test_a_stud_link_whose_only_jackpot_is_capped_at_2000_is_refused",
                f"{INDIANA_LEVELS}::test_a_mystery_level_or_a_limit_passing_on_is_refused",
            ),
            mutants={"controller.rules.pools:shape_problems": FINDS_NONE_OF_THEM},
        ),
    },
    "10-1-6.2": {
        "(a)": Enforced(
            ("controller.rules.integrity:check_return_to_play",),
            (f"{PAPERWORK}::test_return_to_play_needs_remedial_action_and_verification",),
        ),
        "(b)": Enforced(
            (
                "controller.rules.integrity:check_removal",
                "controller.rules.integrity:check_remedial_action",
                "controller.rules.integrity:check_verification",
            ),
            (
                f"{PAPERWORK}::test_a_removal_is_recorded_with_its_facts_when_questioned",
                f"{PAPERWORK}::test_a_remedial_action_and_its_verification_are_recorded_whole",
            ),
        ),
        "(c)": Enforced(
            (RETENTION, "controller.rules.integrity:INTEGRITY_RETENTION_YEARS"),
            (f"{PAPERWORK}::test_retention_periods_can_only_lengthen",),
            mutants={"controller.rules.integrity:INTEGRITY_RETENTION_YEARS": ZERO},
        ),
    },
    "10-6-5": _PROGRESSIVE_FEATURE,
    "10-7-5": {
        "(a)": NotOurs("whether a table offers the bonus feature is the licensee's choice"),
        "(b)": Enforced(
            (DENOMINATION,),
            (f"{ENGINE}::test_a_let_it_ride_bonus_table_bets_one_dollar",),
        ),
        "(c)": NotOurs(
            "the sensor light and lockout switch are the table controller's; the one dollar bet "
            "is (b)'s check"
        ),
        # The bonus's ranking stops at two pair (``let_it_ride.RANKING``); a paytable pays only
        # what its game's ranking holds.
        "(d)": Enforced(
            ("controller.core.games.module:GameRules.pays", FIXED_PAYS),
            (
                f"{GAMES}::test_let_it_ride_bonus_cannot_pay_one_pair",
                f"{FIXED_PAYS_TESTS}::test_a_let_it_ride_bonus_envy_line_is_refused_under_indiana",
            ),
            mutants={
                "controller.core.games.module:GameRules.pays": ANY_HAND_PAYS,
                FIXED_PAYS: FINDS_NONE_OF_THEM,
            },
        ),
        "(e)": Enforced(
            (
                DEFAULT_PAYTABLE,
                "controller.rules.pools:fixed_pay_only",
                "controller.rules.pools:check_pool_lines",
                FIXED_PAYS,
            ),
            (
                f"{GAMES}::test_let_it_ride_bonus_default_is_68_iac_10_7_5_e",
                f"{LEVELS}::test_fixed_pay_link_registers_bets_and_holds_only_from_the_operators_amount",
                f"{FIXED_PAYS_TESTS}::test_a_let_it_ride_bonus_royal_of_twenty_thousand_dollars_is_refused_under_indiana",
            ),
            mutants={
                DEFAULT_PAYTABLE: PAYS_A_CENT_MORE,
                "controller.rules.pools:fixed_pay_only": NEVER,
                FIXED_PAYS: FINDS_NONE_OF_THEM,
            },
        ),
    },
    "10-8-5": _PROGRESSIVE_FEATURE,
    "10-9-3": {
        "(a)": NotOurs("card manufacture (68 IAC 14-3) is the casino's, not the controller's"),
        "(b)": Enforced(
            (PAI_GOW_JUDGE,),
            (f"{PAI_GOW}::test_the_judge_refuses_what_is_not_a_hand",),
            mutants={PAI_GOW_JUDGE: FINDS_NOTHING},
        ),
        "(c)": Enforced(
            ("controller.core.games.pai_gow:seven_card_hand",),
            (f"{PAI_GOW}::test_the_judge",),
            mutants={"controller.core.games.pai_gow:seven_card_hand": JOKER_WILD},
        ),
    },
    "10-9-14": {
        "(a)": Enforced(
            (PAI_GOW_JUDGE,),
            (f"{PAI_GOW}::test_the_judge",),
            mutants={PAI_GOW_JUDGE: FINDS_NOTHING},
        ),
        "(b)": NotOurs(
            "ties between hands settle the base game; the progressive pays by ranking alone"
        ),
    },
    "10-12-3": {
        "(a)": NotOurs("the order of wagers at the table is the dealer's to keep"),
        # "A maximum wager of one dollar": at most $1 (fifty cents plays).
        "(b)": Enforced(
            (DENOMINATION,),
            (f"{GAME_MODULES}::test_the_super_sevens_table_bets_one_dollar",),
        ),
        "(c)": NotOurs("the blackjack game itself (68 IAC 10-2) is not on the controller"),
        "(d)": NotOurs("which card a split hand counts is read by the table, which reports it"),
        # No seven first, no win: no envy line and no mystery level either (they pay patrons
        # whatever their first card).
        "(e)": Enforced(
            (SEVENS_JUDGE, FIXED_PAYS),
            (
                f"{SUPER_SEVENS}::test_the_judge_reads_the_first_cards_in_order",
                f"{FIXED_PAYS_TESTS}::test_super_sevens_envy_lines_and_mystery_levels_are_refused_under_indiana",
            ),
            mutants={SEVENS_JUDGE: FINDS_NOTHING, FIXED_PAYS: FINDS_NONE_OF_THEM},
        ),
        # (f)(2)-(3): two sevens on the first two cards, a third card dealt or not.
        "(f)": Enforced(
            (
                SEVENS_JUDGE,
                DEFAULT_PAYTABLE,
                "controller.core.games.paytables:meterless",
                FIXED_PAYS,
            ),
            (
                f"{SUPER_SEVENS}::test_the_judge_reads_the_first_cards_in_order",
                f"{FIXED_PAYS_TESTS}::test_super_sevens_pays_68_iac_10_12_3_f_exactly_under_indiana",
                f"{SUPER_SEVENS}::test_the_default_paytable_is_68_iac_10_12_3_f",
                f"{LEVELS}::test_a_level_no_hand_can_win_is_refused_and_fixed_pays_make_no_meter",
            ),
            mutants={
                SEVENS_JUDGE: FINDS_NOTHING,
                DEFAULT_PAYTABLE: PAYS_A_CENT_MORE,
                "controller.core.games.paytables:meterless": NEVER,
                FIXED_PAYS: FINDS_NONE_OF_THEM,
            },
        ),
    },
}

# House policies: no subsection asks for them; each is cited as house policy, never as one.
INDIANA_HOUSE: dict[str, HousePolicy] = {
    "two-person correction": HousePolicy(
        ("controller.rules.house:check_correction_approval",),
        (f"{PAPERWORK}::test_a_correction_needs_a_second_different_person",),
        clause="controller.rules.house:TWO_PERSON_CLAUSE",
    ),
    # Adopted from NY 5321.18 and NJ 13:69E-1.39B: a link whose state fails its seals is
    # inoperable until two people recover it from its history.
    "recovery by two people": HousePolicy(
        ("controller.rules.house:check_recovery",),
        (f"{PAPERWORK}::test_a_recovery_states_its_reason_and_takes_two_people",),
        clause="controller.rules.house:RECOVERY_CLAUSE",
    ),
    # Adopted from NY 5321.18, Mississippi 13-8-2.9 and NJ 13:69O-1.5(c): the controller's
    # check of its own software at start, every 24 hours and on demand (Indiana asks none).
    "software self-check": HousePolicy(
        (
            "controller.rules.software:check_software",
            "controller.rules.software:check_interval",
            "controller.rules.software:check_digest",
            "controller.rules.software:check_recoverable",
        ),
        (
            f"{SELF_CHECK}::test_the_rule_names_the_first_file_and_how_many",
            f"{SELF_CHECK}::test_checked_at_least_every_24_hours_with_a_digest_strong_enough",
            f"{SELF_CHECK}::test_an_edited_missing_or_added_file_fails_the_check",
        ),
        clause="controller.rules.software:SOFTWARE_CLAUSE",
    ),
    "plausible credits": HousePolicy(
        ("controller.rules.house:most_credits",),
        (f"{ENGINE}::test_plausibility_limit_uses_seats_and_credits_per_round",),
        mutants={"controller.rules.house:most_credits": NO_LIMIT},
    ),
    # After NJ 13:69E-1.39B's dual control, a configured amount (Settings.second_signature_from).
    "second signature from an amount": HousePolicy(
        (
            "controller.rules.house:check_sign_off",
            "controller.rules.house:check_second_signature",
            "controller.rules.house:needs_second_signature",
        ),
        (
            f"{SIGNATURE}::test_a_second_different_person_signs_once_after_the_verification",
            f"{SIGNATURE}::test_the_reset_waits_for_every_signature_and_names_the_hits",
            f"{SIGNATURE}::test_only_an_award_from_a_meter_at_or_above_the_amount_needs_a_signature",
        ),
        mutants={"controller.rules.house:needs_second_signature": NEVER},
        clause="controller.rules.house:SECOND_SIGNATURE_CLAUSE",
    ),
    # The operator's amount from which a fixed pay waits for a technician
    # (Settings.fixed_pay_technician_from); under it the dealer pays and play goes on.
    "fixed pays verified from an amount": HousePolicy(
        ("controller.rules.house:fixed_pay_needs_technician",),
        (f"{LEVELS}::test_fixed_pay_link_registers_bets_and_holds_only_from_the_operators_amount",),
        mutants={"controller.rules.house:fixed_pay_needs_technician": NEVER},
        clause="controller.rules.house:FIXED_PAY_TECHNICIAN_CLAUSE",
    ),
    # The operator's tax-reporting amount (Settings.tax_reporting_from): a tax form's
    # reference is recorded once, and only for an award that reaches it.
    "tax form reference from an amount": HousePolicy(
        ("controller.rules.house:check_tax_form", "controller.rules.house:needs_tax_form"),
        (
            "tests/controller/runtime/test_runtime_tax_form.py::test_recorded_once_from_the_amount_and_audited",
            f"{SLIPS}::test_tax_line_iff_the_award_reaches_the_amount",
        ),
        mutants={"controller.rules.house:needs_tax_form": NEVER},
        clause="controller.rules.house:TAX_FORM_CLAUSE",
    ),
    # Adopted from NJ 13:69D-1.52, a configured option (Settings.jackpot_odds_bound).
    "jackpot odds bound": HousePolicy(
        ("controller.rules.odds:check_jackpot_odds", "controller.rules.filing:check_paytable"),
        (
            f"{ODDS}::test_a_jackpot_rarer_than_the_bound_is_refused_naming_it",
            f"{SUBMISSIONS}::test_the_packet_carries_the_par_sheet_at_the_meter_and_the_bound_is_the_desks",
        ),
        mutants={"controller.rules.filing:check_paytable": IGNORES_THE_BOUND},
        clause="controller.rules.odds:JACKPOT_ODDS_CLAUSE",
    ),
}

INDIANA = Rulebook(
    name="Indiana",
    clause_prefix="68 IAC",
    # 68 IAC 10 whole; 10-12-3 (Super Sevens) and 10-9-13 (Pai Gow, setting the hands) apart.
    seeds=(
        SEEDS / "000_45e21184712372f8.txt",
        SEEDS / "003_1acbbf72bd385998.txt",
        SEEDS / "004_1abfd3cdd08a9daf.txt",
    ),
    text=HERE / "rulebook_sections.txt",
    modules=(
        "controller.rules.filing",
        "controller.rules.fixed_pays",
        "controller.rules.integrity",
        "controller.rules.jurisdictions.indiana",
        "controller.rules.pools",
        "controller.rules.progression",
        "controller.rules.meter_records",
        "controller.rules.wagers",
    ),
    sections=INDIANA_SECTIONS,
    house=INDIANA_HOUSE,
)

RULEBOOKS: dict[str, Rulebook] = {"indiana": INDIANA}
