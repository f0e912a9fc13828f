"""The link engine: from a link's state and one input to the new state and what happened.

Pure and deterministic: no I/O, no clock reads, no randomness. Every input carries the time
it happened (``at_us``, microseconds since the epoch, read by the caller). Every output is an
``Outcome``: the new ``LinkState``, the ``MeterEvent`` entries to append to the link's history
in order, and the hit and anomaly records to store, all in one transaction.

The meter obeys, at every step, ``meter = seeds + contributions - awards + corrections``
(each event's ``kind`` names its term and its ``delta_units`` the amount, so a checker adds it
up from the history alone).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from controller.core.games import Game, Paytable, PaytableLine
from controller.core.hands import HandCategory, InvalidCards, evaluate
from controller.core.money import (
    MAX_AMOUNT_CENTS,
    MAX_COLUMN_UNITS,
    U32,
    cents_to_units,
    contribution_units,
    displayed_cents,
    format_cents,
    percent_of_cents,
)
from controller.rules.house import most_credits
from controller.rules.integrity import OUT_OF_PLAY
from controller.rules.progression import check_rate_change, check_rate_of_progression
from controller.rules.records import check_reduction_documented, check_reduction_explained
from controller.rules.wagers import check_denomination


class EngineError(ValueError):
    """An input the engine cannot apply (unknown table, malformed command)."""


class EntryKind(enum.StrEnum):
    LINK_OPENED = "link_opened"
    CONTRIBUTION = "contribution"
    AWARD = "award"
    PAID_AT_TABLE = "paid_at_table"
    JACKPOT_RESET = "jackpot_reset"
    HIT_REFUSED = "hit_refused"
    TABLE_BASELINE = "table_baseline"
    TABLE_COUNTER_RESET = "table_counter_reset"
    TABLE_OFFLINE = "table_offline"
    TABLE_ONLINE = "table_online"
    TABLE_RELEASED = "table_released"
    ANOMALY_HELD = "anomaly_held"
    ANOMALY_APPROVED = "anomaly_approved"
    ANOMALY_REJECTED = "anomaly_rejected"
    RATE_CHANGED = "rate_changed"
    RESET_AMOUNT_CHANGED = "reset_amount_changed"
    CORRECTION = "correction"
    CHANGE_ARMED = "change_armed"
    PAYTABLE_CHANGED = "paytable_changed"
    TABLE_OUT_OF_PLAY = "table_out_of_play"
    TABLE_RETURNED_TO_PLAY = "table_returned_to_play"
    CREDITS_REFUSED = "credits_refused"
    RETENTION_PURGE = "retention_purge"
    # A table reports more than this history holds (a witness against a rolled-back history).
    TABLE_AHEAD = "table_ahead"
    # A link's resumable state put back from its history after it failed its seals.
    STATE_RECOVERED = "state_recovered"
    # From this entry on, the state the link resumes from is sealed (a link from before seals).
    STATE_SEALED = "state_sealed"


# The only kinds that may lower a meter; the database refuses any other reduction.
REDUCING_KINDS = frozenset({EntryKind.AWARD, EntryKind.CORRECTION})


class HitPolicy(enum.StrEnum):
    SPLIT = "split"
    SEQUENTIAL = "sequential"


# --------------------------------------------------------------------------------------------
# State


@dataclass(frozen=True, slots=True, kw_only=True)
class TableConfig:
    table_id: str
    denomination_cents: int
    seats: int = 7
    # What one seat can physically wager on the progressive in one round, in credits.
    max_credits_per_seat_round: int = 1
    # The fastest a round can be dealt; bounds how much a table can take between readings.
    min_round_us: int = 10_000_000

    def __post_init__(self) -> None:
        if not self.table_id or not self.table_id.isprintable():
            raise EngineError(f"a table needs an id of printable characters, got {self.table_id!r}")
        if self.denomination_cents <= 0:
            raise EngineError(f"table {self.table_id}: denomination must be positive")
        if not 1 <= self.seats <= 7:
            raise EngineError(f"table {self.table_id}: seats must be 1 to 7")
        if self.max_credits_per_seat_round <= 0 or self.min_round_us <= 0:
            raise EngineError(f"table {self.table_id}: round limits must be positive")


@dataclass(frozen=True, slots=True, kw_only=True)
class HitClaim:
    """One hit as the table reported it (or a technician entered it)."""

    table_seq: int | None
    seat: int
    hand: HandCategory
    round: int
    cards: tuple[int, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "table_seq": self.table_seq,
            "seat": self.seat,
            "hand": self.hand.name,
            "round": self.round,
            "cards": list(self.cards) if self.cards is not None else None,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> HitClaim:
        cards = d.get("cards")
        return cls(
            table_seq=d["table_seq"],
            seat=d["seat"],
            hand=HandCategory[d["hand"]],
            round=d["round"],
            cards=tuple(cards) if cards is not None else None,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TableState:
    config: TableConfig
    poll_seq: int = 0  # the last reading applied; an older or equal one is a replay
    credits: int | None = None  # None until the first reading sets the baseline
    rounds: int | None = None
    at_us: int | None = None
    # The last hit taken from the table's FIFO: its number (None until one is taken: 0 is a
    # hit number like any other), its round and the whole claim, and whether a later reading
    # showed the table has dropped it (our acknowledgement landed). Until it is dropped the
    # head showing that very hit is not new; once dropped, any head is a new hit, even one
    # with the same number (register map v1: a table that restarts numbers from 0 or 1 again).
    last_hit_seq: int | None = None
    last_hit_round: int | None = None
    last_hit_claim: HitClaim | None = None
    last_hit_gone: bool = False
    # Bumped when a table's hit numbering restarts, so hit ids stay unique.
    hit_epoch: int = 0
    open_claims: tuple[HitClaim, ...] = ()  # hits of one round still being collected
    hit_pending: bool = False  # held for a technician after a hit
    online: bool = True
    # 68 IAC 10-1-6.2(a): removed from play; its readings keep the baseline and credit nothing.
    out_of_play: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class LastWin:
    won_cents: int
    table_id: str
    seats: tuple[int, ...]
    hand: HandCategory
    at_us: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ArmedChange:
    """A change the commission approved, waiting for the link's next jackpot reset."""

    submission_id: str
    effective_at_us: int
    rate_bp: int | None = None
    reset_cents: int | None = None
    paytable: Paytable | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "submission_id": self.submission_id,
            "effective_at_us": self.effective_at_us,
            "rate_bp": self.rate_bp,
            "reset_cents": self.reset_cents,
            "paytable": None if self.paytable is None else self.paytable.to_dicts(),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkState:
    link_id: str
    game: Game
    rate_bp: int
    reset_cents: int
    paytable: Paytable
    meter_units: int = 0
    hit_policy: HitPolicy = HitPolicy.SPLIT
    # 68 IAC 10-1-1.1(d): has a patron won the jackpot since the current rate was set?
    jackpot_won_since_rate_set: bool = False
    tables: Mapping[str, TableState] = field(default_factory=dict)
    last_win: LastWin | None = None
    # 68 IAC 10-1-1.1(d): an approved change applies at a jackpot reset, never mid-accumulation.
    armed: ArmedChange | None = None
    # The time of the newest entry of the link's history. 68 IAC 10-6-5(b)-(c) judge each entry
    # against the previous one: a later entry never carries an earlier time, whatever a clock
    # or a restart says (see controller/clock.py).
    last_at_us: int = 0

    @property
    def meter_cents(self) -> int:
        return displayed_cents(self.meter_units)

    def table(self, table_id: str) -> TableState:
        try:
            return self.tables[table_id]
        except KeyError:
            raise EngineError(f"table {table_id!r} is not on link {self.link_id!r}") from None


