"""Tests for the simulated table controller and its reference register map v1."""

from __future__ import annotations

import random
from collections import Counter
from itertools import count
from typing import Any

import pytest

from controller.core.games import Game, default_paytable
from controller.core.hands import HandCategory, card_text, evaluate, parse_cards
from link_adapters.reading import HitHand
from link_adapters.register_map import COMMAND_DISABLE_PROGRESSIVE, COMMAND_HIT_PENDING, hit_hand
from link_adapters.simulator import registers
from link_adapters.simulator.cards import build_hand, draw_keep
from link_adapters.simulator.registers import (
    PROFILE_ID,
    PROFILE_VERSION,
    READ_COUNT,
    apply_write,
    encode_block,
    from_pair,
    u32_pair,
)
from link_adapters.simulator.table import SimTable
from link_adapters.simulator.table_types import (
    DEALT_GAMES,
    U32,
    RoundRecord,
    SimTableConfig,
    all_hits,
    split_credits,
    total_credits,
)

H = HandCategory
SECOND = 1_000_000
T0 = 1_767_225_600_000_000
# The five-card games (Super Sevens and Pai Gow Poker: test_simulator_games.py).
GAMES = [game for game in DEALT_GAMES if game.rules.hand.dealt == 5]
# The five-card poker categories the simulator deals.
POKER = [h for h in HandCategory if h <= HandCategory.ROYAL_FLUSH]


def make_table(game: Game = Game.CARIBBEAN_STUD, seed: int = 7, **options: Any) -> SimTable:
    return SimTable(SimTableConfig(game=game, **options), random.Random(seed))


def play(table: SimTable, rounds: int, start_us: int = T0) -> list[RoundRecord]:
    """``rounds`` rounds one second apart, the controller heartbeating before each."""
    beats = count(1)
    out = []
    for i in range(rounds):
        now = start_us + i * SECOND
        table.heartbeat(next(beats) % 0x10000, now)
        out.append(table.play_round(now))
    return out


def paying(game: Game) -> list[HandCategory]:
    return [line.hand for line in default_paytable(game).lines]


def cards_of(codes: tuple[int, ...]) -> str:
    return " ".join(card_text(card) for card in codes)


# --- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("seats", 0),
        ("seats", 8),
        ("seats", True),
        ("bet_probability_pct", 101),
        ("seat_change_pct", -1),
        ("credits_per_bet", 0),
        ("start_credits", U32),
        ("start_rounds", -1),
        ("first_hit_seq", U32),
        ("first_hit_seq", -1),
        ("heartbeat_timeout_us", 0),
        ("report_cards", 1),
    ],
)
def test_config_refuses_bad_values_naming_the_field(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=field.replace("_", ".")):
        SimTableConfig(game=Game.CARIBBEAN_STUD, **{field: value})


def test_config_needs_a_game_member() -> None:
    with pytest.raises(ValueError, match="game must be a Game"):
        SimTableConfig(game="caribbean_stud")  # type: ignore[arg-type]


# --- building and forcing hands --------------------------------------------------------------


@pytest.mark.parametrize("hand", POKER)
def test_build_hand_makes_the_category_and_avoids_cards(hand: HandCategory) -> None:
    first = build_hand(hand)
    assert evaluate(first).category is hand
    second = build_hand(hand, avoid=first)
    assert evaluate(second).category is hand
    assert not set(first) & set(second)


def test_build_hand_first_choices_are_the_documented_ones() -> None:
    assert cards_of(build_hand(H.ROYAL_FLUSH)) == "As Ks Qs Js Ts"
    assert cards_of(build_hand(H.STRAIGHT_FLUSH)) == "9s 8s 7s 6s 5s"


