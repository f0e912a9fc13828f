"""Faults of a simulated table controller, each seen only in its registers as the controller
decodes them (``SteppedFloor``: encode_block, then the reference profile's decoding), and the
simulate file's keys that set them.

Counts of rigged hands are held to the exact odds with exact binomial tails (scipy); every
run is seeded, so each figure is the same on every run and the bounds say how far from the
odds it may lie before the test calls the rigging wrong.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import random
import textwrap
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from pymodbus.client import AsyncModbusTcpClient
from scipy.stats import binom, binomtest, chisquare

from controller.core.games import Game
from controller.core.games.five_card import category_counts
from controller.core.hands import HandCategory, evaluate
from link_adapters.reading import HitHand, TableRegisters
from link_adapters.simulator.cards import random_hand, shuffle
from link_adapters.simulator.clock import VirtualClock
from link_adapters.simulator.config import SimConfigError, load_config
from link_adapters.simulator.faults import (
    FaultError,
    RiggedHand,
    TableFaults,
    rigging_chances,
)
from link_adapters.simulator.gateway import GatewaySpec
from link_adapters.simulator.registers import (
    ADDR_BET_BITMAP,
    ADDR_CREDITS,
    ADDR_HEARTBEAT,
    ADDR_ROUNDS,
    ADDR_STATUS,
    READ_COUNT,
    from_pair,
)
from link_adapters.simulator.server import SimFloor
from link_adapters.simulator.stepped_floor import SteppedFloor
from link_adapters.simulator.table import SimTable
from link_adapters.simulator.table_types import U32, RoundRecord, SimTableConfig

H = HandCategory
STUD, DRAW, LIR = Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW, Game.LET_IT_RIDE_BONUS
# Every seat sits and bets every round: each round is seven side bets.
ALL_BET: dict[str, Any] = {"bet_probability_pct": 100, "seat_change_pct": 0}


def table(game: Game = STUD, **options: Any) -> SimTableConfig:
    faults = options.pop("faults", None)
    return SimTableConfig(game=game, **options, faults=faults)


def run(
    configs: Sequence[tuple[str, SimTableConfig]],
    rounds: int,
    *,
    seed: int = 1,
    **floor: Any,
) -> tuple[SteppedFloor, dict[str, list[TableRegisters]]]:
    """Deal ``rounds`` at every table; every table's readings, in order."""
    stepped = SteppedFloor(configs, seed, **floor)
    readings: dict[str, list[TableRegisters]] = {table_id: [] for table_id, _ in configs}
    for reading in stepped.polls(rounds):
        readings[reading.table_id].append(reading.registers)
    return stepped, readings


def heads(readings: list[TableRegisters]) -> list[Any]:
    return [r.head for r in readings if r.head is not None]


def side_bets(readings: list[TableRegisters], per_bet: int = 1) -> int:
    """The side bets the table took over the readings, from its all-seats counter."""
    return ((readings[-1].credits - readings[0].credits) % U32) // per_bet


# --- no fault: the rounds dealt before faults existed ------------------------------------------


def record_text(r: RoundRecord) -> str:
    hands = ";".join(
        f"{s}:{h.cards}:{h.category.name if h.category else None}:{h.played}:{h.setting}"
        for s, h in sorted(r.hands.items())
    )
    hits = ";".join(f"{h.seq}/{h.seat}/{h.hand.name}/{h.round}/{h.cards}/{h.level}" for h in r.hits)
    return (
        f"{r.round}|{r.time_us}|{r.bet_seats}|{r.refused_seats}|{r.credits}|{hands}|{hits}|"
        f"{r.dealer_cards}|{r.community_cards}"
    )


