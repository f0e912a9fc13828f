"""House policies: rules the controller keeps that no clause of 68 IAC 10 asks for.

Each is the controller's own safeguard and is cited as house policy, never as a regulation, so
a refusal does not claim more than the regulations say.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.core.money import format_cents
from controller.core.reducer.state import DEFAULT_TECHNICIAN_FROM_CENTS
from controller.rules.violation import RuleViolation

# House policy: a correction is requested by one person and approved by a second, different
# one. 68 IAC 10-6-5(c) and 10-8-5(c) ask only for supporting documents that explain a
# reduction (``records.check_reduction_documented``); the second person is our own control,
# so that no one alone can move the money on a meter.
TWO_PERSON_CLAUSE = "house policy: two-person correction"

# House policy adopted from NY 5321.18 and NJ 13:69E-1.39B (no Indiana rule asks for it): a
# controller whose configuration is lost or incorrect is inoperable until recovered to its
# prior state, by two people, the reason stated.
RECOVERY_CLAUSE = "house policy adopted from NY 5321.18, NJ 13:69E-1.39B"


def most_credits(*, seats: int, max_credits_per_seat_round: int, rounds: int) -> int:
    """The most credits a table can take in ``rounds`` rounds: every seat wagering the most a
    seat can in every round.

    House policy: a reading that credits more than this since the last one is held for a
    supervisor instead of credited. 68 IAC 10-6-5(f)(1) and 10-8-5(f)(1) ask the controller
    only to monitor each table for credits wagered; the bound is our own guard against a
    counter that jumps.
    """
    return seats * max_credits_per_seat_round * rounds


def check_correction_approval(*, requested_by: str, approved_by: str | None) -> str:
    """A correction is applied only with a second person's approval (``TWO_PERSON_CLAUSE``)."""
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


def check_no_tie(
    *, clause: str, what: str, approver: str, filer: str, tie: tuple[str, str, str] | None
) -> None:
    """Refuse an approver tied to the filer: ``tie`` is (username, kind, request id) of a
    confirmed account request either of them asked for or confirmed for the other."""
    if tie is None:
        return
    username, kind, request_id = tie
    other = filer if username == approver else approver
    raise RuleViolation(
        clause,
        f"{approver} cannot approve this {what} filed by {filer}: {other} took part "
        f"in the {kind} of {username}'s account (account request {request_id}); "
        "someone independent of both approves",
    )


# House policy: a fixed pay made at the table waits for a technician (and holds the table)
# only at or above this amount; below it the dealer pays and play goes on. No clause of 68 IAC
# 10 asks a technician to verify fixed pays (10-7-5(e) lists them; the dealer pays them), so
# the amount is the operator's choice: setting PROGRESSIVE_FIXED_PAY_TECHNICIAN_FROM.
FIXED_PAY_TECHNICIAN_CLAUSE = "house policy: fixed pays verified from an amount"
FIXED_PAY_TECHNICIAN_FROM_CENTS = DEFAULT_TECHNICIAN_FROM_CENTS


def fixed_pay_needs_technician(*, amount_cents: int, from_cents: int) -> bool:
    """Does a fixed pay of ``amount_cents`` wait for a technician? (house policy, above)"""
    return amount_cents >= from_cents


# House policy after NJ 13:69E-1.39B's dual control of controller access: an award paid from
# a meter (the awards a technician verifies before the table is reset) at or above this
# amount is signed by a second person, other than the one who verified it, before its table
# may be reset (``check_second_signature``, ``check_sign_off``). A fixed pay needs no
# verification to reset its table, so no signature either. Setting
# PROGRESSIVE_SECOND_SIGNATURE_FROM.
SECOND_SIGNATURE_CLAUSE = "house policy: second signature from an amount"
SECOND_SIGNATURE_FROM_CENTS = 10_000_00
# Who gives it, as the refusals tell people: the roles the sign-off route admits
# (``app.api.hits.HIT_WORKERS``), signed in on their own account.
SECOND_SIGNERS = "another technician or a supervisor, signed in as themselves"

