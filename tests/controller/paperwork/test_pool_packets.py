"""The packets of a link of levels with a mystery level, of a mixed Stud and Draw link and of a
fixed-pay Let It Ride link, in JSON and in PDF, built from the link as it was opened."""

from __future__ import annotations

import json
from typing import Any

from controller.core.games import Game, PaytableLine, default_paytable, make_paytable
from controller.core.hands import HandCategory
from controller.core.reducer import LinkState, TableConfig, open_link
from controller.core.reducer.levels import MysteryDraw
from controller.paperwork.governance import PacketFacts, build_packet, packet_json, packet_pdf
from controller.paperwork.pool_packet import (
    current_terms,
    level_meters_cents,
    new_link_proposal,
    table_games,
)
from controller.rules.filing import Proposal, SubmissionKind
from tests.controller.core.test_levels import GRAND, MAJOR, MINI, MINOR, paytable
from tests.controller.paperwork.test_packet import pdf_text, table
from tests.controller.permissive_law import PERMISSIVE

H = HandCategory
K = SubmissionKind
STUD, DRAW, LIR = Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW, Game.LET_IT_RIDE_BONUS
T0 = 1_767_225_600_000_000


def opened(game: Game, tables: list[TableConfig], **kw: Any) -> LinkState:
    terms = {"rate_bp": 0, "reset_cents": 0, **kw}
    return open_link(
        law=PERMISSIVE, link_id="pool", game=game, tables=tables, at_us=T0, **terms
    ).state


def facts(state: LinkState, proposal: Proposal, *, current: bool = False) -> PacketFacts:
    return PacketFacts(
        submission_id="sub-1",
        kind=proposal.kind,
        link_id=state.link_id,
        link_name="The pool",
        game=state.game,
        current=current_terms(state) if current else None,
        proposal=proposal,
        effective_at_us=T0,
        notice_days=60,
        notice_override=None,
        filed_by="sup",
        filed_at_us=T0,
        floor_tables=[
            table(
                tid,
                game=state.game,
                link_id=state.link_id,
                denomination_cents=ts.config.denomination_cents,
            )
            for tid, ts in state.tables.items()
        ],
        meter_cents=state.meter_cents,
        level_meters_cents=level_meters_cents(state),
        table_games=table_games(state),
        law=PERMISSIVE,  # hidden shares counted in the rate, as the levels here have them
    )


def four_levels() -> LinkState:
    return opened(
        STUD,
        [TableConfig(table_id="t1", denomination_cents=100)],
        levels=(GRAND, MAJOR, MINOR, MINI),
        paytable=paytable(),
        draws={3: [MysteryDraw(15_00, "ab" * 16)]},
    )


def test_a_four_level_link_with_a_mystery_level_files_its_levels_and_their_par_sheet() -> None:
    state = four_levels()
    packet = json.loads(packet_json(build_packet(facts(state, new_link_proposal(state)))))
    pool = packet["pool"]
    assert not pool["fixed_pay"]
    rate = pool["rate_of_progression"]
    assert (rate["rate_bp"], rate["shown_bp"], rate["hidden_bp"]) == (8000, 6500, 1500)
    assert "hidden shares" in rate["note"] and rate["clause"] == "68 IAC 10-1-1.1(c)"
    assert pool["rate_lock"]["note"] == "each level's share is locked until its own jackpot is won"
    major, mini = pool["levels"][1], pool["levels"][3]
    assert (major["shown_share"], major["hidden_share"], major["limit"]) == (
        "15%",
        "5%",
        "$1,000.50",
    )
    assert major["above_limit"] == "next_level" and major["mystery"] is None
    assert mini["mystery"]["range"] == "$10.01 to $20.00" and mini["meter_cents"] == 10_00
    assert packet["proposed"]["levels"][0]["reserve_bp"] == 1_000
    sheet = packet["par_sheet"]["proposed"]
    royal, _, quads, _, flush = sheet["lines"]
    assert royal["pays"] == "100% of level 1 (Grand)" and royal["level"] == 1
    assert quads["envy"] == "$25.00 to each other seat with a side bet"
    assert flush["envy_cents"] == 5_00
    [bet] = sheet["by_wager"]
    # 4/2598960 x $10,000 + 36/... x $1,000 + 624/... x $100 + the fixed lines, per $1.
    grand = bet["by_level"][0]
    assert grand["at_reset"]["exact"] == "500/32487"  # 4 x 1,000,000 / (2,598,960 x 100)
    assert bet["return_at_reset"] == {"exact": "16865/64974", "percent": "25.96%"}
    assert bet["break_even_meter"] is None  # four meters: no one break-even meter
    assert bet["envy_per_other_seat"]["percent"] == "1.58%"
    # The mystery level is won by a trigger, not a hand: its return is stated apart.
    [mystery] = sheet["mystery"]
    assert mystery["average_trigger"]["exact_cents"] == "3001/2"
    assert mystery["wagered_per_hit"]["exact_cents"] == "25025/1"  # ($15.005 - $10) / 2%
    assert mystery["return"] == {"exact": "3001/50050", "percent": "6.00%"}
    assert "left out of the per-hand return" in mystery["explanation"]
    text = pdf_text(packet_pdf(packet))
    for shown in (
        "Levels (proposed)",
        "L4 Mini",
        "$10.01 to $20.00",
        "each level's share is locked until its own jackpot is won",
        "hidden shares",
        "100% of level 2 (Major)",
        "Return by level",
        "Mystery level 4 Mini",
        "25.96%",
    ):
        assert shown in text, shown