def test_only_four_royal_flushes_exist() -> None:
    table = make_table()
    royals = []
    for seat in range(1, 5):
        table.force_hand(seat, H.ROYAL_FLUSH)
    with pytest.raises(ValueError, match="no royal flush is left"):
        table.force_hand(5, H.ROYAL_FLUSH)
    table.heartbeat(1, T0)
    record = table.play_round(T0)
    for seat in range(1, 5):
        assert record.hands[seat].category is H.ROYAL_FLUSH
        royals.append(set(record.hands[seat].cards))
    assert len(set().union(*royals)) == 20


@pytest.mark.parametrize(
    ("game", "hand"), [(game, hand) for game in GAMES for hand in paying(game)]
)
def test_forced_paying_hand_is_dealt_and_reported_as_a_hit(game: Game, hand: HandCategory) -> None:
    table = make_table(game, seed=16 * GAMES.index(game) + hand.value)
    play(table, 3)
    before = len(table.hit_fifo)
    table.force_hand(4, hand)
    table.heartbeat(999, T0 + 10 * SECOND)
    record = table.play_round(T0 + 10 * SECOND)

    cards, category = record.hands[4].cards, record.hands[4].category
    assert category is hand
    assert evaluate(cards).category is hand
    assert len(set(cards)) == 5
    assert 4 in record.bet_seats
    [hit] = [hit for hit in record.hits if hit.seat == 4]
    assert (hit.hand, hit.cards, hit.round) == (hand, cards, record.round)
    assert hit in list(table.hit_fifo)[before:]


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("hand", POKER)
def test_every_forced_category_is_real_and_hits_only_if_paid(
    game: Game, hand: HandCategory
) -> None:
    table = make_table(game, seed=3)
    table.heartbeat(1, T0)
    table.force_hand(2, hand)
    record = table.play_round(T0)
    assert evaluate(record.hands[2].cards).category is hand is record.hands[2].category
    seat_hits = [hit for hit in record.hits if hit.seat == 2]
    assert bool(seat_hits) == (hand in paying(game))


def test_caribbean_draw_forced_seat_stands_pat() -> None:
    table = make_table(Game.CARIBBEAN_DRAW)
    table.heartbeat(1, T0)
    table.force_hand(1, H.ONE_PAIR)  # the strategy would otherwise draw three to the pair
    record = table.play_round(T0)
    assert record.hands[1].cards == build_hand(H.ONE_PAIR)


def test_let_it_ride_forced_hand_shares_its_community_cards() -> None:
    table = make_table(Game.LET_IT_RIDE_BONUS)
    table.force_hand(1, H.FLUSH)
    table.force_hand(1, H.STRAIGHT)  # the same seat may be re-forced
    with pytest.raises(ValueError, match="only one seat"):
        table.force_hand(2, H.FLUSH)
    table.heartbeat(1, T0)
    record = table.play_round(T0)
    assert record.hands[1].category is H.STRAIGHT
    assert record.community_cards == record.hands[1].cards[3:]
    for seat_hand in record.hands.values():
        assert seat_hand.cards[3:] == record.community_cards


def test_force_hand_refuses_a_seat_the_table_lacks() -> None:
    table = make_table(seats=3)
    with pytest.raises(ValueError, match="seat must be between 1 and 3"):
        table.force_hand(4, H.FLUSH)


# --- dealing -------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_no_card_is_dealt_twice_in_a_round(game: Game) -> None:
    # Seven seats that always bet and never leave: Caribbean Draw must reshuffle discards.
    table = make_table(game, seed=11, bet_probability_pct=100, seat_change_pct=0)
    for record in play(table, 300):
        assert len(record.hands) == 7
        if game is Game.LET_IT_RIDE_BONUS:
            # Community cards are in every hand: count them once.
            dealt = [card for hand in record.hands.values() for card in hand.cards[:3]]
            dealt += list(record.community_cards)
            assert record.dealer_cards == ()
        else:
            dealt = [card for hand in record.hands.values() for card in hand.cards]
            assert len(record.dealer_cards) == 5
            dealt += list(record.dealer_cards)
        assert len(dealt) == len(set(dealt))
        for hand in record.hands.values():
            assert evaluate(hand.cards).category is hand.category


