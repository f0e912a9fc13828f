"""The meter's records and their documents (68 IAC 10-6-5(b)-(d), 10-8-5(b)-(d))."""

from __future__ import annotations

from controller.rules.integrity import INTEGRITY_RETENTION_CLAUSE, INTEGRITY_RETENTION_YEARS
from controller.rules.violation import RuleViolation

# 68 IAC 10-6-5(c) and 10-8-5(c): supporting documents explain any reduction of the meter.
REDUCTION_CLAUSE = "68 IAC 10-6-5(c)"

# 68 IAC 10-6-5(d) and 10-8-5(d): meter records and documents are kept five years.
RETENTION_CLAUSE = "68 IAC 10-6-5(d)"
METER_RETENTION_YEARS = 5


def check_reduction_explained(*, delta_units: int, reason: str | None) -> None:
    """Every entry that lowers a meter names its reason."""
    if delta_units < 0 and not (reason and reason.strip()):
        raise RuleViolation(REDUCTION_CLAUSE, "a reduction of the meter needs a stated reason")


def check_correction_reason(reason: str) -> None:
    """A correction states why it is made."""
    if not reason.strip():
        raise RuleViolation(REDUCTION_CLAUSE, "a correction needs a stated reason")


def check_reduction_documented(*, delta_units: int, document_sha256: str | None) -> None:
    """A correction that lowers the meter comes with its supporting document."""
    if delta_units < 0 and not document_sha256:
        raise RuleViolation(
            REDUCTION_CLAUSE, "a reduction of the meter needs a supporting document"
        )


def check_correction_request(*, delta_units: int, reason: str, document_sha256: str | None) -> None:
    """What a correction request must carry before anyone may approve it."""
    if delta_units == 0:
        raise RuleViolation(REDUCTION_CLAUSE, "a correction must change the meter")
    check_correction_reason(reason)
    check_reduction_documented(delta_units=delta_units, document_sha256=document_sha256)


def check_retention_years(
    *,
    meter_years: int,
    integrity_years: int,
    meter_minimum: int = METER_RETENTION_YEARS,
    integrity_minimum: int = INTEGRITY_RETENTION_YEARS,
    meter_clause: str = RETENTION_CLAUSE,
    integrity_clause: str = INTEGRITY_RETENTION_CLAUSE,
) -> tuple[int, int]:
    """Retention periods may be set longer than the regulations ask, never shorter (the
    minimums and clauses are the jurisdiction's: ``Jurisdiction.check_retention_years``)."""
    if isinstance(meter_years, bool) or meter_years < meter_minimum:
        raise RuleViolation(
            meter_clause,
            f"meter records are kept at least {meter_minimum} years, not {meter_years}",
        )
    if isinstance(integrity_years, bool) or integrity_years < integrity_minimum:
        raise RuleViolation(
            integrity_clause,
            f"records of devices removed from play are kept at least "
            f"{integrity_minimum} year{'s' if integrity_minimum != 1 else ''}, not "
            f"{integrity_years}",
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