def test_a_mixed_stud_and_draw_link_has_a_par_sheet_per_game() -> None:
    draw_lines = make_paytable(
        DRAW,
        (
            PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=5_000, level=1),
            PaytableLine(hand=H.FOUR_OF_A_KIND, fixed_cents=400_00),
        ),
    )
    state = opened(
        STUD,
        [
            TableConfig(table_id="t1", denomination_cents=100),
            TableConfig(table_id="d1", denomination_cents=500, game=DRAW),
        ],
        levels=(GRAND, MAJOR, MINOR, MINI),
        paytable=paytable(),
        paytables={DRAW: draw_lines},
        draws={3: [MysteryDraw(15_00, "ab" * 16)]},
    )
    packet = build_packet(facts(state, new_link_proposal(state)))
    games = {g["game"]: g for g in packet["games"]}
    assert games["caribbean_draw"]["tables"] == ["d1"] and games["caribbean_stud"]["tables"] == [
        "t1"
    ]
    assert games["caribbean_draw"]["rules_clause"] == "68 IAC 10-8-2(b)(2)-(4)"
    by_game = packet["par_sheet"]["by_game"]["proposed"]
    assert set(by_game) == {"caribbean_stud", "caribbean_draw"}
    draw_sheet = by_game["caribbean_draw"]
    assert [w["wager_cents"] for w in draw_sheet["by_wager"]] == [500]  # the Draw table's bet
    assert draw_sheet["judged_on"] == "the player's five cards after the draw"
    assert "as if the player drew none" in draw_sheet["assumption"]
    assert draw_sheet["lines"][0]["pays"] == "50% of level 1 (Grand)"
    kinds = {g["table_id"]: g["game_type"] for g in packet["progressive_games"]["games"]}
    assert kinds == {"t1": "Caribbean Stud Poker", "d1": "Caribbean Draw Poker"}
    # A paytable change for the Draw tables names its game and keeps the Stud paytable.
    change = Proposal(
        kind=K.PAYTABLE_CHANGE,
        game=DRAW,
        paytable=make_paytable(DRAW, [{"hand": "ROYAL_FLUSH", "percent_bp": 10_000, "level": 2}]),
    )
    changed = build_packet(facts(state, change, current=True))
    assert changed["proposed"]["paytables"]["caribbean_draw"] == [
        {"hand": "ROYAL_FLUSH", "percent_bp": 10_000, "level": 2}
    ]
    assert changed["proposed"]["paytable"] == paytable().to_dicts()
    text = pdf_text(packet_pdf(changed))
    assert "Paytable of Caribbean Draw Poker (proposed); tables d1" in text
    assert "Par sheet (current, Caribbean Draw Poker)" in text
    assert "Par sheet (proposed, Caribbean Stud Poker)" in text


def test_a_fixed_pay_let_it_ride_link_has_no_meter_and_shows_its_house_edge() -> None:
    state = opened(
        LIR, [TableConfig(table_id="l1", denomination_cents=100)], paytable=default_paytable(LIR)
    )
    assert state.fixed_pay
    packet = json.loads(packet_json(build_packet(facts(state, new_link_proposal(state)))))
    assert packet["pool"]["meter"] == "fixed-pay link: no meter"
    assert packet["pool"]["clause"] == "68 IAC 10-7-5(e)"
    assert packet["proposed"]["levels"] == [] and packet["proposed"]["rate_bp"] == 0
    [bet] = packet["par_sheet"]["proposed"]["by_wager"]
    # Sum over the eight lines of P(hand) x pay, per $1: 6982/9555; the house keeps the rest.
    assert bet["return_at_reset"] == {"exact": "6982/9555", "percent": "73.07%"}
    assert bet["house_edge"] == {"exact": "2573/9555", "percent": "26.93%"}
    text = pdf_text(packet_pdf(packet))
    assert "Fixed-pay link: no meter." in text and "26.93%" in text
    assert "its rate can never change: it has none" in text


def test_a_classic_links_terms_are_exactly_those_of_before_levels() -> None:
    state = opened(
        STUD,
        [TableConfig(table_id="t1", denomination_cents=100)],
        paytable=default_paytable(STUD),
        rate_bp=8000,
        reset_cents=1_000_00,
    )
    assert set(current_terms(state)) == {
        "rate_bp", "reset_cents", "paytable", "jackpot_won_since_rate_set",
    }  # fmt: skip
    assert set(new_link_proposal(state).to_dict()) == {"kind", "rate_bp", "reset_cents", "paytable"}
    assert level_meters_cents(state) is None and table_games(state) is None
