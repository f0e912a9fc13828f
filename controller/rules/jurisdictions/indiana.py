"""Indiana: 68 IAC 10, Conduct of Gaming (shared seeds 000, 003, 004).

What it allows, read from the text:
- 68 IAC 10-1-5(d): "A riverboat licensee may only limit live gaming maximum jackpots by
  limiting wager amount." No level limit (no overflow, no next level), and no mystery
  (must-hit-by) level, whose ceiling limits the jackpot it can reach.
- 68 IAC 10-1-1.1(b): the rate of progression is the amount by which the progressive jackpot
  increases per credit wagered. A hidden share does not increase the jackpot a patron sees:
  it may fund the next reset, but it does not count in the 60 % of (c); shown and hidden
  together take no more than the wager.
- 68 IAC 10-1-1.1(d): the rate "shall not be changed until after a patron wins the jackpot".
  Each level is a jackpot with its own rate (its share): only that level's win unlocks it.
- 68 IAC 10-6-5(a), 10-8-5(a): the tables of a link are located within one riverboat.
- 68 IAC 10-7-5(d)-(e): the Let It Ride bonus pays the amounts (e) lists, nothing below two
  pair, and nothing else (no envy line). 68 IAC 10-12-3(e)-(f): Super Sevens pays the amounts
  (f) lists to a patron whose first card is a seven, and nothing else (no envy, no mystery).
  (f)'s "unless approved by the executive director pursuant to 68 IAC 10-1-8" names a section
  the seed marks repealed: the amounts stand.
- 68 IAC 10-1-3(c)(1): sixty days before a new game plays, with no waiver; 10-1-4(1): thirty
  days before an amendment is used, "unless otherwise provided by the executive director".
"""

from __future__ import annotations

from controller.core.games import Game, default_paytable
from controller.rules import (
    filing,
    fixed_pays,
    house,
    integrity,
    meter_records,
    odds,
    pools,
    progression,
)
from controller.rules.jurisdictions.base import Jurisdiction
from controller.rules.terms import Allows, Clauses, Numbers, Waiver

# 68 IAC 10-1-5(d): jackpots are limited only by limiting the wager.
CAPPED_JACKPOT_CLAUSE = "68 IAC 10-1-5(d)"
# 68 IAC 10-6-5(a), 10-8-5(a): the linked tables are located within one riverboat.
ONE_PROPERTY_CLAUSE = "68 IAC 10-6-5(a), 10-8-5(a)"
# 68 IAC 10-7-5(e), 10-12-3(f): the bonus hands "shall receive" / "must be paid" the amounts.
FIXED_AMOUNTS_CLAUSE = "68 IAC 10-7-5(e), 10-12-3(f)"

INDIANA = Jurisdiction(
    key="indiana",
    name="Indiana",
    code="68 IAC 10",
    # 68 IAC 10-1-1.1(e): the progressive is submitted to the commission for approval.
    regulator="Indiana Gaming Commission",
    allows=Allows(
        level_limits=False,
        mystery_levels=False,
        hidden_shares=True,
        hidden_share_in_rate=False,
        envy_lines=False,
        links_across_properties=False,
    ),
    numbers=Numbers(
        min_rate_bp=progression.MIN_RATE_BP,
        max_rate_bp=progression.MAX_RATE_BP,
        new_game_notice_days=filing.NEW_GAME_NOTICE_DAYS,
        amendment_notice_days=filing.AMENDMENT_NOTICE_DAYS,
        meter_retention_years=meter_records.METER_RETENTION_YEARS,
        integrity_retention_years=integrity.INTEGRITY_RETENTION_YEARS,
        # 68 IAC 10 sets no bound on a jackpot's odds: the house's (odds.JACKPOT_ODDS_CLAUSE).
        jackpot_odds_bound=None,
        tax_form_from_cents=house.TAX_REPORTING_FROM_CENTS,
        comm_loss_disable_s=None,
    ),
    clauses=Clauses(
        rate=progression.RATE_CLAUSE,
        rate_definition=progression.RATE_DEFINITION_CLAUSE,
        rate_lock=progression.RATE_LOCK_CLAUSE,
        submission=filing.SUBMISSION_CLAUSE,
        location="68 IAC 10-1-1.1(e)(2)",
        new_game_notice=filing.NEW_GAME_NOTICE_CLAUSE,
        amendment_notice=filing.AMENDMENT_NOTICE_CLAUSE,
        review=filing.REVIEW_CLAUSE,
        approved_only=filing.APPROVED_ONLY_CLAUSE,
        reduction=meter_records.REDUCTION_CLAUSE,
        retention=meter_records.RETENTION_CLAUSE,
        integrity_retention=integrity.INTEGRITY_RETENTION_CLAUSE,
        fixed_pay=pools.FIXED_PAY_CLAUSE,
        jackpot_odds=odds.JACKPOT_ODDS_CLAUSE,
        shapes={
            "level_limits": CAPPED_JACKPOT_CLAUSE,
            "mystery_levels": CAPPED_JACKPOT_CLAUSE,
            "hidden_share_in_rate": "68 IAC 10-1-1.1(b)-(c)",
            "envy_lines": FIXED_AMOUNTS_CLAUSE,
            "links_across_properties": ONE_PROPERTY_CLAUSE,
        },
        fixed_amounts={
            Game.LET_IT_RIDE_BONUS: fixed_pays.LET_IT_RIDE_AMOUNTS_CLAUSE,
            Game.SUPER_SEVENS: fixed_pays.SUPER_SEVENS_AMOUNTS_CLAUSE,
        },
        fixed_winners={
            Game.LET_IT_RIDE_BONUS: fixed_pays.LET_IT_RIDE_WINNERS_CLAUSE,
            Game.SUPER_SEVENS: fixed_pays.SUPER_SEVENS_WINNERS_CLAUSE,
        },
    ),
    waiver=Waiver(
        new_link=None,
        amendment="the executive director",
        clause=filing.AMENDMENT_NOTICE_CLAUSE,
    ),
    fixed_pays={
        Game.LET_IT_RIDE_BONUS: default_paytable(Game.LET_IT_RIDE_BONUS),
        Game.SUPER_SEVENS: default_paytable(Game.SUPER_SEVENS),
    },
    records=(
        ("meter records, five years", meter_records.RETENTION_CLAUSE),
        ("documents explaining every reduction", meter_records.REDUCTION_CLAUSE),
        ("devices removed from play, one year", integrity.INTEGRITY_RETENTION_CLAUSE),
        ("submissions of rules of the game and their approvals", filing.REVIEW_CLAUSE),
    ),
    texts=("000_45e21184712372f8.txt", "003_1acbbf72bd385998.txt", "004_1abfd3cdd08a9daf.txt"),
)
