"""Super Sevens and Pai Gow Poker tables of the simulator, as pure models: every hand dealt by
the game's rules and judged by the game's module, forced hands and hits held to the same
judge, map v1 refused, counters that always agree."""

from __future__ import annotations

import random
from collections import Counter
from itertools import count
from typing import Any

import pytest

from controller.core.games import Game
from controller.core.games.pai_gow import setting_problem
from controller.core.hands import JOKER, HandCategory
from link_adapters.simulator.blackjack import deciding, points
from link_adapters.simulator.clock import VirtualClock
from link_adapters.simulator.config import SimConfigError, parse_config
from link_adapters.simulator.gateway import DEFAULT_PORTS, GatewaySpec
from link_adapters.simulator.server import SimFloor
from link_adapters.simulator.table import SimTable
from link_adapters.simulator.table_types import U32, RoundRecord, SimTableConfig

H = HandCategory
SEVENS, PAI_GOW = Game.SUPER_SEVENS, Game.PAI_GOW_POKER
NEW_GAMES = [SEVENS, PAI_GOW]
T0 = 1_767_225_600_000_000
SECOND = 1_000_000
SEVEN_OF = {"c": 20, "d": 21, "h": 22, "s": 23}  # rank 5, suits clubs .. spades
KING_S = 47


def make(game: Game, seed: int = 7, **options: Any) -> SimTable:
    return SimTable(SimTableConfig(game=game, **options), random.Random(seed))


def play(table: SimTable, rounds: int) -> list[RoundRecord]:
    beats = count(1)
    out = []
    for i in range(rounds):
        now = T0 + i * SECOND
        table.heartbeat(next(beats) % 0x10000, now)
        out.append(table.play_round(now))
    return out


# --- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize("game", NEW_GAMES)
def test_the_new_games_speak_map_v2_and_refuse_v1(game: Game) -> None:
    assert SimTableConfig(game=game).register_map == 2
    assert GatewaySpec(game=game, port=0).table_config(1).register_map == 2
    with pytest.raises(ValueError, match=rf"a {game.label} table reports .*register map v2 only"):
        SimTableConfig(game=game, register_map=1)
    with pytest.raises(SimConfigError, match=r"#1: a .* table reports .* register map v2 only"):
        parse_config({"gateway": [{"game": game.value, "port": 0, "register_map": 1}]})
    parsed = parse_config({"gateway": [{"game": game.value, "port": 0}]})
    assert parsed.gateways[0].table_config(1).register_map == 2
    # The five-card games keep map v1 unless told.
    assert SimTableConfig(game=Game.CARIBBEAN_STUD).register_map == 1


def test_pai_gow_tables_have_six_seats_at_most() -> None:
    # Seven stacks of seven, one the dealer's (68 IAC 10-9-12).
    assert SimTableConfig(game=PAI_GOW).seats == 6
    assert SimTableConfig(game=SEVENS).seats == 7
    with pytest.raises(ValueError, match="seats must be at most 6 at a Pai Gow Poker table"):
        SimTableConfig(game=PAI_GOW, seats=7)
    with pytest.raises(SimConfigError, match="seats must be at most 6"):
        parse_config({"gateway": [{"game": "pai_gow_poker", "port": 0, "seats": 7}]})


def test_config_names_every_game_and_refuses_others() -> None:
    with pytest.raises(SimConfigError, match="super_sevens, pai_gow_poker"):
        parse_config({"gateway": [{"game": "baccarat", "port": 0}]})
    specs = parse_config({"gateway": [{"game": "super_sevens"}, {"game": "pai_gow_poker"}]})
    assert [spec.port for spec in specs.gateways] == [15023, 15024]
    assert [DEFAULT_PORTS[g] for g in NEW_GAMES] == [15023, 15024]


# --- Super Sevens ----------------------------------------------------------------------------


def test_super_sevens_deals_blackjack_and_judges_the_deciding_cards() -> None:
    table = make(SEVENS, seed=31, seat_change_pct=0)
    records = play(table, 600)
    judge = SEVENS.rules.judge
    two_sevens = 0
    for record in records:
        shoe = Counter(record.dealer_cards)
        for hand in record.hands.values():
            played = hand.played
            shoe.update(played)
            assert hand.cards == played[: deciding(played)]
            assert hand.category is judge(hand.cards)
            # Hit below 17, stand from 17: the last card was taken below 17.
            assert (points(played) >= 17 and points(played[:-1]) < 17) or len(played) == 2
            if deciding(played) == 3:
                two_sevens += 1
        assert max(shoe.values()) <= 6  # a six-deck shoe
        assert points(record.dealer_cards) >= 17 and points(record.dealer_cards[:-1]) < 17
        for hit in record.hits:
            assert hit.hand is record.hands[hit.seat].category is judge(hit.cards)
            assert 1 <= len(hit.cards) <= 3 and hit.seat in record.bet_seats
    assert two_sevens > 0  # every pair of sevens took its third card


