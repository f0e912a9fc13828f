"""Cards as a hit record keeps them (``"51,47,43,39,35"``, the joker 52), read back and written
for people (``"As Ks Qs Js Joker"``) or for files (``"As Ks Qs Js JK"``).

A record is shown whatever its cards hold: ``ShownCards.of`` never raises, it says what is
wrong and keeps the stored text, so one bad record never hides the others of a list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from controller.core.hands.cards import JOKER, InvalidCards, card_text, card_word

# Any code a table may report: register map v2 carries 0-52, the joker 52 (68 IAC 10-9-3(b)).
# Which game may hold the joker is the game's judge's to say, when the hit is taken.
HIGHEST_STORED = JOKER


def read_stored_cards(text: str | None) -> tuple[int, ...] | None:
    """The codes of stored cards, None when none were reported; InvalidCards naming the stored
    text and what in it is no card."""
    if text is None or not text.strip():
        return None
    codes: list[int] = []
    for token in text.split(","):
        item = token.strip()
        if not (item.isascii() and item.isdigit()):
            raise InvalidCards(f"the stored cards {text!r} hold {item!r}, not a card code")
        code = int(item)
        if code > HIGHEST_STORED:
            raise InvalidCards(
                f"the stored cards {text!r} hold {code}, outside the card codes 0-{HIGHEST_STORED}"
            )
        codes.append(code)
    return tuple(codes)


def cards_words(codes: Sequence[int]) -> str:
    """Cards as people read them: ``"As Ah Ad Ac Joker 2c 3d"``."""
    return " ".join(card_word(c) for c in codes)


def cards_compact(codes: Sequence[int]) -> str:
    """Cards as files carry them, two characters each: ``"As Ah Ad Ac JK 2c 3d"``."""
    return " ".join(card_text(c, joker=True) for c in codes)


@dataclass(frozen=True, slots=True)
class ShownCards:
    """Stored cards as they can be shown: their codes (None: none reported), or, when the
    stored text is no cards, what is wrong (``problem``) and that text (``raw``)."""

    codes: tuple[int, ...] | None
    problem: str | None = None
    raw: str | None = None

    @classmethod
    def of(cls, text: str | None) -> ShownCards:
        try:
            return cls(read_stored_cards(text))
        except InvalidCards as exc:
            return cls(None, str(exc), text)

    def words(self, none: str = "") -> str:
        """For people: the cards, ``none`` when none were reported, or what is wrong."""
        if self.problem is not None:
            return f"unreadable: {self.problem}"
        return none if self.codes is None else cards_words(self.codes)

    def compact(self) -> str | None:
        """For files: the cards, None when none were reported, or what is wrong."""
        if self.problem is not None:
            return f"unreadable: {self.problem}"
        return None if self.codes is None else cards_compact(self.codes)

    def texts(self) -> list[str] | None:
        """The cards one text each (``"As"``, ``"JK"``), None when none or unreadable."""
        return None if self.codes is None else [card_text(c, joker=True) for c in self.codes]
