"""Opening a link and changing how it is configured: its rate, its reset amount, and
the approved changes armed to apply at the next jackpot reset."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from controller.core.games import Game, Paytable
from controller.core.games.paytables import meterless
from controller.core.law import Law
from controller.core.money import cents_to_units, format_cents
from controller.core.reducer.builder import Builder
from controller.core.reducer.levels import (
    LevelConfig,
    LevelError,
    LevelState,
    MysteryDraw,
    check_levels,
    is_single_meter,
    level_key,
    pool_rate_bp,
    shares_of,
)
from controller.core.reducer.pool import arm_mystery
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


def open_link(
    *,
    link_id: str,
    game: Game,
    rate_bp: int,
    reset_cents: int,
    paytable: Paytable,
    tables: Sequence[TableConfig],
    at_us: int,
    law: Law,
    hit_policy: HitPolicy = HitPolicy.SPLIT,
    levels: Sequence[LevelConfig] | None = None,
    draws: Mapping[int, Sequence[MysteryDraw]] | None = None,
    paytables: Mapping[Game, Paytable] | None = None,
    demonstration: bool = False,
) -> Outcome:
    """A new link: each level's meter is seeded with its reset amount.

    ``levels`` None is a classic link: one level at ``rate_bp`` with ``reset_cents``. An
    empty ``levels`` is a fixed-pay bonus link (no meter; ``rate_bp`` and ``reset_cents`` 0).
    ``draws`` holds, by level index, the triggers drawn for each mystery level.
    ``law``: the jurisdiction's rules the link plays under (``controller.core.law``).
    ``paytables`` makes a mixed-game link: the paytables of the other games its tables deal
    (a table names its game in its ``TableConfig``), each paying into the same levels.
    ``demonstration``: the installation opening it runs in demonstration mode; the link's
    first entry says so (``"demonstration": true`` in its sealed details) and the link stays
    marked for good, whatever the installation runs in later.
    """
    paytables = dict(paytables or {})
    if levels is None and (law.fixed_pay_only(game) or meterless([paytable, *paytables.values()])):
        # 68 IAC 10-7-5(e) (the Let It Ride bonus), or a paytable of fixed pays only (Super
        # Sevens as 10-12-3(f) lists it): no hand can win a meter, so the link has none.
        levels = ()
    if levels is None:
        law.check_rate_of_progression(rate_bp)
        levels = (LevelConfig(name="Jackpot", reset_cents=reset_cents, rate_bp=rate_bp),)
    try:
        check_levels(levels)
    except LevelError as exc:
        raise EngineError(str(exc)) from None
    law.check_pool(game, levels, paytable)
    # What the pool takes of every wager; the law's rate of progression is read from it.
    rate_bp = pool_rate_bp(levels)
    for other, table_of_other in paytables.items():
        if table_of_other.game is not other or other is game:
            raise EngineError(f"the paytable given for {other.label} is not one for another game")
        law.check_pool(other, levels, table_of_other)
    try:
        law.check_levels_won(levels, [paytable, *paytables.values()])
    except LevelError as exc:
        raise EngineError(str(exc)) from None
    reset_cents = levels[0].reset_cents if levels else 0
    for t in tables:
        dealt = t.game or game
        if dealt is not game and dealt not in paytables:
            raise EngineError(
                f"table {t.table_id} deals {dealt.label}: the link has no paytable for it"
            )
        law.check_denomination(dealt, t.denomination_cents)
    if reset_cents < 0:
        raise EngineError("a reset amount cannot be negative")
    if paytable.game is not game:
        raise EngineError(f"the paytable is for {paytable.game.label}, the link plays {game.label}")
    ids = [t.table_id for t in tables]
    if len(set(ids)) != len(ids):
        raise EngineError("a table appears twice on the link")
    draws = draws or {}
    state = LinkState(
        link_id=link_id,
        game=game,
        rate_bp=rate_bp,
        reset_cents=reset_cents,
        paytable=paytable,
        law=law,
        hit_policy=hit_policy,
        tables={t.table_id: TableState(config=t) for t in tables},
        paytables=paytables,
        levels=tuple(
            LevelState(config=cfg, draws=tuple(draws.get(i, ()))) for i, cfg in enumerate(levels)
        ),
        demonstration=demonstration,
    )
    b = Builder(state)
    details: dict[str, Any] = {
        "rate_bp": rate_bp,
        "reset_cents": reset_cents,
        "paytable": paytable.to_dicts(),
        # The history's own word that this link's resumable state is sealed from its first
        # entry: a row found without a seal was stripped of it, not written before seals.
        "state_sealed": True,
    }
    if paytables:
        details["paytables"] = {str(g): pt.to_dicts() for g, pt in sorted(paytables.items())}
        details["games"] = {t.table_id: str(t.game or game) for t in tables}
    # Only when it is: a link opened outside demonstration mode has the details it always had.
    said = " (demonstration mode: without its notice period)" if demonstration else ""
    if demonstration:
        details["demonstration"] = True
    if not levels:
        b.emit(
            EntryKind.LINK_OPENED,
            at_us,
            0,
            f"link opened: {game.label}, a fixed-pay link (no meter){said}",
            details={**details, "levels": []},
        )
    elif is_single_meter(levels):
        b.emit(
            EntryKind.LINK_OPENED,
            at_us,
            cents_to_units(reset_cents),
            f"link opened: {game.label}, rate {rate_bp} bp, reset {format_cents(reset_cents)}"
            f"{said}",
            details=details,
        )
    else:
        hidden = sum(cfg.reserve_bp for cfg in levels)
        b.move(
            EntryKind.LINK_OPENED,
            at_us,
            {level_key(i): cents_to_units(cfg.reset_cents) for i, cfg in enumerate(levels)},
            f"link opened: {game.label}, rate {rate_bp} bp"
            + (f" ({rate_bp - hidden} bp shown, {hidden} bp hidden)" if hidden else "")
            + f" over {len(levels)} levels ("
            + ", ".join(f"{cfg.name} {format_cents(cfg.reset_cents)}" for cfg in levels)
            + ")"
            + said,
            details={**details, "levels": [cfg.to_dict() for cfg in levels]},
        )
    for i in range(len(levels)):
        arm_mystery(b, i, at_us)
    b.touched.update(ids)
    return b.done()


def _classic_only(state: LinkState, what: str) -> None:
    state.law.check_one_meter_change(
        link_id=state.link_id,
        fixed_pay=state.fixed_pay,
        one_meter=is_single_meter(state.level_configs),
        levels=len(state.levels),
        what=what,
    )


def change_rate(state: LinkState, *, rate_bp: int, at_us: int, by: str) -> Outcome:
    _classic_only(state, "rate of progression")
    state.law.check_rate_change(
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
    _classic_only(state, "reset amount")
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
        state.law.check_rate_of_progression(change.rate_bp)
    if change.reset_cents is not None and change.reset_cents < 0:
        raise EngineError("a reset amount cannot be negative")
    if change.paytable is not None and change.paytable.game not in state.games:
        raise EngineError(
            f"the paytable is for {change.paytable.game.label}; link {state.link_id} deals "
            + ", ".join(g.label for g in state.games)
        )
    if change.levels is not None or change.paytable is not None:
        levels = change.levels if change.levels is not None else state.level_configs
        try:
            check_levels(levels)
        except LevelError as exc:
            raise EngineError(str(exc)) from None
        if len(levels) != len(state.levels):
            raise EngineError(
                f"link {state.link_id} has {len(state.levels)} levels; a change keeps their number"
            )
        new = change.paytable
        try:
            state.law.check_levels_won(
                levels,
                [
                    new if new is not None and new.game is g else state.paytable_for(g)
                    for g in state.games
                ],
            )
        except LevelError as exc:
            raise EngineError(str(exc)) from None
        for g in state.games:
            state.law.check_pool(
                g, levels, new if new is not None and new.game is g else state.paytable_for(g)
            )
        # 68 IAC 10-1-1.1(d), level by level: a share changes only once its level was won.
        state.law.check_shares_change(
            link_id=state.link_id,
            current=state.level_configs,
            proposed=levels,
            won_since_set=state.won_since_share_set(),
        )
    if (change.rate_bp is not None or change.reset_cents is not None) and not is_single_meter(
        state.level_configs
    ):
        _classic_only(state, "rate of progression or reset amount")
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
    if reset and change.levels is not None:
        _change_levels(b, change, at_us)
        changes["rate_bp"] = b.state.rate_bp
        changes["reset_cents"] = b.state.reset_cents
    if reset and change.reset_cents is not None:
        b.emit(
            EntryKind.RESET_AMOUNT_CHANGED,
            at_us,
            0,
            f"reset amount {format_cents(b.state.reset_cents)} -> "
            f"{format_cents(change.reset_cents)} (submission {change.submission_id})",
            details={"from_cents": b.state.reset_cents, "to_cents": change.reset_cents, **ref},
        )
        changes["reset_cents"] = change.reset_cents
    elif not reset:
        if change.rate_bp is not None:
            # The jackpot was just won: 68 IAC 10-1-1.1(d) allows the new rate from here.
            b.state.law.check_rate_change(
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
        if change.levels is not None and shares_of(change.levels) != shares_of(
            b.before.level_configs
        ):
            # 68 IAC 10-1-1.1(d): the new shares are the link's rate from here, locked again
            # (each changed level until its own jackpot is won: ``_change_levels``).
            changes["jackpot_won_since_rate_set"] = False
        if change.paytable is not None:
            pt = change.paytable
            mixed = pt.game is not b.state.game
            b.emit(
                EntryKind.PAYTABLE_CHANGED,
                at_us,
                0,
                f"paytable changed (submission {change.submission_id})"
                + (f": {pt.game.label}" if mixed else ""),
                details={
                    "paytable": pt.to_dicts(),
                    **ref,
                    **({"game": str(pt.game)} if mixed else {}),
                },
            )
            if mixed:
                changes["paytables"] = {**b.state.paytables, pt.game: pt}
            else:
                changes["paytable"] = pt
        changes["armed"] = None
    # The rest of this outcome (later readings of the cycle) sees the new values at once.
    b.state = replace(b.state, **changes)
    b.fields.update(changes)


def _change_levels(b: Builder, change: ArmedChange, at_us: int) -> None:
    """The pool's levels as the approved submission sets them; every meter stays where it
    stands (the new reset amount seeds the reset being made)."""
    assert change.levels is not None
    if b.single and b.levels:
        # A classic link's one level mirrors the link's meter until the step is done.
        b.levels[0] = replace(b.levels[0], meter_units=b.meter)
    before = [lv.config.to_dict() for lv in b.levels]
    if b.single and b.levels:
        # A classic link's one level is locked by the link's flag; it carries it from here.
        b.levels[0] = replace(b.levels[0], won_since_share_set=b.state.jackpot_won_since_rate_set)
    # 68 IAC 10-1-1.1(d), level by level: a level whose share changes is locked again until
    # its own jackpot is won; a level whose share stays keeps what its wins unlocked.
    b.levels = [
        replace(
            lv,
            config=cfg,
            won_since_share_set=lv.won_since_share_set
            and shares_of([cfg]) == shares_of([lv.config]),
        )
        for lv, cfg in zip(b.levels, change.levels, strict=True)
    ]
    b.single = is_single_meter(change.levels)
    rate = pool_rate_bp(change.levels)
    b.emit(
        EntryKind.LEVELS_CHANGED,
        at_us,
        0,
        f"levels changed (submission {change.submission_id}): rate of progression "
        f"{b.state.rate_bp} bp -> {rate} bp",
        details={
            "from": before,
            "to": [cfg.to_dict() for cfg in change.levels],
            "submission_id": change.submission_id,
        },
    )
    b.state = replace(
        b.state, rate_bp=rate, reset_cents=change.levels[0].reset_cents, levels=tuple(b.levels)
    )