@pytest.mark.parametrize(
    ("dealt", "kept"),
    [
        ("As Ks Qs Js 9s", "As Ks Qs Js 9s"),  # a flush stands pat
        ("9c 8d 7h 6s 5c", "9c 8d 7h 6s 5c"),  # a straight stands pat
        ("Kc 3d Kh 8s 2c", "Kc Kh"),  # a pair
        ("Kc 3d Kh 3s 2c", "Kc 3d Kh 3s"),  # two pair
        ("7c 7d 7h Ks 2c", "7c 7d 7h"),  # trips
        ("7c 7d 7h 7s 2c", "7c 7d 7h 7s 2c"),  # quads keep the kicker
        ("Ah 9h 5h 2h Kc", "Ah 9h 5h 2h"),  # four to a flush
        ("9c Td Jh Qs 3c", "9c Td Jh Qs"),  # open-ended
        ("Ac 2d 3h 4s 9c", "Ac 2d 3h 4s"),  # four to the wheel
        ("Ac 3d 8h Ts 6c", "Ac Ts"),  # the two highest
    ],
)
def test_caribbean_draw_strategy(dealt: str, kept: str) -> None:
    assert draw_keep(parse_cards(dealt)) == parse_cards(kept)


# --- hits ----------------------------------------------------------------------------------


def test_let_it_ride_never_reports_one_pair_or_high_card() -> None:
    table = make_table(Game.LET_IT_RIDE_BONUS, seed=5, bet_probability_pct=100)
    records = play(table, 1_500)
    betting = Counter(rec.hands[s].category for rec in records for s in rec.bet_seats)
    assert betting[H.ONE_PAIR] > 500 and betting[H.HIGH_CARD] > 500
    hits = all_hits(records)
    assert hits
    assert all(hit.hand >= H.TWO_PAIR for hit in hits)
    assert {hit.hand for hit in hits} <= set(paying(Game.LET_IT_RIDE_BONUS))


@pytest.mark.parametrize("game", DEALT_GAMES)
def test_non_betting_seats_never_hit(game: Game) -> None:
    table = make_table(game, seed=21, bet_probability_pct=40)
    records = play(table, 1_500)
    missed = 0
    for record in records:
        hit_seats = {hit.seat for hit in record.hits}
        assert hit_seats <= set(record.bet_seats)
        for seat, hand in record.hands.items():
            paid = hand.category in table.paying_hands
            assert (seat in hit_seats) == (paid and seat in record.bet_seats)
            missed += paid and seat not in record.bet_seats
    assert missed > 0  # the rule was exercised, not vacuously true


def test_fifo_acknowledge_pops_only_the_matching_head() -> None:
    table = make_table(first_hit_seq=42)
    table.force_hand(1, H.ROYAL_FLUSH)
    table.force_hand(5, H.FLUSH)
    table.heartbeat(1, T0)
    table.play_round(T0)
    first, second = table.hit_fifo[0], table.hit_fifo[1]
    assert (first.seq, first.seat, second.seq, second.seat) == (42, 1, 43, 5)

    assert table.acknowledge(43) is False  # not the head
    assert table.acknowledge(0) is False
    assert table.head_hit == first
    assert table.acknowledge(42) is True
    assert table.head_hit == second
    assert table.acknowledge(42) is False  # acknowledging twice pops nothing more
    assert table.acknowledge(43) is True
    assert table.head_hit is None and len(table.hit_fifo) == 0


