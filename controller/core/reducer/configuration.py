"""Opening a link and changing how it is configured: its rate, its reset amount, and
the approved changes armed to apply at the next jackpot reset."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from controller.core.games import Game, Paytable
from controller.core.money import cents_to_units, format_cents
from controller.core.reducer.builder import Builder
from controller.core.reducer.state import (
    ArmedChange,
    EngineError,
    EntryKind,
    HitPolicy,
    LinkState,
    Outcome,
    TableConfig,
    TableState,
)
from controller.rules.progression import check_rate_change, check_rate_of_progression
from controller.rules.wagers import check_denomination


def open_link(
    *,
    link_id: str,
    game: Game,
    rate_bp: int,
    reset_cents: int,
    paytable: Paytable,
    tables: Sequence[TableConfig],
    at_us: int,
    hit_policy: HitPolicy = HitPolicy.SPLIT,
) -> Outcome:
    """A new link: the meter is seeded with the reset amount."""
    check_rate_of_progression(rate_bp)
    for t in tables:
        check_denomination(game, t.denomination_cents)
    if reset_cents < 0:
        raise EngineError("a reset amount cannot be negative")
    if paytable.game is not game:
        raise EngineError(f"the paytable is for {paytable.game.label}, the link plays {game.label}")
    ids = [t.table_id for t in tables]
    if len(set(ids)) != len(ids):
        raise EngineError("a table appears twice on the link")
    state = LinkState(
        link_id=link_id,
        game=game,
        rate_bp=rate_bp,
        reset_cents=reset_cents,
        paytable=paytable,
        hit_policy=hit_policy,
        tables={t.table_id: TableState(config=t) for t in tables},
    )
    b = Builder(state)
    b.emit(
        EntryKind.LINK_OPENED,
        at_us,
        cents_to_units(reset_cents),
        f"link opened: {game.label}, rate {rate_bp} bp, reset {format_cents(reset_cents)}",
        details={
            "rate_bp": rate_bp,
            "reset_cents": reset_cents,
            "paytable": paytable.to_dicts(),
            # The history's own word that this link's resumable state is sealed from its first
            # entry: a row found without a seal was stripped of it, not written before seals.
            "state_sealed": True,
        },
    )
    b.touched.update(ids)
    return b.done()


def change_rate(state: LinkState, *, rate_bp: int, at_us: int, by: str) -> Outcome:
    check_rate_change(
        current_bp=state.rate_bp,
        proposed_bp=rate_bp,
        jackpot_won_since_rate_set=state.jackpot_won_since_rate_set,
    )
    b = Builder(state)
    b.emit(
        EntryKind.RATE_CHANGED,
        at_us,
        0,
        f"rate of progression {state.rate_bp} bp -> {rate_bp} bp by {by}",
        details={"from_bp": state.rate_bp, "to_bp": rate_bp, "by": by},
    )
    b.fields.update(rate_bp=rate_bp, jackpot_won_since_rate_set=False)
    return b.done()


def change_reset_amount(state: LinkState, *, reset_cents: int, at_us: int, by: str) -> Outcome:
    """The new reset amount is used at the next jackpot reset; the meter does not move now."""
    if reset_cents < 0:
        raise EngineError("a reset amount cannot be negative")
    b = Builder(state)
    b.emit(
        EntryKind.RESET_AMOUNT_CHANGED,
        at_us,
        0,
        f"reset amount {format_cents(state.reset_cents)} -> {format_cents(reset_cents)} by {by}",
        details={"from_cents": state.reset_cents, "to_cents": reset_cents, "by": by},
    )
    b.fields.update(reset_cents=reset_cents)
    return b.done()


def arm_change(state: LinkState, *, change: ArmedChange, at_us: int, by: str) -> Outcome:
    """Install an approved change; it waits for the first jackpot reset on or after its date."""
    if state.armed is not None:
        raise EngineError(
            f"link {state.link_id} already waits to apply submission {state.armed.submission_id}"
        )
    if change.rate_bp is not None:
        check_rate_of_progression(change.rate_bp)
    if change.reset_cents is not None and change.reset_cents < 0:
        raise EngineError("a reset amount cannot be negative")
    if change.paytable is not None and change.paytable.game is not state.game:
        raise EngineError(f"the paytable is not for {state.game.label}")
    b = Builder(state)
    b.emit(
        EntryKind.CHANGE_ARMED,
        at_us,
        0,
        f"submission {change.submission_id} approved ({by}): applies at the first jackpot reset "
        "on or after its effective date",
        details=change.to_dict(),
    )
    b.fields["armed"] = change
    return b.done()


def due_change(b: Builder, at_us: int) -> ArmedChange | None:
    armed = b.state.armed
    return armed if armed is not None and at_us >= armed.effective_at_us else None


def take_effect(b: Builder, change: ArmedChange, at_us: int, *, reset: bool) -> None:
    """Apply an armed change at a jackpot reset: the reset amount seeds this very reset; the
    rate and paytable apply right after it, before any later contribution."""
    changes: dict[str, Any] = {}
    ref = {"submission_id": change.submission_id}
    if reset:
        assert change.reset_cents is not None
        b.emit(
            EntryKind.RESET_AMOUNT_CHANGED,
            at_us,
            0,
            f"reset amount {format_cents(b.state.reset_cents)} -> "
            f"{format_cents(change.reset_cents)} (submission {change.submission_id})",
            details={"from_cents": b.state.reset_cents, "to_cents": change.reset_cents, **ref},
        )
        changes["reset_cents"] = change.reset_cents
    else:
        if change.rate_bp is not None:
            # The jackpot was just won: 68 IAC 10-1-1.1(d) allows the new rate from here.
            check_rate_change(
                current_bp=b.state.rate_bp,
                proposed_bp=change.rate_bp,
                jackpot_won_since_rate_set=True,
            )
            b.emit(
                EntryKind.RATE_CHANGED,
                at_us,
                0,
                f"rate of progression {b.state.rate_bp} bp -> {change.rate_bp} bp "
                f"(submission {change.submission_id})",
                details={"from_bp": b.state.rate_bp, "to_bp": change.rate_bp, **ref},
            )
            changes.update(rate_bp=change.rate_bp, jackpot_won_since_rate_set=False)
        if change.paytable is not None:
            b.emit(
                EntryKind.PAYTABLE_CHANGED,
                at_us,
                0,
                f"paytable changed (submission {change.submission_id})",
                details={"paytable": change.paytable.to_dicts(), **ref},
            )
            changes["paytable"] = change.paytable
        changes["armed"] = None
    # The rest of this outcome (later readings of the cycle) sees the new values at once.
    b.state = replace(b.state, **changes)
    b.fields.update(changes)