# --------------------------------------------------------------------------------------------
# Outputs


class MeterEvent(NamedTuple):
    """One entry of a link's history, before the ledger numbers and seals it.

    A tuple rather than a frozen dataclass: one is made for every table at every poll.
    """

    kind: EntryKind
    at_us: int
    meter_before_units: int
    delta_units: int
    explanation: str
    table_id: str | None = None
    hit_id: str | None = None
    anomaly_id: str | None = None
    correction_id: str | None = None
    # Facts for auditors; a str is taken as already-canonical JSON (see ledger.canonical_details).
    details: Mapping[str, Any] | str = "{}"

    @property
    def meter_after_units(self) -> int:
        return self.meter_before_units + self.delta_units


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    hit_id: str
    link_id: str
    table_id: str
    claim: HitClaim
    source: str  # "table" or "technician"
    at_us: int
    status: str  # "awarded" or "refused"
    award_cents: int = 0
    paid_from: str | None = None  # "meter" or "table"
    settlement_group: str = ""
    settlement_order: int = 0
    policy: HitPolicy = HitPolicy.SPLIT
    refusal: str | None = None
    entered_by: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Anomaly:
    anomaly_id: str
    link_id: str
    table_id: str
    at_us: int
    credits: int
    units: int
    counter_before: int
    counter_after: int
    reason: str