def test_sequence_numbers_strictly_increase_across_power_cycles() -> None:
    table = make_table(Game.LET_IT_RIDE_BONUS, seed=9, bet_probability_pct=100)
    seqs: list[int] = []
    for cycle in range(3):
        records = play(table, 200, start_us=T0 + cycle * 1_000 * SECOND)
        seqs += [hit.seq for hit in all_hits(records)]
        table.power_cycle()
        assert table.rounds == 0
    assert len(seqs) > 30
    assert seqs == list(range(1, len(seqs) + 1))
    assert [hit.seq for hit in table.hit_fifo] == seqs  # nothing acknowledged, nothing lost


def test_a_first_hit_may_be_numbered_zero_and_a_cleared_table_numbers_again() -> None:
    table = make_table(first_hit_seq=0)
    table.heartbeat(1, T0)
    table.force_hand(1, H.ROYAL_FLUSH)
    [hit] = table.play_round(T0).hits
    assert hit.seq == 0 and table.head_hit == hit
    assert table.acknowledge(0) is True and table.head_hit is None
    table.power_cycle(memory_cleared=True)
    assert table.next_hit_seq == 0 and table.hit_fifo == type(table.hit_fifo)()
    # The controller's writes are gone with the table's memory: no heartbeat, no bets.
    assert table.progressive_disabled(T0 + SECOND)
    table.heartbeat(2, T0 + SECOND)
    table.force_hand(3, H.ROYAL_FLUSH)
    [again] = table.play_round(T0 + SECOND).hits
    assert again.seq == 0 and again.seat == 3


def test_only_bit0_of_the_command_disables_progressive_wagering() -> None:
    table = make_table(bet_probability_pct=100)
    table.heartbeat(1, T0)
    table.set_command_bits(COMMAND_HIT_PENDING)  # an indicator only (register map v1)
    assert not table.progressive_disabled(T0)
    before = table.credits
    table.play_round(T0)
    assert table.credits > before
    table.set_command_bits(COMMAND_DISABLE_PROGRESSIVE)
    assert table.progressive_disabled(T0)
    before = table.credits
    record = table.play_round(T0 + SECOND)
    assert table.credits == before and record.refused_seats


def test_hit_sequence_numbers_never_wrap() -> None:
    table = make_table(first_hit_seq=U32 - 1)
    table.heartbeat(1, T0)
    table.force_hand(1, H.FLUSH)
    [hit] = table.play_round(T0).hits
    assert hit.seq == U32 - 1
    table.force_hand(1, H.FLUSH)
    with pytest.raises(RuntimeError, match="never wrap"):
        table.play_round(T0 + SECOND)


# --- disabling the progressive -------------------------------------------------------------


def test_no_heartbeat_yet_means_progressive_disabled() -> None:
    table = make_table(bet_probability_pct=100, seat_change_pct=0)
    assert table.progressive_disabled(T0)
    record = table.play_round(T0)
    assert record.bet_seats == () and record.credits == 0
    assert record.refused_seats == tuple(range(1, 8))
    assert len(record.hands) == 7  # the round still deals


def test_heartbeat_timeout_disables_and_fresh_heartbeat_reenables() -> None:
    timeout = 5 * SECOND
    table = make_table(bet_probability_pct=100, seat_change_pct=0, heartbeat_timeout_us=timeout)
    table.heartbeat(1, T0)
    on_time = table.play_round(T0 + timeout)  # exactly the timeout is still fresh
    assert on_time.credits == 7 and table.credits == 7
    assert not encode_block(table, T0 + timeout)[registers.ADDR_STATUS] & 0b1000

    late = T0 + timeout + 1
    assert table.progressive_disabled(late)
    assert table.status_bits(late) & 0b1000
    assert encode_block(table, late)[registers.ADDR_STATUS] & 0b1000
    table.force_hand(3, H.ROYAL_FLUSH)
    refused = table.play_round(late)
    assert refused.credits == 0 and refused.bet_seats == () and refused.hits == ()
    assert refused.hands[3].category is H.ROYAL_FLUSH  # dealt, but no bet, so no hit
    assert table.credits == 7 and table.per_seat_credits == (1,) * 7
    assert table.bet_bitmap == 0

    table.heartbeat(1, late)  # the same value again is not a sign of life
    assert table.progressive_disabled(late)
    table.heartbeat(2, late)
    assert not table.progressive_disabled(late)
    assert table.play_round(late).credits == 7
    assert table.credits == 14


