"""The packet the commission reads carries the par sheet of the current and the proposed
paytable, in its JSON and in its PDF."""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import replace

from controller.core.games import Game, default_paytable, make_paytable
from controller.paperwork.governance import (
    PacketFacts,
    TableFacts,
    build_packet,
    packet_json,
    packet_pdf,
)
from controller.rules.filing import Proposal, SubmissionKind
from controller.rules.jurisdictions import INDIANA
from controller.rules.odds import OddsBound

K = SubmissionKind


def pdf_text(pdf: bytes) -> str:
    """The text a PDF shows: the strings of its (deflated) content streams, joined by spaces
    (a cell's text wraps onto several lines)."""
    shown = []
    for stream in re.findall(rb"stream\r?\n(.*?)\r?\nendstream", pdf, re.S):
        try:
            content = zlib.decompress(stream)
        except zlib.error:
            continue
        shown += re.findall(rb"\(((?:[^()\\]|\\.)*)\)\s*Tj", content)
    return " ".join(re.sub(rb"\\(.)", rb"\1", s).decode("latin-1") for s in shown)


def table(table_id: str, *, game: Game, link_id: str, denomination_cents: int) -> TableFacts:
    return TableFacts(
        table_id=table_id,
        name=table_id.upper(),
        location="pit 1",
        link_id=link_id,
        game=game,
        denomination_cents=denomination_cents,
        seats=7,
    )


def facts(game: Game, proposal: Proposal, *, current: bool = True, **extra: object) -> PacketFacts:
    paytable = default_paytable(game).to_dicts()
    return PacketFacts(
        submission_id="sub-1",
        kind=proposal.kind,
        link_id="link",
        link_name="The link",
        game=game,
        current={"rate_bp": 8000, "reset_cents": 10_000_00, "paytable": paytable}
        if current
        else None,
        proposal=proposal,
        effective_at_us=0,
        notice_days=30,
        notice_override=None,
        filed_by="sup",
        filed_at_us=0,
        floor_tables=[
            table("t1", game=game, link_id="link", denomination_cents=100),
            table("t2", game=game, link_id="link", denomination_cents=500),
            table("t3", game=game, link_id="other", denomination_cents=2500),
        ],
        law=INDIANA,
        **extra,  # type: ignore[arg-type]
    )


def test_a_paytable_change_carries_both_par_sheets() -> None:
    lines = [{"hand": "ROYAL_FLUSH", "percent_bp": 10_000}, {"hand": "FLUSH", "fixed_cents": 75_00}]
    proposal = Proposal(kind=K.PAYTABLE_CHANGE, paytable=make_paytable(Game.CARIBBEAN_STUD, lines))
    packet = build_packet(
        facts(
            Game.CARIBBEAN_STUD,
            proposal,
            meter_cents=25_000_00,
            jackpot_odds_bound=OddsBound(10**8),
        )
    )
    # Kept as JSON: the section survives the round trip whole.
    par = json.loads(packet_json(packet))["par_sheet"]
    assert par["jackpot_odds_bound"]["odds"] == "100,000,000 to 1"
    current, proposed = par["current"], par["proposed"]
    assert [line["hand"] for line in current["lines"]] == [
        "ROYAL_FLUSH", "STRAIGHT_FLUSH", "FOUR_OF_A_KIND", "FULL_HOUSE", "FLUSH",
    ]  # fmt: skip
    royal = current["lines"][0]
    assert royal["ways"] == 4 and royal["probability"] == "1/649740"
    assert royal["one_in"] == "1 in 649,740" and royal["odds_against"] == "649,739 to 1"
    # One figure per denomination of the link's tables (not the other link's $25).
    assert [w["wager_cents"] for w in current["by_wager"]] == [100, 500]
    one_dollar = current["by_wager"][0]
    assert one_dollar["return_at_reset"]["percent"] == "39.16%"
    assert one_dollar["break_even_meter"]["cents"] == 218_047_37
    assert one_dollar["break_even_meter"]["amount"] == "$218,047.37"
    assert current["meter_cents"] == 25_000_00 and current["reset_cents"] == 10_000_00
    assert [line["hand"] for line in proposed["lines"]] == ["ROYAL_FLUSH", "FLUSH"]
    assert proposed["lines"][1]["pays"] == "$75.00"
    # The fields the packet had before are all still there, unchanged.
    assert {"current", "proposed", "progressive_games", "rules_of_the_game", "notice"} <= set(
        packet
    )
    assert packet["proposed"]["paytable"] == lines