# The digest of the rounds each game dealt (400 of a five-card game, 120 of the others, whose
# deals are slower) by the simulator as it was before a table could have faults or play a
# round in phases: a table without faults must deal them card for card.
ROUNDS = {game: 400 if game.rules.hand.dealt == 5 else 120 for game in Game}
BEFORE_FAULTS = {
    Game.CARIBBEAN_STUD: "003d24e40a9dca1f602528521da58c3afd8db4199c4a53d9de96891cc7f2e61d",
    Game.CARIBBEAN_DRAW: "2d67ca497374c47ab611741e04a92a15828deb94a9befe59166d653b13764d51",
    Game.LET_IT_RIDE_BONUS: "a9321d08155eabc6b96013ca82daa47fce42a55461f2a8c0a20542abbd995e4b",
    Game.SUPER_SEVENS: "ab67b134eced47cde0305d3325ab5aaba15df23493d6f688dd3d4eba46c10484",
    Game.PAI_GOW_POKER: "5f1aac699796e3c9d55fb50137cc1b652f8b919614030f61abb4dc804ae73ded",
}


def rounds_digest(game: Game, *, phased: bool, faults: TableFaults | None = None) -> str:
    sim = SimTable(SimTableConfig(game=game, seat_change_pct=20, faults=faults), random.Random(11))
    digest = hashlib.sha256()
    for i in range(ROUNDS[game]):
        now = 1_000_000 * (i + 1)
        sim.heartbeat(i % 65536, now)
        if i == 50:
            dealt_five = game.rules.hand.dealt == 5
            sim.force_hand(3, H.FOUR_OF_A_KIND if dealt_five else game.rules.ranking[0])
        if i == 100:
            sim.set_lockout(True)
        if i == 105:
            sim.set_lockout(False)
        if phased:
            sim.take_bets(now)
            sim.lock_out(now)
            record = sim.deal(now)
        else:
            record = sim.play_round(now)
        assert (record.faults is None) == (faults is None)
        digest.update(record_text(record).encode())
        while sim.hit_fifo:
            sim.acknowledge(sim.hit_fifo[0].seq)
    return digest.hexdigest()


@pytest.mark.parametrize("game", list(Game))
def test_a_table_without_faults_deals_as_before_at_once_or_in_phases(game: Game) -> None:
    assert rounds_digest(game, phased=False) == BEFORE_FAULTS[game]
    assert rounds_digest(game, phased=True) == BEFORE_FAULTS[game]
    # Faults that do nothing draw nothing either.
    assert rounds_digest(game, phased=True, faults=TableFaults()) == BEFORE_FAULTS[game]


def test_the_fast_shuffle_draws_exactly_as_random_shuffle() -> None:
    for seed in range(300):
        for size in (2, 13, 29, 52):
            ours, theirs = random.Random(seed), random.Random(seed)
            cards, expected = list(range(size)), list(range(size))
            shuffle(ours, cards)
            theirs.shuffle(expected)
            assert cards == expected and ours.getstate() == theirs.getstate()


def test_the_phases_of_a_round_show_in_the_registers_in_order() -> None:
    sim = SimTable(SimTableConfig(game=STUD, **ALL_BET), random.Random(2))
    sim.heartbeat(1, 10)
    with pytest.raises(RuntimeError, match="call take_bets first"):
        sim.lock_out(10)
    sim.take_bets(10)
    assert (sim.rounds, sim.credits, sim.bet_bitmap, sim.status_bits(10) & 1) == (0, 7, 0x7F, 0)
    with pytest.raises(RuntimeError, match="already taken"):
        sim.take_bets(10)
    with pytest.raises(RuntimeError, match="deal it first"):
        sim.play_round(10)
    with pytest.raises(RuntimeError, match="after the lockout"):
        sim.deal(10)
    sim.lock_out(11)
    assert sim.status_bits(11) & 1 and sim.rounds == 0 and sim.round_open
    assert sim.take_late_bet(12) is None  # no late-bet fault
    record = sim.deal(13)
    assert (sim.rounds, record.round, sim.status_bits(13) & 1, sim.round_open) == (1, 1, 0, False)


# --- rigged --------------------------------------------------------------------------------


@pytest.mark.parametrize("game", [STUD, DRAW, LIR])
def test_rigging_chances_make_factor_times_the_odds_exactly(game: Game) -> None:
    for hand in (H.ROYAL_FLUSH, H.STRAIGHT_FLUSH, H.FLUSH):
        p = game.rules.probability(hand)
        for factor in (20, 5, 1.5):
            chances = rigging_chances(game, RiggedHand(hand=hand, factor=factor), 7)
            assert chances[0] == 0
            for n in range(1, 8):
                w = chances[n]
                assert 0 < w <= 1
                # A seat of n: rigged itself with w / n, else dealt as it falls (p) when the
                # round is not rigged, never the hand when another seat is.
                assert (1 - w) * p + w / n == Fraction(factor) * p