def test_the_table_records_its_longest_wait_for_a_heartbeat() -> None:
    timeout = 5 * SECOND
    table = make_table(heartbeat_timeout_us=timeout)
    assert table.heartbeat_age_us(T0) is None
    table.heartbeat(1, T0)
    table.heartbeat(2, T0 + SECOND)
    table.heartbeat(2, T0 + 4 * SECOND)  # not fresh: the wait goes on
    assert table.heartbeat_gap_max_us == SECOND and table.heartbeat_timeouts == 0
    table.heartbeat(3, T0 + SECOND + timeout)  # exactly the timeout: still on time
    assert table.heartbeat_gap_max_us == timeout and table.heartbeat_timeouts == 0
    assert table.heartbeat_age_us(T0 + 2 * SECOND + timeout) == SECOND
    table.heartbeat(4, T0 + SECOND + 3 * timeout)  # it had disabled the progressive
    assert table.heartbeat_gap_max_us == 2 * timeout and table.heartbeat_timeouts == 1


@pytest.mark.parametrize("bits", [0b01, 0b11])  # bit0, alone or with bit1
def test_command_bits_block_side_bets(bits: int) -> None:
    table = make_table(bet_probability_pct=100, seat_change_pct=0)
    table.heartbeat(1, T0)
    table.set_command_bits(bits)
    assert table.progressive_disabled(T0)
    assert table.play_round(T0).credits == 0
    assert encode_block(table, T0)[registers.ADDR_STATUS] == 0b1000
    table.set_command_bits(0)
    assert table.play_round(T0).credits == 7


def test_lockout_blocks_side_bets_and_status_bits_report_switches() -> None:
    table = make_table(bet_probability_pct=100, seat_change_pct=0)
    table.heartbeat(1, T0)
    table.set_lockout(True)
    assert table.play_round(T0).credits == 0
    table.set_door_open(True)
    table.set_fault(True)
    assert table.status_bits(T0) == 0b0111
    table.set_lockout(False)
    assert table.play_round(T0).credits == 7


# --- counters ------------------------------------------------------------------------------


def test_counters_wrap_at_2_32() -> None:
    table = make_table(
        bet_probability_pct=100,
        seat_change_pct=0,
        credits_per_bet=2,
        start_credits=U32 - 3,
        start_rounds=U32 - 1,
    )
    records = play(table, 3)
    assert table.credits == (U32 - 3 + 3 * 14) % U32 == 39
    assert [record.round for record in records] == [0, 1, 2]
    assert table.rounds == 2
    # The per-seat counters start at the start credits shared out, and always add up to the
    # all-seats counter (modulo 2**32).
    start = split_credits(U32 - 3, 7)
    assert sum(start) == U32 - 3 and max(start) - min(start) <= 1
    assert table.per_seat_credits == tuple(credits + 6 for credits in start)
    assert sum(table.per_seat_credits) % U32 == table.credits
    assert (U32 - 3 + total_credits(records)) % U32 == table.credits


def test_power_cycle_zeroes_counters_but_keeps_the_fifo() -> None:
    table = make_table(start_credits=1000, start_rounds=50, bet_probability_pct=100)
    table.force_hand(2, H.FULL_HOUSE)
    play(table, 5)
    fifo = list(table.hit_fifo)
    assert fifo and table.credits > 1000 and table.bet_bitmap
    table.power_cycle()
    assert (table.credits, table.rounds, table.bet_bitmap) == (0, 0, 0)
    assert table.per_seat_credits == (0,) * 7
    assert list(table.hit_fifo) == fifo
    block = encode_block(table, T0 + 5 * SECOND)
    assert block[3:7] == [0, 0, 0, 0] and block[20:34] == [0] * 14


