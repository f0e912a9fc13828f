"""Hits the pool itself decides: a level won and reset (with an approved change due at that
reset), a mystery level's trigger reached, and the envy bonuses paid to the other seats when a
listed hand hits."""

from __future__ import annotations

from dataclasses import replace

from controller.core.games import PaytableLine
from controller.core.hands import HandCategory
from controller.core.money import cents_to_units, format_cents
from controller.core.reducer.builder import Builder
from controller.core.reducer.configuration import due_change, take_effect
from controller.core.reducer.levels import level_key, shares_of
from controller.core.reducer.pool import Crossing, reset_level, winning_seat
from controller.core.reducer.state import (
    EntryKind,
    Hit,
    HitClaim,
    LastWin,
    TableReading,
    TableState,
)


def at_reset(b: Builder, index: int, at_us: int, table_id: str, why: str) -> None:
    """A level of a link of levels was won: an approved change due now takes effect (its
    levels seed this very reset), the level resets, and 68 IAC 10-1-1.1(d) counts that
    level's jackpot as won: its share may change from here, no other level's. A share this
    very reset changes stays locked: the win was of the share before it."""
    due = due_change(b, at_us)
    shares_before = shares_of([b.levels[index].config])
    if due is not None and (due.levels is not None or due.reset_cents is not None):
        take_effect(b, due, at_us, reset=True)
    reset_level(b, index, at_us, table_id, why)
    b.fields["jackpot_won_since_rate_set"] = True
    won = b.levels[index]
    if shares_of([won.config]) == shares_before:
        b.put_level(index, replace(won, won_since_share_set=True))
    if due is not None:
        take_effect(b, due, at_us, reset=False)


def settle_mystery(b: Builder, ts: TableState, crossing: Crossing, reading: TableReading) -> None:
    """A contribution took a mystery level to its trigger: that wager's seat wins the trigger
    amount, the commitment sealed when it was drawn is revealed (trigger and salt), the level
    resets and the table is held for a technician like any award from a meter."""
    index = crossing.level
    lv = b.levels[index]
    draw = lv.armed
    assert draw is not None
    cfg = lv.config
    key = level_key(index)
    tid = ts.config.table_id
    seat, rule = winning_seat(
        crossing.need_units,
        cfg.rate_bp,
        ts.config.denomination_cents,
        reading.seat_credits,
        reading.bet_seats,
    )
    rnd = reading.rounds if reading.rounds is not None else 0
    claim = HitClaim(table_seq=None, seat=seat, hand=HandCategory.MYSTERY, round=rnd)
    cents = draw.trigger_cents
    group = f"{tid}@{rnd}"
    h = Hit(
        hit_id=f"{tid}#{key}.{lv.wins + 1}",
        link_id=b.state.link_id,
        table_id=tid,
        claim=claim,
        source="controller",
        at_us=reading.at_us,
        status="awarded",
        award_cents=cents,
        paid_from="meter",
        settlement_group=group,
        policy=b.state.hit_policy,
        level=key,
        kind="mystery",
    )
    b.hits.append(h)
    b.move(
        EntryKind.AWARD,
        reading.at_us,
        {key: -cents_to_units(cents)},
        f"mystery: {cfg.name} reached its trigger of {format_cents(cents)} at table {tid} "
        f"seat {seat} ({rule})",
        table_id=tid,
        hit_id=h.hit_id,
        details={
            "seen_at_us": reading.at_us,
            "round": rnd,
            "seat": seat,
            "hand": HandCategory.MYSTERY.name,
            "settlement_group": group,
            "settlement_order": 0,
            "shared_by": 1,
            # The reveal: an auditor recomputes the commitment sealed when it was drawn.
            "mystery": {
                "level": key,
                "trigger_cents": cents,
                "salt": draw.salt,
                "commitment": draw.commitment(b.state.link_id, key),
                "winner_rule": rule,
            },
        },
    )
    b.fields["last_win"] = LastWin(
        won_cents=cents,
        table_id=tid,
        seats=(seat,),
        hand=HandCategory.MYSTERY,
        at_us=reading.at_us,
        level=key,
    )
    at_reset(b, index, reading.at_us, tid, f"{cfg.name} (mystery) won at table {tid}")
    b.put_table(replace(b.tables[tid], hit_pending=True))


def pay_envy(
    b: Builder,
    ts: TableState,
    c: HitClaim,
    line: PaytableLine,
    winner_id: str,
    bet_seats: frozenset[int] | None,
    at_us: int,
    group: str,
    order: int,
    source: str,
) -> int:
    """Envy bonuses for ``c``: ``line.envy_cents`` to every other seat at the table with a side
    bet in the round, each recorded as a hit paid at the table."""
    state = b.state
    tid = ts.config.table_id
    envy = line.envy_cents
    assert envy is not None
    if bet_seats is None:
        # Which seats bet in that round is not known (the table's bet sensors have moved on to
        # another round, or a technician entered the hit): people pay it, the table waits.
        h = Hit(
            hit_id=f"{winner_id}/envy",
            link_id=state.link_id,
            table_id=tid,
            claim=c,
            source=source,
            at_us=at_us,
            status="refused",
            settlement_group=group,
            settlement_order=order,
            policy=state.hit_policy,
            refusal=(
                f"envy bonus for {c.hand.label} at seat {c.seat}: the seats with a side bet in "
                f"round {c.round} are not known; pay {format_cents(envy)} to each by hand"
            ),
            kind="envy",
        )
        b.refuse(h, f"envy at table {tid}: {h.refusal}")
        return order + 1
    for seat in sorted(bet_seats - {c.seat}):
        if not 1 <= seat <= ts.config.seats:
            continue
        h = Hit(
            hit_id=f"{winner_id}/envy{seat}",
            link_id=state.link_id,
            table_id=tid,
            claim=HitClaim(table_seq=None, seat=seat, hand=c.hand, round=c.round),
            source=source,
            at_us=at_us,
            status="awarded",
            award_cents=envy,
            paid_from="table",
            settlement_group=group,
            settlement_order=order,
            policy=state.hit_policy,
            kind="envy",
            needs_technician=state.law.fixed_pay_needs_technician(
                amount_cents=envy, from_cents=state.technician_from_cents
            ),
        )
        b.hits.append(h)
        order += 1
        b.emit(
            EntryKind.PAID_AT_TABLE,
            at_us,
            0,
            f"envy: table {tid} seat {seat}, {format_cents(envy)} for seat {c.seat}'s "
            f"{c.hand.label}, paid at the table",
            table_id=tid,
            hit_id=h.hit_id,
            details={"envy_of": winner_id, "seat": seat, "hand": c.hand.name},
        )
    return order
