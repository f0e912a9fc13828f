"""Super Sevens (68 IAC 10-12-3): a blackjack side bet of at most one dollar on sevens among the
player's first one to three cards, dealt from the blackjack shoe.

Which cards count. (e): no seven first, no win. (f)(1) pays a first seven with "no other
seven"; (f)(2)-(3) two sevens "on the first two cards"; (f)(4)-(5) three sevens "on the first
three cards". Read with "first one to three cards", the second card counts only when the first
is a seven, and the third only when the first two are sevens: a seven, a non-seven, then a
seven is (f)(1)'s single seven. (d): after the first two sevens are split, the third card is
the next card dealt to the player.

Suits. (f)(4) "three sevens of different suits" is read as three sevens not all of one suit
(so that (f)(4) and (f)(5) between them pay every three sevens): two of one suit and one of
another is (f)(4).

The shoe. 68 IAC 10-2-3(b) lets a blackjack game use one to eight decks and 10-12-3 does not
say which: the deck count is this module's parameter, six decks unless told. With one deck no
two sevens share a suit, and the suited lines are never won.

The odds are exact over the ordered first three cards of the shoe, drawn without replacement:
N (N - 1) (N - 2) equally likely deals for N = 52 x decks. Whatever the dealer and the other
seats receive in between, unseen, does not change them. They assume the third card is always
dealt to a player holding two sevens (a player who stands on the blackjack hand still sees the
card the side bet is judged on). A claim of two sevens with no third card is judged as two
sevens, as (f)(2)-(3) pay them "on the first two cards": what the odds count as two sevens and
a third card, the table may report on two.

The bet. (b): "a maximum wager of one dollar": a table's Super Sevens wager is at most one
dollar (``GameRules.max_wager_cents``), and (f)'s amounts are paid whatever it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from controller.core.games.lines import PaytableLine
from controller.core.games.module import (
    Deck,
    GameRules,
    HandCounts,
    HandShape,
    RegisterFields,
)
from controller.core.hands import HandCategory, InvalidCards, checked_cards

H = HandCategory

# 68 IAC 10-12-3(b): "a maximum wager of one dollar": a bet of at most one dollar (its rule:
# ``controller.rules.wagers``); (f) pays its amounts whatever the bet.
BET_CENTS = 100

DEFAULT_DECKS = 6
SEVEN_RANK = 5  # rank = code // 4: 0 is the deuce, 5 the seven

RANKING = (
    H.THREE_SUITED_SEVENS,
    H.THREE_SEVENS,
    H.TWO_SUITED_SEVENS,
    H.TWO_SEVENS,
    H.SEVEN,
)

# 68 IAC 10-12-3(f)(1)-(5), fixed amounts; an operator may file a paytable paying the top
# line from a meter instead.
DEFAULT_LINES = (
    PaytableLine(hand=H.THREE_SUITED_SEVENS, fixed_cents=5_000_00),
    PaytableLine(hand=H.THREE_SEVENS, fixed_cents=500_00),
    PaytableLine(hand=H.TWO_SUITED_SEVENS, fixed_cents=100_00),
    PaytableLine(hand=H.TWO_SEVENS, fixed_cents=50_00),
    PaytableLine(hand=H.SEVEN, fixed_cents=3_00),
)


def _is_seven(code: int) -> bool:
    return code >> 2 == SEVEN_RANK


def judge_cards(cards: Sequence[int], *, decks: int = DEFAULT_DECKS) -> HandCategory | None:
    """The Super Sevens hand of the player's first cards, in the order dealt.

    One card decides when it is not a seven, two when they are not both sevens, else three;
    cards after the deciding one are not looked at. Two sevens with no third card (the player
    stands, or the dealer has blackjack) are two sevens, suited or not as the cards say
    (68 IAC 10-12-3(f)(2)-(3)). A seven alone, more than three cards, or a card appearing more
    often than the shoe holds it: ``InvalidCards``.
    """
    codes = checked_cards(cards, counts=range(1, 4), copies=decks)
    if not _is_seven(codes[0]):
        return None  # 68 IAC 10-12-3(e)
    if len(codes) < 2:
        raise InvalidCards("the first card is a seven: the second card decides the hand")
    if not _is_seven(codes[1]):
        return H.SEVEN
    first, second = (code & 3 for code in codes[:2])
    # 68 IAC 10-12-3(f)(2)-(3): two sevens "on the first two cards" are paid as such when no
    # third card is dealt (the player stands, or the dealer has blackjack).
    if len(codes) < 3 or not _is_seven(codes[2]):
        return H.TWO_SUITED_SEVENS if first == second else H.TWO_SEVENS
    third = codes[2] & 3
    return H.THREE_SUITED_SEVENS if first == second == third else H.THREE_SEVENS


@cache
def count(decks: int = DEFAULT_DECKS) -> HandCounts:
    """Exact odds over the ordered first three cards of a shoe of ``decks`` decks."""
    deck = Deck(decks=decks)
    n = deck.size
    sevens = 4 * decks  # decks sevens of each suit
    others = n - sevens
    # First a seven (sevens ways), then:
    ways = {
        # a seven of the same suit (decks - 1 left), then three: a third of that suit,
        H.THREE_SUITED_SEVENS: sevens * (decks - 1) * (decks - 2),
        # any two more sevens, not all three of one suit,
        H.THREE_SEVENS: sevens * (sevens - 1) * (sevens - 2) - sevens * (decks - 1) * (decks - 2),
        # a seven of the same suit, then not a seven,
        H.TWO_SUITED_SEVENS: sevens * (decks - 1) * others,
        # a seven of another suit (3 x decks), then not a seven,
        H.TWO_SEVENS: sevens * 3 * decks * others,
        # not a seven, then any third card.
        H.SEVEN: sevens * others * (n - 2),
    }
    return HandCounts(n * (n - 1) * (n - 2), ways)


@cache
def rules(decks: int = DEFAULT_DECKS) -> GameRules:
    """Super Sevens dealt from a shoe of ``decks`` decks (68 IAC 10-2-3(b): one to eight)."""
    if isinstance(decks, bool) or not isinstance(decks, int) or not 1 <= decks <= 8:
        raise ValueError(f"a blackjack shoe holds one to eight decks, got {decks!r}")
    deck = Deck(decks=decks)

    def judge(cards: Sequence[int]) -> HandCategory | None:
        return judge_cards(cards, decks=decks)

    return GameRules(
        label="Super Sevens",
        hand=HandShape(dealt=3, counted=3, deck=deck),
        ranking=RANKING,
        default_lines=DEFAULT_LINES,
        count=lambda: count(decks),
        judge=judge,
        judged_on=(
            f"the player's first one to three cards from {deck.describe()}: the second card "
            "only after a seven, the third only after two sevens"
        ),
        assumption=(
            "three sevens not all of one suit are read as three sevens of different suits; the "
            "third card is taken as dealt to every player holding two sevens"
        ),
        deals_are="ordered first three cards of the shoe",
        register=RegisterFields(cards_per_hit=3, new_hand_codes=True),
        max_wager_cents=BET_CENTS,
    )
