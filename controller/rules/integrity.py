"""Live gaming devices whose integrity is questioned (68 IAC 10-1-6.2)."""

from __future__ import annotations

from collections.abc import Sequence

from controller.rules.violation import RuleViolation

# 68 IAC 10-1-6.2(a): a device removed from play stays out until repaired and verified.
INTEGRITY_CLAUSE = "68 IAC 10-1-6.2"
# 68 IAC 10-1-6.2(b)(6)-(8): the remedial action, who took it, and an outside company's facts.
REMEDIAL_CLAUSE = "68 IAC 10-1-6.2(b)(6)-(8)"
EMPLOYEES_CLAUSE = "68 IAC 10-1-6.2(b)(7)"
OUTSIDE_COMPANY_CLAUSE = "68 IAC 10-1-6.2(b)(8)"
# 68 IAC 10-1-6.2(b)(9): a verification that the device meets the requirements afterwards.
VERIFICATION_CLAUSE = "68 IAC 10-1-6.2(b)(9)"
# 68 IAC 10-1-6.2(c)(1): records of live gaming devices removed from play are kept one year.
INTEGRITY_RETENTION_CLAUSE = "68 IAC 10-1-6.2(c)"
INTEGRITY_RETENTION_YEARS = 1

# 68 IAC 10-1-6.2(b), last paragraph: the enforcement agent is notified in writing.
ENFORCEMENT_NOTICE = (
    "The licensee notifies the enforcement agent in writing that the live gaming "
    "device below has been removed from play. It returns to play only after it "
    "has been repaired and verified to meet the requirements of the Act and "
    "68 IAC. Its progressive contributions and hits are refused while it is out "
    "of play."
)
OUT_OF_PLAY = f"the table is out of play ({INTEGRITY_CLAUSE})"


def check_removal(
    *,
    device_type: str,
    commission_registration_number: str,
    malfunction_reason: str,
    questioned_at_us: int,
    now_us: int,
) -> None:
    """68 IAC 10-1-6.2(b)(1)-(3), (5): what is known when a device is removed from play."""
    required = {
        "device_type": device_type,
        "commission_registration_number": commission_registration_number,
        "malfunction_reason": malfunction_reason,
    }
    for name, value in required.items():
        if not str(value).strip():
            raise RuleViolation(INTEGRITY_CLAUSE, f"the record needs {name.replace('_', ' ')}")
    if questioned_at_us > now_us:
        raise RuleViolation(
            INTEGRITY_CLAUSE, "the integrity of a device cannot be questioned in the future"
        )


def check_remedial_action(
    *,
    description: str,
    employees: Sequence[tuple[str, str, str]],
    outside_company: tuple[str | None, str | None, str | None],
    outside_individuals: Sequence[str],
) -> None:
    """68 IAC 10-1-6.2(b)(6)-(8). ``employees`` are (printed name, signature, occupational
    license number); ``outside_company`` is (name, address, telephone)."""
    if not description.strip():
        raise RuleViolation(INTEGRITY_CLAUSE, "a remedial action says what was done")
    for employee in employees:
        if not all(part.strip() for part in employee):
            raise RuleViolation(
                EMPLOYEES_CLAUSE,
                "each employee gives a printed name, signature and occupational license number",
            )
    outside = any(c and c.strip() for c in outside_company) or bool(outside_individuals)
    if outside and not (
        all(c and c.strip() for c in outside_company)
        and any(n.strip() for n in outside_individuals)
    ):
        raise RuleViolation(
            OUTSIDE_COMPANY_CLAUSE,
            "an outside company's name, address, telephone number and the individuals who "
            "did the work are all recorded",
        )
    if not employees and not outside:
        raise RuleViolation(EMPLOYEES_CLAUSE, "a remedial action names who took it")


def check_verification(*, verification: str, remedial_actions: int | None) -> None:
    """68 IAC 10-1-6.2(b)(9): a verification says what was checked, after a remedial action.
    ``remedial_actions`` is None when not yet counted (the text is checked first)."""
    if not verification.strip():
        raise RuleViolation(VERIFICATION_CLAUSE, "a verification states what was checked")
    if remedial_actions is not None and remedial_actions == 0:
        raise RuleViolation(
            VERIFICATION_CLAUSE, "a device is verified after a remedial action is taken"
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
