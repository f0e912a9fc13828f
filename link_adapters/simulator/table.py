"""A pure, deterministic model of one table controller: seats, side bets, deals, hits.

The model does no I/O, never reads a clock and never touches the global random generator:
the ``random.Random`` given at construction is the only source of chance and every call that
depends on time takes ``now_us`` (microseconds). The same seed and the same calls therefore
replay the same rounds exactly, which is what end-to-end tests rely on when they recompute
the meter from ``SimTable.records``.

Hands are real: each round shuffles a 52-card deck, deals by the game's rules and judges the
final five cards of every seat with ``controller.core.hands.evaluate``. Only seats that placed the
progressive side bet can hit, and only with a hand the game's default paytable pays.

Counters follow the reference register map v1: cumulative unsigned 32-bit values that wrap,
and hit sequence numbers that strictly increase for the life of the table (a power cycle
zeroes the counters but keeps the hit FIFO and its numbering).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from controller.core.games import Game, default_paytable
from controller.core.hands import HandCategory, evaluate

__all__ = [
    "COMMAND_DISABLE_PROGRESSIVE",
    "COMMAND_HIT_PENDING",
    "MAX_SEATS",
    "STATUS_DOOR_OPEN",
    "STATUS_FAULT",
    "STATUS_LOCKOUT",
    "STATUS_PROGRESSIVE_DISABLED",
    "U32",
    "RoundRecord",
    "SeatHand",
    "SimHit",
    "SimTable",
    "SimTableConfig",
    "all_hits",
    "build_hand",
    "draw_keep",
    "total_credits",
]

U32: Final = 1 << 32
MAX_SEATS: Final = 7
_U16_MAX: Final = 0xFFFF

STATUS_LOCKOUT: Final = 1 << 0
STATUS_DOOR_OPEN: Final = 1 << 1
STATUS_FAULT: Final = 1 << 2
STATUS_PROGRESSIVE_DISABLED: Final = 1 << 3

COMMAND_DISABLE_PROGRESSIVE: Final = 1 << 0
COMMAND_HIT_PENDING: Final = 1 << 1

H = HandCategory


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if type(value) is int and low <= value <= high:  # the common case, at every poll
        return value
    # bool is an int subclass, but True as a seat count is a caller bug, not a 1.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _check_time(now_us: object) -> int:
    return _check_int("now_us", now_us, 0, (1 << 63) - 1)


# --- parameters and records ----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class SimTableConfig:
    """What one simulated table is: its game, its seats and how its players behave."""

    game: Game
    seats: int = 7
    bet_probability_pct: int = 60
    seat_change_pct: int = 5
    credits_per_bet: int = 1
    start_credits: int = 0
    start_rounds: int = 0
    first_hit_seq: int = 1  # the number of the first hit; 0 is a valid hit number
    heartbeat_timeout_us: int = 5_000_000
    report_cards: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.game, Game):
            raise ValueError(
                f"game must be a Game, got {self.game!r}; e.g. Game.CARIBBEAN_STUD or "
                "Game('caribbean_stud')"
            )
        _check_int("seats", self.seats, 1, MAX_SEATS)
        _check_int("bet_probability_pct", self.bet_probability_pct, 0, 100)
        _check_int("seat_change_pct", self.seat_change_pct, 0, 100)
        # One bet per seat per round; the register map's counters are whole credits.
        _check_int("credits_per_bet", self.credits_per_bet, 1, _U16_MAX)
        _check_int("start_credits", self.start_credits, 0, U32 - 1)
        _check_int("start_rounds", self.start_rounds, 0, U32 - 1)
        # Sequence numbers never wrap: the first must be one the table can hand out.
        _check_int("first_hit_seq", self.first_hit_seq, 0, U32 - 1)
        _check_int("heartbeat_timeout_us", self.heartbeat_timeout_us, 1, (1 << 63) - 1)
        if not isinstance(self.report_cards, bool):
            raise ValueError(f"report_cards must be a bool, got {self.report_cards!r}")


@dataclass(frozen=True, slots=True)
class SimHit:
    """One entry of the hit FIFO: a betting seat's paying hand, as the table reports it."""

    seq: int
    seat: int
    hand: HandCategory
    round: int
    cards: tuple[int, ...]


