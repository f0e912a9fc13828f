"""A pure, deterministic model of one table controller: seats, side bets, deals, hits.

The model does no I/O, never reads a clock and never touches the global random generator:
the ``random.Random`` given at construction is the only source of chance and every call that
depends on time takes ``now_us`` (microseconds). The same seed and the same calls therefore
replay the same rounds exactly, which is what end-to-end tests rely on when they recompute
the meter from ``SimTable.records``.

Hands are real: each round deals by the game's rules (``dealing``: five-card hands of one
deck, blackjack from a six-deck shoe for Super Sevens, seven stacks of seven from 52 cards and
the joker for Pai Gow Poker) and judges every seat with the game's module. Only seats that
placed the progressive side bet can hit, and only with a hand the game's default paytable pays.

Counters follow the reference register map (v1, and v2 alike): cumulative unsigned 32-bit
values that wrap, the seven per-seat counters adding up (modulo 2**32) to the all-seats
counter at every reading, and hit sequence numbers that strictly increase for the life of the
table (a power cycle zeroes the counters but keeps the hit FIFO and its numbering). The bet
bitmap shows the seats that bet in the round the round counter names, so a head hit of that
round finds its seat, and every other seat with a side bet, there.

A round is played at once (``play_round``) or in phases a poll can see between
(``take_bets``, ``lock_out``, ``take_late_bet``, ``deal``); between the bets and the deal the
bet bitmap shows the round being played, the round counter still the last one dealt. A table
built with faults (``SimTableConfig.faults``, ``faults.py``) shows them only in what it
reports; without faults, both ways deal exactly the rounds the same seed always dealt.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Mapping, Sequence
from fractions import Fraction

from controller.core.hands import HandCategory
from link_adapters.register_map import (
    COMMAND_DISABLE_PROGRESSIVE,
    STATUS_DOOR_OPEN,
    STATUS_FAULT,
    STATUS_LOCKOUT,
    STATUS_PROGRESSIVE_DISABLED,
    seat_bitmap,
)
from link_adapters.simulator.dealing import Dealing
from link_adapters.simulator.faults import RoundFaults, paying_hands, rigging_chances, top_hand
from link_adapters.simulator.forcing import Claim, Forcing
from link_adapters.simulator.table_types import (
    MAX_SEATS,
    U16_MAX,
    U32,
    RoundRecord,
    SeatHand,
    SimHit,
    SimTableConfig,
    all_hits,
    check_int,
    check_time,
    split_credits,
    total_credits,
)

# The cards and the values of a table live in their own modules (the register map's bits are
# link_adapters.register_map's).
__all__ = ["SimTable"]


class _OpenRound:
    """A round whose bets are taken and whose cards are not yet dealt."""

    __slots__ = (
        "bet_seats",
        "claims",
        "forced",
        "late_done",
        "late_seat",
        "locked",
        "refused",
        "seats",
    )

    def __init__(
        self, seats: list[int], forced: dict[int, tuple[int, ...]], claims: dict[int, Claim]
    ) -> None:
        self.seats = seats  # occupied: dealt in
        self.forced = forced
        self.claims = claims
        self.bet_seats: list[int] = []
        self.refused: list[int] = []
        self.locked = False
        self.late_done = False
        self.late_seat: int | None = None


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
        self._paying = paying_hands(game)
        self._top_hand = top_hand(game)
        faults = config.faults
        # The exact chance a round is rigged, by the seats dealt in it.
        self._rigging: tuple[Fraction, ...] = ()
        if faults is not None and faults.rigged is not None:
            self._rigging = rigging_chances(game, faults.rigged, config.seat_count)
        # Register 7 as the sensors show it: a dead sensor's bit never, a stuck one's always.
        self._sensor_keep = 0x7F if faults is None else faults.sensor_keep_mask
        self._sensor_stuck = 0 if faults is None else faults.sensor_stuck_mask
        self._open: _OpenRound | None = None
        self._dealing = Dealing(game, rng)
        self._forcing = Forcing(config, self._dealing)
        self._credits = config.start_credits
        self._rounds = config.start_rounds
        self._per_seat = list(split_credits(config.start_credits, config.seat_count))
        self._bet_bitmap = 0
        # A table opens full; seat_change_pct then lets players come and go.
        self._occupied = [True] * config.seat_count
        self._next_hit_seq = config.first_hit_seq
        self._fifo: deque[SimHit] = deque()
        self._records: list[RoundRecord] = []
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
        """Register 7: the seats whose bet sensor shows a side bet this round."""
        return (self._bet_bitmap & self._sensor_keep) | self._sensor_stuck

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
        now_us = check_time(now_us)
        return None if self._heartbeat_us is None else max(0, now_us - self._heartbeat_us)

    def status_bits(self, now_us: int) -> int:
        """Register 2: bit0 lockout, bit1 door open, bit2 fault, bit3 progressive disabled."""
        locked = self._lockout or (self._open is not None and self._open.locked)
        bits = STATUS_LOCKOUT if locked else 0
        bits |= STATUS_DOOR_OPEN if self._door_open else 0
        bits |= STATUS_FAULT if self._fault else 0
        if self.progressive_disabled(now_us):
            bits |= STATUS_PROGRESSIVE_DISABLED
        return bits

    def progressive_disabled(self, now_us: int) -> bool:
        now_us = check_time(now_us)
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
        value = check_int("heartbeat value", value, 0, U16_MAX)
        now_us = check_time(now_us)
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
        seq = check_int("acknowledged sequence number", seq, 0, U32 - 1)
        if self._fifo and self._fifo[0].seq == seq:
            self._fifo.popleft()
            return True
        return False

    def set_command_bits(self, bits: int) -> None:
        """Register 102: bit0 disable progressive wagering, bit1 hit pending at this table."""
        self._command_bits = check_int("command bits", bits, 0, U16_MAX)

    def set_meter_display(self, cents: int) -> None:
        """Registers 103-104: the amount the table's own meter shows."""
        self._meter_cents = check_int("meter display cents", cents, 0, U32 - 1)

    # --- inputs from the pit (switches) and the lab ---------------------------------------

    def set_lockout(self, on: bool) -> None:
        """The dealer's lockout switch: no side bets are accepted while it is on."""
        self._lockout = bool(on)

    def set_door_open(self, on: bool) -> None:
        self._door_open = bool(on)

    def set_fault(self, on: bool) -> None:
        self._fault = bool(on)

    def resume(
        self,
        *,
        credits: int,
        rounds: int,
        next_hit_seq: int,
        seat_credits: Sequence[int] | None = None,
    ) -> None:
        """Start from the counters a previous run left (before this table deals a round), as
        a controller's tables keep theirs across a controller restart. ``seat_credits``: the
        seven per-seat counters, adding up to ``credits`` modulo 2**32; without them
        ``credits`` is shared out over the seats (``split_credits``)."""
        if self._records or self._open is not None:
            raise ValueError("a table resumes only before its first round")
        credits = check_int("credits", credits, 0, U32 - 1)
        if seat_credits is None:
            per_seat = list(split_credits(credits, self._config.seat_count))
        else:
            per_seat = [check_int("seat credits", c, 0, U32 - 1) for c in seat_credits]
            if len(per_seat) != MAX_SEATS or sum(per_seat) % U32 != credits:
                raise ValueError(
                    f"seat_credits must be {MAX_SEATS} counters adding up to credits {credits} "
                    f"(modulo 2**32), got {tuple(seat_credits)}"
                )
            if any(per_seat[self._config.seat_count :]):
                raise ValueError("seat_credits names seats the table does not have")
        self._credits, self._per_seat = credits, per_seat
        self._rounds = check_int("rounds", rounds, 0, U32 - 1)
        self._next_hit_seq = check_int("next_hit_seq", next_hit_seq, 0, U32 - 1)

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
        self._open = None  # a round being played is lost with the table's RAM
        self._command_bits = 0
        self._meter_cents = 0
        self._heartbeat_value = None
        self._heartbeat_us = None
        if memory_cleared:
            self._fifo.clear()
            self._next_hit_seq = self._config.first_hit_seq

    def force_hand(self, seat: int, hand: HandCategory) -> None:
        """Deal exactly ``hand`` to ``seat`` next round; the seat is occupied and bets.

        The cards are real and the game's module judges them ``hand``: five cards of a
        five-card game, the first cards of a Super Sevens blackjack hand, seven Pai Gow Poker
        cards. The bet is still refused if the progressive is disabled or the table locked
        out. In Caribbean Draw a forced seat stands pat. In the Let It Ride bonus the last two
        cards of the forced hand are the community cards, so only one seat per round can be
        forced there.
        """
        self._forcing.force_hand(seat, hand)

    def force_hit(
        self,
        seat: int,
        hand: HandCategory,
        cards: Sequence[int],
        *,
        level: int | None = None,
        lying: bool = False,
    ) -> None:
        """Next round ``seat`` bets, is dealt exactly ``cards`` and reports a hit of ``hand``
        with them and ``level``.

        Refused (ValueError) when the table's register map cannot carry the hit (map v1: five
        cards 0-51 and no level; map v2: one to seven cards 0-52 and a level 1-65535), and
        when the game's module does not judge ``cards`` to be ``hand`` (a Super Sevens hit
        names exactly the one to three cards that decide it, a Pai Gow Poker hit its seven).
        With ``lying=True`` the table reports the claim whatever it is dealt and the cards are
        only held to the map: a lying table, for tests of the controller's checks. The bet is
        still refused if the progressive is disabled or the table locked out.
        """
        self._forcing.force_hit(seat, hand, cards, level=level, lying=lying)

    # --- a round -------------------------------------------------------------------------

    @property
    def round_open(self) -> bool:
        """A round is being played in phases: bets taken (``take_bets``), not yet dealt."""
        return self._open is not None

    def play_round(self, now_us: int) -> RoundRecord:
        """Seats come and go, side bets are placed, cards are dealt and judged, hits queue: a
        whole round at once, as one reading sees it. The dealer's lockout switch is left as
        it is (on, it refuses every bet)."""
        now_us = check_time(now_us)
        if self._open is not None:
            raise RuntimeError("a round is being played in phases: deal it first")
        bets = self._take_bets(now_us)
        self._take_late_bet(bets, now_us)
        return self._deal(bets, now_us)

    # A round in phases, as a controller polling between them sees it: the bets (credits,
    # per-seat credits and the bet bitmap rise), the lockout (status bit0), a bet taken after
    # the lockout where the table has that fault, and the deal (the round counter moves on,
    # hits queue, the lockout is released). Between the bets and the deal the bet bitmap
    # shows the round being played, the round counter still the last one dealt. The same
    # seed deals the same rounds as ``play_round``.

    def take_bets(self, now_us: int) -> None:
        """Phase 1: seats come and go and side bets are placed (refused while the dealer's
        lockout switch is on or the progressive is disabled)."""
        now_us = check_time(now_us)
        if self._open is not None:
            raise RuntimeError("the bets of this round are already taken: deal it first")
        self._open = self._take_bets(now_us)

    def lock_out(self, now_us: int) -> None:
        """Phase 2: the dealer locks the bets out (status bit0) before dealing."""
        check_time(now_us)
        bets = self._opened("lock the bets out")
        bets.locked = True

    def take_late_bet(self, now_us: int) -> int | None:
        """Phase 3, after ``lock_out``: at a table with ``late_bets_per_round``, with that
        chance one more seat's side bet is taken although the bets are locked out. Returns
        the seat, or None."""
        now_us = check_time(now_us)
        bets = self._opened("take a late bet")
        if not bets.locked:
            raise RuntimeError("a late bet comes after the lockout: call lock_out first")
        if bets.late_done:
            raise RuntimeError("this round's late bet was already looked at")
        return self._take_late_bet(bets, now_us)

    def deal(self, now_us: int) -> RoundRecord:
        """Phase 4, after ``lock_out``: cards are dealt and judged, the round counter moves
        on, hits queue, and the lockout is released."""
        now_us = check_time(now_us)
        bets = self._opened("deal")
        if not bets.locked:
            raise RuntimeError("a round is dealt after the lockout: call lock_out first")
        if not bets.late_done:
            self._take_late_bet(bets, now_us)
        self._open = None
        return self._deal(bets, now_us)

    def _opened(self, what: str) -> _OpenRound:
        if self._open is None:
            raise RuntimeError(f"no round is open to {what}: call take_bets first")
        return self._open

    def _take_bets(self, now_us: int) -> _OpenRound:
        config = self._config
        rng = self._rng
        for index in range(config.seat_count):
            if rng.randrange(100) < config.seat_change_pct:
                self._occupied[index] = not self._occupied[index]
        forced, claims = self._forcing.take()
        for seat in (*forced, *claims):
            self._occupied[seat - 1] = True
        seats = self.occupied_seats

        accepting = not self._lockout and not self.progressive_disabled(now_us)
        bets = _OpenRound(list(seats), forced, claims)
        for seat in seats:
            # Draw for every occupied seat, forced or not, so forcing a hand or refusing bets
            # does not shift the random stream of later rounds.
            wants = rng.randrange(100) < config.bet_probability_pct
            wants = wants or seat in forced or seat in claims
            if wants:
                (bets.bet_seats if accepting else bets.refused).append(seat)
        for seat in bets.bet_seats:
            self._bet(seat)
        self._bet_bitmap = seat_bitmap(bets.bet_seats)
        return bets

    def _bet(self, seat: int) -> None:
        per_bet = self._config.credits_per_bet
        self._credits = (self._credits + per_bet) % U32
        self._per_seat[seat - 1] = (self._per_seat[seat - 1] + per_bet) % U32

    def _take_late_bet(self, bets: _OpenRound, now_us: int) -> int | None:
        bets.late_done = True
        faults = self._config.faults
        if faults is None or not faults.late_bets_per_round:
            return None
        rng = self._rng
        if rng.random() >= faults.late_bets_per_round:
            return None
        # A seat without a side bet this round, sitting or sitting down; drawn whatever
        # happens next, so a disabled progressive does not shift the random stream.
        free = [s for s in range(1, self._config.seat_count + 1) if s not in bets.bet_seats]
        if not free:
            return None
        seat = free[rng.randrange(len(free))]
        if self.progressive_disabled(now_us):
            bets.refused.append(seat)
            return None
        if seat not in bets.seats:
            self._occupied[seat - 1] = True
            bets.seats = sorted((*bets.seats, seat))
        bets.bet_seats.append(seat)
        bets.late_seat = seat
        self._bet(seat)
        self._bet_bitmap |= 1 << (seat - 1)
        return seat

    def _deal(self, bets: _OpenRound, now_us: int) -> RoundRecord:
        faults = self._config.faults
        seats, forced, claims = bets.seats, bets.forced, bets.claims
        rigged_seat = None
        if faults is not None and faults.rigged is not None and seats and not forced and not claims:
            # A round with hands forced by a test is never rigged besides.
            chance = self._rigging[len(seats)]
            if self._rng.randrange(chance.denominator) < chance.numerator:
                rigged_seat = seats[self._rng.randrange(len(seats))]
        if rigged_seat is not None:
            assert faults is not None and faults.rigged is not None
            hands, dealer, community = self._dealing.deal_rigged(
                seats, rigged_seat, faults.rigged.hand
            )
        else:
            hands, dealer, community = self._dealing.deal(seats, forced)
        self._rounds = (self._rounds + 1) % U32

        false_claim_seat = None
        if faults is not None and faults.false_claims_per_round:
            false_claim_seat = self._false_claim(bets, hands, faults.false_claims_per_round)
        unreported = None if faults is None else faults.unreported_hand
        hits: list[SimHit] = []
        unreported_seats: list[int] = []
        for seat in bets.bet_seats:
            claim = claims.get(seat)
            if claim is not None:
                # An honest claim was dealt: its cards are the seat's and judged its hand.
                assert claim.lying or hands[seat][:2] == (claim.cards, claim.hand)
                if claim.hand is unreported and not claim.lying:
                    unreported_seats.append(seat)
                    continue
                seq = self._next_seq()
                hits.append(SimHit(seq, seat, claim.hand, self._rounds, claim.cards, claim.level))
                continue
            hand = hands[seat]
            if hand.category in self._paying:
                if hand.category is unreported:
                    unreported_seats.append(seat)
                    continue
                hits.append(SimHit(self._next_seq(), seat, hand.category, self._rounds, hand.cards))
        self._fifo.extend(hits)

        record = RoundRecord(
            round=self._rounds,
            time_us=now_us,
            bet_seats=tuple(bets.bet_seats),
            refused_seats=tuple(bets.refused),
            credits=self._config.credits_per_bet * len(bets.bet_seats),
            hands=hands,
            hits=tuple(hits),
            dealer_cards=dealer,
            community_cards=community,
            faults=None
            if faults is None
            else RoundFaults(
                sensor_bitmap=self.bet_bitmap,
                rigged_seat=rigged_seat,
                late_bet_seat=bets.late_seat,
                false_claim_seat=false_claim_seat,
                unreported_seats=tuple(unreported_seats),
            ),
        )
        self._records.append(record)
        return record

    def _false_claim(
        self, bets: _OpenRound, hands: Mapping[int, SeatHand], chance: float
    ) -> int | None:
        """With ``chance``, one seat with a side bet and no paying hand is made to claim the
        paytable's top hand with the cards it was dealt (a lying claim, as ``force_hit``
        with ``lying=True`` makes one). Returns the seat, or None."""
        rng = self._rng
        if rng.random() >= chance:
            return None
        honest = [
            s
            for s in bets.bet_seats
            if s not in bets.claims and hands[s].category not in self._paying
        ]
        if not honest:
            return None
        seat = honest[rng.randrange(len(honest))]
        bets.claims[seat] = Claim(self._top_hand, hands[seat].cards, None, lying=True)
        return seat

    def _next_seq(self) -> int:
        seq = self._next_hit_seq
        if seq > U32 - 1:
            raise RuntimeError("hit sequence numbers are exhausted: they may never wrap")
        self._next_hit_seq = seq + 1
        return seq
