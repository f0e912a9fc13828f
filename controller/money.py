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

UNITS_PER_CENT = 10_000
BP_PER_WHOLE = 10_000
U32 = 2**32


class MoneyError(ValueError):
    """Operator input that is not an amount or a rate we can take exactly."""


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


def parse_cents(text: str, *, allow_negative: bool = False) -> int:
    """Parse ``$1,234.56``, ``1234.56``, ``1234`` or ``0.05`` into whole cents.

    Refuses fractions of a cent, misplaced thousands separators, and (unless asked) negatives,
    each with a message that says what was wrong.
    """
    raw = text
    text = text.strip().replace(" ", "")
    if not text:
        raise MoneyError("an amount is required, e.g. $1,234.56")
    m = _AMOUNT_RE.match(text)
    if m is None:
        raise MoneyError(f"{raw!r} is not an amount; write it like $1,234.56")
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


def parse_rate_bp(text: str) -> int:
    """Parse a percentage such as ``82.5%``, ``82.5`` or ``61.37%`` into basis points.

    Only the form is checked here; whether a rate is allowed is a regulation, see
    ``controller.regulations.check_rate_of_progression``.
    """
    raw = text
    text = text.strip()
    if not text:
        raise MoneyError("a percentage is required, e.g. 82.5%")
    m = _RATE_RE.match(text)
    if m is None:
        raise MoneyError(f"{raw!r} is not a percentage; write it like 82.5%")
    bp = Decimal(m["num"]) * 100
    if bp != bp.to_integral_value():
        raise MoneyError(f"{raw!r} is finer than 0.01%; percentages are kept in basis points")
    return int(bp)
