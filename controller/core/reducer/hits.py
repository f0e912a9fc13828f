"""Hits: taken from a table's FIFO or entered by a technician, checked, and settled
under the link's policy (awards from the meter, payouts at the table, the jackpot reset)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from controller.core.games import PaytableLine
from controller.core.hands import HandCategory, InvalidCards
from controller.core.money import (
    MAX_AMOUNT_CENTS,
    cents_to_units,
    displayed_cents,
    format_cents,
    percent_of_cents,
)
from controller.core.reducer.builder import Builder
from controller.core.reducer.configuration import due_change, take_effect
from controller.core.reducer.level_hits import at_reset, pay_envy
from controller.core.reducer.levels import level_key
from controller.core.reducer.state import (
    ArmedChange,
    EntryKind,
    Hit,
    HitClaim,
    HitPolicy,
    LastWin,
    LinkState,
    Outcome,
    TableReading,
    TableState,
)


def awaiting_acknowledgement(ts: TableState, claim: HitClaim | None) -> bool:
    """Is ``claim`` (the table's FIFO head) the hit last taken from this table, recorded and
    not yet dropped by the table? Only such a head may be acknowledged (register map v1,
    registers 100-101): the acknowledgement can never pop a hit that was not recorded."""
    return (
        claim is not None
        and ts.last_hit_seq is not None
        and not ts.last_hit_gone
        and claim.table_seq == ts.last_hit_seq
        and claim.round == ts.last_hit_round
        and (ts.last_hit_claim is None or ts.last_hit_claim == claim)
    )


def take_hit(b: Builder, ts: TableState, reading: TableReading) -> TableState:
    """Collect the FIFO head into its round's group; settle a group once it is complete."""
    claim = reading.head_hit
    if claim is not None and claim.table_seq is None:
        claim = None  # a table reports its hits numbered; an unnumbered head is not one
    tid = ts.config.table_id
    if awaiting_acknowledgement(ts, claim):
        # Taken already: it stays at the head until the table sees our acknowledgement.
        return ts
    if ts.last_hit_seq is not None and not ts.last_hit_gone:
        # The head is no longer the hit last taken: the table dropped it.
        ts = replace(ts, last_hit_gone=True)
    if claim is None:
        if reading.pending_hits == 0 and ts.open_claims:
            ts = _settle(
                b, ts, ts.open_claims, reading.at_us, source="table", bet_seats=_bets(reading, ts)
            )
        return ts
    assert claim.table_seq is not None
    last = ts.last_hit_seq
    if last is not None and claim.table_seq <= last:
        # Numbers only grow, and the hit last taken is gone from the FIFO: a lower number, or
        # the same one again, means the table's numbering restarted. This is a new hit.
        b.emit(
            EntryKind.TABLE_COUNTER_RESET,
            reading.at_us,
            0,
            f"table {tid} hit numbering restarted: {last} -> {claim.table_seq}",
            table_id=tid,
            details={"hit_seq_before": last, "hit_seq_after": claim.table_seq},
        )
        if ts.open_claims:
            # The restarted table will not report the rest of that round: settle what it did
            # report, under the numbering it was reported in.
            ts = _settle(b, ts, ts.open_claims, reading.at_us, source="table")
        ts = replace(ts, hit_epoch=ts.hit_epoch + 1)
    elif last is not None and claim.table_seq > last + 1 and reading.elapsed_us is None:
        # The table as a witness. At the first reading since this controller took the table
        # (a start, a takeover), a head numbered past the next one means hits were taken from
        # this table that this database does not hold: a history rolled back or truncated, or
        # a FIFO emptied by someone else. The new hit is taken; the table is held for review.
        b.emit(
            EntryKind.TABLE_AHEAD,
            reading.at_us,
            0,
            f"table {tid} reports hit {claim.table_seq} but the last hit recorded here is "
            f"{last}: hits {last + 1} to {claim.table_seq - 1} were never recorded here "
            "(history behind the table?); table held for review",
            table_id=tid,
            details={"hit_seq_recorded": last, "hit_seq_reported": claim.table_seq},
        )
        ts = replace(ts, hit_pending=True)
    if ts.open_claims and ts.open_claims[0].round != claim.round:
        ts = _settle(b, ts, ts.open_claims, reading.at_us, source="table", bet_seats=None)
    ts = replace(
        ts,
        last_hit_seq=claim.table_seq,
        last_hit_round=claim.round,
        last_hit_claim=claim,
        last_hit_gone=False,
        open_claims=(*ts.open_claims, claim),
    )
    if reading.pending_hits <= 1:
        ts = _settle(
            b, ts, ts.open_claims, reading.at_us, source="table", bet_seats=_bets(reading, ts)
        )
    return ts


def _bets(reading: TableReading, ts: TableState) -> frozenset[int] | None:
    """The seats with a side bet in the round of the hits being settled, when the bet sensors
    read now are that round's: the table still counts that round as its latest."""
    if reading.bet_seats is None or not ts.open_claims:
        return None
    return reading.bet_seats if reading.rounds == ts.open_claims[0].round else None


def enter_hit(
    state: LinkState, *, hit_id: str, table_id: str, claim: HitClaim, at_us: int, entered_by: str
) -> Outcome:
    """A hit entered by a technician (the table could not report it)."""
    b = Builder(state)
    ts = state.table(table_id)
    ts = _settle(
        b, ts, (claim,), at_us, source="technician", manual_id=hit_id, entered_by=entered_by
    )
    b.put_table(ts)
    return b.done()


def _settle(
    b: Builder,
    ts: TableState,
    claims: Sequence[HitClaim],
    at_us: int,
    *,
    source: str,
    manual_id: str | None = None,
    entered_by: str | None = None,
    bet_seats: frozenset[int] | None = None,
) -> TableState:
    """Award one round's hits at one table under the link's policy; hold the table."""
    state = b.state
    tid = ts.config.table_id
    group = f"{tid}@{claims[0].round}"
    policy = state.hit_policy

    def hit_id(c: HitClaim) -> str:
        if manual_id is not None:
            return manual_id
        return (
            f"{tid}#{c.table_seq}" if ts.hit_epoch == 0 else f"{tid}#{ts.hit_epoch}.{c.table_seq}"
        )

    first_hit = len(b.hits)
    valid: list[tuple[HitClaim, PaytableLine]] = []
    for c in claims:
        problem = _claim_problem(state, ts, c)
        line = state.paytable_for(ts.config.game or state.game).line_for(c.hand)
        if problem is None:
            problem = _line_problem(state, c.hand, line)
        if problem is not None:
            h = Hit(
                hit_id=hit_id(c),
                link_id=state.link_id,
                table_id=tid,
                claim=c,
                source=source,
                at_us=at_us,
                status="refused",
                settlement_group=group,
                policy=policy,
                refusal=problem,
                entered_by=entered_by,
            )
            b.refuse(h, f"hit at table {tid} seat {c.seat} refused: {problem}")
            continue
        assert line is not None
        valid.append((c, line))

    # Settlement order. Sequential: as the table reported them. Split: best hand first, so the
    # same hand's winners share one award computed from one meter amount.
    if policy is HitPolicy.SPLIT:
        valid.sort(key=lambda cl: -cl[0].hand)
    order = 0
    i = 0
    while i < len(valid):
        c, line = valid[i]
        if policy is HitPolicy.SPLIT and line.from_meter:
            j = i
            while j < len(valid) and valid[j][0].hand is c.hand:
                j += 1
            sharers = [cl[0] for cl in valid[i:j]]
        else:
            j = i + 1
            sharers = [c]
        order = _award(b, ts, line, sharers, at_us, group, order, source, hit_id, entered_by)
        i = j
    for c, line in valid:
        if line.envy_cents is not None:
            order = pay_envy(b, ts, c, line, hit_id(c), bet_seats, at_us, group, order, source)
    # A technician's entry settles only itself: the table's round being collected stays.
    remaining = ts.open_claims if source == "technician" else ()
    # The table waits for a technician after a hit paid from a meter (a jackpot and its
    # percentages), a claim refused, or a fixed pay at or above the operator's amount; a
    # smaller fixed pay is paid by the dealer and play goes on.
    hold = any(h.needs_technician for h in b.hits[first_hit:])
    return replace(ts, open_claims=remaining, hit_pending=ts.hit_pending or hold)


def _claim_problem(state: LinkState, ts: TableState, c: HitClaim) -> str | None:
    if ts.out_of_play:
        return state.law.out_of_play
    if not 1 <= c.seat <= ts.config.seats:
        return f"seat {c.seat} does not exist at a {ts.config.seats}-seat table"
    if c.cards is None:
        return None
    rules = (ts.config.game or state.game).rules
    try:
        made = rules.judge(c.cards)
    except InvalidCards as exc:
        return f"the reported cards are not a hand: {exc}"
    if made is None:
        return f"the cards make no {rules.label} hand, not the claimed {c.hand.label}"
    if made is not c.hand:
        return f"the cards make {made.label}, not the claimed {c.hand.label}"
    return None


def _line_problem(state: LinkState, hand: HandCategory, line: PaytableLine | None) -> str | None:
    if line is None:
        return f"the paytable has no line for {hand.label}"
    if line.from_meter and line.level_number > len(state.levels):
        # A paytable the link's pool cannot pay (checked when filed; a fixed-pay link has no
        # meter at all): recorded refused and the table held for people.
        return f"the paytable pays {hand.label} from level {line.level_number}; " + (
            "this link has no meter" if not state.levels else f"the link has {len(state.levels)}"
        )
    if line.fixed_cents is not None and line.fixed_cents > MAX_AMOUNT_CENTS:
        # A paytable filed before amounts were bounded (controller.core.money): its award could not
        # be recorded, so the claim is recorded refused and the table held for people.
        return (
            f"the paytable pays {format_cents(line.fixed_cents)} for {hand.label}, above the "
            f"most any amount may be ({format_cents(MAX_AMOUNT_CENTS)})"
        )
    return None


def _award(
    b: Builder,
    ts: TableState,
    line: PaytableLine,
    sharers: Sequence[HitClaim],
    at_us: int,
    group: str,
    order: int,
    source: str,
    hit_id: Any,
    entered_by: str | None,
) -> int:
    state = b.state
    tid = ts.config.table_id
    index = line.level_number - 1
    key = level_key(index)
    if line.percent_bp is not None:
        # Whole cents of the displayed amount; the sub-cent remainder stays on the meter.
        total = percent_of_cents(displayed_cents(b.meter_of(key)), line.percent_bp)
        share, leftover = divmod(total, len(sharers))
        amounts = [share + (leftover if k == 0 else 0) for k in range(len(sharers))]
    else:
        assert line.fixed_cents is not None
        amounts = [line.fixed_cents] * len(sharers)
    for c, cents in zip(sharers, amounts, strict=True):
        h = Hit(
            hit_id=hit_id(c),
            link_id=state.link_id,
            table_id=tid,
            claim=c,
            source=source,
            at_us=at_us,
            status="awarded",
            award_cents=cents,
            paid_from="meter" if line.from_meter else "table",
            settlement_group=group,
            settlement_order=order,
            policy=state.hit_policy,
            entered_by=entered_by,
            level=key if line.from_meter else None,
            needs_technician=line.from_meter
            or state.law.fixed_pay_needs_technician(
                amount_cents=cents, from_cents=state.technician_from_cents
            ),
        )
        b.hits.append(h)
        order += 1
        who = f"table {tid} seat {c.seat}"
        if line.from_meter:
            b.move(
                EntryKind.AWARD,
                at_us,
                {key: -cents_to_units(cents)},
                f"hit: {who}, {line.describe()} = {format_cents(cents)}"
                + (f" (split {len(sharers)} ways)" if len(sharers) > 1 else ""),
                table_id=tid,
                hit_id=h.hit_id,
                # When the controller saw it and where it stands among the link's hits: the
                # sealed record of the order of near-simultaneous wins (house policy after
                # NY 5321.18).
                details={
                    "seen_at_us": at_us,
                    "round": c.round,
                    "seat": c.seat,
                    "hand": c.hand.name,
                    "settlement_group": group,
                    "settlement_order": h.settlement_order,
                    "shared_by": len(sharers),
                },
            )
        else:
            b.emit(
                EntryKind.PAID_AT_TABLE,
                at_us,
                0,
                f"hit: {who}, {format_cents(cents)} paid at the table",
                table_id=tid,
                hit_id=h.hit_id,
            )
    if line.from_meter:
        b.fields["last_win"] = LastWin(
            won_cents=sum(amounts),
            table_id=tid,
            seats=tuple(c.seat for c in sharers),
            hand=line.hand,
            at_us=at_us,
            level=key,
        )
    due = due_change(b, at_us) if line.resets_meter else None
    if line.resets_meter and (not b.single or (due is not None and due.levels is not None)):
        # A link of levels, or a classic link becoming one at this very reset.
        at_reset(b, index, at_us, tid, f"{b.levels[index].config.name} won at table {tid}")
    elif line.resets_meter:
        reset_after_jackpot(b, due, at_us, tid)
    return order


def reset_after_jackpot(b: Builder, due: ArmedChange | None, at_us: int, tid: str) -> None:
    """68 IAC 10-6-5(i), 10-8-5(i): a classic link's jackpot was won at table ``tid``: the
    meter resets to the reset amount at once (an approved change of it, ``due`` now, first)
    and play goes on; the jackpot counts as won for 10-1-1.1(d)."""
    if due is not None and due.reset_cents is not None:
        take_effect(b, due, at_us, reset=True)
    reset_cents = b.state.reset_cents
    b.emit(
        EntryKind.JACKPOT_RESET,
        at_us,
        cents_to_units(reset_cents),
        f"jackpot won at table {tid}: meter reset with {format_cents(reset_cents)}",
        table_id=tid,
    )
    b.fields["jackpot_won_since_rate_set"] = True
    if due is not None:
        take_effect(b, due, at_us, reset=False)
