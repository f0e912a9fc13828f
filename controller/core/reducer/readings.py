"""Table readings: baselines, contributions, counter wraps and restarts, and the
anomalies held for review when a reading cannot be credited as it stands."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from controller.core.law import Law
from controller.core.money import U32, contribution_units, format_cents
from controller.core.reducer.builder import Builder
from controller.core.reducer.hits import take_hit
from controller.core.reducer.level_hits import settle_mystery
from controller.core.reducer.pool import arm_ready, contribution_moves, needs_arming
from controller.core.reducer.state import (
    Anomaly,
    EngineError,
    EntryKind,
    LinkState,
    Outcome,
    TableReading,
    TableState,
)


def apply_reading(state: LinkState, reading: TableReading) -> Outcome:
    """Apply one poll of one table. A reading already applied (or older) changes nothing."""
    return apply_readings(state, (reading,))


def apply_readings(state: LinkState, readings: Sequence[TableReading]) -> Outcome:
    """Apply a poll cycle's readings of one link's tables as one outcome, in the order the
    controller saw them (time read, then table id).

    That order is the link's policy for hits at different tables: they never share. The hit
    seen first is settled first, and a later one is paid from what the meter holds after the
    earlier award and reset, each recorded with when it was seen and its place in that order
    (house policy after NY 5321.18: the order of near-simultaneous wins is recorded). Only
    winners at one table in one round share, under the link's ``hit_policy``.
    """
    b = Builder(state)
    if needs_arming(state.levels):
        arm_ready(b, max((r.at_us for r in readings), default=state.last_at_us))
    for reading in sorted(readings, key=seen_order):
        _apply(b, reading)
    if not b.events and not b.touched:
        return Outcome(state)
    return b.done()


def seen_order(reading: TableReading) -> tuple[int, str]:
    return reading.at_us, reading.table_id


def _apply(b: Builder, reading: TableReading) -> None:
    tid = reading.table_id
    try:
        ts = b.tables[tid]
    except KeyError:
        raise EngineError(f"table {tid!r} is not on link {b.state.link_id!r}") from None
    if reading.poll_seq <= ts.poll_seq:
        return
    if reading.at_us < b.last_at_us:
        # Taken before an entry already in the history was made (a command committed while
        # the reading waited for its group commit, or a clock that went back): it is
        # recorded at that entry's time, and so are its hits.
        reading = reading._replace(at_us=b.last_at_us)
    if not 0 <= reading.credits < U32 or (
        reading.rounds is not None and not 0 <= reading.rounds < U32
    ):
        raise EngineError(f"table {tid}: counters are unsigned 32-bit")
    at = reading.at_us
    if not ts.online:
        b.emit(EntryKind.TABLE_ONLINE, at, 0, f"table {tid} answers again", table_id=tid)
    if ts.credits is None:
        b.emit(
            EntryKind.TABLE_BASELINE,
            at,
            0,
            f"table {tid} first read: credits counter {reading.credits}",
            table_id=tid,
            details={"credits": reading.credits, "rounds": reading.rounds},
        )
    elif ts.out_of_play:
        _refuse_credits(b, ts, reading)
    else:
        _credit_delta(b, ts, reading)
    hit_pending = b.tables[tid].hit_pending  # a mystery hit just now holds the table
    # Built directly rather than with dataclasses.replace: this runs for every table every poll.
    ts = TableState(
        config=ts.config,
        poll_seq=reading.poll_seq,
        credits=reading.credits,
        rounds=reading.rounds,
        at_us=at,
        last_hit_seq=ts.last_hit_seq,
        last_hit_round=ts.last_hit_round,
        last_hit_claim=ts.last_hit_claim,
        last_hit_gone=ts.last_hit_gone,
        hit_epoch=ts.hit_epoch,
        open_claims=ts.open_claims,
        hit_pending=hit_pending,
        online=True,
        out_of_play=ts.out_of_play,
    )
    if (
        reading.head_hit is not None
        or ts.open_claims
        or (ts.last_hit_seq is not None and not ts.last_hit_gone)
    ):
        ts = take_hit(b, ts, reading)
    b.put_table(ts)


def _plausible_credits(law: Law, ts: TableState, reading: TableReading) -> int:
    """The most a table can have taken since its last reading (house policy, see
    ``Law.most_credits``)."""
    cfg = ts.config
    measured = reading.elapsed_us
    if measured is not None:
        elapsed = max(0, measured)
    else:
        elapsed = max(0, reading.at_us - (ts.at_us if ts.at_us is not None else reading.at_us))
    rounds = elapsed // cfg.min_round_us + 1
    if reading.rounds is not None and ts.rounds is not None:
        dealt = (reading.rounds - ts.rounds) % U32
        if dealt < rounds or (measured is None and dealt < U32 // 2):
            # Bets for the round being dealt may already be counted: one round more. Without
            # a measured duration the two readings' times come from clocks that may disagree
            # (a wall clock that stepped back across a restart, another controller's host):
            # the rounds the table counted, forwards, bound it instead.
            rounds = dealt + 1
    return law.most_credits(
        seats=cfg.seats, max_credits_per_seat_round=cfg.max_credits_per_seat_round, rounds=rounds
    )


def _credit_delta(b: Builder, ts: TableState, reading: TableReading) -> None:
    assert ts.credits is not None
    tid = ts.config.table_id
    old, new = ts.credits, reading.credits
    delta = (new - old) % U32  # a wrap at 2**32 is an ordinary small delta
    if delta == 0:
        return
    limit = _plausible_credits(b.state.law, ts, reading)
    # A restart zeroes both counters. The credits counter alone can hide it: one that was
    # small reads forwards after it, and one just below 2**32 seems to wrap. The round counter
    # tells: it went backwards rather than round.
    rounds_back = (
        reading.rounds is not None
        and ts.rounds is not None
        and (reading.rounds - ts.rounds) % U32 >= U32 // 2
    )
    restarted = rounds_back or (new < old and delta > limit)
    if not restarted and delta <= limit:
        _contribute(b, ts, delta, reading, wrapped=new < old, rounds=_dealt(ts, reading))
        return
    if restarted and new <= limit:
        # Backwards by a large amount: the table's counters restarted (power cycle, RAM clear).
        # Never a negative contribution; what it counted since restarting is credited.
        b.emit(
            EntryKind.TABLE_COUNTER_RESET,
            reading.at_us,
            0,
            f"table {tid} counters restarted: credits {old} -> {new}",
            table_id=tid,
            details={"credits_before": old, "credits_after": new},
        )
        if new:
            _contribute(b, ts, new, reading, wrapped=False, rounds=None)
        return
    if new < old:
        # Backwards, but not to near zero: no count of credits follows from it. Re-baseline and
        # hold it for review with nothing to credit.
        delta = 0
        reason = f"credits counter went backwards from {old} to {new}; nothing credited"
    elif rounds_back:
        reason = (
            f"round counter went backwards from {ts.rounds} to {reading.rounds} while the "
            f"credits counter went from {old} to {new}"
        )
    else:
        reason = f"{delta} credits in one reading; at most {limit} are possible since the last one"
    units = contribution_units(
        credits=delta, denomination_cents=ts.config.denomination_cents, rate_bp=b.state.rate_bp
    )
    anomaly = Anomaly(
        anomaly_id=f"{tid}#{reading.poll_seq}",
        link_id=b.state.link_id,
        table_id=tid,
        at_us=reading.at_us,
        credits=delta,
        units=units,
        counter_before=old,
        counter_after=new,
        reason=reason,
    )
    b.anomalies.append(anomaly)
    b.emit(
        EntryKind.ANOMALY_HELD,
        reading.at_us,
        0,
        f"table {tid}: {anomaly.reason}; held for review, not added to the meter",
        table_id=tid,
        anomaly_id=anomaly.anomaly_id,
        details={"credits": delta, "units": units, "counter_before": old, "counter_after": new},
    )


def _dealt(ts: TableState, reading: TableReading) -> int | None:
    """The rounds the table counted since its previous reading; None when either reading has
    no round counter."""
    if reading.rounds is None or ts.rounds is None:
        return None
    return (reading.rounds - ts.rounds) % U32


def bets_record(
    credits: int, denomination_cents: int, reading: TableReading, rounds: int | None
) -> dict[str, int]:
    """What a reading that took ``credits`` says of the side bets behind them, for the entry
    that records them: the seats that bet (``seats``, a bitmap as the register map's, bit n-1
    = seat n: the seats whose own counters rose, or, for a table without per-seat counters, the
    seats its bet sensors show), the rounds dealt since the previous reading (``rounds``), and
    what game protection holds against the table (``controller.core.protection``): seats that
    were credited with their sensor dark (``unsensed``), seats sensed in a round dealt without
    a credit from them (``uncredited``), credits taken after the dealer's lockout (``late``).
    Each only when known, the last three only when not none. Game protection's only source of
    the hands bet at a table: the entry is sealed like every other."""
    record = {"credits": credits, "denomination_cents": denomination_cents}
    sensed = None if reading.bet_seats is None else seat_mask(reading.bet_seats)
    if reading.seat_credits is not None:
        seats = seat_mask(s for s, c in enumerate(reading.seat_credits, start=1) if c)
        # The sensors show one round: only a reading within one round holds them against
        # every seat credited (two rounds apart, a seat may have bet in the first alone).
        one_round = rounds is not None and rounds <= 1
        if one_round and sensed is not None and seats & ~sensed:
            record["unsensed"] = seats & ~sensed
    elif sensed:
        seats = sensed
    else:
        seats = 0
    if seats:
        record["seats"] = seats
    if rounds is not None:
        record["rounds"] = rounds
    if reading.uncredited:
        record["uncredited"] = reading.uncredited
    if reading.late:
        record["late"] = 1
    return record


def _text(record: dict[str, int]) -> str:
    """A record of whole numbers as canonical JSON (keys sorted, no spaces), as
    ``controller.core.ledger.canonical_details`` would make it."""
    return "{" + ",".join(f'"{key}":{value}' for key, value in sorted(record.items())) + "}"


def seat_mask(seats: Iterable[int]) -> int:
    """Seats as a bitmap, bit n-1 = seat n (the register map's bet sensor bitmap)."""
    mask = 0
    for seat in seats:
        mask |= 1 << (seat - 1)
    return mask


def _contribute(
    b: Builder,
    ts: TableState,
    credits: int,
    reading: TableReading,
    *,
    wrapped: bool,
    rounds: int | None,
) -> None:
    cfg = ts.config
    rate = b.state.rate_bp
    at_us = reading.at_us
    details = bets_record(credits, cfg.denomination_cents, reading, rounds)
    if not b.levels:
        # A fixed-pay bonus link: the bets are registered, no meter moves (68 IAC 10-7-5(b)).
        b.emit(
            EntryKind.BETS_REGISTERED,
            at_us,
            0,
            f"table {cfg.table_id}: {credits} bonus bets of {format_cents(cfg.denomination_cents)}"
            + (" (counter wrapped)" if wrapped else ""),
            table_id=cfg.table_id,
            details=_text(details),
        )
        return
    details["rate_bp"] = rate
    if not b.single or b.levels[0].config.mystery is not None:
        # A mystery level is watched for its trigger even when it is the link's one meter.
        _contribute_to_levels(b, ts, credits, reading, wrapped=wrapped, details=details)
        return
    units = contribution_units(
        credits=credits, denomination_cents=cfg.denomination_cents, rate_bp=rate
    )
    b.emit(
        EntryKind.CONTRIBUTION,
        at_us,
        units,
        f"table {cfg.table_id}: {credits} credits x {cfg.denomination_cents}c x {rate} bp"
        + (" (counter wrapped)" if wrapped else ""),
        table_id=cfg.table_id,
        details=_text(details),
    )


def _contribute_to_levels(
    b: Builder,
    ts: TableState,
    credits: int,
    reading: TableReading,
    *,
    wrapped: bool,
    details: dict[str, int],
) -> None:
    cfg = ts.config
    wager_cents = credits * cfg.denomination_cents
    moves, crossings = contribution_moves(b, wager_cents)
    b.move(
        EntryKind.CONTRIBUTION,
        reading.at_us,
        moves,
        f"table {cfg.table_id}: {credits} credits x {cfg.denomination_cents}c x "
        f"{b.state.rate_bp} bp over {len(b.levels)} levels"
        + (" (counter wrapped)" if wrapped else ""),
        table_id=cfg.table_id,
        details=details,
    )
    for crossing in crossings:
        settle_mystery(b, b.tables[cfg.table_id], crossing, reading)


def _refuse_credits(b: Builder, ts: TableState, reading: TableReading) -> None:
    """Credits wagered at a table out of play: recorded, never added to the meter."""
    assert ts.credits is not None
    delta = (reading.credits - ts.credits) % U32
    if delta == 0:
        return
    tid = ts.config.table_id
    b.emit(
        EntryKind.CREDITS_REFUSED,
        reading.at_us,
        0,
        f"table {tid} is out of play: {delta} credits not added to the meter",
        table_id=tid,
        details={"credits": delta, "counter_before": ts.credits, "counter_after": reading.credits},
    )
