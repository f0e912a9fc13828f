"""Money: integer amounts only.

Three integer scales, each named in every identifier that carries it:

* ``*_units``: the meter, in 1/10,000 of a cent. ``credits x denomination_cents x rate_bp``
  is already in units, so a contribution is exact and no remainder is ever lost.
* ``*_cents``: what people see and what is paid: whole cents.
* ``*_bp``: a rate or a percentage in basis points (10000 = 100%).

Floats never touch an amount. ``Decimal`` appears only in the parsers, which turn operator
text such as ``$1,234.56`` or ``82.5%`` into integers and refuse anything inexact.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from controller.refusal import Invalid

UNITS_PER_CENT = 10_000
BP_PER_WHOLE = 10_000
U32 = 2**32

# ------------------------------------------------------------------------------------ bounds
#
# Every amount is bounded where it enters (a request, a filing, a configuration file, a
# command-line option), so that nothing computed from it overflows what the history keeps.
# The history's amounts are signed 64-bit columns (``BigInteger``: meter_*_units, delta_units,
# award_cents, reset_cents, units of an anomaly; see controller/storage/models.py): at most
# 2**63 - 1 units, $9,223,372,036,854.77 on a meter.
#
# * One amount a person sets or enters (a reset amount, a fixed pay, a correction, a hand pay)
#   is at most 2**32 - 1 cents, $42,949,672.95: the most a table controller can show (register
#   map v1, addresses 103-104: u32 cents). In units 4.3e13, a 200,000th of the column.
# * 68 IAC 10-1-5(d): a jackpot may be limited only by limiting the wager, so the meter has no
#   ceiling of its own; the wager has one. A credit is at most $100 (the side bets of these
#   games are $1 to $5). One reading of a table credits fewer than 2**32 credits (its counter
#   is u32): at most 2**32 x 10,000 c x 10,000 bp = 4.3e17 units, a 21st of the column, whether
#   credited or held as an anomaly. The denomination column is 32-bit: $100 fits it.
# * A meter grows only by what is wagered between jackpots. At these bounds a link of 1,000
#   tables, every seat betting $100 on a round every 30 s day and night at a 100% rate, fills
#   the column after 12 years without a jackpot; a floor of $5 side bets after 250 years. The
#   sums the history keeps (reconciliation's totals, the awards of a period) are of the same
#   amounts: Python integers, or SQL sums over one link's bounded period. Should a commit
#   still fail, only the table whose reading caused it is held (``controller.runtime.links``).
MAX_AMOUNT_CENTS = U32 - 1
MAX_DENOMINATION_CENTS = 100_00
# The history's amount columns, in units.
MAX_COLUMN_UNITS = 2**63 - 1


class MoneyError(Invalid):
    """Operator input that is not an amount or a rate we can take exactly."""


class MissingUnit(MoneyError):
    """A bare number where an amount (``$``) or a rate (``%``) must carry its unit, so that
    ``10`` is never taken for ten dollars when ten percent (or ten cents) was meant."""


AMOUNT_FORM = "an amount like $1,234.56"
PERCENT_FORM = "a percentage like 82.5%"


def check_cents(name: str, cents: object, *, low: int = 0, high: int = MAX_AMOUNT_CENTS) -> int:
    """``cents`` when it is whole cents from ``low`` to ``high``; refused naming ``name``."""
    if isinstance(cents, bool) or not isinstance(cents, int):
        raise MoneyError(f"{name} must be whole cents, got {cents!r}")
    if not low <= cents <= high:
        raise MoneyError(
            f"{name} {format_cents(cents)} is outside {format_cents(low)} to {format_cents(high)}"
        )
    return cents


def contribution_units(*, credits: int, denomination_cents: int, rate_bp: int) -> int:
    """What ``credits`` wagered add to a meter, in units: exact by construction."""
    # 68 IAC 10-6-5(f)(2) and 10-8-5(f)(2): credits x rate of progression x denomination.
    if credits < 0:
        raise MoneyError(f"credits cannot be negative (got {credits})")
    return credits * denomination_cents * rate_bp


def cents_to_units(cents: int) -> int:
    return cents * UNITS_PER_CENT


def displayed_cents(units: int) -> int:
    """The whole cents a meter shows: the sub-cent remainder is never shown, never paid."""
    return units // UNITS_PER_CENT


def percent_of_cents(cents: int, share_bp: int) -> int:
    """``share_bp`` of ``cents``, rounded down to a whole cent (the remainder stays put)."""
    return cents * share_bp // BP_PER_WHOLE


def format_cents(cents: int) -> str:
    """``123456`` -> ``$1,234.56``; negative amounts as ``-$1.00``."""
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    return f"{sign}${whole:,}.{frac:02d}"


def format_bp(bp: int) -> str:
    """``8250`` -> ``82.5%``; ``6137`` -> ``61.37%``; ``-50`` -> ``-0.5%``."""
    sign = "-" if bp < 0 else ""
    whole, frac = divmod(abs(bp), 100)
    return sign + (f"{whole}%" if frac == 0 else f"{whole}.{frac:02d}".rstrip("0") + "%")


_AMOUNT_RE = re.compile(r"^(?P<sign>-)?\$?(?P<num>(\d{1,3}(,\d{3})+|\d+)(\.\d+)?|\.\d+)$")
_RATE_RE = re.compile(r"^(?P<num>\d+(\.\d+)?|\.\d+)\s*%?$")


def parse_cents(text: str, *, allow_negative: bool = False, unit_required: bool = False) -> int:
    """Parse ``$1,234.56``, ``1234.56``, ``1234`` or ``0.05`` into whole cents.

    Refuses fractions of a cent, misplaced thousands separators, and (unless asked) negatives,
    each with a message that says what was wrong. With ``unit_required`` (what an operator
    types: command-line options, configuration files) the ``$`` must be written.
    """
    raw = text
    text = text.strip().replace(" ", "")
    if not text:
        raise MoneyError("an amount is required, e.g. $1,234.56")
    m = _AMOUNT_RE.match(text)
    if m is None:
        raise MoneyError(f"{raw!r} is not an amount; write it like $1,234.56")
    if unit_required and "$" not in text:
        raise MissingUnit(f"{raw!r} needs its unit: write {AMOUNT_FORM}")
    try:
        value = Decimal(m["num"].replace(",", ""))
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only digits
        raise MoneyError(f"{raw!r} is not an amount") from exc
    cents = value * 100
    if cents != cents.to_integral_value():
        raise MoneyError(f"{raw!r} has a fraction of a cent; amounts are whole cents")
    result = int(cents)
    if m["sign"]:
        if not allow_negative:
            raise MoneyError(f"{raw!r} is negative; an amount here must be zero or more")
        result = -result
    return result


def parse_rate_bp(text: str, *, unit_required: bool = False, form: str = PERCENT_FORM) -> int:
    """Parse a percentage such as ``82.5%``, ``82.5`` or ``61.37%`` into basis points.

    Only the form is checked here; whether a rate is allowed is a regulation, see
    ``controller.rules.progression.check_rate_of_progression``. With ``unit_required`` the
    ``%`` must be written; ``form`` is the example the refusal gives.
    """
    raw = text
    text = text.strip()
    if not text:
        raise MoneyError("a percentage is required, e.g. 82.5%")
    m = _RATE_RE.match(text)
    if m is None:
        raise MoneyError(f"{raw!r} is not a percentage; write it like 82.5%")
    if unit_required and not text.endswith("%"):
        raise MissingUnit(f"{raw!r} needs its unit: write {form}")
    bp = Decimal(m["num"]) * 100
    if bp != bp.to_integral_value():
        raise MoneyError(f"{raw!r} is finer than 0.01%; percentages are kept in basis points")
    return int(bp)
