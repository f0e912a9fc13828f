"""The controller's check of its own software: its installed files against their manifest.

68 IAC 10 asks for no such check. The controller keeps it as house policy adopted from other
states' texts, which it follows (not Indiana rules), as ``house.RECOVERY_CLAUSE`` adopts New
York's and New Jersey's recovery:

* NY 5321.18: a self-check at power-up, with at least a CRC of the controller's software; the
  controller is operational only if it passes;
* Mississippi 13-8-2.9: a hash whose error rate is under 1 in 10^38, at power-up and on demand;
* NJ 13:69O-1.5(c): at least every 24 hours, with an alert when it fails.

The manifest (``controller.manifest``) holds a SHA-256 digest of every file of the install;
what decides is here: when the software passes, what a failure says, what it keeps from
operating, and when the links it stopped may come back.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.rules.violation import RuleViolation

# House policy adopted from NY 5321.18, Mississippi 13-8-2.9 and NJ 13:69O-1.5(c) (above).
SOFTWARE_CLAUSE = "house policy adopted from NY 5321.18, Mississippi 13-8-2.9, NJ 13:69O-1.5(c)"

# Mississippi 13-8-2.9: the hash misses a change less often than once in 10^38. A digest of
# n bits lets a changed file through once in 2^n: SHA-256's 256 bits, about once in 10^77.
DIGEST = "sha256"
DIGEST_BITS = 256
ERROR_RATE_EXPONENT = 38

# NJ 13:69O-1.5(c): checked again at least every 24 hours while running.
MOST_SECONDS_BETWEEN_CHECKS = 24 * 60 * 60.0

# What a file of the install can be, against the manifest.
DIFFERS = "differs"  # there, with another digest
MISSING = "missing"  # listed, not there
EXTRA = "extra"  # there, not listed


def check_digest(name: str, bits: int) -> None:
    """Refuse a manifest kept in a digest that misses changes more often than Mississippi
    13-8-2.9 allows (1 in 10^38)."""
    if 2**bits <= 10**ERROR_RATE_EXPONENT:
        raise RuleViolation(
            SOFTWARE_CLAUSE,
            f"a {name} digest of {bits} bits misses a change more often than once in "
            f"10^{ERROR_RATE_EXPONENT}: the manifest is kept in {DIGEST}",
        )


def check_interval(seconds: float) -> float:
    """The time between two checks of a running controller: at most 24 hours."""
    if not 0 < seconds <= MOST_SECONDS_BETWEEN_CHECKS:
        raise RuleViolation(
            SOFTWARE_CLAUSE,
            f"the software is checked again at least every {MOST_SECONDS_BETWEEN_CHECKS:.0f} s "
            f"(24 hours), not every {seconds:g} s",
        )
    return seconds


def software_fault(
    *,
    manifest: str,
    problem: str | None,
    mismatches: Sequence[tuple[str, str]],
) -> str | None:
    """What keeps the controller from operating, or None when its software passes.

    It passes only when its manifest can be read (``problem`` None) and every file of the
    install is the one the manifest lists, with its digest: none that differs, none missing,
    none added. ``mismatches``: (path, ``DIFFERS`` / ``MISSING`` / ``EXTRA``), in path order;
    the first is named, with how many in all.
    """
    if problem is not None:
        return f"the software cannot be checked: {problem}"
    if not mismatches:
        return None
    path, what = mismatches[0]
    said = {
        DIFFERS: "differs from the manifest",
        MISSING: "is listed in the manifest but missing",
        EXTRA: "is not in the manifest",
    }[what]
    more = len(mismatches) - 1
    count = f"{len(mismatches)} files in all" if more else "1 file in all"
    return f"the installed software does not match its manifest {manifest}: {path} {said} ({count})"


def check_software(fault: str | None) -> None:
    """The controller starts, and signs anything, only with software that passes its check."""
    if fault is not None:
        raise RuleViolation(
            SOFTWARE_CLAUSE,
            f"{fault}; the controller does not operate until its software passes: put back the "
            "release's files, or make the manifest of a newly installed release with "
            "`progressive self-check --make`",
        )


def held_reason(fault: str, at: str) -> str:
    """Why a link is inoperable after a check of the software failed while it ran (``at``):
    it comes back, once the software passes again, by the two-person recovery of an
    inoperable link (``house.check_recovery``), never by itself."""
    return (
        f"the software self-check failed at {at} ({fault}); recover the link with two people "
        "once the software passes its check"
    )


def check_recoverable(fault: str | None) -> None:
    """A link held by a failed check of the software is recovered only once the software
    passes its check again."""
    if fault is not None:
        raise RuleViolation(
            SOFTWARE_CLAUSE,
            f"no link is recovered while the software fails its self-check ({fault}): "
            "put back the release's files and check again first",
        )