class SeatHand(NamedTuple):
    """A seat's final five cards (in the order received) and their category."""

    cards: tuple[int, ...]
    category: HandCategory


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """Everything one round did, so tests can recompute counters and hits from records alone.

    ``credits`` is the plain number of credits this round added (not reduced modulo 2**32);
    ``hands`` holds every occupied seat, betting or not. ``refused_seats`` wanted to bet but
    the table refused (progressive disabled or locked out): they added nothing.
    """

    round: int
    time_us: int
    bet_seats: tuple[int, ...]
    refused_seats: tuple[int, ...]
    credits: int
    hands: Mapping[int, SeatHand]
    hits: tuple[SimHit, ...]
    dealer_cards: tuple[int, ...] = ()
    community_cards: tuple[int, ...] = ()

    @property
    def bet_bitmap(self) -> int:
        return sum(1 << (seat - 1) for seat in self.bet_seats)


def total_credits(records: Iterable[RoundRecord]) -> int:
    """Credits wagered over ``records``, not reduced modulo 2**32."""
    return sum(record.credits for record in records)


def all_hits(records: Iterable[RoundRecord]) -> list[SimHit]:
    """Every hit of ``records``, in the order the table enqueued them."""
    return [hit for record in records for hit in record.hits]


# --- building hands --------------------------------------------------------------------------

# One example of each category: ranks (0 = deuce .. 12 = ace) and a suit pattern. Candidates
# shift every rank and rotate the suits, so several seats can be forced in one round; a shift
# that wraps a straight or turns a straight flush royal is dropped by the evaluate() check.
_SHAPES: Final[dict[HandCategory, tuple[tuple[int, ...], tuple[int, ...]]]] = {
    H.ROYAL_FLUSH: ((12, 11, 10, 9, 8), (0, 0, 0, 0, 0)),
    H.STRAIGHT_FLUSH: ((7, 6, 5, 4, 3), (0, 0, 0, 0, 0)),
    H.FOUR_OF_A_KIND: ((12, 12, 12, 12, 7), (0, 1, 2, 3, 0)),
    H.FULL_HOUSE: ((11, 11, 11, 4, 4), (0, 1, 2, 0, 1)),
    H.FLUSH: ((12, 9, 6, 4, 1), (0, 0, 0, 0, 0)),
    H.STRAIGHT: ((12, 11, 10, 9, 8), (0, 1, 2, 3, 0)),
    H.THREE_OF_A_KIND: ((10, 10, 10, 5, 2), (0, 1, 2, 3, 0)),
    H.TWO_PAIR: ((9, 9, 6, 6, 1), (0, 1, 2, 3, 0)),
    H.ONE_PAIR: ((8, 8, 12, 5, 2), (0, 1, 2, 3, 0)),
    H.HIGH_CARD: ((12, 10, 7, 5, 2), (0, 1, 2, 3, 0)),
}


def _candidates(hand: HandCategory) -> Iterator[tuple[int, ...]]:
    ranks, suits = _SHAPES[hand]
    for shift in range(13):
        for turn in (3, 2, 1, 0):  # spades first: the first royal is A K Q J T of spades
            cards = tuple(
                4 * ((rank + shift) % 13) + (suit + turn) % 4
                for rank, suit in zip(ranks, suits, strict=True)
            )
            if evaluate(cards).category is hand:
                yield cards


def build_hand(hand: HandCategory, avoid: Iterable[int] = ()) -> tuple[int, ...]:
    """Five cards making exactly ``hand``, none of them in ``avoid``; always the same choice.

    The first choices are A K Q J T of spades for a royal flush and 9 8 7 6 5 of spades for
    a straight flush. Raises ValueError when ``avoid`` leaves no such hand (there are only
    four royal flushes).
    """
    if not isinstance(hand, HandCategory):
        raise ValueError(f"hand must be a HandCategory, got {hand!r}")
    taken = frozenset(avoid)
    for cards in _candidates(hand):
        if taken.isdisjoint(cards):
            return cards
    raise ValueError(f"no {hand.label} is left that avoids the {len(taken)} cards already used")