# The operator's tax-reporting amount: an award at or above it is reported on a tax form
# whose reference number the jackpot slip carries (never the patron's identity). No clause of
# 68 IAC 10 sets it; setting PROGRESSIVE_TAX_REPORTING_FROM.
TAX_FORM_CLAUSE = "house policy: tax form reference from an amount"
TAX_REPORTING_FROM_CENTS = 1_200_00


def needs_second_signature(*, award_cents: int, from_cents: int, from_meter: bool = True) -> bool:
    """Whether an award needs a second person's signature (``SECOND_SIGNATURE_CLAUSE``): one
    paid from a meter at or above the amount."""
    return from_meter and award_cents >= from_cents


def check_second_signature(*, table_id: str, unsigned_hit_ids: Sequence[str]) -> None:
    """A held table is reset only once every award it holds at or above the amount carries a
    second person's signature (``SECOND_SIGNATURE_CLAUSE``)."""
    if unsigned_hit_ids:
        raise RuleViolation(
            SECOND_SIGNATURE_CLAUSE,
            f"table {table_id} cannot be reset before its hits are signed off by a second "
            f"person ({SECOND_SIGNERS}, not the one who verified it): "
            + ", ".join(unsigned_hit_ids),
        )


def check_sign_off(
    *,
    hit_id: str,
    award_cents: int,
    from_cents: int,
    from_meter: bool,
    verified_by: str | None,
    signed_off_by: str | None,
    signer: str,
) -> None:
    """The second signature of an award (``SECOND_SIGNATURE_CLAUSE``): given once, to an award
    that needs it, after its verification, by someone other than the one who verified it."""
    if not needs_second_signature(
        award_cents=award_cents, from_cents=from_cents, from_meter=from_meter
    ):
        raise RuleViolation(
            SECOND_SIGNATURE_CLAUSE,
            f"hit {hit_id} needs no second signature: only an award paid from a meter at or "
            "above the house's amount does",
        )
    if signed_off_by is not None:
        raise RuleViolation(
            SECOND_SIGNATURE_CLAUSE, f"hit {hit_id} was already signed off by {signed_off_by}"
        )
    if verified_by is None:
        raise RuleViolation(
            SECOND_SIGNATURE_CLAUSE,
            f"hit {hit_id} is signed off after its verification: verify it first",
        )
    if verified_by.strip().casefold() == signer.strip().casefold():
        raise RuleViolation(
            SECOND_SIGNATURE_CLAUSE,
            f"{signer} verified hit {hit_id} and cannot also sign it off; "
            f"a second, different person signs: {SECOND_SIGNERS}",
        )


def needs_tax_form(*, award_cents: int, from_cents: int) -> bool:
    """Whether an award reaches the operator's tax-reporting amount."""
    return award_cents >= from_cents


def check_tax_form(
    *,
    hit_id: str,
    status: str,
    award_cents: int,
    from_cents: int,
    recorded: str | None,
) -> None:
    """A tax form's reference is recorded once, for an award at or above the operator's
    tax-reporting amount (``TAX_FORM_CLAUSE``)."""
    if status != "awarded":
        raise RuleViolation(TAX_FORM_CLAUSE, f"hit {hit_id} was refused: it paid nothing to report")
    if not needs_tax_form(award_cents=award_cents, from_cents=from_cents):
        raise RuleViolation(
            TAX_FORM_CLAUSE,
            f"hit {hit_id} paid {format_cents(award_cents)}, under the tax-reporting amount of "
            f"{format_cents(from_cents)}: no tax form is recorded for it",
        )
    if recorded is not None:
        raise RuleViolation(
            TAX_FORM_CLAUSE,
            f"hit {hit_id} already has its tax form recorded ({recorded}); it is recorded once",
        )