def test_the_pdf_prints_the_par_sheet() -> None:
    proposal = Proposal(kind=K.RESET_CHANGE, reset_cents=20_000_00)
    packet = build_packet(
        facts(
            Game.CARIBBEAN_STUD,
            proposal,
            meter_cents=25_000_00,
            jackpot_odds_bound=OddsBound(10**8),
        )
    )
    text = pdf_text(packet_pdf(packet))
    assert "Progressive submission sub-1: change of the reset amount" in text
    for shown in (
        "Par sheet (current paytable)",
        "Par sheet (proposed paytable)",
        "Odds of each line (proposed)",
        "1 in 649,740",
        "649,739 to 1",
        "1277/649740",
        "$218,047.37",
        "39.16%",  # at the current reset, $10,000
        "42.09%",  # at the proposed reset, $20,000
        "43.55%",  # at the meter, $25,000
        "100,000,000 to 1",
    ):
        assert shown in text, shown


def test_the_packet_gives_each_table_s_game_location_rate_and_reset() -> None:
    # 68 IAC 10-1-1.1(e)(1)-(4): the type of each game on the link, its location, its rate of
    # progression and its reset amount, as they will be once the change is approved.
    def at(table_id: str, location: str, link_id: str = "link") -> TableFacts:
        return replace(
            table(table_id, game=Game.CARIBBEAN_STUD, link_id=link_id, denomination_cents=500),
            location=location,
        )

    floor = [at("t1", "pit 2, by the cage"), at("t2", "high limit room"), at("t3", "pit 9", "x")]
    for proposal, rate, reset in (
        (Proposal(kind=K.RATE_CHANGE, rate_bp=8_500), "85.00 %", 10_000_00),
        (Proposal(kind=K.RESET_CHANGE, reset_cents=12_500_00), "80.00 %", 12_500_00),
    ):
        packet = build_packet(replace(facts(Game.CARIBBEAN_STUD, proposal), floor_tables=floor))
        games = packet["progressive_games"]
        assert games["clause"] == "68 IAC 10-1-1.1(e)"
        assert [
            (g["game_type"], g["table_id"], g["location"], g["reset_cents"]) for g in games["games"]
        ] == [
            ("Caribbean Stud Poker", "t1", "pit 2, by the cage", reset),
            ("Caribbean Stud Poker", "t2", "high limit room", reset),
        ]
        assert {g["rate_bp"] for g in games["games"]} == {proposal.rate_bp or 8_000}
        text = pdf_text(packet_pdf(packet))
        assert "Progressive games on the link (68 IAC 10-1-1.1(e)(1)-(4))" in text
        for shown in (
            "t1 (T1)",
            "pit 2, by the cage",
            "high limit room",
            rate,
            f"${reset // 100:,}.00",
        ):
            assert shown in text, shown


def test_a_new_link_has_only_a_proposed_par_sheet_and_draw_says_what_it_assumes() -> None:
    proposal = Proposal(
        kind=K.NEW_LINK,
        rate_bp=8000,
        reset_cents=5_000_00,
        paytable=default_paytable(Game.CARIBBEAN_DRAW),
    )
    packet = build_packet(facts(Game.CARIBBEAN_DRAW, proposal, current=False))
    par = packet["par_sheet"]
    assert par["current"] is None and par["jackpot_odds_bound"] is None
    # No meter given: the figures are at the reset amount.
    assert par["proposed"]["meter_cents"] == 5_000_00
    assert "as if the player drew none" in par["proposed"]["assumption"]
    text = pdf_text(packet_pdf(packet))
    # Judged after the draw, the odds counted on the cards as dealt: one thing, said once.
    assert "Judged on the player's five cards after the draw" in text
    assert "Assumption: the odds after the draw depend on which cards" in text
    assert "before the draw" not in text and "before the draw" not in json.dumps(packet)
    assert "Par sheet (current paytable)" not in text


def test_the_let_it_ride_bonus_is_a_one_dollar_bet_with_no_break_even() -> None:
    proposal = Proposal(kind=K.PAYTABLE_CHANGE, paytable=default_paytable(Game.LET_IT_RIDE_BONUS))
    packet = build_packet(facts(Game.LET_IT_RIDE_BONUS, proposal))
    [bet] = packet["par_sheet"]["proposed"]["by_wager"]
    assert bet["wager_cents"] == 100 and bet["break_even_meter"] is None
    assert bet["return_at_reset"] == bet["return_at_meter"]
    assert "no line pays from the meter" in pdf_text(packet_pdf(packet))