@pytest.mark.parametrize("hand", [h for h in HandCategory if h <= H.ROYAL_FLUSH])
def test_random_hands_are_the_category_asked_for(hand: HandCategory) -> None:
    rng = random.Random(int(hand))
    drawn = [random_hand(hand, rng) for _ in range(400)]
    assert all(evaluate(cards).category is hand and len(set(cards)) == 5 for cards in drawn)
    # Drawn among all such hands, not a fixed few.
    assert len(set(map(frozenset, drawn))) >= min(250, category_counts()[hand])


@pytest.mark.parametrize("hand", [H.ROYAL_FLUSH, H.STRAIGHT_FLUSH])
def test_random_hands_are_drawn_uniformly(hand: HandCategory) -> None:
    rng = random.Random(7)
    counts = Counter(frozenset(random_hand(hand, rng)) for _ in range(3600))
    assert len(counts) == category_counts()[hand]  # 4 royal flushes, 36 straight flushes
    assert chisquare(list(counts.values())).pvalue > 0.001


def test_rigged_royal_flushes_come_at_twenty_times_their_odds() -> None:
    faults = TableFaults(rigged=RiggedHand(hand=H.ROYAL_FLUSH, factor=20))
    floor, readings = run(
        [("stud", table(faults=faults, **ALL_BET))], 50_000, seed=20, phases_only=True
    )
    seen = readings["stud"]
    n = side_bets(seen)
    k = sum(h.hand is HitHand.ROYAL_FLUSH for h in heads(seen))
    p = float(STUD.rules.probability(H.ROYAL_FLUSH))
    assert n == 7 * 50_000 and floor.tally("stud").rigged_hands <= k
    # Well within the binomial of twenty times the odds (an exact two-sided test) ...
    assert binomtest(k, n, 20 * p).pvalue > 0.01
    # ... and far out in the tails of the honest odds and of half the factor.
    assert binom.sf(k - 1, n, p) < 1e-8 and binom.sf(k - 1, n, 10 * p) < 0.05


def test_a_rigged_hand_is_exact_though_one_deck_is_shared() -> None:
    """Five times the odds of three of a kind in the Let It Ride bonus, exactly. Forcing each
    seat alone with the chance (factor - 1) p / (1 - p) would miss it: a forced hand fixes
    the community cards the other seats share (and only one seat's can be forced), which
    deals three of a kind about 4.2 times as often instead."""
    faults = TableFaults(rigged=RiggedHand(hand=H.THREE_OF_A_KIND, factor=5))
    _, readings = run([("lir", table(LIR, faults=faults, **ALL_BET))], 5000, seed=4)
    seen = readings["lir"]
    k = sum(h.hand is HitHand.THREE_OF_A_KIND for h in heads(seen))
    n = side_bets(seen)
    p = float(LIR.rules.probability(H.THREE_OF_A_KIND))
    assert n == 7 * 5000
    assert binomtest(k, n, 5 * p).pvalue > 0.01
    assert binom.sf(k - 1, n, 4.6 * p) < 1e-4 and binom.cdf(k, n, 5.4 * p) < 1e-4


def test_rigged_caribbean_draw_deals_real_hands_that_stand_pat() -> None:
    faults = TableFaults(rigged=RiggedHand(hand=H.STRAIGHT_FLUSH, factor=200))
    floor, readings = run(
        [("draw", table(DRAW, faults=faults, **ALL_BET))], 1500, seed=8, keep_records=True
    )
    rigged = [r for r in floor.table("draw").records if r.faults and r.faults.rigged_seat]
    assert rigged and floor.tally("draw").rigged_hands == len(rigged)
    for record in rigged:
        assert record.faults is not None and record.faults.rigged_seat is not None
        seat = record.faults.rigged_seat
        assert record.hands[seat].category is H.STRAIGHT_FLUSH
        assert evaluate(record.hands[seat].cards).category is H.STRAIGHT_FLUSH
        others = [h for s, h in record.hands.items() if s != seat]
        assert all(h.category is not H.STRAIGHT_FLUSH for h in others)
    reported = [h for h in heads(readings["draw"]) if h.hand is HitHand.STRAIGHT_FLUSH]
    assert len(reported) >= len(rigged)
    assert all(evaluate(h.cards).category is H.STRAIGHT_FLUSH for h in reported)