def draw_keep(cards: Sequence[int]) -> tuple[int, ...]:
    """The cards the simulated Caribbean Draw player keeps of its five, in dealt order.

    A fixed, simple strategy: stand pat on a straight or better, keep the matched cards of a
    pair, two pair, trips or quads, else four to a flush, else four to a straight, else the
    two highest cards.
    """
    category = evaluate(cards).category
    if category in (H.STRAIGHT, H.FLUSH, H.FULL_HOUSE, H.STRAIGHT_FLUSH, H.ROYAL_FLUSH):
        return tuple(cards)
    ranks = [card // 4 for card in cards]
    if category is not H.HIGH_CARD:
        # Quads keep their kicker too: drawing to four of a kind cannot improve it.
        if category is H.FOUR_OF_A_KIND:
            return tuple(cards)
        return tuple(card for card, rank in zip(cards, ranks, strict=True) if ranks.count(rank) > 1)
    for suit in range(4):
        suited = tuple(card for card in cards if card % 4 == suit)
        if len(suited) == 4:
            return suited
    # A high-card hand has five distinct ranks; try the highest five-rank window first, the
    # wheel (ace playing low) last.
    for high in range(12, 2, -1):
        window = {(rank % 13) for rank in range(high - 4, high + 1)}  # -1 becomes the ace
        inside = tuple(card for card, rank in zip(cards, ranks, strict=True) if rank in window)
        if len(inside) == 4:
            return inside
    top_two = sorted(cards, key=lambda card: card // 4, reverse=True)[:2]
    return tuple(card for card in cards if card in top_two)


# --- the table -----------------------------------------------------------------------------


class SimTable:
    """One table controller. Not thread-safe: drive it from one task or thread."""

    def __init__(self, config: SimTableConfig, rng: random.Random) -> None:
        if not isinstance(config, SimTableConfig):
            raise ValueError(f"config must be a SimTableConfig, got {type(config).__name__}")
        if not isinstance(rng, random.Random):
            raise ValueError(f"rng must be a random.Random, got {type(rng).__name__}")
        self._config = config
        self._rng = rng
        game = config.game
        self._paying: frozenset[HandCategory] = frozenset(
            line.hand
            for line in default_paytable(game).lines
            if line.hand >= game.lowest_paying_hand
        )
        self._credits = config.start_credits
        self._rounds = config.start_rounds
        self._per_seat = [0] * MAX_SEATS
        self._bet_bitmap = 0
        # A table opens full; seat_change_pct then lets players come and go.
        self._occupied = [True] * config.seats
        self._next_hit_seq = config.first_hit_seq
        self._fifo: deque[SimHit] = deque()
        self._records: list[RoundRecord] = []
        self._forced: dict[int, tuple[int, ...]] = {}
        self._command_bits = 0
        self._meter_cents = 0
        # No heartbeat yet: a table whose controller has not spoken takes no progressive bets.
        self._heartbeat_value: int | None = None
        self._heartbeat_us: int | None = None
        # How well the controller kept the table alive: the longest wait between two fresh
        # heartbeats, and how many of those waits outlasted the timeout (each one disabled
        # the progressive until the next heartbeat).
        self._heartbeat_gap_max_us = 0
        self._heartbeat_timeouts = 0
        self._lockout = False
        self._door_open = False
        self._fault = False

    # --- read-only state ---------------------------------------------------------------

    @property
    def config(self) -> SimTableConfig:
        return self._config

    @property
    def paying_hands(self) -> frozenset[HandCategory]:
        """The categories that hit at this table (the game's default paytable)."""
        return self._paying

    @property
    def credits(self) -> int:
        return self._credits

    @property
    def rounds(self) -> int:
        return self._rounds

    @property
    def per_seat_credits(self) -> tuple[int, ...]:
        """Seven u32 counters, seats 1-7; seats the table does not have stay 0."""
        return tuple(self._per_seat)

    @property
    def bet_bitmap(self) -> int:
        return self._bet_bitmap

    @property
    def occupied_seats(self) -> tuple[int, ...]:
        return tuple(seat for seat, here in enumerate(self._occupied, start=1) if here)

    @property
    def hit_fifo(self) -> Sequence[SimHit]:
        """The pending hits, head first (a live view: do not mutate)."""
        return self._fifo

    @property
    def head_hit(self) -> SimHit | None:
        return self._fifo[0] if self._fifo else None

    @property
    def next_hit_seq(self) -> int:
        """The number the next hit will get."""
        return self._next_hit_seq

    @property
    def records(self) -> Sequence[RoundRecord]:
        """Every round played since the last ``take_records``, oldest first (a live view: do
        not mutate)."""
        return self._records

    def take_records(self) -> list[RoundRecord]:
        """Hand over the rounds played so far and forget them.

        A table that plays for weeks would otherwise keep every round in memory; a long run
        folds what it takes into its own totals as it goes.
        """
        taken, self._records = self._records, []
        return taken

    @property
    def command_bits(self) -> int:
        return self._command_bits

    @property
    def meter_display_cents(self) -> int:
        return self._meter_cents

    @property
    def heartbeat_value(self) -> int | None:
        return self._heartbeat_value

    @property
    def heartbeat_gap_max_us(self) -> int:
        """The longest wait between two fresh heartbeats so far (0: fewer than two)."""
        return self._heartbeat_gap_max_us

    @property
    def heartbeat_timeouts(self) -> int:
        """How many times a fresh heartbeat came only after the timeout: each time the table
        had disabled the progressive meanwhile."""
        return self._heartbeat_timeouts

    def heartbeat_age_us(self, now_us: int) -> int | None:
        """How long since the last fresh heartbeat (None: none yet), the wait still open."""
        now_us = _check_time(now_us)
        return None if self._heartbeat_us is None else max(0, now_us - self._heartbeat_us)

    def status_bits(self, now_us: int) -> int:
        """Register 2: bit0 lockout, bit1 door open, bit2 fault, bit3 progressive disabled."""
        bits = STATUS_LOCKOUT if self._lockout else 0
        bits |= STATUS_DOOR_OPEN if self._door_open else 0
        bits |= STATUS_FAULT if self._fault else 0
        if self.progressive_disabled(now_us):
            bits |= STATUS_PROGRESSIVE_DISABLED
        return bits

    def progressive_disabled(self, now_us: int) -> bool:
        now_us = _check_time(now_us)
        # Register map v1, register 102: bit0 alone disables progressive wagering; bit1 (hit
        # pending) is an indicator and changes nothing about bets.
        if self._command_bits & COMMAND_DISABLE_PROGRESSIVE:
            return True
        if self._heartbeat_us is None:
            return True
        # Callers on several tasks may pass times slightly out of order; a heartbeat "from
        # the future" counts as fresh rather than failing the poll.
        return now_us - self._heartbeat_us > self._config.heartbeat_timeout_us

    def total_credits(self) -> int:
        """Credits wagered over the records kept, not reduced modulo 2**32."""
        return total_credits(self._records)

    def all_hits(self) -> list[SimHit]:
        """Every hit of the records kept, acknowledged or not, in sequence order."""
        return all_hits(self._records)

    # --- inputs from the controller (register writes) -------------------------------------

    def heartbeat(self, value: int, now_us: int) -> None:
        """Register 105. Only a changed value is fresh: a hung controller that keeps
        rewriting the same number must not keep the table taking progressive bets."""
        value = _check_int("heartbeat value", value, 0, _U16_MAX)
        now_us = _check_time(now_us)
        if value != self._heartbeat_value:
            if self._heartbeat_us is not None:
                gap = now_us - self._heartbeat_us
                self._heartbeat_gap_max_us = max(self._heartbeat_gap_max_us, gap)
                if gap > self._config.heartbeat_timeout_us:
                    self._heartbeat_timeouts += 1
            self._heartbeat_value = value
            self._heartbeat_us = now_us

    def acknowledge(self, seq: int) -> bool:
        """Registers 100-101: pop the head hit if ``seq`` is its sequence number."""
        seq = _check_int("acknowledged sequence number", seq, 0, U32 - 1)
        if self._fifo and self._fifo[0].seq == seq:
            self._fifo.popleft()
            return True
        return False

    def set_command_bits(self, bits: int) -> None:
        """Register 102: bit0 disable progressive wagering, bit1 hit pending at this table."""
        self._command_bits = _check_int("command bits", bits, 0, _U16_MAX)

    def set_meter_display(self, cents: int) -> None:
        """Registers 103-104: the amount the table's own meter shows."""
        self._meter_cents = _check_int("meter display cents", cents, 0, U32 - 1)

    # --- inputs from the pit (switches) and the lab ---------------------------------------

    def set_lockout(self, on: bool) -> None:
        """The dealer's lockout switch: no side bets are accepted while it is on."""
        self._lockout = bool(on)

    def set_door_open(self, on: bool) -> None:
        self._door_open = bool(on)

    def set_fault(self, on: bool) -> None:
        self._fault = bool(on)

    def resume(self, *, credits: int, rounds: int, next_hit_seq: int) -> None:
        """Start from the counters a previous run left (before this table deals a round), as
        a controller's tables keep theirs across a controller restart."""
        if self._records:
            raise ValueError("a table resumes only before its first round")
        self._credits = _check_int("credits", credits, 0, U32 - 1)
        self._rounds = _check_int("rounds", rounds, 0, U32 - 1)
        self._next_hit_seq = _check_int("next_hit_seq", next_hit_seq, 0, U32 - 1)

    def power_cycle(self, *, memory_cleared: bool = False) -> None:
        """Counters restart at zero, as do the controller's writes (the table's RAM).

        By default the hit FIFO and its numbering survive (kept in the table's non-volatile
        memory). With ``memory_cleared`` they do not: the FIFO is emptied and hits are
        numbered from ``first_hit_seq`` again, as register map v1 allows a table that restarts
        to do (a number already acknowledged before the restart comes round again).
        """
        self._credits = 0
        self._rounds = 0
        self._per_seat = [0] * MAX_SEATS
        self._bet_bitmap = 0
        self._command_bits = 0
        self._meter_cents = 0
        self._heartbeat_value = None
        self._heartbeat_us = None
        if memory_cleared:
            self._fifo.clear()
            self._next_hit_seq = self._config.first_hit_seq

    def force_hand(self, seat: int, hand: HandCategory) -> None:
        """Deal exactly ``hand`` to ``seat`` next round; the seat is occupied and bets.

        The bet is still refused if the progressive is disabled or the table locked out.
        In Caribbean Draw a forced seat stands pat. In the Let It Ride bonus the last two
        cards of the forced hand are the community cards, so only one seat per round can be
        forced there.
        """
        seat = _check_int("seat", seat, 1, self._config.seats)
        if not isinstance(hand, HandCategory):
            raise ValueError(f"hand must be a HandCategory, got {hand!r}")
        others = {s: cards for s, cards in self._forced.items() if s != seat}
        if self._config.game is Game.LET_IT_RIDE_BONUS and others:
            raise ValueError(
                f"seat {next(iter(others))} is already forced this round: in the Let It Ride "
                "bonus the community cards are shared, so only one seat's hand can be forced"
            )
        used = {card for cards in others.values() for card in cards}
        self._forced[seat] = build_hand(hand, avoid=used)

    # --- a round -------------------------------------------------------------------------

    def play_round(self, now_us: int) -> RoundRecord:
        """Seats come and go, side bets are placed, cards are dealt and judged, hits queue."""
        now_us = _check_time(now_us)
        config = self._config
        rng = self._rng
        for index in range(config.seats):
            if rng.randrange(100) < config.seat_change_pct:
                self._occupied[index] = not self._occupied[index]
        forced, self._forced = self._forced, {}
        for seat in forced:
            self._occupied[seat - 1] = True
        seats = self.occupied_seats

        accepting = not self._lockout and not self.progressive_disabled(now_us)
        bet_seats: list[int] = []
        refused: list[int] = []
        for seat in seats:
            # Draw for every occupied seat, forced or not, so forcing a hand or refusing bets
            # does not shift the random stream of later rounds.
            wants = rng.randrange(100) < config.bet_probability_pct or seat in forced
            if wants:
                (bet_seats if accepting else refused).append(seat)

        hands, dealer, community = self._deal(seats, forced)

        self._rounds = (self._rounds + 1) % U32
        added = config.credits_per_bet * len(bet_seats)
        self._credits = (self._credits + added) % U32
        for seat in bet_seats:
            self._per_seat[seat - 1] = (self._per_seat[seat - 1] + config.credits_per_bet) % U32
        self._bet_bitmap = sum(1 << (seat - 1) for seat in bet_seats)

        hits: list[SimHit] = []
        for seat in bet_seats:
            cards, category = hands[seat]
            if category in self._paying:
                hits.append(SimHit(self._next_seq(), seat, category, self._rounds, cards))
        self._fifo.extend(hits)

        record = RoundRecord(
            round=self._rounds,
            time_us=now_us,
            bet_seats=tuple(bet_seats),
            refused_seats=tuple(refused),
            credits=added,
            hands=hands,
            hits=tuple(hits),
            dealer_cards=dealer,
            community_cards=community,
        )
        self._records.append(record)
        return record

    def _next_seq(self) -> int:
        seq = self._next_hit_seq
        if seq > U32 - 1:
            raise RuntimeError("hit sequence numbers are exhausted: they may never wrap")
        self._next_hit_seq = seq + 1
        return seq

    def _deal(
        self, seats: Sequence[int], forced: Mapping[int, tuple[int, ...]]
    ) -> tuple[dict[int, SeatHand], tuple[int, ...], tuple[int, ...]]:
        """Final hands of ``seats``, the dealer's cards and the community cards."""
        deck = list(range(52))
        self._rng.shuffle(deck)
        reserved = {card for cards in forced.values() for card in cards}
        stub = [card for card in deck if card not in reserved]
        game = self._config.game

        finals: dict[int, tuple[int, ...]] = {}
        dealer: tuple[int, ...] = ()
        community: tuple[int, ...] = ()
        if game is Game.LET_IT_RIDE_BONUS:
            # The forced hand's last two cards are the community cards (one forced seat).
            community = next(iter(forced.values()))[3:] if forced else _take(stub, 2)
            for seat in seats:
                own = forced[seat][:3] if seat in forced else _take(stub, 3)
                finals[seat] = own + community
        else:
            for seat in seats:
                finals[seat] = forced.get(seat) or _take(stub, 5)
            dealer = _take(stub, 5)
            if game is Game.CARIBBEAN_DRAW:
                discards: list[int] = []
                for seat in seats:
                    if seat not in forced:
                        finals[seat] = self._draw(finals[seat], stub, discards)
        hands = {seat: SeatHand(cards, evaluate(cards).category) for seat, cards in finals.items()}
        return hands, dealer, community

    def _draw(
        self, cards: tuple[int, ...], stub: list[int], discards: list[int]
    ) -> tuple[int, ...]:
        keep = draw_keep(cards)
        drawn: list[int] = []
        while len(drawn) < 5 - len(keep):
            if not stub:
                # Seven drawing seats can empty the stub: as at a real table, the earlier
                # players' discards are shuffled and dealt on; none is in a live hand.
                self._rng.shuffle(discards)
                stub.extend(discards)
                discards.clear()
            drawn.append(stub.pop(0))
        # Discarded only now, so a player never draws back a card just thrown away.
        discards.extend(card for card in cards if card not in keep)
        return keep + tuple(drawn)


def _take(stub: list[int], count: int) -> tuple[int, ...]:
    taken = tuple(stub[:count])
    del stub[:count]
    return taken
