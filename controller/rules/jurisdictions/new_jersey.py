"""New Jersey: N.J.A.C. 13:69E (gaming equipment) and 13:69D (accounting controls).

The clauses are quoted from the published text of three sections (not in the shared seeds; the
addresses are in ``NEW_JERSEY.texts``):

- 13:69E-1.39A, "Mandatory progressive parameters and meters". (a): "The following
  progressive parameters shall be utilized for each progressive award offered by an
  individual progressive gaming device or link": 1. "The base amount"; 2. "The reset amount,
  which means the base amount after a progressive is won"; 3. "The incrementation rate, which
  means the rate of progression"; 4. "The progressive limit, which means the maximum
  progressive value that can be reached when applicable"; 5. "The hidden rate, which means the
  increment rate for a reserved pool(s) used to fund the next reset amount when applicable";
  6. "The unreasonable contribution, which means an incrementation amount determined by the
  progressive gaming device to be invalid, when applicable". (b): the meters, "for each
  progressive award": 1. "Progressive In-meter" (the qualifying wagers), 2. "Display Meter",
  3. "Progressive Hits Meter", 4. "Progressive Wins Meter" ("for each progressive level"),
  5. "Overflow Meter" ("progressive amounts over the progressive limit when applicable"),
  6. "Reserved Pool Meter".
- 13:69E-1.39B, "Linked progressive gaming device standards": (a) a LAP link of devices
  "located within the same casino"; (c) "LAP controllers utilized with table games may comply
  with the requirements of this subsection or utilize compensating controls as approved by the
  Division"; (d)1 the controller "is capable of uniquely identifying each linked progressive
  gaming device", (d)3 "The linked game enters into an unplayable mode when it loses
  communication with the LAP controller" (no number of seconds); (e) inoperable on RAM,
  power, self-check errors, "Incorrect configurations" or "Lost jackpot configurations"; (h)
  recovery "to the state they were in prior to the error or failure"; (i) the award value
  calculated "based on a configured rate of progression".
- 13:69E-1.39C(a): "Two or more progressive gaming devices located within two or more casinos
  may be connected using an approved progressive system to establish a shared wide area
  progressive (WAP) link."
- 13:69D-1.52, "Payment of table game progressive payout wagers": (e) "No table game that
  offers a progressive jackpot shall be placed on the casino floor until the casino licensee
  has submitted to the Division the following": 1. "The initial and reset amounts"; 3. "The
  rate of progression for each progressive jackpot, which shall not be changed except upon
  notice to the casino accounting department"; 4. "The calculated probability of winning each
  progressive jackpot, which probability shall not exceed 100 million to one". (f) "The amount
  on a progressive meter shall not be decreased unless: 1. The amount indicated has been paid
  to a winning patron; 2. The progressive jackpot amount won by the patron has been recorded
  in accordance with internal controls; ..." (d) "the location and manner of installing the
  common display unit" is submitted for approval.

What it allows, read from the text:
- A level limit, with what passes it to an overflow meter: 1.39A(a)4 and (b)5. The next level
  taking the excess is the same limit; no clause read forbids it.
- A mystery (must-hit-by) level: its ceiling is a "progressive limit" (1.39A(a)4), the most the
  level can reach; no clause read forbids a level won by its amount rather than a hand.
- A hidden share: 1.39A(a)5 and (b)6. It is a parameter of its own, beside "the incrementation
  rate, which means the rate of progression" (a)3, and 13:69D-1.52(a)1 has the jackpot
  increase "based upon a set rate of progression": the rate of progression is what the
  jackpot grows by, so a hidden share is not counted in it.
- Envy lines: no clause read names or forbids them.
- Links across casinos: 13:69E-1.39C(a), through an approved progressive system; 1.39B(c)
  names table games among the devices these sections govern.

What the text does not set, kept as the house's figure (each clause says "house policy"):
- No bound on the rate of progression: 13:69D-1.52(e)3 asks only that it be submitted and
  changed on notice to the casino accounting department. The house keeps 60 % to 100 % of the
  wager to the shown shares, the range every link's rate is stored in.
- No notice period in days: (e) asks the submission before the table is placed on the floor,
  and (e)3 a rate change on notice. Both are 0 days; there is nothing to waive.
- No retention period read (13:69D-1.8 asks that books, records and documents, "computer
  generated data" among them, be kept complete and available to the Division; its period was
  not quoted here): five years, as the house keeps them.
- No tax-form amount, no amounts a fixed-pay side bet must pay, no number of seconds after a
  lost communication (1.39B(d)3 says only that the game becomes unplayable).
- A rate fixed until its jackpot is won, and a link playing only once its submission is
  approved: the product's own controls, stricter than (e)3's notice and (e)'s submission.
"""