@dataclass(frozen=True, slots=True)
class Outcome:
    state: LinkState
    events: tuple[MeterEvent, ...] = ()
    hits: tuple[Hit, ...] = ()
    anomalies: tuple[Anomaly, ...] = ()
    # Tables whose counter state changed and must be committed with the events.
    tables_touched: frozenset[str] = frozenset()

    @property
    def changed(self) -> bool:
        return bool(self.events or self.tables_touched)

    def then(self, later: Outcome) -> Outcome:
        """This outcome followed by ``later`` (computed from this one's state), as one."""
        return Outcome(
            later.state,
            self.events + later.events,
            self.hits + later.hits,
            self.anomalies + later.anomalies,
            self.tables_touched | later.tables_touched,
        )


# --------------------------------------------------------------------------------------------
# Inputs


class TableReading(NamedTuple):
    """One poll of one table, already decoded from its register map.

    A named tuple rather than a frozen dataclass, like MeterEvent: one is made for every
    table at every poll. Build it with keywords.
    """

    table_id: str
    poll_seq: int
    at_us: int
    credits: int
    rounds: int | None = None
    pending_hits: int = 0
    head_hit: HitClaim | None = None
    # The time since the table's previous recorded reading, measured on a monotonic clock by
    # the process that took both; None when this process did not take that one (it started
    # since, or took the link over). See _plausible_credits.
    elapsed_us: int | None = None


class _Builder:
    """Accumulates one outcome; keeps the meter and the events in step."""

    def __init__(self, state: LinkState) -> None:
        self.state = state
        self.meter = state.meter_units
        self.events: list[MeterEvent] = []
        self.hits: list[Hit] = []
        self.anomalies: list[Anomaly] = []
        self.tables: dict[str, TableState] = dict(state.tables)
        self.touched: set[str] = set()
        self.fields: dict[str, Any] = {}
        self.last_at_us = state.last_at_us

    def emit(self, kind: EntryKind, at_us: int, delta: int, explanation: str, **refs: Any) -> None:
        if delta < 0:
            check_reduction_explained(delta_units=delta, reason=explanation)
            if kind not in REDUCING_KINDS:
                raise EngineError(f"a {kind} entry cannot lower the meter")
        if not 0 <= self.meter + delta <= MAX_COLUMN_UNITS:
            raise EngineError(
                f"link {self.state.link_id}: the meter cannot go below zero or beyond what the "
                f"history holds ({format_cents(displayed_cents(self.meter))} {delta:+d} units)"
            )
        if "\x1f" in explanation or "\x1e" in explanation or "\x00" in explanation:
            # Typed reasons end up here; the ledger's sealed form reserves U+001F and U+001E,
            # and PostgreSQL text cannot hold U+0000.
            for ch in "\x1f\x1e\x00":
                explanation = explanation.replace(ch, " ")
        if at_us < self.last_at_us:
            at_us = self.last_at_us  # held at the newest entry's time
        self.last_at_us = at_us
        self.events.append(
            MeterEvent(
                kind=kind,
                at_us=at_us,
                meter_before_units=self.meter,
                delta_units=delta,
                explanation=explanation,
                **refs,
            )
        )
        self.meter += delta

    def put_table(self, ts: TableState) -> None:
        self.tables[ts.config.table_id] = ts
        self.touched.add(ts.config.table_id)

    def done(self) -> Outcome:
        state = replace(
            self.state,
            meter_units=self.meter,
            tables=self.tables,
            last_at_us=self.last_at_us,
            **self.fields,
        )
        return Outcome(
            state,
            tuple(self.events),
            tuple(self.hits),
            tuple(self.anomalies),
            frozenset(self.touched),
        )


