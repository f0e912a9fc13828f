"""The reducer's types: a link's state, the inputs it takes and the outcome of a step."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from controller.core.games import Game, Paytable
from controller.core.hands import HandCategory
from controller.core.law import Law
from controller.core.money import displayed_cents
from controller.core.reducer.levels import LevelConfig, LevelState, is_single_meter, level_key
from controller.refusal import Refused

# The house's default amount from which a fixed pay waits for a technician (its policy and
# setting: ``controller.rules.house.FIXED_PAY_TECHNICIAN_FROM_CENTS``).
DEFAULT_TECHNICIAN_FROM_CENTS = 1_200_00


class EngineError(Refused):
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
    # A fixed-pay link's side bets, registered (68 IAC 10-7-5(b)); no meter moves.
    BETS_REGISTERED = "bets_registered"
    # A mystery level's trigger drawn and committed to (its hash sealed here, revealed at the hit).
    MYSTERY_ARMED = "mystery_armed"
    # The levels of a link's pool changed (an approved submission, at a jackpot reset).
    LEVELS_CHANGED = "levels_changed"


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
    # The game dealt at this table, on a link whose pool several games share; None: the
    # link's game.
    game: Game | None = None

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
    # The level of the link's pool the table says the hit is for (register map v2); None
    # when it does not say.
    level: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "table_seq": self.table_seq,
            "seat": self.seat,
            "hand": self.hand.name,
            "round": self.round,
            "cards": list(self.cards) if self.cards is not None else None,
        }
        if self.level is not None:  # a claim without one reads as every claim stored before
            d["level"] = self.level
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> HitClaim:
        cards = d.get("cards")
        return cls(
            table_seq=d["table_seq"],
            seat=d["seat"],
            hand=HandCategory[d["hand"]],
            round=d["round"],
            cards=tuple(cards) if cards is not None else None,
            level=d.get("level"),
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
    level: str | None = None  # the level won ("L1", ...), on a link of levels


@dataclass(frozen=True, slots=True, kw_only=True)
class ArmedChange:
    """A change the commission approved, waiting for the link's next jackpot reset."""

    submission_id: str
    effective_at_us: int
    rate_bp: int | None = None
    reset_cents: int | None = None
    paytable: Paytable | None = None
    # The pool's levels as a whole (shares, resets, limits, mystery), for a link of levels.
    levels: tuple[LevelConfig, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "submission_id": self.submission_id,
            "effective_at_us": self.effective_at_us,
            "rate_bp": self.rate_bp,
            "reset_cents": self.reset_cents,
            "paytable": None if self.paytable is None else self.paytable.to_dicts(),
        }
        if self.levels is not None:
            out["levels"] = [cfg.to_dict() for cfg in self.levels]
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkState:
    """A link's resumable state.

    ``levels`` is the pool (see ``levels``): one level for a classic link, several for a
    link of levels, none for a fixed-pay bonus link. ``meter_units`` is the pool's total (all
    its meters, shown and hidden), which every entry of the history moves; ``rate_bp`` is the
    rate of progression of the whole side bet (every level's shown and hidden shares) and
    ``reset_cents`` the first level's reset amount.
    """

    link_id: str
    game: Game
    rate_bp: int
    reset_cents: int
    paytable: Paytable
    # The law the link plays under (``controller.core.law``): handed in when the link is
    # opened or loaded, never stored.
    law: Law
    meter_units: int = 0
    levels: tuple[LevelState, ...] = ()
    # A mixed-game link: the paytables of the games other than ``game`` its tables deal, each
    # with its own lines into the shared levels.
    paytables: Mapping[Game, Paytable] = field(default_factory=dict)
    hit_policy: HitPolicy = HitPolicy.SPLIT
    # 68 IAC 10-1-1.1(d): has a patron won the jackpot since the current rate was set? On a
    # link of levels: any level's since any share was last set; each level's own lock is
    # its ``LevelState.won_since_share_set``.
    jackpot_won_since_rate_set: bool = False
    tables: Mapping[str, TableState] = field(default_factory=dict)
    last_win: LastWin | None = None
    # 68 IAC 10-1-1.1(d): an approved change applies at a jackpot reset, never mid-accumulation.
    armed: ArmedChange | None = None
    # The time of the newest entry of the link's history. 68 IAC 10-6-5(b)-(c) judge each entry
    # against the previous one: a later entry never carries an earlier time, whatever a clock
    # or a restart says (see controller/runtime/clock.py).
    last_at_us: int = 0
    # A fixed pay at or above this waits for a technician and holds the table (house policy,
    # rules.house); the operator's setting, handed in when the link is loaded, never stored.
    technician_from_cents: int = DEFAULT_TECHNICIAN_FROM_CENTS
    # Opened in demonstration mode, without its notice period: its first entry says so, for
    # good (``open_link``), and every surface that shows the link states it. Read back from
    # the history when the link is loaded, never from a row that could be edited.
    demonstration: bool = False

    @property
    def meter_cents(self) -> int:
        """The first level's meter as shown (a classic link's one meter)."""
        if not self.levels:
            return displayed_cents(self.meter_units)
        return displayed_cents(self.levels[0].meter_units)

    def game_of(self, table_id: str) -> Game:
        """The game dealt at ``table_id``."""
        return self.table(table_id).config.game or self.game

    def paytable_for(self, game: Game) -> Paytable:
        if game is self.game:
            return self.paytable
        try:
            return self.paytables[game]
        except KeyError:
            raise EngineError(f"link {self.link_id} has no paytable for {game.label}") from None

    @property
    def games(self) -> tuple[Game, ...]:
        return (self.game, *sorted(self.paytables, key=str))

    @property
    def fixed_pay(self) -> bool:
        """A fixed-pay bonus link: no level, no meter, nothing that claims a jackpot."""
        return not self.levels

    @property
    def level_configs(self) -> tuple[LevelConfig, ...]:
        return tuple(lv.config for lv in self.levels)

    @property
    def level_names(self) -> dict[str, str]:
        """The names of the pool's levels by key (L1, L2, ...), as configured."""
        return {level_key(i): lv.config.name for i, lv in enumerate(self.levels)}

    @property
    def rate_of_progression_bp(self) -> int:
        """The rate of progression as the link's law reads its pool (0: a fixed-pay link)."""
        return self.law.rate_of_progression_bp(self.level_configs) if self.levels else 0

    def won_since_share_set(self) -> tuple[bool, ...]:
        """Whether each level's jackpot was won since its share was set: a classic link's one
        level by the link's own flag, a link of levels' by each level's."""
        if len(self.levels) == 1 and is_single_meter(self.level_configs):
            return (self.jackpot_won_since_rate_set,)
        return tuple(lv.won_since_share_set for lv in self.levels)

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
    # The level of the pool an award from a meter was paid from (its key, "L1", "L2", ...).
    level: str | None = None
    # "hand" (a hand the table or a technician reported), "mystery" (a mystery level's trigger
    # reached) or "envy" (another seat's hand at the same table in the same round).
    kind: str = "hand"
    # Needs a technician's verification before the table is reset (awards from a meter,
    # refusals, and fixed pays at or above the operator's amount).
    needs_technician: bool = True


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
    # since, or took the link over). See readings._plausible_credits.
    elapsed_us: int | None = None
    # The seats with a side bet in the round now being dealt (the bet sensor bitmap), and the
    # credits each seat wagered since the previous reading (per-seat counters), where the
    # table reports them. Used to say who wins a mystery level and who is paid envy.
    bet_seats: frozenset[int] | None = None
    seat_credits: tuple[int, ...] | None = None
    # What the table's sensors said of the bets, for game protection (each a seat bitmap,
    # bit n-1 = seat n, as the register map's; 0 is none): credits taken while the dealer's
    # lockout was on in a round already locked (``late``), and seats the sensor showed with a
    # side bet in a round dealt without a credit from them (``uncredited``), told by the
    # runtime from its previous readings (``controller.runtime.table_values.BetWatch``).
    late: bool = False
    uncredited: int = 0