@pytest.mark.parametrize(
    ("game", "rigged", "message"),
    [
        (Game.SUPER_SEVENS, RiggedHand(hand=H.SEVEN, factor=2), "rigs only the five-card games"),
        (Game.PAI_GOW_POKER, RiggedHand(hand=H.FIVE_ACES, factor=2), "rigs only"),
        (STUD, RiggedHand(hand=H.TWO_PAIR, factor=2), "pays no two pair"),
        (LIR, RiggedHand(hand=H.TWO_PAIR, factor=4), "cannot be dealt at 7 seats"),
    ],
)
def test_rigging_what_cannot_be_dealt_is_refused(
    game: Game, rigged: RiggedHand, message: str
) -> None:
    with pytest.raises(FaultError, match=message):
        SimTableConfig(game=game, faults=TableFaults(rigged=rigged))


@pytest.mark.parametrize(
    ("fields", "key"),
    [
        ({"rigged": RiggedHand(hand=H.ROYAL_FLUSH, factor=20)}, None),
        ({"dead_sensor_seat": 8}, "dead_sensor_seat"),
        ({"dead_sensor_seat": True}, "dead_sensor_seat"),
        ({"stuck_sensor_seat": 0}, "stuck_sensor_seat"),
        ({"dead_sensor_seat": 2, "stuck_sensor_seat": 2}, "stuck_sensor_seat"),
        ({"false_claims_per_round": 1.5}, "false_claims_per_round"),
        ({"late_bets_per_round": float("nan")}, "late_bets_per_round"),
        ({"unreported_hand": "flush"}, "unreported_hand"),
    ],
)
def test_table_faults_refuse_bad_values_naming_the_key(
    fields: dict[str, Any], key: str | None
) -> None:
    if key is None:
        assert TableFaults(**fields).rigged == fields["rigged"]
        return
    with pytest.raises(FaultError) as caught:
        TableFaults(**fields)
    assert caught.value.key == key and str(caught.value).startswith(f"{key}: ")
    for factor in (1, 0.5, float("inf"), True):
        with pytest.raises(FaultError, match=r"rigged\.factor: must be a number above 1"):
            RiggedHand(hand=H.FLUSH, factor=factor)


# --- bet sensors ---------------------------------------------------------------------------


def test_a_dead_bet_sensor_never_shows_while_the_seat_bets_and_hits() -> None:
    config = table(faults=TableFaults(dead_sensor_seat=3), **ALL_BET)
    floor = SteppedFloor([("stud", config)], 5, phases_only=True)
    floor.table("stud").force_hand(3, H.ROYAL_FLUSH)
    seen = [r.registers for r in floor.polls(40)]
    assert all(3 not in r.bet_seats for r in seen)
    assert any(r.bet_seats == (1, 2, 4, 5, 6, 7) for r in seen)
    seat3 = [r.per_seat_credits[2] for r in seen if r.per_seat_credits is not None]
    assert seat3[0] == 0 and seat3[-1] == 40  # the chip acceptor counts every bet of seat 3
    assert side_bets(seen) == 7 * 40
    for r in seen:
        assert r.per_seat_credits is not None and sum(r.per_seat_credits) % U32 == r.credits
    royal = [h for h in heads(seen) if h.hand is HitHand.ROYAL_FLUSH]
    assert [h.seat for h in royal][:1] == [3]  # still reported, at the seat the lamp misses


def test_a_stuck_bet_sensor_always_shows_while_credits_count_only_real_bets() -> None:
    config = table(
        bet_probability_pct=50, seat_change_pct=0, faults=TableFaults(stuck_sensor_seat=5)
    )
    floor, readings = run([("stud", config)], 60, seed=6, keep_records=True)
    seen = readings["stud"]
    assert all(5 in r.bet_seats for r in seen)  # before the first round too
    records = floor.table("stud").records
    bet5 = sum(5 in r.bet_seats for r in records)
    assert 0 < bet5 < len(records) == 60
    assert seen[-1].per_seat_credits is not None
    assert seen[-1].per_seat_credits[4] == bet5
    assert all(r.faults is not None and r.faults.sensor_bitmap & 0x10 for r in records)


