"""A packet's figures in the words people read: rates as "82.50 %", amounts as "$10,000.00",
hands by name ("Royal flush"), what a paytable line pays, a level's terms in one sentence.

Pure: no I/O, no clock. Used by ``packet_document`` for the commission's page and the PDF, so
both say the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from controller.core.hands import HandCategory
from controller.core.money import BP_PER_WHOLE, format_cents

NONE = "none"
NOT_PAID = "not paid"

_ABOVE_LIMIT = {
    "overflow": "the excess goes to its overflow meter, moved in at its next reset",
    "next_level": "the excess goes on to the next level",
}


def rate_text(bp: int | None) -> str:
    """Basis points as a percentage with two decimals: ``8250`` -> ``82.50 %``."""
    if bp is None:
        return NONE
    whole, frac = divmod(bp, BP_PER_WHOLE // 100)
    return f"{whole}.{frac:02d} %"


def money_text(cents: int | None) -> str:
    return NONE if cents is None else format_cents(cents)


def hand_text(name: str) -> str:
    """A hand as the packet stores it (``"ROYAL_FLUSH"``) by its name: ``"Royal flush"``."""
    try:
        return HandCategory.__members__[name].title
    except KeyError:
        words = name.lower().replace("_", " ")
        return words[:1].upper() + words[1:]


def level_names(levels: Sequence[Mapping[str, Any]] | None) -> dict[int, str]:
    return {i + 1: str(lv["name"]) for i, lv in enumerate(levels or ())}


def pays_text(line: Mapping[str, Any], names: Mapping[int, str] | None = None) -> str:
    """What a paytable line pays: a share of the meter (of a level, on a link of levels) or a
    fixed amount, and any envy to the other seats."""
    if line.get("percent_bp") is not None:
        share = rate_text(line["percent_bp"])
        if names:
            n = int(line.get("level", 1))
            pays = f"{share} of level {n} ({names.get(n, 'unknown')})"
        else:
            pays = f"{share} of the meter"
    else:
        pays = money_text(line.get("fixed_cents"))
    if line.get("envy_cents") is not None:
        pays += f"; envy {format_cents(line['envy_cents'])} to each other seat with a side bet"
    return pays


def paytable_pays(
    lines: Sequence[Mapping[str, Any]] | None, names: Mapping[int, str] | None = None
) -> dict[str, str]:
    """Each hand of a paytable (stored name) and what it pays, in the paytable's order."""
    return {str(line["hand"]): pays_text(line, names) for line in lines or ()}


def level_text(level: Mapping[str, Any] | None) -> str:
    """A level's terms in one sentence: reset, shares, limit and what happens above it,
    mystery range."""
    if level is None:
        return NONE
    parts = [
        f"reset {format_cents(level['reset_cents'])}",
        f"share {rate_text(level['rate_bp'])} shown and "
        f"{rate_text(level.get('reserve_bp', 0))} hidden",
    ]
    if level.get("limit_cents") is not None:
        above = _ABOVE_LIMIT.get(str(level.get("above_limit", "overflow")), "")
        parts.append(f"limit {format_cents(level['limit_cents'])} ({above})")
    else:
        parts.append("no limit")
    mystery = level.get("mystery")
    if mystery:
        parts.append(
            f"mystery: hits at a point drawn between {format_cents(mystery['floor_cents'])} "
            f"and {format_cents(mystery['ceiling_cents'])}"
        )
    return "; ".join(parts)


def above_limit_text(value: str | None) -> str:
    """A level's above-limit rule (``"next_level"``) in words."""
    if value is None:
        return "-"
    return {"overflow": "to its overflow meter", "next_level": "to the next level"}.get(
        value, value.replace("_", " ")
    )


def days_text(days: int) -> str:
    return "1 day" if days == 1 else f"{days:,} days"