from __future__ import annotations

from controller.rules import house, integrity, meter_records
from controller.rules.jurisdictions.base import Jurisdiction
from controller.rules.terms import Allows, Clauses, Numbers, Waiver

CODE = "N.J.A.C. 13:69E"

# 13:69D-1.52(e): submitted to the Division before the table is placed on the casino floor.
SUBMISSION_CLAUSE = "N.J.A.C. 13:69D-1.52(e)"
# 13:69D-1.52(e)3: the rate changes "upon notice to the casino accounting department".
RATE_NOTICE_CLAUSE = "N.J.A.C. 13:69D-1.52(e)3"
# 13:69D-1.52(e)4: "shall not exceed 100 million to one".
JACKPOT_ODDS_CLAUSE = "N.J.A.C. 13:69D-1.52(e)4"
JACKPOT_ODDS_BOUND = 100_000_000
# 13:69D-1.52(f): a meter is decreased only for an amount paid and recorded (or as (f) lists).
REDUCTION_CLAUSE = "N.J.A.C. 13:69D-1.52(f)"
# 13:69E-1.39A(a)3 and (a)5: the rate of progression and the hidden rate are two parameters.
RATE_DEFINITION_CLAUSE = "N.J.A.C. 13:69E-1.39A(a)3, (a)5"
# 13:69E-1.39A(a)4 and (b)5: a progressive limit, with an overflow meter past it.
LIMIT_CLAUSE = "N.J.A.C. 13:69E-1.39A(a)4, (b)5"
# 13:69E-1.39A(a)5 and (b)6: the hidden rate and the reserved pool meter.
HIDDEN_RATE_CLAUSE = "N.J.A.C. 13:69E-1.39A(a)5, (b)6"
# 13:69E-1.39C(a): devices in two or more casinos on an approved progressive system.
WIDE_AREA_CLAUSE = "N.J.A.C. 13:69E-1.39C(a)"
# 13:69E-1.39B(d)3: the linked game becomes unplayable when it loses communication.
COMM_LOSS_CLAUSE = "N.J.A.C. 13:69E-1.39B(d)3"

# House policies under New Jersey: the product's controls where the text sets no figure.
RATE_CLAUSE = "house policy: a rate of progression of 60% to 100%"
RATE_LOCK_CLAUSE = "house policy: a rate fixed until its jackpot is won"
APPROVED_ONLY_CLAUSE = "house policy: a link plays once its submission is approved"
LOCATION_CLAUSE = "house policy: every linked table named with its location"
RETENTION_CLAUSE = "house policy: meter records kept five years"
INTEGRITY_RETENTION_CLAUSE = "house policy: device records kept one year"
FIXED_PAY_CLAUSE = "house policy: a fixed-pay link has no meter"