# --- false claims, unreported hands ---------------------------------------------------------


def test_false_claims_report_the_top_hand_with_cards_that_do_not_make_it() -> None:
    config = table(faults=TableFaults(false_claims_per_round=0.25), bet_probability_pct=70)
    floor, readings = run([("stud", config)], 400, seed=9, phases_only=True)
    seen = readings["stud"]
    claims = [
        (r, r.head)
        for r in seen
        if r.head is not None
        and r.head.hand is HitHand.ROYAL_FLUSH
        and r.head.cards is not None
        and evaluate(r.head.cards).category is not H.ROYAL_FLUSH
    ]
    assert len(claims) == floor.tally("stud").false_claims
    assert binomtest(len(claims), 400, 0.25).pvalue > 0.01
    for reading, head in claims:
        # Claimed in the round just dealt, at a seat the sensors show with a side bet.
        assert head.round == reading.rounds and head.seat in reading.bet_seats


def test_an_unreported_hand_is_dealt_but_never_queued() -> None:
    faults = TableFaults(unreported_hand=H.FLUSH, rigged=RiggedHand(hand=H.FLUSH, factor=10))
    floor, readings = run(
        [("stud", table(faults=faults, **ALL_BET))], 600, seed=3, keep_records=True
    )
    records = floor.table("stud").records
    flushes = [(r, s) for r in records for s in r.bet_seats if r.hands[s].category is H.FLUSH]
    assert len(flushes) > 20 and floor.tally("stud").unreported_hits == len(flushes)
    assert all(r.faults is not None and s in r.faults.unreported_seats for r, s in flushes)
    seen = heads(readings["stud"])
    assert seen and all(h.hand is not HitHand.FLUSH for h in seen)
    # No hit number is spent on them: the table's numbers run on without a gap.
    assert [h.seq for h in seen] == list(range(seen[0].seq, seen[0].seq + len(seen)))


# --- late bets -----------------------------------------------------------------------------


def late_bets_seen(seen: list[TableRegisters]) -> list[tuple[TableRegisters, TableRegisters]]:
    """Consecutive readings, both locked out with the same round counter, the second with
    credits risen: a side bet taken after the lockout."""
    return [
        (a, b)
        for a, b in itertools.pairwise(seen)
        if a.lockout and b.lockout and a.rounds == b.rounds and a.credits != b.credits
    ]


@pytest.mark.parametrize("phases_only", [True, False])
def test_a_late_bet_shows_as_credits_risen_under_the_lockout(phases_only: bool) -> None:
    config = table(
        bet_probability_pct=50, seat_change_pct=0, faults=TableFaults(late_bets_per_round=0.4)
    )
    floor, readings = run([("stud", config)], 120, seed=12, phases_only=phases_only)
    seen = readings["stud"]
    late = late_bets_seen(seen)
    assert len(late) == floor.tally("stud").late_bets
    assert binomtest(len(late), 120, 0.4).pvalue > 0.01
    for before, after in late:
        assert after.credits == before.credits + 1
        added = set(after.bet_seats) - set(before.bet_seats)
        assert len(added) == 1 and set(before.bet_seats) <= set(after.bet_seats)
        seat = added.pop()
        assert before.per_seat_credits is not None and after.per_seat_credits is not None
        assert after.per_seat_credits[seat - 1] == before.per_seat_credits[seat - 1] + 1
    # Every round is seen locked out before its deal, and the deal releases the lockout.
    locked_rounds = {r.rounds for r in seen if r.lockout}
    assert locked_rounds == set(range(120))
    assert not seen[-1].lockout and seen[-1].rounds == 120


