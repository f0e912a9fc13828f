"""Poker hand evaluation: card codes, hand categories and best-five-card hand values.

Hand rankings follow the Let It Ride rules of play, section F, and 68 IAC 10-9-1(d): from
highest, royal flush, straight flush, four of a kind, full house, flush, straight, three of a
kind, two pair, one pair, high card. The royal flush (A-K-Q-J-10 of one suit) is a category of
its own above the straight flush. The ace plays high, or low only in A-2-3-4-5 (the "wheel",
a five-high straight and the lowest straight; suited, the lowest straight flush). Straights do
not wrap around (Q-K-A-2-3 is not one). Ties are broken by rank only, never by suit.

Card codes are ints 0-51: ``rank = code // 4`` (0 = deuce ... 8 = ten, 9 = jack, 10 = queen,
11 = king, 12 = ace) and ``suit = code % 4`` (0 clubs, 1 diamonds, 2 hearts, 3 spades).

Public API:

* ``HandCategory`` -- the ten categories, higher is better, with labels and a forgiving
  ``parse`` (a table controller's hand codes are the adapter's, ``link_adapters``).
* ``HandValue`` -- ``category`` and ``strength``; values compare, hash and tie by ``strength``
  alone. ``ranks`` and ``description`` decode the strength on demand.
* ``evaluate(cards)`` -- the best five-card hand of five or more cards. It returns shared,
  interned ``HandValue`` objects, one per strength, never building one per call; that is why
  the value does not carry the cards.
* ``best_five(cards)`` -- the five cards making that hand (slower; for display and audit).
* ``card_code``, ``card_text``, ``parse_cards`` -- text <-> code conversions (the joker,
  ``JOKER`` = 52, only where the caller allows it); ``card_word`` a card for people.
* ``ShownCards``, ``read_stored_cards``, ``cards_words``, ``cards_compact`` -- cards as a hit
  record keeps them, read back and written for people (``JOKER_WORD``) and files
  (``JOKER_TEXT``).
* ``checked_cards`` -- a game's hand checked: its card count, the joker, a shoe's copies.
* ``InvalidCards`` -- every refusal, a ``ValueError`` whose message says what is wrong.

Strength layout: ``category << 20`` plus up to five 4-bit ranks, most significant first, that
decide ties within the category (pair rank then kickers, trips then pair, the high card of a
straight, every card of a flush ...). Comparing the ints therefore compares hands, the layout
is stable across runs and processes (it can be stored), and there are exactly 7462 distinct
strengths over the 2,598,960 five-card hands.

The package is pure: lookup tables are built at import from rank arithmetic alone, and the
only state is a bounded memo for hands of six or more cards, which never changes a result.

Its modules: ``cards`` (codes, text, validation), ``stored`` (cards as records keep them),
``values`` (categories and hand values) and
``evaluation`` (the lookup tables, ``evaluate`` and ``best_five``).
"""

from controller.core.hands.cards import (
    JOKER,
    JOKER_TEXT,
    JOKER_WORD,
    RANK_CHARS,
    SUIT_CHARS,
    InvalidCards,
    card_code,
    card_text,
    card_word,
    checked_cards,
    parse_cards,
)
from controller.core.hands.evaluation import best_five, evaluate
from controller.core.hands.stored import (
    ShownCards,
    cards_compact,
    cards_words,
    read_stored_cards,
)
from controller.core.hands.values import HandCategory, HandValue

__all__ = [
    "JOKER",
    "JOKER_TEXT",
    "JOKER_WORD",
    "RANK_CHARS",
    "SUIT_CHARS",
    "HandCategory",
    "HandValue",
    "InvalidCards",
    "ShownCards",
    "best_five",
    "card_code",
    "card_text",
    "card_word",
    "cards_compact",
    "cards_words",
    "checked_cards",
    "evaluate",
    "parse_cards",
    "read_stored_cards",
]
