"""Card codes and card text: what a card is (an int 0-51, and 52 the joker where a game deals
one), how cards are checked, and how they are written and read (``"As"``, ``"10d"``, ``"JK"``).

The joker exists only where a caller asks for it (``joker=True``): the five-card evaluator and
everything that reads card text without saying so still refuse code 52. It is written one of
two ways, both kept here: ``JOKER_TEXT`` among the two-character card texts (the API's card
lists, CSV and JSON exports) and ``JOKER_WORD`` where people read it (pages, slips, reports).
Cards kept as text (``stored_cards``) are read in ``stored``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from controller.refusal import Invalid

RANK_CHARS: Final = "23456789TJQKA"
SUIT_CHARS: Final = "cdhs"
# Pai Gow Poker's deck is 52 cards and one joker (68 IAC 10-9-3(b)); register map v2 sends it
# as code 52.
JOKER: Final = 52
# The joker among two-character card texts: upper-case K is no suit, so it is never a jack's.
JOKER_TEXT: Final = "JK"
# The joker where people read it: pages, slips, reports.
JOKER_WORD: Final = "Joker"


class InvalidCards(Invalid):
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


def checked_cards(
    cards: Iterable[int], *, counts: range, joker: bool = False, copies: int = 1
) -> tuple[int, ...]:
    """The codes of a hand a game judges, as plain ints, or InvalidCards naming the problem.

    ``counts``: how many cards the hand may have. ``joker``: code 52 allowed (once). ``copies``:
    how many times one card may appear (the decks of a shoe; 1 for a single deck).
    """
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
    top = JOKER if joker else 51
    codes: list[int] = []
    for position, card in enumerate(items, start=1):
        if isinstance(card, bool) or not isinstance(card, int):
            raise InvalidCards(
                f"card #{position} is {card!r} ({type(card).__name__}), not an int card code"
            )
        code = int(card)
        if not 0 <= code <= top:
            raise InvalidCards(f"card code {code} is outside 0-{top}")
        allowed = 1 if code == JOKER else copies
        if codes.count(code) >= allowed:
            name = "the joker" if code == JOKER else _describe_code(code)
            times = "twice" if allowed == 1 else f"more than {allowed} times"
            raise InvalidCards(f"{name} appears {times}")
        codes.append(code)
    if len(codes) not in counts:
        wanted = f"{counts.start}" if len(counts) == 1 else f"{counts.start} to {counts.stop - 1}"
        raise InvalidCards(f"need {wanted} cards, got {len(codes)}")
    return tuple(codes)


# --- card text -----------------------------------------------------------------------------

_RANK_FROM_TEXT: Final[dict[str, int]] = {char: rank for rank, char in enumerate(RANK_CHARS)}
_RANK_FROM_TEXT["10"] = 8
_CARD_FORMAT: Final = "rank 2-9, T or 10, J, Q, K or A, then suit c, d, h or s (e.g. 'As', '10d')"


def is_joker_text(text: str) -> bool:
    """``"JK"`` or ``"Joker"``, in any case."""
    return text.strip().lower() in (JOKER_TEXT.lower(), JOKER_WORD.lower())


def card_code(text: str, *, joker: bool = False) -> int:
    """The code of a card written like ``"As"``, ``"2c"``, ``"Td"`` or ``"10d"`` (and, with
    ``joker``, ``"JK"`` or ``"Joker"`` for the joker).

    Rank and suit letters are case-insensitive; surrounding whitespace is ignored.
    """
    if not isinstance(text, str):
        raise InvalidCards(f"card text must be a str, got {type(text).__name__} {text!r}")
    stripped = text.strip()
    if is_joker_text(stripped):
        if joker:
            return JOKER
        raise InvalidCards(f"{text!r} is the joker, and the joker is not a card of this game")
    rank = _RANK_FROM_TEXT.get(stripped[:-1].upper())
    suit = SUIT_CHARS.find(stripped[-1:].lower()) if stripped else -1
    if rank is None or suit < 0:
        raise InvalidCards(f"unrecognised card {text!r}: expected {_CARD_FORMAT}")
    return 4 * rank + suit


def card_text(code: int, *, joker: bool = False) -> str:
    """Two-character text of a card code, e.g. 51 -> ``"As"``, 32 -> ``"Tc"`` (and, with
    ``joker``, 52 -> ``"JK"``)."""
    if joker and type(code) is int and code == JOKER:
        return JOKER_TEXT
    checked = _check_code(code, "card")
    return RANK_CHARS[checked >> 2] + SUIT_CHARS[checked & 3]


def card_word(code: int) -> str:
    """A card as people read it: its text (``"As"``), the joker ``"Joker"``."""
    return JOKER_WORD if type(code) is int and code == JOKER else card_text(code)


def parse_cards(text: str, *, joker: bool = False) -> tuple[int, ...]:
    """Codes of cards separated by whitespace and/or commas, e.g. ``"As Ks, Qs,Js Ts"``.

    Only parses: duplicates and the card count are left to ``evaluate`` (or the game's judge).
    """
    if not isinstance(text, str):
        raise InvalidCards(f"card text must be a str, got {type(text).__name__} {text!r}")
    return tuple(card_code(token, joker=joker) for token in re.split(r"[\s,]+", text) if token)