def test_super_sevens_forced_hands_and_hits() -> None:
    table = make(SEVENS, seed=5)
    table.heartbeat(1, T0)
    for seat, hand in enumerate(SEVENS.rules.ranking, start=1):
        table.force_hand(seat, hand)
    # Six copies of each card in the shoe: the sevens of spades run out, hearts follow.
    table.force_hand(6, H.THREE_SUITED_SEVENS)
    record = table.play_round(T0)
    forced = dict(enumerate(SEVENS.rules.ranking, start=1)) | {6: H.THREE_SUITED_SEVENS}
    assert {hit.seat: hit.hand for hit in record.hits}.items() >= forced.items()
    assert record.hands[1].cards == (SEVEN_OF["s"],) * 3
    assert record.hands[6].cards == (SEVEN_OF["h"],) * 3
    dealt = Counter(c for hand in record.hands.values() for c in hand.played)
    assert dealt[SEVEN_OF["s"]] == 6

    claim = (SEVEN_OF["s"], SEVEN_OF["h"], 4)  # two sevens of different suits, then a 3
    table.force_hit(2, H.TWO_SEVENS, claim, level=1)
    record = table.play_round(T0 + 1)
    [hit] = [h for h in record.hits if h.seat == 2]
    assert (hit.hand, hit.cards, hit.level) == (H.TWO_SEVENS, claim, 1)
    assert record.hands[2].played[:3] == claim


@pytest.mark.parametrize(
    ("hand", "cards", "message"),
    [
        # Two sevens on two cards are two sevens (68 IAC 10-12-3(f)(2)), never a seven.
        (H.SEVEN, (SEVEN_OF["s"], SEVEN_OF["h"]), "make two sevens"),
        (H.SEVEN, (SEVEN_OF["s"], KING_S, 4), "reports the 2 cards that decide it"),
        (H.TWO_SUITED_SEVENS, (SEVEN_OF["s"], SEVEN_OF["h"], 4), "make two sevens"),
        (H.SEVEN, (KING_S,), "make no hand the game ranks"),
        (H.ROYAL_FLUSH, (51, 47, 43, 39, 35), "need 1 to 3 cards"),
        (H.THREE_SUITED_SEVENS, (23,) * 7, "more than 6 times"),
    ],
)
def test_a_super_sevens_claim_its_cards_do_not_make_is_refused(
    hand: HandCategory, cards: tuple[int, ...], message: str
) -> None:
    table = make(SEVENS)
    with pytest.raises(ValueError, match=message):
        table.force_hit(1, hand, cards)
    # Asked for by name, a table lies: it reports the claim and deals what it deals.
    if len(cards) <= 3:
        table.heartbeat(1, T0)
        table.force_hit(1, hand, cards, lying=True)
        [hit] = [h for h in table.play_round(T0).hits if h.seat == 1]
        assert (hit.hand, hit.cards) == (hand, cards)


def test_forced_cards_beyond_the_shoe_are_refused() -> None:
    table = make(SEVENS)
    for seat in (1, 2):
        table.force_hand(seat, H.THREE_SUITED_SEVENS)  # all six sevens of spades
    with pytest.raises(ValueError, match="card 23 is already forced for another seat"):
        table.force_hit(3, H.TWO_SUITED_SEVENS, (23, 23, 4))
    table.force_hit(3, H.TWO_SUITED_SEVENS, (22, 22, 4))


# --- Pai Gow Poker ---------------------------------------------------------------------------


