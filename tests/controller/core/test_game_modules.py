"""Every game as a module: what each declares, how paytables follow its ranking, the par sheet
built from its own odds, and the reducer judging reported cards by the link's game."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from controller.core.games import (
    Game,
    GameRules,
    PaytableError,
    PaytableLine,
    default_paytable,
    make_paytable,
    rules_of,
)
from controller.core.games.five_card import FIVE_CARD_HANDS
from controller.core.hands import HandCategory, parse_cards
from controller.core.odds import JUDGED_ON, line_odds, par_sheet_dict
from controller.core.reducer import EntryKind
from controller.rules import RuleViolation
from tests.controller.core.test_reducer import claim, hit_ready, kinds, new_link, read, table

H = HandCategory
GAMES = list(Game)


@pytest.mark.parametrize("game", GAMES)
def test_each_game_declares_itself_whole(game: Game) -> None:
    rules = rules_of(game)
    assert isinstance(rules, GameRules) and game.rules is rules
    assert rules.label and rules.judged_on and rules.deals_are and game.label == rules.label
    # Best first, no hand twice; within a game a higher category value is a better hand.
    assert list(rules.ranking) == sorted(rules.ranking, reverse=True)
    assert game.lowest_paying_hand is rules.ranking[-1]
    assert rules.hand.counted <= rules.hand.dealt <= rules.register.cards_per_hit
    counts = rules.count()
    assert set(counts.ways) == set(rules.ranking)
    assert all(n > 0 for n in counts.ways.values()) and counts.no_hand >= 0
    assert sum(counts.ways.values()) + counts.no_hand == counts.total
    table_ = default_paytable(game)
    assert [line.hand for line in table_.lines] == [
        hand for hand in rules.ranking if table_.line_for(hand) is not None
    ]
    assert JUDGED_ON[game] == rules.judged_on


def test_the_five_card_games_are_as_they_were() -> None:
    assert Game.CARIBBEAN_STUD.lowest_paying_hand is H.ONE_PAIR
    assert Game.CARIBBEAN_DRAW.lowest_paying_hand is H.ONE_PAIR
    assert Game.LET_IT_RIDE_BONUS.lowest_paying_hand is H.TWO_PAIR
    assert Game.LET_IT_RIDE_BONUS.fixed_wager_cents == 100
    assert Game.CARIBBEAN_STUD.fixed_wager_cents is None
    for game in (Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW, Game.LET_IT_RIDE_BONUS):
        rules = rules_of(game)
        assert rules.count().total == FIVE_CARD_HANDS
        assert rules.register.map_version == 1
    assert rules_of(Game.SUPER_SEVENS).register.map_version == 2
    pai_gow = rules_of(Game.PAI_GOW_POKER).register
    assert pai_gow.cards_per_hit == 7 and pai_gow.joker_code and pai_gow.map_version == 2


def test_the_five_card_judge_agrees_with_every_hand() -> None:
    # Through the Let It Ride bonus's judge: every five-card hand, each category counted once.
    judge = rules_of(Game.LET_IT_RIDE_BONUS).judge
    seen = Counter(judge(hand) for hand in combinations(range(52), 5))
    counts = rules_of(Game.LET_IT_RIDE_BONUS).count()
    assert {h: n for h, n in seen.items() if h is not None} == dict(counts.ways)
    assert seen[None] == counts.no_hand == 1_098_240 + 1_302_540


@pytest.mark.parametrize(
    ("text", "hand"),
    [
        ("five aces", H.FIVE_ACES),
        ("FIVE_ACES", H.FIVE_ACES),
        ("two suited sevens", H.TWO_SUITED_SEVENS),
        ("Three-Suited-Sevens", H.THREE_SUITED_SEVENS),
        ("seven", H.SEVEN),
    ],
)
def test_the_new_hands_have_names_to_read(text: str, hand: HandCategory) -> None:
    assert HandCategory.parse(text) is hand
    assert hand.label == text.lower().replace("_", " ").replace("-", " ")


def test_the_poker_categories_keep_their_values() -> None:
    assert [h.value for h in HandCategory if h <= H.ROYAL_FLUSH] == list(range(10))
    assert H.FIVE_ACES == 10 and H.THREE_SUITED_SEVENS == 15


def test_a_paytable_is_refused_a_hand_its_game_cannot_pay() -> None:
    with pytest.raises(PaytableError) as caught:
        make_paytable(Game.CARIBBEAN_STUD, [{"hand": "FIVE_ACES", "percent_bp": 10_000}])
    message = str(caught.value)
    assert "Caribbean Stud Poker cannot pay a five aces" in message
    assert "royal flush, straight flush" in message and "one pair" in message
    with pytest.raises(PaytableError, match="Pai Gow Poker cannot pay a seven"):
        make_paytable(Game.PAI_GOW_POKER, [PaytableLine(hand=H.SEVEN, fixed_cents=300)])


def test_lines_sort_by_the_game_s_ranking() -> None:
    table_ = make_paytable(
        Game.PAI_GOW_POKER,
        [
            {"hand": "STRAIGHT", "fixed_cents": 100},
            {"hand": "FIVE_ACES", "percent_bp": 10_000},
            {"hand": "ROYAL_FLUSH", "percent_bp": 1_000},
        ],
    )
    assert [line.hand for line in table_.lines] == [H.FIVE_ACES, H.ROYAL_FLUSH, H.STRAIGHT]


@pytest.mark.parametrize("game", GAMES)
def test_the_par_sheet_takes_the_game_s_own_odds(game: Game) -> None:
    rules = rules_of(game)
    paytable = default_paytable(game)
    sheet = par_sheet_dict(paytable, wagers_cents=[100], reset_cents=5_000_00, meter_cents=0)
    assert sheet["deals"] == rules.count().total
    assert [line["ways"] for line in sheet["lines"]] == [
        rules.count().ways[line.hand] for line in paytable.lines
    ]
    assert [o.total for o in line_odds(paytable)] == [rules.count().total] * len(paytable.lines)
    assert sheet["judged_on"] == rules.judged_on and sheet["game"] == rules.label


# --- the reducer judges reported cards by the link's game ------------------------------------

SEVENS = Game.SUPER_SEVENS
PAI_GOW = Game.PAI_GOW_POKER


def test_a_super_sevens_claim_is_judged_on_its_three_cards() -> None:
    state = hit_ready(game=SEVENS)
    out = read(state, 2, 0, head=claim(1, H.THREE_SEVENS, cards=parse_cards("7h 7h 7s")))
    assert out.hits[0].status == "awarded" and out.hits[0].award_cents == 500_00
    refused = read(state, 2, 0, head=claim(1, H.TWO_SEVENS, cards=parse_cards("7h 7h 2s")))
    assert kinds(refused) == [EntryKind.HIT_REFUSED]
    assert "two suited sevens, not the claimed two sevens" in refused.events[0].explanation
    none = read(state, 2, 0, head=claim(1, H.SEVEN, cards=parse_cards("Kh 7h 7s")))
    assert "no Super Sevens hand" in none.events[0].explanation


def test_a_pai_gow_claim_is_judged_on_seven_cards_and_the_joker() -> None:
    state = hit_ready(game=PAI_GOW, paytable=default_paytable(PAI_GOW))
    five_aces = parse_cards("As Ah Ad Ac Jk 2c 3d", joker=True)
    out = read(state, 2, 0, head=claim(1, H.FIVE_ACES, cards=five_aces))
    assert out.hits[0].status == "awarded"
    assert kinds(out) == [EntryKind.AWARD, EntryKind.JACKPOT_RESET]
    short = read(state, 2, 0, head=claim(1, H.FIVE_ACES, cards=five_aces[:5]))
    assert "not a hand: need 7 cards" in short.events[0].explanation


def test_a_five_card_link_still_refuses_the_joker() -> None:
    state = hit_ready()
    out = read(state, 2, 0, head=claim(1, H.ROYAL_FLUSH, cards=(52, 47, 43, 39, 35)))
    assert "not a hand" in out.events[0].explanation


def test_the_super_sevens_table_bets_one_dollar() -> None:
    """68 IAC 10-12-3(b): "a maximum wager of one dollar": fifty cents plays, two dollars
    is refused naming the clause."""
    link = new_link(table(denom=50), game=SEVENS)
    assert link.fixed_pay and link.tables["t1"].config.denomination_cents == 50
    assert new_link(table(denom=100), game=SEVENS).tables["t1"].config.denomination_cents == 100
    with pytest.raises(RuleViolation, match="Super Sevens bet is at most") as caught:
        new_link(table(denom=200), game=SEVENS)
    assert caught.value.clause == "68 IAC 10-12-3(b)"


def test_a_technician_verifies_each_game_on_its_own_cards() -> None:
    from controller.core.verification import HitWorkRefused, confirmed_cards

    sevens = parse_cards("7h 7h 7h")
    got = confirmed_cards(
        hit_id="s#1",
        status="awarded",
        claimed=HandCategory.THREE_SUITED_SEVENS,
        reported=None,
        entered=sevens,
        game=Game.SUPER_SEVENS,
    )
    assert got == sevens
    with pytest.raises(HitWorkRefused, match="not the claimed three suited sevens"):
        confirmed_cards(
            hit_id="s#1",
            status="awarded",
            claimed=HandCategory.THREE_SUITED_SEVENS,
            reported=None,
            entered=parse_cards("7h 7s 7h"),
            game=Game.SUPER_SEVENS,
        )
    five_aces = (*parse_cards("Ac Ad Ah As 2c 3d"), 52)
    assert (
        confirmed_cards(
            hit_id="p#1",
            status="awarded",
            claimed=HandCategory.FIVE_ACES,
            reported=None,
            entered=five_aces,
            game=Game.PAI_GOW_POKER,
        )
        == five_aces
    )
    # A mystery hit or an envy bonus is decided by no cards of its own.
    assert confirmed_cards(
        hit_id="m#1", status="awarded", claimed=HandCategory.MYSTERY, reported=None,
        entered=None, kind="mystery",
    ) == ()  # fmt: skip