# --------------------------------------------------------------------------------------------
# Opening a link and configuring it


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
    b = _Builder(state)
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
    b = _Builder(state)
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
    b = _Builder(state)
    b.emit(
        EntryKind.RESET_AMOUNT_CHANGED,
        at_us,
        0,
        f"reset amount {format_cents(state.reset_cents)} -> {format_cents(reset_cents)} by {by}",
        details={"from_cents": state.reset_cents, "to_cents": reset_cents, "by": by},
    )
    b.fields.update(reset_cents=reset_cents)
    return b.done()


# --------------------------------------------------------------------------------------------
# Readings: contributions, wraps, table resets, anomalies, hits


def apply_reading(state: LinkState, reading: TableReading) -> Outcome:
    """Apply one poll of one table. A reading already applied (or older) changes nothing."""
    return apply_readings(state, (reading,))


def apply_readings(state: LinkState, readings: Sequence[TableReading]) -> Outcome:
    """Apply a poll cycle's readings of one link's tables as one outcome, in the order the
    controller saw them (time read, then table id).

    That order is the link's policy for hits at different tables: they never share. The hit
    seen first is settled first, and a later one is paid from what the meter holds after the
    earlier award and reset, each recorded with when it was seen and its place in that order
    (NY 5321.18: the order of near-simultaneous wins is recorded). Only winners at one table in
    one round share, under the link's ``hit_policy``.
    """
    b = _Builder(state)
    for reading in sorted(readings, key=seen_order):
        _apply(b, reading)
    if not b.events and not b.touched:
        return Outcome(state)
    return b.done()


def seen_order(reading: TableReading) -> tuple[int, str]:
    return reading.at_us, reading.table_id


def _apply(b: _Builder, reading: TableReading) -> None:
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
        hit_pending=ts.hit_pending,
        online=True,
        out_of_play=ts.out_of_play,
    )
    if (
        reading.head_hit is not None
        or ts.open_claims
        or (ts.last_hit_seq is not None and not ts.last_hit_gone)
    ):
        ts = _take_hit(b, ts, reading)
    b.put_table(ts)


def _plausible_credits(ts: TableState, reading: TableReading) -> int:
    """The most a table can have taken since its last reading (house policy, see
    ``rules.house.most_credits``)."""
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
    return most_credits(
        seats=cfg.seats, max_credits_per_seat_round=cfg.max_credits_per_seat_round, rounds=rounds
    )


def _credit_delta(b: _Builder, ts: TableState, reading: TableReading) -> None:
    assert ts.credits is not None
    tid = ts.config.table_id
    old, new = ts.credits, reading.credits
    delta = (new - old) % U32  # a wrap at 2**32 is an ordinary small delta
    if delta == 0:
        return
    limit = _plausible_credits(ts, reading)
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
        _contribute(b, ts, delta, reading.at_us, wrapped=new < old)
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
            _contribute(b, ts, new, reading.at_us, wrapped=False)
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


def _contribute(b: _Builder, ts: TableState, credits: int, at_us: int, *, wrapped: bool) -> None:
    cfg = ts.config
    rate = b.state.rate_bp
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
        # Already canonical (keys sorted, no spaces): the same text canonical_details makes.
        details=f'{{"credits":{credits},"denomination_cents":{cfg.denomination_cents},"rate_bp":{rate}}}',
    )


def _refuse_credits(b: _Builder, ts: TableState, reading: TableReading) -> None:
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