def test_pai_gow_deals_seven_stacks_of_seven_and_sets_valid_hands() -> None:
    table = make(PAI_GOW, seed=12, seat_change_pct=0, bet_probability_pct=100)
    records = play(table, 400)
    judge = PAI_GOW.rules.judge
    jokers = 0
    for record in records:
        dealt = [card for hand in record.hands.values() for card in hand.cards]
        dealt += record.dealer_cards
        assert len(record.dealer_cards) == 7 and len(dealt) == len(set(dealt)) == 49
        for hand in record.hands.values():
            assert len(hand.cards) == 7 and hand.category is judge(hand.cards)
            assert hand.setting is not None
            high, low = hand.setting
            assert sorted((*high, *low)) == sorted(hand.cards) and len(low) == 2
            assert setting_problem(high, low) is None  # 68 IAC 10-9-13(a): never a foul
            jokers += JOKER in hand.cards
        for hit in record.hits:
            assert hit.hand is judge(hit.cards) and len(hit.cards) == 7
            assert hit.hand >= H.THREE_OF_A_KIND  # the default paytable pays no less
    assert jokers > 100


def test_pai_gow_forced_hands_and_the_joker() -> None:
    table = make(PAI_GOW, seed=2)
    table.heartbeat(1, T0)
    table.force_hand(1, H.FIVE_ACES)
    with pytest.raises(ValueError, match="no royal flush is left"):
        table.force_hand(2, H.ROYAL_FLUSH)  # every ace is taken
    table.force_hand(2, H.STRAIGHT_FLUSH)
    record = table.play_round(T0)
    assert record.hands[1].cards[:5] == (51, 50, 49, 48, JOKER)
    assert {h.seat: h.hand for h in record.hits if h.seat <= 2} == {
        1: H.FIVE_ACES,
        2: H.STRAIGHT_FLUSH,
    }
    joker_royal = (51, 47, 43, 39, JOKER, 0, 5)  # the joker completes the royal flush
    table.force_hit(3, H.ROYAL_FLUSH, joker_royal, level=2)
    with pytest.raises(ValueError, match="make royal flush at Pai Gow Poker, not five aces"):
        table.force_hit(4, H.FIVE_ACES, joker_royal)
    with pytest.raises(ValueError, match="already forced for another seat"):
        table.force_hit(4, H.ROYAL_FLUSH, (51, 47, 43, 39, 35, 1, 2))
    with pytest.raises(ValueError, match="a Pai Gow Poker progressive hand is one of"):
        table.force_hand(5, H.HIGH_CARD)
    record = table.play_round(T0 + 1)
    [hit] = [h for h in record.hits if h.seat == 3]
    assert (hit.cards, hit.level, record.hands[3].cards) == (joker_royal, 2, joker_royal)


# --- counters and determinism ----------------------------------------------------------------


@pytest.mark.parametrize("game", list(Game))
def test_per_seat_counters_add_up_from_the_start(game: Game) -> None:
    table = make(game, start_credits=U32 - 10, credits_per_bet=3)
    assert sum(table.per_seat_credits) % U32 == table.credits == U32 - 10
    for _ in play(table, 30):
        assert sum(table.per_seat_credits) % U32 == table.credits
    assert table.credits < U32 - 10  # it wrapped


def test_resume_keeps_the_counters_agreeing() -> None:
    table = make(SEVENS)
    with pytest.raises(ValueError, match="adding up to credits 10"):
        table.resume(credits=10, rounds=1, next_hit_seq=1, seat_credits=(1,) * 7)
    table.resume(credits=10, rounds=1, next_hit_seq=1, seat_credits=(4, 0, 0, 6, 0, 0, 0))
    assert table.per_seat_credits == (4, 0, 0, 6, 0, 0, 0)
    table.resume(credits=10, rounds=1, next_hit_seq=1)
    assert table.per_seat_credits == (2, 2, 2, 1, 1, 1, 1)
    six = make(PAI_GOW)
    with pytest.raises(ValueError, match="seats the table does not have"):
        six.resume(credits=1, rounds=0, next_hit_seq=1, seat_credits=(0,) * 6 + (1,))


def test_the_same_seed_deals_the_same_rounds_on_a_virtual_clock() -> None:
    def rounds(seed: int) -> list[object]:
        clock = VirtualClock()
        floor = SimFloor(
            [GatewaySpec(game=game, tables=2, port=0) for game in NEW_GAMES],
            rounds_per_second=1,
            seed=seed,
            now_us=clock.now_us,
            autodeal=False,
        )
        for table in floor.tables.values():
            table.heartbeat(1, clock.now_us())
        dealt: list[object] = []
        for _ in range(40):
            clock.advance(1)
            for table in floor.tables.values():
                table.heartbeat(clock.now_us() % 0xFFFF, clock.now_us())
            dealt.extend(floor.deal_due())
        return dealt

    first, again, other = rounds(17), rounds(17), rounds(18)
    assert len(first) > 100 and first == again and first != other
