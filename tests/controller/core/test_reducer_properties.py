"""Property tests for controller.core.reducer: arbitrary operation sequences on a 2-3 table link.

After every step:
  (1) conservation from the events alone, and each event starts where the previous one ended,
      by the reducer's own statement of it (controller.core.reducer.conservation), summed over
      the run;
  (2) the meter equals an independent model kept by this test, to the unit;
  (3) no negative contribution, no negative meter, every reduction an award or a correction
      with its reference;
  (4) the events sealed with controller.core.ledger verify whole with ChainVerifier.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from controller.core.games import Game, make_paytable
from controller.core.hands import HandCategory, evaluate, parse_cards
from controller.core.ledger import GENESIS, ChainHead, ChainVerifier, seal
from controller.core.reducer import (
    EngineError,
    EntryKind,
    HitClaim,
    HitPolicy,
    MeterTerms,
    Outcome,
    TableConfig,
    TableReading,
    apply_correction,
    apply_reading,
    approve_anomaly,
    change_rate,
    change_reset_amount,
    check_conservation,
    open_link,
    reject_anomaly,
    release_table,
    table_offline,
)
from controller.rules import RuleViolation
from controller.rules.jurisdictions import INDIANA

H = HandCategory
K = EntryKind
SEC = 1_000_000
T0 = 1_700_000_000 * SEC
U32 = 2**32
UNITS_PER_CENT = 10_000
KEY = b"property-test-key"
STUD = Game.CARIBBEAN_STUD

# One sample hand per category, checked against the evaluator once.
SAMPLE_CARDS = {
    H.ROYAL_FLUSH: parse_cards("As Ks Qs Js Ts"),
    H.STRAIGHT_FLUSH: parse_cards("9h 8h 7h 6h 5h"),
    H.FOUR_OF_A_KIND: parse_cards("9c 9d 9h 9s 2c"),
    H.FULL_HOUSE: parse_cards("Kc Kd Kh 2s 2c"),
    H.FLUSH: parse_cards("2d 5d 9d Jd Kd"),
    H.STRAIGHT: parse_cards("9c 8d 7h 6s 5c"),
    H.THREE_OF_A_KIND: parse_cards("7c 7d 7h Ks 2c"),
    H.TWO_PAIR: parse_cards("7c 7d Kh Ks 2c"),
    H.ONE_PAIR: parse_cards("7c 7d Kh Qs 2c"),
    H.HIGH_CARD: parse_cards("2c 5d 9h Js Kc"),
}
CATEGORY_OF = {cards: hand for hand, cards in SAMPLE_CARDS.items()}
for _hand, _cards in SAMPLE_CARDS.items():
    assert evaluate(_cards).category is _hand

# The model's own view of the paytables: hand -> ("pct", bp) or ("fixed", cents).
MODEL_PAYTABLES = {
    "default": {
        H.ROYAL_FLUSH: ("pct", 10_000),
        H.STRAIGHT_FLUSH: ("pct", 1_000),
        H.FOUR_OF_A_KIND: ("fixed", 500_00),
        H.FULL_HOUSE: ("fixed", 100_00),
        H.FLUSH: ("fixed", 50_00),
    },
    "three_from_meter": {
        H.ROYAL_FLUSH: ("pct", 10_000),
        H.STRAIGHT_FLUSH: ("pct", 2_500),
        H.FOUR_OF_A_KIND: ("pct", 137),
        H.FULL_HOUSE: ("fixed", 100_00),
        H.STRAIGHT: ("fixed", 10_00),
    },
}


def engine_paytable(model):
    lines = [
        {"hand": hand.name, ("percent_bp" if kind == "pct" else "fixed_cents"): amount}
        for hand, (kind, amount) in model.items()
    ]
    return make_paytable(STUD, lines)


def is_reset_of(ev, key: str) -> bool:
    """A TABLE_COUNTER_RESET event about the credits or about the hit numbering."""
    if ev.kind is not K.TABLE_COUNTER_RESET:
        return False
    d = json.loads(ev.details) if isinstance(ev.details, str) else ev.details
    return key in d


CLAIM_HANDS = [H.ROYAL_FLUSH, H.STRAIGHT_FLUSH, H.FOUR_OF_A_KIND, H.FULL_HOUSE, H.FLUSH,
               H.STRAIGHT, H.TWO_PAIR, H.HIGH_CARD]  # fmt: skip


@dataclass
class TableModel:
    tid: str
    denom: int
    seats: int
    max_credits: int
    min_round_us: int
    poll_seq: int = 0
    credits: int | None = None
    at_us: int | None = None
    next_hit_seq: int = 1
    last_taken_seq: int = 0
    epoch: int = 0
    round_no: int = 0
    last_claim: HitClaim | None = None
    # A reading has shown the last hit taken no longer at the head: the table dropped it, and
    # from then on any head, even one numbered like it, is a new hit.
    head_gone: bool = False
    hit_pending: bool = False
    online: bool = True

    @property
    def per_round(self) -> int:
        return self.seats * self.max_credits


class Run:
    """The engine state, the test's own model of it, and the running checks."""

    def __init__(self, data):
        self.draw = data.draw
        self.policy = self.draw(st.sampled_from(list(HitPolicy)), label="policy")
        self.paytable = MODEL_PAYTABLES[self.draw(st.sampled_from(sorted(MODEL_PAYTABLES)))]
        self.rate = self.draw(st.integers(6_000, 10_000), label="rate")
        self.reset_cents = self.draw(st.integers(0, 50_000_00), label="reset")
        n_tables = self.draw(st.integers(2, 3), label="tables")
        self.tables = [
            TableModel(
                tid=f"t{i + 1}",
                denom=self.draw(st.sampled_from([1, 5, 25, 100, 500])),
                seats=self.draw(st.integers(1, 7)),
                max_credits=self.draw(st.integers(1, 3)),
                min_round_us=self.draw(st.sampled_from([5 * SEC, 10 * SEC, 30 * SEC])),
            )
            for i in range(n_tables)
        ]
        self.now = T0
        # The newest entry's time: the engine records nothing before it, even when the clock
        # has gone back (op_time_backwards), so the model's readings are taken at
        # max(now, last_at) too.
        self.last_at = T0
        self.jackpot_won = False
        self.held = []  # (anomaly, units the model expects)
        self.hit_ids: set[str] = set()
        self.corrections = 0
        # Conservation terms from the events alone, over the whole run.
        self.terms = MeterTerms()
        self.last_seq, self.last_hash = 0, GENESIS
        self.verifier = ChainVerifier(KEY, "L")

        out = open_link(
            law=INDIANA,
            link_id="L",
            game=STUD,
            rate_bp=self.rate,
            reset_cents=self.reset_cents,
            paytable=engine_paytable(self.paytable),
            tables=[
                TableConfig(
                    table_id=t.tid,
                    denomination_cents=t.denom,
                    seats=t.seats,
                    max_credits_per_seat_round=t.max_credits,
                    min_round_us=t.min_round_us,
                )
                for t in self.tables
            ],
            at_us=self.now,
            hit_policy=self.policy,
        )
        self.meter = self.reset_cents * UNITS_PER_CENT
        self.state = None
        self.take(out)

    # --- the checks -------------------------------------------------------------------------

    def take(self, out: Outcome) -> None:
        # Nothing made or lost between steps or within one: each entry starts where the meter
        # stood, moves it only as its kind's term may, and the state ends where they do.
        before = 0 if self.state is None else self.state.meter_units
        step = check_conservation("L", before, out.events, out.state.meter_units)
        self.terms = self.terms.plus(step)
        for ev in out.events:
            assert ev.at_us == max(self.now, self.last_at), ev  # never back in time
            self.last_at = ev.at_us
            assert ev.meter_after_units >= 0
            if ev.kind is K.AWARD:
                assert ev.hit_id, ev
            elif ev.kind is K.CORRECTION:
                assert ev.correction_id and ev.explanation.strip(), ev
        self.state = out.state
        m = self.state.meter_units
        assert m >= 0
        assert m == self.terms.net_units  # the link opened at zero
        assert m == self.meter, (m, self.meter)
        assert self.state.jackpot_won_since_rate_set is self.jackpot_won
        assert self.state.rate_bp == self.rate
        for t in self.tables:
            ts = self.state.tables[t.tid]
            assert ts.hit_pending is t.hit_pending
            assert ts.online is t.online
        entries = seal(KEY, "L", out.events, last_seq=self.last_seq, last_hash=self.last_hash)
        for entry in entries:
            problem = self.verifier.feed([*entry.as_row().values()])
            assert problem is None, str(problem)
            self.last_seq, self.last_hash = entry.seq, entry.hash

    def finish(self) -> None:
        head = ChainHead(self.last_seq, self.last_hash, self.state.meter_units)
        assert self.verifier.finish(head) is None

    def unchanged(self, out: Outcome) -> None:
        assert out.changed is False
        assert out.state is self.state

    # --- readings ---------------------------------------------------------------------------

    def tick(self) -> None:
        self.now += self.draw(st.integers(0, 40 * SEC), label="elapsed")

    def at(self) -> int:
        """When a reading taken now is recorded."""
        return max(self.now, self.last_at)

    def limit(self, t: TableModel) -> int:
        """What the table can physically take: seats x credits per round x rounds possible,
        over the time between the table's recorded readings."""
        elapsed = max(0, self.at() - t.at_us) if t.at_us is not None else 0
        return t.per_round * (elapsed // t.min_round_us + 1)

    def small_step(self, t: TableModel) -> int:
        if t.credits is None:
            return self.draw(st.one_of(st.integers(0, 1000), st.integers(U32 - 20, U32 - 1)))
        return (t.credits + self.draw(st.integers(0, t.per_round))) % U32

    def reading(self, t: TableModel, credits: int, *, head=None, pending=0) -> Outcome:
        t.poll_seq += 1
        if t.last_claim is not None and head != t.last_claim:
            t.head_gone = True
        out = apply_reading(
            self.state,
            TableReading(
                table_id=t.tid,
                poll_seq=t.poll_seq,
                at_us=self.now,
                credits=credits,
                pending_hits=pending,
                head_hit=head,
            ),
        )
        found = [e.kind for e in out.events]
        if not t.online:
            assert found[0] is K.TABLE_ONLINE
            t.online = True
        contributed = sum(e.delta_units for e in out.events if e.kind is K.CONTRIBUTION)
        restarts = [e for e in out.events if is_reset_of(e, "credits_before")]
        expected, expect_restart, expect_anomaly = 0, False, False
        if t.credits is None:
            assert K.TABLE_BASELINE in found
        else:
            delta = (credits - t.credits) % U32
            if delta <= self.limit(t):
                expected = delta * t.denom * self.rate
                if credits < t.credits:
                    event("counter wrap")
            elif credits < t.credits:  # backwards by a large amount: the table restarted
                event("counter restart")
                expect_restart = True
                expected = credits * t.denom * self.rate
            else:
                expect_anomaly = True
                event("anomaly held")
                (anomaly,) = out.anomalies
                units = delta * t.denom * self.rate
                assert anomaly.credits == delta and anomaly.units == units
                self.held.append((anomaly, units))
        assert contributed == expected
        assert bool(restarts) is expect_restart
        assert (K.ANOMALY_HELD in found) is expect_anomaly
        if not expect_anomaly:
            assert out.anomalies == ()
        self.meter += expected
        t.credits, t.at_us = credits, self.at()
        return out

    def op_reading(self) -> None:
        t = self.draw(st.sampled_from(self.tables))
        self.tick()
        credits = self.small_step(t)
        if t.credits is not None:
            what = self.draw(st.sampled_from(["small", "jump", "top", "restart"]))
            limit = self.limit(t)
            if what == "jump" and t.credits + limit + 1 < U32:
                credits = self.draw(
                    st.integers(t.credits + limit + 1, min(U32 - 1, t.credits + limit + 10**6))
                )
            elif what == "top" and t.credits + limit < U32 - 20:
                credits = self.draw(st.integers(U32 - 20, U32 - 1))
            elif what == "restart":
                low = self.draw(st.integers(0, t.per_round))
                if low < t.credits and (low - t.credits) % U32 > limit:
                    credits = low
        head = None
        if t.last_claim is not None and not t.head_gone and self.draw(st.booleans()):
            head = t.last_claim  # the last hit taken, still at the head: never paid twice
        out = self.reading(t, credits, head=head, pending=1 if head else 0)
        assert out.hits == ()
        self.take(out)

    def op_replay(self) -> None:
        t = self.draw(st.sampled_from(self.tables))
        if t.poll_seq == 0:
            return
        seq = self.draw(st.integers(0, t.poll_seq))
        out = apply_reading(
            self.state,
            TableReading(
                table_id=t.tid,
                poll_seq=seq,
                at_us=self.now,
                credits=self.draw(st.integers(0, U32 - 1)),
                pending_hits=1,
                head_hit=HitClaim(
                    table_seq=t.next_hit_seq + 5, seat=1, hand=H.ROYAL_FLUSH, round=0
                ),
            ),
        )
        self.unchanged(out)

    def op_time_backwards(self) -> None:
        self.now -= self.draw(st.integers(1, 120 * SEC))

    # --- hits -------------------------------------------------------------------------------

    def draw_claim(self, t: TableModel, hand: HandCategory | None = None) -> HitClaim:
        if hand is None:
            hand = self.draw(st.sampled_from(CLAIM_HANDS), label="hand")
        cards_mode = self.draw(st.sampled_from(["none", "match", "mismatch"]))
        cards = None
        if cards_mode == "match":
            cards = SAMPLE_CARDS[hand]
        elif cards_mode == "mismatch":
            other = self.draw(st.sampled_from([h for h in SAMPLE_CARDS if h is not hand]))
            cards = SAMPLE_CARDS[other]
        seq = t.next_hit_seq
        t.next_hit_seq += 1
        return HitClaim(
            table_seq=seq,
            seat=self.draw(st.integers(1, 8)),
            hand=hand,
            round=t.round_no,
            cards=cards,
        )

    def op_hit_round(self) -> None:
        t = self.draw(st.sampled_from(self.tables))
        t.round_no += 1
        n = self.draw(st.integers(1, 3), label="hits")
        # Often every claim of the round is the same meter-paid hand, so they share one award.
        same = self.draw(st.sampled_from([None, H.ROYAL_FLUSH, H.STRAIGHT_FLUSH, H.FOUR_OF_A_KIND]))
        claims = [self.draw_claim(t, same) for _ in range(n)]
        event(f"hit round of {n}, {self.policy}" + (" (one hand)" if same and n > 1 else ""))
        for i, claim in enumerate(claims):
            pending = len(claims) - i
            # While our ack has not landed the table shows the same head again.
            for shown in range(1 + (self.draw(st.integers(0, 1)) if pending > 1 else 0)):
                self.tick()
                # A number not above the last one taken, once that hit is gone, is a restart.
                numbering_restarted = claim.table_seq <= t.last_taken_seq and shown == 0
                out = self.reading(t, self.small_step(t), head=claim, pending=pending)
                seq_resets = [e for e in out.events if is_reset_of(e, "hit_seq_before")]
                assert bool(seq_resets) is numbering_restarted
                if numbering_restarted:
                    t.epoch += 1
                    event("hit numbering restart")
                t.last_taken_seq = claim.table_seq
                t.last_claim = claim
                t.head_gone = False
                if pending > 1:
                    assert out.hits == ()
                else:
                    self.settle(t, claims, out)
                self.take(out)
        assert self.state.tables[t.tid].open_claims == ()

    def settle(self, t: TableModel, claims: list[HitClaim], out: Outcome) -> None:
        valid, refused = [], []
        for c in claims:
            ok = (
                1 <= c.seat <= t.seats
                and (c.cards is None or CATEGORY_OF[c.cards] is c.hand)
                and c.hand in self.paytable
            )
            (valid if ok else refused).append(c)
        if self.policy is HitPolicy.SPLIT:
            valid = sorted(valid, key=lambda c: c.hand, reverse=True)  # stable: best hand first
        award: dict[int, int] = {}
        m = self.meter
        i = 0
        while i < len(valid):
            kind, amount = self.paytable[valid[i].hand]
            group = [valid[i]]
            if self.policy is HitPolicy.SPLIT and kind == "pct":
                group = [c for c in valid[i:] if c.hand is valid[i].hand]
            if kind == "pct":
                total = (m // UNITS_PER_CENT) * amount // 10_000
                share, leftover = divmod(total, len(group))
                if leftover and len(group) > 1:
                    event("split with a leftover cent")
                for k, c in enumerate(group):
                    award[c.table_seq] = share + (leftover if k == 0 else 0)
                m -= total * UNITS_PER_CENT
                if amount == 10_000:
                    m += self.reset_cents * UNITS_PER_CENT
                    self.jackpot_won = True
            else:
                for c in group:
                    award[c.table_seq] = amount
            i += len(group)
        self.meter = m

        got = {h.claim.table_seq: h for h in out.hits}
        assert len(got) == len(out.hits) == len(claims)
        for c in refused:
            assert got[c.table_seq].status == "refused"
            assert got[c.table_seq].award_cents == 0
        for seq, cents in award.items():
            assert got[seq].status == "awarded"
            assert got[seq].award_cents == cents, (seq, got[seq], cents)
        for h in out.hits:
            assert h.hit_id not in self.hit_ids, h.hit_id
            self.hit_ids.add(h.hit_id)
            assert h.hit_id.startswith(f"{t.tid}#")
            if t.epoch == 0:
                assert h.hit_id == f"{t.tid}#{h.claim.table_seq}"
        # Held for a technician after a meter-paid award or a refused claim, not a fixed payout.
        pct_paid = any(self.paytable[c.hand][0] == "pct" for c in valid)
        t.hit_pending = t.hit_pending or bool(refused) or pct_paid

    def op_numbering_restart(self) -> None:
        t = self.draw(st.sampled_from(self.tables))
        if t.last_taken_seq >= 1:
            t.next_hit_seq = self.draw(st.integers(0, t.last_taken_seq))

    def op_release(self) -> None:
        t = self.draw(st.sampled_from(self.tables))
        if not t.hit_pending:
            with pytest.raises(EngineError):
                release_table(self.state, table_id=t.tid, at_us=self.now, by="tech")
            return
        out = release_table(self.state, table_id=t.tid, at_us=self.now, by="tech")
        assert [e.kind for e in out.events] == [K.TABLE_RELEASED]
        t.hit_pending = False
        self.take(out)

    def op_offline(self) -> None:
        t = self.draw(st.sampled_from(self.tables))
        out = table_offline(self.state, table_id=t.tid, at_us=self.now, reason="no answer")
        if not t.online:
            self.unchanged(out)
            return
        t.online = False
        self.take(out)

    # --- reviews, corrections, configuration ------------------------------------------------

    def op_review(self) -> None:
        if not self.held:
            return
        anomaly, units = self.held.pop(self.draw(st.integers(0, len(self.held) - 1)))
        if self.draw(st.booleans()):
            out = approve_anomaly(self.state, anomaly, at_us=self.now, reviewer="Ann")
            event("anomaly approved")
            self.meter += units
        else:
            out = reject_anomaly(
                self.state, anomaly, at_us=self.now, reviewer="Ann", reason="glitch"
            )
        self.take(out)

    def op_correction(self) -> None:
        self.corrections += 1
        cid = f"c{self.corrections}"
        if self.draw(st.booleans()):
            delta = self.draw(st.integers(1, 10**9))
        else:
            delta = -self.draw(st.integers(1, self.meter + 10))
        doc = "ab" * 32 if delta > 0 or self.draw(st.integers(0, 4)) else None
        kwargs = dict(correction_id=cid, delta_units=delta, reason="audit", at_us=self.now)
        if delta < 0 and doc is None:
            with pytest.raises(RuleViolation):
                apply_correction(self.state, **kwargs, document_sha256=None)
            return
        if self.meter + delta < 0:
            with pytest.raises(EngineError):
                apply_correction(self.state, **kwargs, document_sha256=doc)
            return
        out = apply_correction(self.state, **kwargs, document_sha256=doc)
        self.meter += delta
        self.take(out)

    def op_change_rate(self) -> None:
        rate = self.draw(st.one_of(st.integers(6_000, 10_000), st.sampled_from([5_999, 10_001])))
        allowed = 6_000 <= rate <= 10_000 and (self.jackpot_won or rate == self.rate)
        if not allowed:
            with pytest.raises(RuleViolation):
                change_rate(self.state, rate_bp=rate, at_us=self.now, by="Ann")
            return
        out = change_rate(self.state, rate_bp=rate, at_us=self.now, by="Ann")
        event("rate changed" if rate != self.rate else "rate restated")
        self.rate = rate
        self.jackpot_won = False
        self.take(out)

    def op_change_reset(self) -> None:
        self.reset_cents = self.draw(st.integers(0, 50_000_00))
        self.take(
            change_reset_amount(self.state, reset_cents=self.reset_cents, at_us=self.now, by="Ann")
        )


OPS = [
    "op_reading", "op_reading", "op_reading", "op_hit_round", "op_hit_round", "op_replay",
    "op_time_backwards", "op_numbering_restart", "op_release", "op_offline", "op_review",
    "op_correction", "op_change_rate", "op_change_reset",
]  # fmt: skip


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_any_sequence_of_operations_keeps_every_invariant(data):
    run = Run(data)
    for _ in range(data.draw(st.integers(1, 40), label="steps")):
        getattr(run, data.draw(st.sampled_from(OPS), label="op"))()
    run.finish()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_hit_heavy_sequences(data):
    """Mostly hits and readings, so multi-hit rounds land on well-funded meters."""
    run = Run(data)
    for t in run.tables:
        run.tick()
        run.take(run.reading(t, run.small_step(t)))
    for _ in range(data.draw(st.integers(1, 25), label="steps")):
        op = data.draw(
            st.sampled_from(
                ["op_reading", "op_hit_round", "op_hit_round", "op_release", "op_numbering_restart"]
            )
        )
        getattr(run, op)()
    run.finish()
