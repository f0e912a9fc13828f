"""A technician's work after a hit: verify the hand, record the hand pay, reset the table.

Pure rules, no I/O; ``LinkRuntime`` applies them and records the result. The order they keep
is the floor's: a hit is verified before it is paid by hand, and a table held for a hit is
reset only once every hit it was held for has been verified (DESIGN.md, Hits: "the winning
table is held until a technician verifies and resets it").
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.core.hands import HandCategory, InvalidCards, card_text, evaluate
from controller.core.money import format_cents
from controller.core.reducer import EngineError

HAND_SIZE = 5


class HitWorkRefused(EngineError):
    """A verification, hand pay or reset that cannot be done; the message says why."""


def cards_text(cards: Sequence[int]) -> str:
    return " ".join(card_text(c) for c in cards)


def parse_stored_cards(text: str | None) -> tuple[int, ...] | None:
    """Card codes as the hit record keeps them (``"51,47,43,39,35"``)."""
    if text is None or not text.strip():
        return None
    return tuple(int(c) for c in text.split(","))


def confirmed_cards(
    *,
    hit_id: str,
    status: str,
    claimed: HandCategory,
    reported: Sequence[int] | None,
    entered: Sequence[int] | None,
) -> tuple[int, ...]:
    """The cards a verification records, or ``HitWorkRefused``.

    When the table reported cards, the technician confirms those very cards (entering them is
    optional; entered cards must be the same five). When it reported none, the technician
    enters the five cards and the evaluator checks that they make the claimed hand.
    """
    if status != "awarded":
        raise HitWorkRefused(f"hit {hit_id} was {status}: nothing was awarded to verify")
    if reported is not None:
        if entered is not None and sorted(entered) != sorted(reported):
            raise HitWorkRefused(
                f"hit {hit_id}: the cards entered ({_safe_text(entered)}) are not the cards the "
                f"table reported ({cards_text(reported)})"
            )
        return tuple(reported)
    if entered is None:
        raise HitWorkRefused(
            f"hit {hit_id}: the table reported no cards; enter the five cards of the hand"
        )
    if len(entered) != HAND_SIZE:
        raise HitWorkRefused(f"hit {hit_id}: a hand is five cards; {len(entered)} were entered")
    try:
        made = evaluate(tuple(entered)).category
    except InvalidCards as exc:
        raise HitWorkRefused(f"hit {hit_id}: the cards entered are not a hand: {exc}") from None
    if made is not claimed:
        raise HitWorkRefused(
            f"hit {hit_id}: {cards_text(entered)} make {made.label}, not the claimed "
            f"{claimed.label}"
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
        return cards_text(cards)
    except InvalidCards:
        return ", ".join(str(c) for c in cards)
