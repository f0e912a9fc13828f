"""Card codes and card text: what a card is (an int 0-51), how cards are checked, and
how they are written and read (``"As"``, ``"10d"``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

RANK_CHARS: Final = "23456789TJQKA"
SUIT_CHARS: Final = "cdhs"


class InvalidCards(ValueError):
    """Cards, card text or a hand name the evaluator refuses; the message says why."""


# --- validation ----------------------------------------------------------------------------


def _describe_code(code: int) -> str:
    return f"card {code} ({RANK_CHARS[code >> 2]}{SUIT_CHARS[code & 3]})"


def _check_code(card: object, where: str) -> int:
    """A plain int code 0-51, or InvalidCards naming the problem."""
    # bool is an int subclass, but True/False in a hand is a caller bug, not a deuce.
    if isinstance(card, bool) or not isinstance(card, int):
        raise InvalidCards(f"{where} is {card!r} ({type(card).__name__}), not an int card code")
    if not 0 <= card <= 51:
        raise InvalidCards(f"card code {card} is outside 0-51")
    return int(card)


def validated(cards: Iterable[int]) -> tuple[tuple[int, ...], int]:
    """The codes as plain ints and their 52-bit mask; InvalidCards on any problem."""
    if isinstance(cards, str | bytes):
        raise InvalidCards(
            f"cards must be int card codes, not text {cards!r}; convert with parse_cards()"
        )
    try:
        items = tuple(cards)
    except TypeError:
        raise InvalidCards(
            f"cards must be an iterable of int card codes, got {type(cards).__name__}"
        ) from None
    seen = 0
    for code in items:
        if type(code) is not int or not 0 <= code <= 51:
            break
        bit = 1 << code
        if seen & bit:
            break
        seen |= bit
    else:
        if len(items) < 5:
            raise InvalidCards(f"need at least five cards, got {len(items)}")
        return items, seen
    # Something is off (or an int subclass needs converting): walk again to name it.
    codes: list[int] = []
    seen = 0
    for position, card in enumerate(items, start=1):
        code = _check_code(card, f"card #{position}")
        bit = 1 << code
        if seen & bit:
            raise InvalidCards(f"{_describe_code(code)} appears twice")
        seen |= bit
        codes.append(code)
    if len(codes) < 5:
        raise InvalidCards(f"need at least five cards, got {len(codes)}")
    return tuple(codes), seen


# --- card text -----------------------------------------------------------------------------

_RANK_FROM_TEXT: Final[dict[str, int]] = {char: rank for rank, char in enumerate(RANK_CHARS)}
_RANK_FROM_TEXT["10"] = 8
_CARD_FORMAT: Final = "rank 2-9, T or 10, J, Q, K or A, then suit c, d, h or s (e.g. 'As', '10d')"


def card_code(text: str) -> int:
    """The code of a card written like ``"As"``, ``"2c"``, ``"Td"`` or ``"10d"``.

    Rank and suit letters are case-insensitive; surrounding whitespace is ignored.
    """
    if not isinstance(text, str):
        raise InvalidCards(f"card text must be a str, got {type(text).__name__} {text!r}")
    stripped = text.strip()
    rank = _RANK_FROM_TEXT.get(stripped[:-1].upper())
    suit = SUIT_CHARS.find(stripped[-1:].lower()) if stripped else -1
    if rank is None or suit < 0:
        raise InvalidCards(f"unrecognised card {text!r}: expected {_CARD_FORMAT}")
    return 4 * rank + suit


def card_text(code: int) -> str:
    """Two-character text of a card code, e.g. 51 -> ``"As"``, 32 -> ``"Tc"``."""
    checked = _check_code(code, "card")
    return RANK_CHARS[checked >> 2] + SUIT_CHARS[checked & 3]


def parse_cards(text: str) -> tuple[int, ...]:
    """Codes of cards separated by whitespace and/or commas, e.g. ``"As Ks, Qs,Js Ts"``.

    Only parses: duplicates and the card count are left to ``evaluate``.
    """
    if not isinstance(text, str):
        raise InvalidCards(f"card text must be a str, got {type(text).__name__} {text!r}")
    return tuple(card_code(token) for token in re.split(r"[\s,]+", text) if token)