def test_a_late_bet_is_refused_while_the_progressive_is_disabled() -> None:
    config = table(faults=TableFaults(late_bets_per_round=1.0), bet_probability_pct=0)
    sim = SimTable(config, random.Random(1))
    sim.heartbeat(1, 0)
    sim.take_bets(0)
    sim.lock_out(0)
    sim.set_command_bits(1)
    assert sim.take_late_bet(0) is None and sim.credits == 0
    record = sim.deal(0)
    assert record.bet_seats == () and len(record.refused_seats) == 1
    assert record.faults is not None and record.faults.late_bet_seat is None


# --- the simulate file ---------------------------------------------------------------------


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sim.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_fault_keys_of_the_simulate_file_build_table_faults(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            """
            [[gateway]]
            game = "caribbean_stud"
            port = 0
            rigged = { hand = "royal_flush", factor = 20 }
            dead_sensor_seat = 3
            stuck_sensor_seat = 5
            false_claims_per_round = 0.001
            late_bets_per_round = 1
            unreported_hand = "flush"
            [[gateway]]
            game = "let_it_ride_bonus"
            port = 0
            """,
        )
    )
    stud, lir = config.gateways
    assert stud.table_config(1).faults == TableFaults(
        rigged=RiggedHand(hand=H.ROYAL_FLUSH, factor=20),
        dead_sensor_seat=3,
        stuck_sensor_seat=5,
        false_claims_per_round=0.001,
        late_bets_per_round=1.0,
        unreported_hand=H.FLUSH,
    )
    assert lir.table_config(1).faults is None


STUD_GATEWAY = '[[gateway]]\ngame = "caribbean_stud"\n'
BAD_FAULTS = {
    "rigged not a table": ('rigged = "royal_flush"', "key 'rigged': must be a table"),
    "rigged unknown key": (
        'rigged = { hand = "royal_flush", factor = 20, seat = 1 }',
        "unknown key 'seat' in 'rigged'",
    ),
    "rigged without factor": (
        'rigged = { hand = "royal_flush" }',
        "key 'rigged.factor' is missing",
    ),
    "rigged hand unknown": (
        'rigged = { hand = "royal", factor = 20 }',
        "key 'rigged.hand': 'royal' is not a hand",
    ),
    "rigged factor one": (
        'rigged = { hand = "royal_flush", factor = 1 }',
        "key 'rigged.factor': must be a number above 1",
    ),
    "rigged factor text": (
        'rigged = { hand = "royal_flush", factor = "20" }',
        "key 'rigged.factor': must be a number",
    ),
    "rigged hand not paid": (
        'rigged = { hand = "two_pair", factor = 2 }',
        "key 'rigged.hand': a Caribbean Draw Poker table pays no two pair",
    ),
    "rigged too often": (
        'rigged = { hand = "flush", factor = 100 }',
        "key 'rigged.factor': flush at 100 times its odds cannot be dealt at 7 seats",
    ),
    "dead seat eight": ("dead_sensor_seat = 8", "key 'dead_sensor_seat': must be a seat 1-7"),
    "dead seat beyond the table": (
        "seats = 5\ndead_sensor_seat = 6",
        "key 'dead_sensor_seat': must be a seat of the table, 1-5",
    ),
    "stuck seat text": ('stuck_sensor_seat = "5"', "key 'stuck_sensor_seat': must be a seat"),
    "dead and stuck": (
        "dead_sensor_seat = 2\nstuck_sensor_seat = 2",
        "key 'stuck_sensor_seat': seat 2's bet sensor cannot be both dead and stuck",
    ),
    "false claims above one": (
        "false_claims_per_round = 1.5",
        "key 'false_claims_per_round': must be a probability from 0 to 1",
    ),
    "late bets text": ('late_bets_per_round = "often"', "key 'late_bets_per_round': must be a"),
    "late bets nan": ("late_bets_per_round = nan", "key 'late_bets_per_round': must be a"),
    "unreported not a hand": ('unreported_hand = "pair"', "key 'unreported_hand': 'pair' is not"),
    "unreported not paid": (
        'unreported_hand = "two_pair"',
        "key 'unreported_hand': a Caribbean Draw Poker table pays no two pair",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FAULTS))
