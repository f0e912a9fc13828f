"""The regulated rules the controller enforces, each in one place with its clause.

Texts: Indiana 68 IAC 10 (shared seeds). Code elsewhere calls these checks; it never
restates a limit.
"""

from __future__ import annotations

from controller.money import format_bp


class RuleViolation(ValueError):
    """A request the regulations forbid. ``clause`` names the rule, for people and for logs."""

    def __init__(self, clause: str, message: str) -> None:
        super().__init__(f"{message} ({clause})")
        self.clause = clause
        self.message = message


# 68 IAC 10-1-1.1(c): the rate of progression is at least 60% and not more than 100%.
RATE_CLAUSE = "68 IAC 10-1-1.1(c)"
MIN_RATE_BP = 6_000
MAX_RATE_BP = 10_000

# 68 IAC 10-1-1.1(d): once established, the rate is not changed until a patron wins the jackpot.
RATE_LOCK_CLAUSE = "68 IAC 10-1-1.1(d)"

# 68 IAC 10-6-5(c) and 10-8-5(c): supporting documents explain any reduction of the meter.
REDUCTION_CLAUSE = "68 IAC 10-6-5(c)"

# 68 IAC 10-6-5(d) and 10-8-5(d): meter records and documents are kept five years.
RETENTION_CLAUSE = "68 IAC 10-6-5(d)"
METER_RETENTION_YEARS = 5

# 68 IAC 10-1-6.2(c)(1): records of live gaming devices removed from play are kept one year.
INTEGRITY_RETENTION_CLAUSE = "68 IAC 10-1-6.2(c)"
INTEGRITY_RETENTION_YEARS = 1

# 68 IAC 10-1-6.2(a): a device removed from play stays out until repaired and verified.
INTEGRITY_CLAUSE = "68 IAC 10-1-6.2"

# 68 IAC 10-6-5(c), 10-8-5(c): a reduction other than a hit is requested by a supervisor and
# approved by a second, different person, with a reason and a supporting document.
TWO_PERSON_CLAUSE = "68 IAC 10-6-5(c)"

# 68 IAC 10-7-5(b)-(c): the Let It Ride bonus bet is one dollar.
LET_IT_RIDE_BONUS_BET_CENTS = 100


def check_rate_of_progression(rate_bp: int) -> int:
    """Return ``rate_bp`` when the regulations allow it; refuse it otherwise."""
    if isinstance(rate_bp, bool) or not isinstance(rate_bp, int):
        raise RuleViolation(
            RATE_CLAUSE, f"a rate of progression is whole basis points, got {rate_bp!r}"
        )
    if not MIN_RATE_BP <= rate_bp <= MAX_RATE_BP:
        raise RuleViolation(
            RATE_CLAUSE,
            f"rate of progression {format_bp(rate_bp)} is outside "
            f"{format_bp(MIN_RATE_BP)} to {format_bp(MAX_RATE_BP)}",
        )
    return rate_bp


def check_rate_change(
    *, current_bp: int, proposed_bp: int, jackpot_won_since_rate_set: bool
) -> int:
    """A proposed new rate for a link that already plays at ``current_bp``."""
    check_rate_of_progression(proposed_bp)
    if proposed_bp != current_bp and not jackpot_won_since_rate_set:
        raise RuleViolation(
            RATE_LOCK_CLAUSE,
            f"the rate of progression {format_bp(current_bp)} cannot change to "
            f"{format_bp(proposed_bp)} until a patron wins the jackpot",
        )
    return proposed_bp


def check_reduction_explained(*, delta_units: int, reason: str | None) -> None:
    """Every entry that lowers a meter names its reason."""
    if delta_units < 0 and not (reason and reason.strip()):
        raise RuleViolation(REDUCTION_CLAUSE, "a reduction of the meter needs a stated reason")


def check_correction_approval(*, requested_by: str, approved_by: str | None) -> str:
    """A correction is applied only with a second person's approval (two-person rule)."""
    if not approved_by or not approved_by.strip():
        raise RuleViolation(
            TWO_PERSON_CLAUSE, "a correction of the meter needs a second person to approve it"
        )
    if approved_by.strip().casefold() == requested_by.strip().casefold():
        raise RuleViolation(
            TWO_PERSON_CLAUSE,
            f"{approved_by} requested this correction and cannot also approve it; "
            "a second, different person approves",
        )
    return approved_by


# NY 5321.18, NJ 13:69E-1.39B: a controller whose configuration is lost or incorrect is
# inoperable until recovered to its prior state.
RECOVERY_CLAUSE = "NY 5321.18, NJ 13:69E-1.39B"


def check_recovery(*, reason: str, by: str, approved_by: str) -> None:
    """An inoperable link comes back by two people, with the reason stated."""
    if not reason.strip():
        raise RuleViolation(RECOVERY_CLAUSE, "a recovery states its reason")
    if not by.strip() or not approved_by.strip():
        raise RuleViolation(RECOVERY_CLAUSE, "a recovery names who asks and who approves")
    if by.strip().casefold() == approved_by.strip().casefold():
        raise RuleViolation(
            TWO_PERSON_CLAUSE,
            f"{by} asked for this recovery and cannot also approve it; a second person approves",
        )


def check_correction_request(*, delta_units: int, reason: str, document_sha256: str | None) -> None:
    """What a correction request must carry before anyone may approve it."""
    if delta_units == 0:
        raise RuleViolation(REDUCTION_CLAUSE, "a correction must change the meter")
    if not reason.strip():
        raise RuleViolation(REDUCTION_CLAUSE, "a correction needs a stated reason")
    if delta_units < 0 and not document_sha256:
        raise RuleViolation(
            REDUCTION_CLAUSE, "a reduction of the meter needs a supporting document"
        )


def check_return_to_play(*, remedial_actions: int, verified: bool) -> None:
    """68 IAC 10-1-6.2(a): back in play only once repaired and found to meet the rules."""
    if remedial_actions == 0:
        raise RuleViolation(
            INTEGRITY_CLAUSE, "a device returns to play only after a remedial action is recorded"
        )
    if not verified:
        raise RuleViolation(
            INTEGRITY_CLAUSE,
            "a device returns to play only after it is verified to meet the requirements",
        )


def check_retention_years(*, meter_years: int, integrity_years: int) -> tuple[int, int]:
    """Retention periods may be set longer than the regulations ask, never shorter."""
    if isinstance(meter_years, bool) or meter_years < METER_RETENTION_YEARS:
        raise RuleViolation(
            RETENTION_CLAUSE,
            f"meter records are kept at least {METER_RETENTION_YEARS} years, not {meter_years}",
        )
    if isinstance(integrity_years, bool) or integrity_years < INTEGRITY_RETENTION_YEARS:
        raise RuleViolation(
            INTEGRITY_RETENTION_CLAUSE,
            f"records of devices removed from play are kept at least "
            f"{INTEGRITY_RETENTION_YEARS} year, not {integrity_years}",
        )
    return meter_years, integrity_years


def check_retention_not_shortened(*, name: str, years: int, recorded_years: int | None) -> int:
    """A retention period in force can only lengthen: records kept for it stay kept."""
    if recorded_years is not None and years < recorded_years:
        clause = INTEGRITY_RETENTION_CLAUSE if name == "integrity" else RETENTION_CLAUSE
        raise RuleViolation(
            clause,
            f"the {name} retention period is {recorded_years} years and cannot be shortened "
            f"to {years}",
        )
    return years
