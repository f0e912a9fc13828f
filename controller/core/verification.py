"""A technician's work after a hit: verify the hand, record the hand pay, reset the table.

Pure rules, no I/O; ``LinkRuntime`` applies them and records the result. The order they keep
is the floor's: a hit is verified before it is paid by hand, and a table held for a hit is
reset only once every hit it was held for has been verified (DESIGN.md, Hits: "the winning
table is held until a technician verifies and resets it").
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.core.games import Game
from controller.core.hands import JOKER, HandCategory, InvalidCards, cards_words
from controller.core.money import format_cents
from controller.core.reducer import EngineError

HAND_SIZE = 5  # the five-card games' hand; each game's own is ``game.rules.hand``
# Hits no cards decide: a mystery level's trigger reached, an envy bonus for another seat's hand.
NO_CARDS_KINDS = frozenset({"mystery", "envy"})


class HitWorkRefused(EngineError):
    """A verification, hand pay or reset that cannot be done; the message says why."""


def confirmed_cards(
    *,
    hit_id: str,
    status: str,
    claimed: HandCategory,
    reported: Sequence[int] | None,
    entered: Sequence[int] | None,
    game: Game = Game.CARIBBEAN_STUD,
    kind: str = "hand",
) -> tuple[int, ...]:
    """The cards a verification records, or ``HitWorkRefused``.

    When the table reported cards, the technician confirms those very cards (entering them is
    optional; entered cards must be the same ones). When it reported none, the technician
    enters the cards the game judges (five, one to three for Super Sevens, seven for Pai Gow)
    and the game's judge checks that they make the claimed hand. A mystery hit or an envy
    bonus is decided by no cards of its own: the technician confirms the award, no cards.
    """
    if status != "awarded":
        raise HitWorkRefused(f"hit {hit_id} was {status}: nothing was awarded to verify")
    if kind in NO_CARDS_KINDS:
        if entered:
            raise HitWorkRefused(f"hit {hit_id}: a {kind} hit is decided by no cards of its own")
        return ()
    if entered is not None and JOKER in entered and not game.rules.hand.deck.joker:
        # Only a deck with a joker deals one: Pai Gow Poker's (68 IAC 10-9-3(b)).
        raise HitWorkRefused(f"hit {hit_id}: the joker is not a card of {game.rules.label}")
    if reported is not None:
        if entered is not None and sorted(entered) != sorted(reported):
            raise HitWorkRefused(
                f"hit {hit_id}: the cards entered ({_safe_text(entered)}) are not the cards the "
                f"table reported ({cards_words(reported)})"
            )
        return tuple(reported)
    rules = game.rules
    shape = rules.hand
    if entered is None:
        cards = "the five cards" if shape.dealt == HAND_SIZE else "the cards"
        raise HitWorkRefused(
            f"hit {hit_id}: the table reported no cards; enter {cards} of the hand "
            f"({rules.judged_on})"
        )
    if shape.dealt == HAND_SIZE and len(entered) != HAND_SIZE:
        raise HitWorkRefused(f"hit {hit_id}: a hand is five cards; {len(entered)} were entered")
    try:
        made = rules.judge(tuple(entered))
    except InvalidCards as exc:
        raise HitWorkRefused(
            f"hit {hit_id}: the cards entered are not a {rules.label} hand ({shape.dealt} "
            f"dealt, {rules.judged_on}): {exc}"
        ) from None
    if made is not claimed:
        what = "no paying hand" if made is None else made.label
        raise HitWorkRefused(
            f"hit {hit_id}: {_safe_text(entered)} make {what}, not the claimed {claimed.label}"
        )
    return tuple(entered)


def check_hand_pay(
    *,
    hit_id: str,
    status: str,
    award_cents: int,
    amount_cents: int,
    verified: bool,
    already_paid_cents: int | None,
) -> None:
    """A hand pay is recorded once, for a verified award, for exactly the amount awarded."""
    if status != "awarded":
        raise HitWorkRefused(f"hit {hit_id} was {status}: there is nothing to pay")
    if already_paid_cents is not None:
        raise HitWorkRefused(
            f"hit {hit_id}: a hand pay of {format_cents(already_paid_cents)} is already recorded"
        )
    if not verified:
        raise HitWorkRefused(f"hit {hit_id}: verify the hand before recording its pay")
    if isinstance(amount_cents, bool) or not isinstance(amount_cents, int) or amount_cents <= 0:
        raise HitWorkRefused(f"hit {hit_id}: a hand pay is a positive whole number of cents")
    if amount_cents != award_cents:
        raise HitWorkRefused(
            f"hit {hit_id}: the award is {format_cents(award_cents)}; a hand pay of "
            f"{format_cents(amount_cents)} does not match it"
        )


def check_release(*, table_id: str, unverified_hit_ids: Sequence[str]) -> None:
    """A held table is reset only after every award it was held for is verified."""
    if unverified_hit_ids:
        raise HitWorkRefused(
            f"table {table_id} cannot be reset before its hits are verified: "
            + ", ".join(unverified_hit_ids)
        )


def _safe_text(cards: Sequence[int]) -> str:
    try:
        return cards_words(cards)
    except InvalidCards:
        return ", ".join(str(c) for c in cards)