def test_unused_seats_keep_zero_counters() -> None:
    table = make_table(seats=3, bet_probability_pct=100, seat_change_pct=0)
    play(table, 4)
    assert table.per_seat_credits == (4, 4, 4, 0, 0, 0, 0)
    assert table.bet_bitmap == 0b111


# --- determinism and plausibility -------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_the_same_seed_replays_the_same_rounds(game: Game) -> None:
    first = play(make_table(game, seed=1234), 200)
    again = play(make_table(game, seed=1234), 200)
    other = play(make_table(game, seed=1235), 200)
    assert first == again
    assert first != other


def test_caribbean_stud_frequencies_are_plausible() -> None:
    table = make_table(Game.CARIBBEAN_STUD, seed=2024, start_credits=U32 - 500)
    start = table.credits
    records = play(table, 2_000)

    dealt = Counter(hand.category for record in records for hand in record.hands.values())
    hands = sum(dealt.values())
    assert hands > 5_000
    # Five-card stud odds: one pair 42.3%, two pair 4.75%, three of a kind 2.11%.
    assert 0.39 < dealt[H.ONE_PAIR] / hands < 0.46
    assert 0.035 < dealt[H.TWO_PAIR] / hands < 0.06
    assert 0.012 < dealt[H.THREE_OF_A_KIND] / hands < 0.03

    bets = sum(len(record.bet_seats) for record in records)
    assert 0.5 < bets / hands < 0.7  # 60% of occupied seats bet
    hits = all_hits(records)
    assert 3 <= len(hits) <= 45  # ~0.37% of bets make a flush or better
    assert all(hit.hand >= H.FLUSH for hit in hits)
    assert [hit.seq for hit in hits] == list(range(1, len(hits) + 1))
    # The simulator's own record accounts for every credit, through the wrap.
    assert total_credits(records) == table.total_credits() == bets
    assert (table.credits - start) % U32 == total_credits(records) % U32
    assert table.credits < start  # it did wrap
    per_seat = Counter(seat for record in records for seat in record.bet_seats)
    start_seats = split_credits(U32 - 500, 7)
    assert table.per_seat_credits == tuple(
        (start_seats[seat - 1] + per_seat[seat]) % U32 for seat in range(1, 8)
    )
    assert sum(table.per_seat_credits) % U32 == table.credits
    assert table.all_hits() == hits == list(table.hit_fifo)


# --- register map --------------------------------------------------------------------------


def decode(block: list[int]) -> dict[str, Any]:
    """An independent reading of register map v1, written from DESIGN.md."""
    assert len(block) == 34 and all(0 <= word <= 0xFFFF for word in block)

    def u32(at: int) -> int:
        return block[at] << 16 | block[at + 1]

    return {
        "profile": (block[0], block[1]),
        "status": block[2],
        "rounds": u32(3),
        "credits": u32(5),
        "bitmap": block[7],
        "pending": block[8],
        "seq": u32(9),
        "seat": block[11],
        "hand": block[12],
        "round": u32(13),
        "cards": tuple(block[15:20]),
        "per_seat": tuple(u32(20 + 2 * i) for i in range(7)),
    }


def test_encode_block_round_trips_the_table_state() -> None:
    table = make_table(start_credits=U32 - 2, start_rounds=70_000, bet_probability_pct=100)
    table.force_hand(6, H.STRAIGHT_FLUSH)
    play(table, 1)
    now = T0
    fields = decode(encode_block(table, now))
    head = table.head_hit
    assert head is not None
    assert fields == {
        "profile": (PROFILE_ID, PROFILE_VERSION),
        "status": 0,
        "rounds": table.rounds,
        "credits": table.credits,
        "bitmap": table.bet_bitmap,
        "pending": len(table.hit_fifo),
        "seq": head.seq,
        "seat": 6,
        "hand": 2,  # straight flush on the wire
        "round": 70_001,
        "cards": head.cards,
        "per_seat": table.per_seat_credits,
    }
    assert hit_hand(fields["hand"]) is HitHand[head.hand.name]
    assert evaluate(fields["cards"]).category is H.STRAIGHT_FLUSH
    assert fields["credits"] < 100  # wrapped and still encoded high word first