NEW_JERSEY = Jurisdiction(
    key="new_jersey",
    name="New Jersey",
    code=CODE,
    # 13:69D-1.52(e): the Division of Gaming Enforcement reviews the submission.
    regulator="New Jersey Division of Gaming Enforcement",
    allows=Allows(
        level_limits=True,
        mystery_levels=True,
        hidden_shares=True,
        hidden_share_in_rate=False,
        envy_lines=True,
        links_across_properties=True,
    ),
    numbers=Numbers(
        # House policy (``RATE_CLAUSE``): no clause bounds the rate; the range every link's
        # rate is stored in.
        min_rate_bp=6_000,
        max_rate_bp=10_000,
        # 13:69D-1.52(e): before the floor, no period in days; (e)3: on notice.
        new_game_notice_days=0,
        amendment_notice_days=0,
        meter_retention_years=meter_records.METER_RETENTION_YEARS,
        integrity_retention_years=integrity.INTEGRITY_RETENTION_YEARS,
        jackpot_odds_bound=JACKPOT_ODDS_BOUND,
        tax_form_from_cents=house.TAX_REPORTING_FROM_CENTS,
        # 1.39B(d)3 sets no time: the floor's own setting applies.
        comm_loss_disable_s=None,
    ),
    clauses=Clauses(
        rate=RATE_CLAUSE,
        rate_definition=RATE_DEFINITION_CLAUSE,
        rate_lock=RATE_LOCK_CLAUSE,
        submission=SUBMISSION_CLAUSE,
        location=LOCATION_CLAUSE,
        new_game_notice=SUBMISSION_CLAUSE,
        amendment_notice=RATE_NOTICE_CLAUSE,
        review=SUBMISSION_CLAUSE,
        approved_only=APPROVED_ONLY_CLAUSE,
        reduction=REDUCTION_CLAUSE,
        retention=RETENTION_CLAUSE,
        integrity_retention=INTEGRITY_RETENTION_CLAUSE,
        fixed_pay=FIXED_PAY_CLAUSE,
        jackpot_odds=JACKPOT_ODDS_CLAUSE,
        # Every shape is allowed: nothing is refused for its shape.
        shapes={},
    ),
    # No notice period, so none to waive.
    waiver=Waiver(new_link=None, amendment=None, clause=SUBMISSION_CLAUSE),
    # No amounts a fixed-pay side bet must pay: a paytable pays what was filed.
    fixed_pays={},
    records=(
        (
            "each level's parameters: base and reset amounts, rate of progression, limit, "
            "hidden rate",
            "N.J.A.C. 13:69E-1.39A(a)1-5",
        ),
        (
            "unreasonable contributions: a reading crediting more than a table can take, held "
            "for review",
            "N.J.A.C. 13:69E-1.39A(a)6",
        ),
        ("qualifying wagers counted per table (progressive in-meter)", "N.J.A.C. 13:69E-1.39A(b)1"),
        ("each level's current amount shown (display meter)", "N.J.A.C. 13:69E-1.39A(b)2"),
        ("each level's jackpots won (progressive hits meter)", "N.J.A.C. 13:69E-1.39A(b)3"),
        ("each level's amounts paid (progressive wins meter)", "N.J.A.C. 13:69E-1.39A(b)4"),
        ("amounts over a level's limit (overflow meter)", "N.J.A.C. 13:69E-1.39A(b)5"),
        ("hidden shares funding the next reset (reserved pool meter)", "N.J.A.C. 13:69E-1.39A(b)6"),
        ("every decrease of a meter, paid and recorded", REDUCTION_CLAUSE),
        (
            "submissions: initial and reset amounts, rate of progression, probability of each "
            "jackpot",
            SUBMISSION_CLAUSE,
        ),
    ),
    # Where the clauses were read (published text; not in the shared seeds).
    texts=(
        "https://www.law.cornell.edu/regulations/new-jersey/N-J-A-C-13-69E-1-39A",
        "https://www.law.cornell.edu/regulations/new-jersey/N-J-A-C-13-69E-1-39B",
        "https://www.law.cornell.edu/regulations/new-jersey/N-J-A-C-13-69E-1-39C",
        "https://e.casetext.com/regulation/new-jersey-administrative-code/title-13-law-and-public"
        "-safety/chapter-69d-gaming-operation-accounting-controls-and-standards/subchapter-1"
        "-general-provisions/section-1369d-152-payment-of-table-game-progressive-payout-wagers"
        "-supplemental-wagers-not-paid-from-the-table-inventory",
        "https://casetext.com/regulation/new-jersey-administrative-code/title-13-law-and-public"
        "-safety/chapter-69d-gaming-operation-accounting-controls-and-standards/subchapter-1"
        "-general-provisions/section-1369d-18-record-retention",
    ),
)