def _take_hit(b: _Builder, ts: TableState, reading: TableReading) -> TableState:
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
            ts = _settle(b, ts, ts.open_claims, reading.at_us, source="table")
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
        ts = _settle(b, ts, ts.open_claims, reading.at_us, source="table")
    ts = replace(
        ts,
        last_hit_seq=claim.table_seq,
        last_hit_round=claim.round,
        last_hit_claim=claim,
        last_hit_gone=False,
        open_claims=(*ts.open_claims, claim),
    )
    if reading.pending_hits <= 1:
        ts = _settle(b, ts, ts.open_claims, reading.at_us, source="table")
    return ts


def enter_hit(
    state: LinkState, *, hit_id: str, table_id: str, claim: HitClaim, at_us: int, entered_by: str
) -> Outcome:
    """A hit entered by a technician (the table could not report it)."""
    b = _Builder(state)
    ts = state.table(table_id)
    ts = _settle(
        b, ts, (claim,), at_us, source="technician", manual_id=hit_id, entered_by=entered_by
    )
    b.put_table(ts)
    return b.done()


def _settle(
    b: _Builder,
    ts: TableState,
    claims: Sequence[HitClaim],
    at_us: int,
    *,
    source: str,
    manual_id: str | None = None,
    entered_by: str | None = None,
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
        line = state.paytable.line_for(c.hand)
        if problem is None:
            problem = _line_problem(c.hand, line)
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
            b.hits.append(h)
            b.emit(
                EntryKind.HIT_REFUSED,
                at_us,
                0,
                f"hit at table {tid} seat {c.seat} refused: {problem}",
                table_id=tid,
                hit_id=h.hit_id,
            )
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
    # A technician's entry settles only itself: the table's round being collected stays.
    remaining = ts.open_claims if source == "technician" else ()
    # The table waits for a technician after a hit paid from the meter (the jackpot and its
    # percentages) or a claim refused; a fixed payout is paid by the dealer and play goes on.
    hold = any(h.paid_from == "meter" or h.status == "refused" for h in b.hits[first_hit:])
    return replace(ts, open_claims=remaining, hit_pending=ts.hit_pending or hold)


def _claim_problem(state: LinkState, ts: TableState, c: HitClaim) -> str | None:
    if ts.out_of_play:
        return OUT_OF_PLAY
    if not 1 <= c.seat <= ts.config.seats:
        return f"seat {c.seat} does not exist at a {ts.config.seats}-seat table"
    if c.cards is None:
        return None
    try:
        made = evaluate(c.cards).category
    except InvalidCards as exc:
        return f"the reported cards are not a hand: {exc}"
    if made is not c.hand:
        return f"the cards make {made.label}, not the claimed {c.hand.label}"
    return None


def _line_problem(hand: HandCategory, line: PaytableLine | None) -> str | None:
    if line is None:
        return f"the paytable has no line for {hand.label}"
    if line.fixed_cents is not None and line.fixed_cents > MAX_AMOUNT_CENTS:
        # A paytable filed before amounts were bounded (controller.core.money): its award could not
        # be recorded, so the claim is recorded refused and the table held for people.
        return (
            f"the paytable pays {format_cents(line.fixed_cents)} for {hand.label}, above the "
            f"most any amount may be ({format_cents(MAX_AMOUNT_CENTS)})"
        )
    return None


def _award(
    b: _Builder,
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
    if line.percent_bp is not None:
        # Whole cents of the displayed amount; the sub-cent remainder stays on the meter.
        total = percent_of_cents(displayed_cents(b.meter), line.percent_bp)
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
        )
        b.hits.append(h)
        order += 1
        who = f"table {tid} seat {c.seat}"
        if line.from_meter:
            b.emit(
                EntryKind.AWARD,
                at_us,
                -cents_to_units(cents),
                f"hit: {who}, {line.describe()} = {format_cents(cents)}"
                + (f" (split {len(sharers)} ways)" if len(sharers) > 1 else ""),
                table_id=tid,
                hit_id=h.hit_id,
                # When the controller saw it and where it stands among the link's hits: the
                # sealed record of the order of near-simultaneous wins (NY 5321.18).
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
        )
    if line.resets_meter:
        due = _due_change(b, at_us)
        if due is not None and due.reset_cents is not None:
            _take_effect(b, due, at_us, reset=True)
        reset_cents = b.state.reset_cents
        # 68 IAC 10-6-5(i), 10-8-5(i): reset to the reset amount at once and play on.
        b.emit(
            EntryKind.JACKPOT_RESET,
            at_us,
            cents_to_units(reset_cents),
            f"jackpot won at table {tid}: meter reset with {format_cents(reset_cents)}",
            table_id=tid,
        )
        b.fields["jackpot_won_since_rate_set"] = True
        if due is not None:
            _take_effect(b, due, at_us, reset=False)
    return order


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
    b = _Builder(state)
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


def _due_change(b: _Builder, at_us: int) -> ArmedChange | None:
    armed = b.state.armed
    return armed if armed is not None and at_us >= armed.effective_at_us else None


def _take_effect(b: _Builder, change: ArmedChange, at_us: int, *, reset: bool) -> None:
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


def release_table(state: LinkState, *, table_id: str, at_us: int, by: str) -> Outcome:
    """A technician has verified the hit and reset the table: it may take bets again."""
    ts = state.table(table_id)
    if not ts.hit_pending:
        raise EngineError(f"table {table_id} has no hit pending")
    b = _Builder(state)
    b.emit(
        EntryKind.TABLE_RELEASED,
        at_us,
        0,
        f"table {table_id} reset by {by} after a hit",
        table_id=table_id,
    )
    b.put_table(replace(ts, hit_pending=False))
    return b.done()


def table_offline(state: LinkState, *, table_id: str, at_us: int, reason: str) -> Outcome:
    ts = state.table(table_id)
    if not ts.online:
        return Outcome(state)
    b = _Builder(state)
    b.emit(
        EntryKind.TABLE_OFFLINE, at_us, 0, f"table {table_id} offline: {reason}", table_id=table_id
    )
    b.put_table(replace(ts, online=False))
    return b.done()


def remove_from_play(
    state: LinkState, *, table_id: str, record_id: str, reason: str, at_us: int, by: str
) -> Outcome:
    """68 IAC 10-1-6.2(a): a table whose integrity is in question takes no part in the link."""
    ts = state.table(table_id)
    if ts.out_of_play:
        raise EngineError(f"table {table_id} is already out of play")
    b = _Builder(state)
    b.emit(
        EntryKind.TABLE_OUT_OF_PLAY,
        at_us,
        0,
        f"table {table_id} removed from play by {by}: {reason}",
        table_id=table_id,
        details={"integrity_record": record_id},
    )
    b.put_table(replace(ts, out_of_play=True))
    return b.done()


def return_to_play(
    state: LinkState, *, table_id: str, record_id: str, at_us: int, by: str
) -> Outcome:
    """Back in play after repair and verification; credits count from the next reading."""
    ts = state.table(table_id)
    if not ts.out_of_play:
        raise EngineError(f"table {table_id} is not out of play")
    b = _Builder(state)
    b.emit(
        EntryKind.TABLE_RETURNED_TO_PLAY,
        at_us,
        0,
        f"table {table_id} returned to play by {by}",
        table_id=table_id,
        details={"integrity_record": record_id},
    )
    b.put_table(replace(ts, out_of_play=False))
    return b.done()


def record_purge(state: LinkState, *, at_us: int, manifest: Mapping[str, Any]) -> Outcome:
    """What the retention purge removed, sealed into the chain it was removed from."""
    b = _Builder(state)
    b.emit(
        EntryKind.RETENTION_PURGE,
        at_us,
        0,
        f"retention: entries {manifest['first_seq']} to {manifest['last_seq']} removed",
        details=manifest,
    )
    return b.done()


def record_state_sealed(state: LinkState, *, at_us: int) -> Outcome:
    """The first sealing of a link written before state seals existed, as an entry of its
    history: from here on a row of it without a seal was stripped of it."""
    b = _Builder(state)
    b.emit(
        EntryKind.STATE_SEALED,
        at_us,
        0,
        "the state this link resumes from is sealed from here on",
        details={"tables": sorted(state.tables)},
    )
    b.touched.update(state.tables)
    return b.done()


def record_recovery(
    recovered: LinkState, *, at_us: int, explanation: str, details: Mapping[str, Any]
) -> Outcome:
    """A link's state re-derived from its history (the caller builds ``recovered``), recorded
    as an entry of that history; every table is written again."""
    b = _Builder(recovered)
    b.emit(EntryKind.STATE_RECOVERED, at_us, 0, explanation, details=details)
    b.touched.update(recovered.tables)
    return b.done()


# --------------------------------------------------------------------------------------------
# Anomalies and corrections


def _check_anomaly_belongs(state: LinkState, anomaly: Anomaly) -> None:
    if anomaly.link_id != state.link_id:
        raise EngineError(
            f"anomaly {anomaly.anomaly_id} belongs to link {anomaly.link_id}, not {state.link_id}"
        )
    state.table(anomaly.table_id)


def approve_anomaly(state: LinkState, anomaly: Anomaly, *, at_us: int, reviewer: str) -> Outcome:
    """Credit a held anomaly, at the rate it was detected under, in the reviewer's name."""
    _check_anomaly_belongs(state, anomaly)
    if not reviewer.strip():
        raise EngineError("an anomaly is approved by a named reviewer")
    b = _Builder(state)
    b.emit(
        EntryKind.ANOMALY_APPROVED,
        at_us,
        anomaly.units,
        f"anomaly {anomaly.anomaly_id} ({anomaly.credits} credits) approved by {reviewer}",
        table_id=anomaly.table_id,
        anomaly_id=anomaly.anomaly_id,
        details={"reviewer": reviewer, "credits": anomaly.credits},
    )
    return b.done()


def reject_anomaly(
    state: LinkState, anomaly: Anomaly, *, at_us: int, reviewer: str, reason: str
) -> Outcome:
    _check_anomaly_belongs(state, anomaly)
    if not reviewer.strip() or not reason.strip():
        raise EngineError("an anomaly is rejected by a named reviewer with a reason")
    b = _Builder(state)
    b.emit(
        EntryKind.ANOMALY_REJECTED,
        at_us,
        0,
        f"anomaly {anomaly.anomaly_id} rejected by {reviewer}: {reason}",
        table_id=anomaly.table_id,
        anomaly_id=anomaly.anomaly_id,
        details={"reviewer": reviewer, "reason": reason},
    )
    return b.done()


def apply_correction(
    state: LinkState,
    *,
    correction_id: str,
    delta_units: int,
    reason: str,
    at_us: int,
    document_sha256: str | None,
) -> Outcome:
    """A correcting entry: the only way other than a hit that a meter goes down."""
    if delta_units == 0:
        raise EngineError("a correction must change the meter")
    check_reduction_documented(delta_units=delta_units, document_sha256=document_sha256)
    b = _Builder(state)
    b.emit(
        EntryKind.CORRECTION,
        at_us,
        delta_units,
        reason,
        correction_id=correction_id,
        details={"document_sha256": document_sha256},
    )
    return b.done()


# --------------------------------------------------------------------------------------------
# What the floor display shows


class DisplayFrame(NamedTuple):
    """What a display shows now. A named tuple: one is made at every poll of every table."""

    amount_cents: int
    mode: str  # "live", "won" or "reset"
    win: LastWin | None = None


def display_frame(
    state: LinkState,
    *,
    now_us: int,
    won_first_us: int = 10_000_000,
    alternate_us: int = 4_000_000,
    hit_phase_us: int = 120_000_000,
) -> DisplayFrame:
    """68 IAC 10-6-5(g)-(i): the won amount at once, then won and reset amounts in turn."""
    win = state.last_win
    live = DisplayFrame(state.meter_cents, "live")
    if win is None:
        return live
    since = now_us - win.at_us
    if since < 0 or since >= hit_phase_us:
        return live
    if since < won_first_us:
        return DisplayFrame(win.won_cents, "won", win)
    showing_won = ((since - won_first_us) // alternate_us) % 2 == 1
    if showing_won:
        return DisplayFrame(win.won_cents, "won", win)
    return DisplayFrame(state.meter_cents, "reset", win)
