"""The packet as the document the commission reads, for each kind of submission: current and
proposed side by side in words, hands by name, the notice period in the property's zone, and
the printed copy under the property's letterhead with its signature lines."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from controller.core.games import Game, make_paytable
from controller.core.odds import fraction_text, percent_text
from controller.paperwork.governance import (
    PacketFacts,
    build_packet,
    packet_json,
    packet_letterhead,
    packet_pdf,
)
from controller.paperwork.packet_document import Review, change_summary, packet_document
from controller.paperwork.pdf import Letterhead
from controller.paperwork.pool_packet import new_link_proposal
from controller.rules.filing import DAY_US, Proposal, SubmissionKind
from tests.controller.core.test_levels import GRAND, MAJOR, MINI, MINOR
from tests.controller.paperwork import test_packet, test_pool_packets
from tests.pdf_text import pdf_text_or_skip

K = SubmissionKind
STUD = Game.CARIBBEAN_STUD
# 1 Jan 2026 00:00 UTC: still 31 Dec 2025 in Indianapolis.
T0 = 1_767_225_600_000_000
LH = Letterhead(
    property_name="Blue Heron Casino",
    licence="IGC-0042",
    zone=ZoneInfo("America/Indiana/Indianapolis"),
)
# A stored name shown as is: ROYAL_FLUSH, rate_bp, caribbean_stud, next_level, an ISO time.
RAW = re.compile(r"\b[A-Za-z]+_[A-Za-z_]+\b|\d{4}-\d\d-\d\dT|\+00:00")


def filed(f: PacketFacts, *, days: int = 30, override: str | None = None) -> dict[str, Any]:
    """The packet as kept (through its JSON), filed at T0 for ``days`` later."""
    f = dataclasses.replace(
        f,
        filed_at_us=T0,
        effective_at_us=T0 + days * DAY_US,
        notice_days=days if f.kind is not K.NEW_LINK else 60,
        notice_override=override,
        letterhead=LH,
    )
    return dict(json.loads(packet_json(build_packet(f))))


def classic(proposal: Proposal, **kw: Any) -> dict[str, Any]:
    return filed(test_packet.facts(STUD, proposal, current=proposal.kind is not K.NEW_LINK), **kw)


def shown(doc: Mapping[str, Any]) -> Iterator[str]:
    """Every string a reader sees."""
    yield doc["title"]
    for s in doc["sections"]:
        yield s["heading"]
        for f in s.get("facts") or ():
            yield from (f["label"], f["value"])
        yield from s.get("columns") or ()
        for r in s.get("rows") or ():
            yield from r["cells"]
        yield from s.get("paragraphs") or ()


def section(doc: Mapping[str, Any], key: str, n: int = 0) -> dict[str, Any]:
    return [s for s in doc["sections"] if s["key"] == key][n]


def facts_of(doc: Mapping[str, Any], key: str) -> dict[str, str]:
    return {f["label"]: f["value"] for f in section(doc, key)["facts"]}


def rows_of(doc: Mapping[str, Any], key: str, n: int = 0) -> dict[str, tuple[list[str], bool]]:
    return {r["cells"][0]: (r["cells"], r["changed"]) for r in section(doc, key, n)["rows"]}


def words_only(doc: Mapping[str, Any]) -> None:
    for text in shown(doc):
        assert not RAW.search(text), text


def test_a_rate_change_reads_current_and_proposed_with_its_notice_period() -> None:
    packet = classic(Proposal(kind=K.RATE_CHANGE, rate_bp=9000))
    doc = packet_document(packet, letterhead=LH, review=Review(status="filed"))
    words_only(doc)
    terms = rows_of(doc, "terms")
    assert terms["Rate of progression"] == (["Rate of progression", "80.00 %", "90.00 %"], True)
    assert terms["Reset amount"] == (["Reset amount", "$10,000.00", "$10,000.00"], False)
    notice = facts_of(doc, "notice")
    assert notice["Filed on"] == "31 Dec 2025"  # 19:00 the day before in Indianapolis
    assert notice["Notice required"] == "30 days (68 IAC 10-1-4(1))"
    assert notice["Earliest effective date"] == "30 Jan 2026"
    assert notice["Requested effective date"] == "30 Jan 2026"
    assert notice["Notice given"] == "30 days"
    assert "Notice override" not in notice
    assert facts_of(doc, "submission")["Filed at"] == "31 Dec 2025 19:00:00 EST"
    assert facts_of(doc, "decision") == {"Decision": "awaiting the commission's review"}
    assert change_summary(doc) == [
        {"label": "Rate of progression", "current": "80.00 %", "proposed": "90.00 %"}
    ]


def long_run(rate_bp: int, reset_cents: int, wager_cents: int) -> Fraction:
    """The default Caribbean Stud paytable's long-run return, from the five-card counts: the
    fixed lines (four of a kind $500, full house $100, flush $50), the rate, and the reset
    amount seeded after each royal flush (4 deals in 2,598,960)."""
    deals = 2_598_960
    fixed = Fraction(624 * 500_00 + 3_744 * 100_00 + 5_108 * 50_00, deals * wager_cents)
    return fixed + Fraction(rate_bp, 10_000) + Fraction(4 * reset_cents, deals * wager_cents)


def test_a_rate_change_shows_the_long_run_return_at_each_rate(tmp_path: Path) -> None:
    packet = classic(Proposal(kind=K.RATE_CHANGE, rate_bp=9000))
    doc = packet_document(packet, letterhead=LH, review=Review(status="filed"))
    returns = rows_of(doc, "returns")
    for wager in (1_00, 5_00):
        at = f"${wager // 100}.00 side bet"
        # The return at the reset amount does not depend on the rate; the long-run one does.
        same, changed = returns[f"{at}: return to players at the reset amount"]
        assert same[1] == same[2] and not changed
        cells, changed = returns[f"{at}: long-run return to players at the rate of progression"]
        was, will = long_run(8000, 10_000_00, wager), long_run(9000, 10_000_00, wager)
        assert will - was == Fraction(1, 10)
        assert cells[1:] == [
            f"{percent_text(was).replace('%', ' %')} at a rate of 80.00 %",
            f"{percent_text(will).replace('%', ' %')} at a rate of 90.00 %",
        ]
        assert changed
        by_wager = {w["wager_cents"]: w for w in packet["par_sheet"]["proposed"]["by_wager"]}
        assert by_wager[wager]["long_run_return"]["exact"] == fraction_text(will)
    text = pdf_text_or_skip(packet_pdf(packet))
    assert "long-run return" in text
    for rate, words in ((8000, "80.00 %"), (9000, "90.00 %")):
        figure = percent_text(long_run(rate, 10_000_00, 1_00)).replace("%", " %")
        assert f"{figure} at a rate of {words}" in text


def test_a_reset_change_moves_the_return_and_a_rejection_says_why() -> None:
    packet = classic(Proposal(kind=K.RESET_CHANGE, reset_cents=20_000_00), days=45)
    review = Review(status="rejected", reviewed_by="ann", reviewed_at_us=T0 + DAY_US, reason="no")
    doc = packet_document(packet, letterhead=LH, review=review)
    words_only(doc)
    [reset] = [r for r in change_summary(doc) if r["label"] == "Reset amount"]
    assert (reset["current"], reset["proposed"]) == ("$10,000.00", "$20,000.00")
    returns = rows_of(doc, "returns")
    cells, changed = returns["$1.00 side bet: return to players at the reset amount"]
    assert cells[1:] == ["39.16 %", "42.09 %"] and changed
    hold, _ = returns["$1.00 side bet: hold at the reset amount"]
    assert hold[1:] == ["60.84 %", "57.91 %"]
    assert facts_of(doc, "notice")["Notice given"] == "45 days"
    assert facts_of(doc, "decision") == {
        "Decision": "Rejected",
        "By": "ann",
        "On": "01 Jan 2026 19:00:00 EST",
        "Reason": "no",
    }


def test_a_paytable_change_reads_line_by_line_with_hand_names_and_their_chances() -> None:
    lines = [{"hand": "ROYAL_FLUSH", "percent_bp": 10_000}, {"hand": "FLUSH", "fixed_cents": 75_00}]
    packet = classic(Proposal(kind=K.PAYTABLE_CHANGE, paytable=make_paytable(STUD, lines)))
    doc = packet_document(packet, letterhead=LH)
    words_only(doc)
    pay = rows_of(doc, "paytable")
    assert section(doc, "paytable")["columns"] == [
        "Hand", "Current", "Proposed", "Chance of the hand",
    ]  # fmt: skip
    assert pay["Royal flush"] == (
        ["Royal flush", "100.00 % of the meter", "100.00 % of the meter", "1 in 649,740 "
         "(649,739 to 1 against)"],
        False,
    )  # fmt: skip
    assert pay["Flush"][0][1:3] == ["$50.00", "$75.00"] and pay["Flush"][1]
    assert pay["Straight flush"][0][1:3] == ["10.00 % of the meter", "not paid"]
    assert list(pay) == ["Royal flush", "Flush", "Straight flush", "Four of a kind", "Full house"]
    # Filed before any decision, the document leaves the space for it.
    assert "strike out one" in " ".join(section(doc, "decision")["paragraphs"])


def test_a_levels_change_reads_each_level_in_words() -> None:
    state = test_pool_packets.four_levels()
    bigger = dataclasses.replace(GRAND, reset_cents=12_000_00)
    proposal = Proposal(kind=K.LEVELS_CHANGE, levels=(bigger, MAJOR, MINOR, MINI))
    packet = filed(test_pool_packets.facts(state, proposal, current=True))
    doc = packet_document(packet, letterhead=LH)
    words_only(doc)
    levels = rows_of(doc, "terms")
    grand, changed = levels["Level 1 (Grand)"]
    assert changed
    assert grand[1] == "reset $10,000.00; share 40.00 % shown and 10.00 % hidden; no limit"
    assert grand[2].startswith("reset $12,000.00;")
    major, changed = levels["Level 2 (Major)"]
    assert not changed
    assert "limit $1,000.50 (the excess goes on to the next level)" in major[2]
    assert (
        "mystery: hits at a point drawn between $10.01 and $20.00" in levels["Level 4 (Mini)"][0][2]
    )
    rate = levels["Rate of progression (every level's shown and hidden share)"]
    assert rate == (
        ["Rate of progression (every level's shown and hidden share)", "80.00 %", "80.00 %"],
        False,
    )
    pay = rows_of(doc, "paytable")
    assert pay["Royal flush"][0][2] == "100.00 % of level 1 (Grand)"
    assert pay["Four of a kind"][0][2] == (
        "100.00 % of level 3 (Minor); envy $25.00 to each other seat with a side bet"
    )
    assert [r["label"] for r in change_summary(doc)] == ["Level 1 (Grand)"]


def test_a_new_link_has_only_its_proposal_and_sixty_days_or_the_override() -> None:
    proposal = Proposal(
        kind=K.NEW_LINK, rate_bp=8000, reset_cents=5_000_00, paytable=make_paytable(STUD, [
            {"hand": "ROYAL_FLUSH", "percent_bp": 10_000}, {"hand": "FLUSH", "fixed_cents": 50_00},
        ]),
    )  # fmt: skip
    doc = packet_document(classic(proposal, days=60), letterhead=LH)
    words_only(doc)
    terms = section(doc, "terms")
    assert terms["columns"] == ["", "Proposed"] and not terms["compare"]
    assert rows_of(doc, "terms")["Rate of progression"][0] == ["Rate of progression", "80.00 %"]
    notice = facts_of(doc, "notice")
    assert notice["Notice required"] == "60 days (68 IAC 10-1-3(c)(1))"
    assert notice["Earliest effective date"] == "01 Mar 2026"
    assert change_summary(doc)[-1] == {
        "label": "Paytable of Caribbean Stud Poker",
        "current": None,
        "proposed": "2 lines",
    }
    # The executive director's direction lifts the notice period: effective when filed.
    doc = packet_document(classic(proposal, days=0, override="letter ED-9"), letterhead=LH)
    notice = facts_of(doc, "notice")
    assert notice["Notice override"] == "the executive director provided otherwise: letter ED-9"
    assert notice["Earliest effective date"] == notice["Filed on"] == "31 Dec 2025"
    review = Review(status="approved", reviewed_by="ann", reviewed_at_us=T0, reason="ok")
    decision = facts_of(
        packet_document(classic(proposal), letterhead=LH, review=review), "decision"
    )
    assert decision["Takes effect"] == "play begins on or after 30 Jan 2026"


def test_a_new_link_of_levels_and_a_packet_filed_before_the_letterhead() -> None:
    state = test_pool_packets.four_levels()
    packet = filed(test_pool_packets.facts(state, new_link_proposal(state)), days=60)
    doc = packet_document(packet, letterhead=LH)
    words_only(doc)
    assert "Level 3 (Minor)" in rows_of(doc, "terms")
    # Kept before packets recorded their property: times in UTC, the name not set.
    del packet["property"]
    old = packet_letterhead(packet)
    assert old.zone.key == "UTC" and old.property_name is None
    assert facts_of(packet_document(packet, letterhead=old), "notice")["Filed on"] == "01 Jan 2026"


def test_the_printed_packet_is_the_document_under_the_letterhead(tmp_path: Path) -> None:
    lines = [{"hand": "ROYAL_FLUSH", "percent_bp": 10_000}, {"hand": "FLUSH", "fixed_cents": 75_00}]
    packet = classic(Proposal(kind=K.PAYTABLE_CHANGE, paytable=make_paytable(STUD, lines)))
    pdf = packet_pdf(packet)
    # The same kept JSON prints the same bytes: a filed PDF can be checked against it.
    assert packet_pdf(json.loads(packet_json(packet))) == pdf
    text = pdf_text_or_skip(pdf)
    for words in (
        "Blue Heron Casino",
        "Gaming licence IGC-0042",
        "Times are in America/Indiana/Indianapolis",
        "Royal flush",
        "Straight flush",
        "1 in 649,740",
        "30 Jan 2026",
        "31 Dec 2025 19:00:00 EST",
        "Earliest effective date: 30 Jan 2026",
        "changed",
        "Filed by: name ____",
        "Reviewed by (commission agent)",
        "strike out one",
    ):
        assert words in text, words
    for raw in ("ROYAL_FLUSH", "STRAIGHT_FLUSH", "+00:00", "_bp", "_us", "_cents", "rate_change"):
        assert raw not in text, raw


def test_a_title_that_wraps_is_left_aligned_with_no_wide_gaps() -> None:
    f = test_packet.facts(STUD, Proposal(kind=K.RATE_CHANGE, rate_bp=9000))
    long_id = "sub-0f3a9c2e7b5d41e8a6c0f3a9c2e7b5d4"
    text = pdf_text_or_skip(packet_pdf(filed(dataclasses.replace(f, submission_id=long_id))))
    lines = text.splitlines()
    first = lines.index(next(x for x in lines if x.startswith("Progressive")))
    assert lines[first] == f"Progressive submission {long_id}:", lines[first]
    assert lines[first + 1] == "change of the rate of progression"


def test_a_printed_pool_packet_names_hands_and_limits_in_words(tmp_path: Path) -> None:
    state = test_pool_packets.four_levels()
    packet = filed(test_pool_packets.facts(state, new_link_proposal(state)), days=60)
    text = pdf_text_or_skip(packet_pdf(packet))
    assert "Four of a kind" in text and "to the next level" in text
    assert not RAW.search(text.replace("IGC-0042", "")), RAW.search(text)
