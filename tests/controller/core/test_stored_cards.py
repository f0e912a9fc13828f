"""The joker written and read one way everywhere, and cards as a hit record keeps them read
back without ever failing the record: what is wrong is said, the stored text kept."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.api.floor_models import VerifyRequest
from app.api.hit_models import HitRead
from controller.core.games import Game
from controller.core.hands import (
    JOKER,
    JOKER_TEXT,
    JOKER_WORD,
    HandCategory,
    InvalidCards,
    ShownCards,
    card_code,
    card_text,
    card_word,
    parse_cards,
    read_stored_cards,
)
from controller.core.verification import HitWorkRefused, confirmed_cards
from controller.storage.hits import HitRecord

H = HandCategory
FIVE_ACES = (51, 50, 49, 48, JOKER, 0, 5)  # As Ah Ad Ac, the joker, 2c 3d


def test_the_joker_has_one_text_for_files_and_one_word_for_people() -> None:
    assert (JOKER_TEXT, JOKER_WORD) == ("JK", "Joker")
    assert card_text(JOKER, joker=True) == "JK"
    assert card_word(JOKER) == "Joker" and card_word(51) == "As"
    for written in ("JK", "jk", "Jk", "Joker", "JOKER", " joker "):
        assert card_code(written, joker=True) == JOKER
    assert parse_cards("As Ah Ad Ac JK 2c 3d", joker=True) == FIVE_ACES
    # Where the game deals none, the joker is named, not taken for a jack of no suit.
    with pytest.raises(InvalidCards, match="'JK' is the joker, and the joker is not a card"):
        card_code("JK")
    with pytest.raises(InvalidCards, match="outside 0-51"):
        card_text(JOKER)


def test_stored_cards_are_read_back_or_say_what_is_wrong() -> None:
    assert read_stored_cards(None) is None and read_stored_cards(" ") is None
    assert read_stored_cards("51,50,49,48,52,0,5") == FIVE_ACES
    with pytest.raises(InvalidCards, match="the stored cards '51,x' hold 'x', not a card code"):
        read_stored_cards("51,x")
    with pytest.raises(InvalidCards, match="hold 53, outside the card codes 0-52"):
        read_stored_cards("51,53")
    with pytest.raises(InvalidCards, match="hold '-1'"):
        read_stored_cards("51,-1")

    shown = ShownCards.of("51,50,49,48,52,0,5")
    assert shown.problem is None
    assert shown.words() == "As Ah Ad Ac Joker 2c 3d"
    assert shown.compact() == "As Ah Ad Ac JK 2c 3d"
    assert shown.texts() == ["As", "Ah", "Ad", "Ac", "JK", "2c", "3d"]
    none = ShownCards.of(None)
    assert (none.words("not reported"), none.compact(), none.texts()) == (
        "not reported",
        None,
        None,
    )
    bad = ShownCards.of("51,x")
    assert (bad.codes, bad.raw) == (None, "51,x")
    assert bad.words() == bad.compact() == f"unreadable: {bad.problem}"
    assert bad.texts() is None


def test_only_a_game_whose_deck_has_a_joker_takes_it_at_a_verification() -> None:
    common = {"hit_id": "t#1", "status": "awarded", "reported": None}
    assert (
        confirmed_cards(**common, claimed=H.FIVE_ACES, entered=FIVE_ACES, game=Game.PAI_GOW_POKER)
        == FIVE_ACES
    )
    with pytest.raises(HitWorkRefused, match="the joker is not a card of Caribbean Stud"):
        confirmed_cards(
            **common,
            claimed=H.ROYAL_FLUSH,
            entered=(51, 47, 43, 39, JOKER),
            game=Game.CARIBBEAN_STUD,
        )
    # Reported cards with the joker are confirmed by typing them, the joker as people say it.
    typed = VerifyRequest(cards=["As", "Ah", "Ad", "Ac", "Joker", "2c", "3d"]).codes()
    assert typed is not None
    assert (
        confirmed_cards(
            hit_id="t#1",
            status="awarded",
            reported=FIVE_ACES,
            claimed=H.FIVE_ACES,
            entered=typed,
            game=Game.PAI_GOW_POKER,
        )
        == FIVE_ACES
    )


def test_a_hit_whose_record_cannot_be_read_is_shown_with_what_is_wrong() -> None:
    row = HitRecord(
        hit_id="t-1#4",
        link_id="t",
        table_id="t-1",
        table_seq=4,
        seat=2,
        hand="SIX_ACES",
        round=9,
        cards="51,x",
        source="table",
        status="refused",
        award_cents=0,
        paid_from=None,
        settlement_group="g",
        settlement_order=0,
        policy="split",
        refusal="no such hand",
        entered_by=None,
        at_us=1,
        verified_cards="51,50,49,48,52,0,5",
    )
    shown = HitRead.of(row)
    assert shown.hand_label == "SIX_ACES" and shown.cards is None
    assert shown.verified_cards == ["As", "Ah", "Ad", "Ac", "JK", "2c", "3d"]
    assert shown.raw == {"hand": "SIX_ACES", "cards": "51,x"}
    assert shown.problem == (
        "the stored hand 'SIX_ACES' is no hand the controller knows; cards: the stored cards "
        "'51,x' hold 'x', not a card code"
    )
    assert HitRead.of(replace(row, hand="FIVE_ACES", cards=None)).problem is None