def test_bad_fault_keys_are_refused_naming_file_gateway_and_key(tmp_path: Path, case: str) -> None:
    line, message = BAD_FAULTS[case]
    path = write(tmp_path, f'{STUD_GATEWAY}[[gateway]]\ngame = "caribbean_draw"\n{line}\n')
    with pytest.raises(SimConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: [[gateway]] #2: ")
    assert message in str(caught.value), str(caught.value)


def test_rigging_super_sevens_in_the_simulate_file_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path, '[[gateway]]\ngame = "super_sevens"\nrigged = { hand = "seven", factor = 2 }\n'
    )
    with pytest.raises(SimConfigError, match=r"#1: key 'rigged': the simulator rigs only"):
        load_config(path)


# --- served over Modbus -----------------------------------------------------------------------


@contextlib.asynccontextmanager
async def serving(floor: SimFloor) -> AsyncIterator[SimFloor]:
    await floor.start()
    try:
        yield floor
    finally:
        await floor.stop()


async def test_a_served_table_with_late_bets_shows_them_to_a_modbus_poll(tmp_path: Path) -> None:
    """From the simulate file to the wire: the served table deals its rounds in phases and a
    poll reads a bet taken while the bets are locked out."""
    config = load_config(
        write(
            tmp_path,
            """
            seed = 5
            rounds_per_second = 0.05
            [[gateway]]
            game = "caribbean_stud"
            port = 0
            tables = 1
            bet_probability_pct = 40
            late_bets_per_round = 1
            """,
        )
    )
    clock = VirtualClock()
    floor = SimFloor(
        config.gateways,
        rounds_per_second=config.rounds_per_second,
        seed=config.seed,
        now_us=clock.now_us,
        autodeal=False,
    )
    async with serving(floor):
        client = AsyncModbusTcpClient("127.0.0.1", port=floor.ports["caribbean_stud"], timeout=2)
        assert await client.connect()
        try:
            blocks = []
            for beat in range(1, 121):  # two minutes, a poll a second: about six rounds
                clock.advance(1)
                written = await client.write_register(ADDR_HEARTBEAT, beat, device_id=1)
                assert not written.isError()
                floor.deal_due()
                response = await client.read_holding_registers(0, count=READ_COUNT, device_id=1)
                assert not response.isError()
                blocks.append(list(response.registers))
        finally:
            client.close()
    records = floor.records()[("caribbean_stud", 1)]
    late = [r for r in records if r.faults is not None and r.faults.late_bet_seat is not None]
    assert len(records) >= 4 and late

    def u32(block: list[int], address: int) -> int:
        return from_pair(block[address], block[address + 1])

    seen_late = [
        (a, b)
        for a, b in itertools.pairwise(blocks)
        if a[ADDR_STATUS] & 1
        and b[ADDR_STATUS] & 1
        and u32(a, ADDR_ROUNDS) == u32(b, ADDR_ROUNDS)
        and u32(b, ADDR_CREDITS) == u32(a, ADDR_CREDITS) + 1
    ]
    assert len(seen_late) == len(late)
    for a, b in seen_late:
        assert b[ADDR_BET_BITMAP] & ~a[ADDR_BET_BITMAP] in {1 << s for s in range(7)}


def test_a_table_dealing_in_phases_survives_a_power_cycle_mid_round() -> None:
    clock = VirtualClock()
    config = table(heartbeat_timeout_us=10**12, faults=TableFaults(late_bets_per_round=0.5))
    spec = GatewaySpec(game=STUD, tables=1, port=0, table=config)
    floor = SimFloor([spec], rounds_per_second=1 / 60, seed=2, now_us=clock.now_us, autodeal=False)
    sim = floor.tables[("caribbean_stud", 1)]
    sim.heartbeat(1, clock.now_us())
    cycled = False
    for _ in range(600):
        clock.advance(1)
        floor.deal_due()
        if sim.round_open and sim.rounds == 3 and not cycled:
            floor.power_cycle("caribbean_stud", 1)
            sim.heartbeat(2, clock.now_us())
            cycled = True
    assert cycled
    # The round cut by the power cycle is lost; the table counts its rounds from 1 again and
    # deals on in phases, about one a minute.
    rounds = [r.round for r in floor.records()[("caribbean_stud", 1)]]
    after = len(rounds) - 3
    assert rounds == [1, 2, 3, *range(1, after + 1)] and after >= 5 and sim.rounds == after