def test_encode_block_with_an_empty_fifo_and_unreported_cards() -> None:
    table = make_table(report_cards=False, seat_change_pct=0, bet_probability_pct=100)
    fields = decode(encode_block(table, T0))
    assert fields["status"] == 0b1000  # no heartbeat yet
    assert (fields["pending"], fields["seq"], fields["seat"], fields["hand"]) == (0, 0, 0, 0)
    assert (fields["round"], fields["cards"]) == (0, (0,) * 5)

    table.force_hand(7, H.FOUR_OF_A_KIND)
    play(table, 1)
    fields = decode(encode_block(table, T0))
    assert fields["seat"] == 7 and fields["hand"] == 3
    assert fields["cards"] == (0xFFFF,) * 5


def test_apply_write_each_writable_register() -> None:
    table = make_table(first_hit_seq=0x1_0001)  # seq above 16 bits tests the word order
    table.force_hand(1, H.FLUSH)
    apply_write(table, 105, [17], T0)
    assert table.heartbeat_value == 17 and not table.progressive_disabled(T0)
    table.play_round(T0)
    head = table.head_hit
    assert head is not None and head.seq == 0x1_0001

    apply_write(table, 100, [0, 1], T0)  # the low word alone is not this hit
    assert table.head_hit == head
    apply_write(table, 100, list(u32_pair(head.seq)), T0)
    assert table.head_hit is None

    apply_write(table, 102, [0b10], T0)
    assert table.command_bits == 0b10 and not table.progressive_disabled(T0)
    apply_write(table, 102, [0b11], T0)
    assert table.command_bits == 0b11 and table.progressive_disabled(T0)
    apply_write(table, 103, [0x0001, 0x86A0], T0)
    assert table.meter_display_cents == 100_000

    # One request covering the whole write block is applied in address order.
    apply_write(table, 100, [0, 0, 0, 0x0F, 0x4240, 18], T0)
    assert table.command_bits == 0
    assert table.meter_display_cents == 0x0F_4240
    assert table.heartbeat_value == 18


@pytest.mark.parametrize(
    ("address", "values", "message"),
    [
        (2, [1], "register 2 is read-only"),
        (33, [0], "register 33 is read-only"),
        (99, [1, 2], "register 99 is not mapped"),
        (105, [1, 2], "register 106 is not mapped"),
        (100, [1], r"register 100-101 \(hit acknowledge\)"),
        (104, [1, 2], r"register 103-104 \(meter display\)"),
        (102, [0x1_0000], "register 102"),
        (105, [True], "value for register 105 True is not a register value"),
        (100, [0, 0, 0, 1.0], "value for register 103 1.0 is not a register value"),
        (102, [], "register 102 carries no values"),
        (-1, [0], "address -1"),
    ],
)
def test_apply_write_refuses_naming_the_address(
    address: int, values: list[int], message: str
) -> None:
    table = make_table()
    with pytest.raises(ValueError, match=message):
        apply_write(table, address, values, T0)
    assert table.command_bits == 0 and table.heartbeat_value is None  # nothing applied


def test_u32_pairs() -> None:
    assert u32_pair(0x1234_5678) == (0x1234, 0x5678)
    assert from_pair(*u32_pair(U32 - 1)) == U32 - 1
    assert READ_COUNT == 34
    with pytest.raises(ValueError):
        u32_pair(U32)
    with pytest.raises(ValueError):
        from_pair(0x1_0000, 0)
