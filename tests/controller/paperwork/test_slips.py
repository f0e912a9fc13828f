"""The jackpot slip's content, built from records alone: every line, times in the property's
zone, the tax form's line from the operator's amount, the meter before and after the award."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from controller.core.games import Game
from controller.core.hands import parse_cards
from controller.core.ledger import SealedEntry
from controller.paperwork.pdf import Letterhead
from controller.paperwork.slips import BLANK, SlipRefused, SlipSource, slip_content, slip_pdf
from controller.storage.hits import HitRecord
from tests.pdf_text import keep_pdf, pdf_text_or_skip

ZONE = ZoneInfo("America/Indiana/Indianapolis")
HEAD = Letterhead(property_name="Riverside Casino", licence="IGC-0042", zone=ZONE)
# 23 Nov 2026 15:04:05 UTC is 10:04:05 EST.
AT = int(datetime(2026, 11, 23, 15, 4, 5, tzinfo=UTC).timestamp()) * 1_000_000
ROYAL = ",".join(str(c) for c in parse_cards("As Ks Qs Js Ts"))


def _hit(**kw: object) -> HitRecord:
    base = HitRecord(
        hit_id="stud-1#17",
        link_id="stud",
        table_id="stud-1",
        table_seq=17,
        seat=3,
        hand="ROYAL_FLUSH",
        round=412,
        cards=ROYAL,
        source="table",
        status="awarded",
        award_cents=1_523_417,
        paid_from="meter",
        settlement_group="stud-1@412",
        settlement_order=0,
        policy="split",
        refusal=None,
        entered_by=None,
        at_us=AT,
        verified_by="tech-ann",
        verified_at_us=AT + 60_000_000,
        verified_cards=ROYAL,
        released_by="tech-ann",
        released_at_us=AT + 600_000_000,
        signed_off_by="sup-bob",
        signed_off_at_us=AT + 300_000_000,
        level="L1",
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def _entry(*, before: int, delta: int, details: str = "{}", kind: str = "award") -> SealedEntry:
    return SealedEntry(
        link_id="stud", seq=9041, at_us=AT, kind=kind, meter_before_units=before,
        delta_units=delta, meter_after_units=before + delta, table_id="stud-1",
        hit_id="stud-1#17", anomaly_id=None, correction_id=None, explanation="hit",
        details=details, prev_hash="a" * 64, hash="b" * 64,
    )  # fmt: skip


def _source(hit: HitRecord | None = None, entry: SealedEntry | None = None) -> SlipSource:
    hit = hit or _hit()
    return SlipSource(
        hit=hit,
        entry=entry or _entry(before=1_523_417_5000, delta=-1_523_417_0000),
        link_name="Caribbean Stud bank (stud)",
        table_name="Pit 1 table 1",
        game=Game.CARIBBEAN_STUD,
    )


def _slip(source: SlipSource, *, tax_from: int = 1_200_00, second_from: int = 10_000_00):  # type: ignore[no-untyped-def]
    return slip_content(
        source,
        letterhead=HEAD,
        tax_reporting_from_cents=tax_from,
        second_signature_from_cents=second_from,
    )


def test_every_line_of_an_award_from_a_meter() -> None:
    slip = _slip(_source())
    assert slip.title == "Jackpot slip: $15,234.17, royal flush"
    expected = {
        "Link": "Caribbean Stud bank (stud)",
        "Table": "Pit 1 table 1 (stud-1)",
        "Seat": "3",
        "Game": "Caribbean Stud Poker",
        "Hand": "royal flush",
        "Amount": "$15,234.17",
        "Paid": "from the jackpot meter",
        "Hit taken": "23 Nov 2026 10:04:05 EST",
        "Cards as dealt": "As Ks Qs Js Ts",
        "Cards as verified": "As Ks Qs Js Ts",
        "Meter": "link",
        "Meter before the award": "$15,234.17 (+5,000/10,000 cent)",
        "Award from the meter": "$15,234.17",
        "Meter after the award": "$0.00 (+5,000/10,000 cent)",
        "Verified by": "tech-ann, 23 Nov 2026 10:05:05 EST",
        "Signed by (second)": "sup-bob, 23 Nov 2026 10:09:05 EST",
        "Table reset by": "tech-ann, 23 Nov 2026 10:14:05 EST",
        "Hit": "stud-1#17",
        "History entry": "9041 of link stud (award)",
        "Entry seal": "b" * 64,
    }
    for label, value in expected.items():
        assert slip.value(label) == value, label
    # A link of one meter names no level; no patron is named anywhere.
    assert slip.value("Level") is None
    assert not any("patron" in label.lower() for _, lines in slip.sections for label, _ in lines)


def test_tax_line_iff_the_award_reaches_the_amount() -> None:
    award = _hit().award_cents
    at = _slip(_source(), tax_from=award)
    assert at.value("Tax form reference") == BLANK  # to be written by hand
    assert _slip(_source(), tax_from=award + 1).value("Tax form reference") is None
    recorded = _hit(tax_form_reference="W2G-17", tax_form_by="sup-bob", tax_form_at_us=AT)
    slip = _slip(_source(recorded), tax_from=award)
    assert slip.value("Tax form reference") == "W2G-17"
    assert slip.value("Recorded by") == "sup-bob, 23 Nov 2026 10:04:05 EST"


def test_second_signature_line_follows_the_house_amount() -> None:
    unsigned = _hit(signed_off_by=None, signed_off_at_us=None)
    assert _slip(_source(unsigned)).value("Signed by (second)") == "not yet signed"
    below = _slip(_source(unsigned), second_from=2_000_000_00)
    assert below.value("Signed by (second)") == "not required (under $2,000,000.00)"


def test_a_level_of_a_link_of_levels_shows_its_own_meter() -> None:
    won = 40_000_00 * 10_000  # $40,000.00 in units
    split = {"meters": {"L2": [won, -won], "L2.reserve": [7, 0]}}
    entry = _entry(before=won + 9_000, delta=-won, details=json.dumps(split))
    hit = _hit(level="L2", award_cents=40_000_00)
    source = replace(_source(hit, entry), level_names={"L1": "Grand", "L2": "Major"})
    slip = _slip(source)
    assert slip.value("Level") == "Major (L2)"
    assert slip.value("Meter") == "level L2"
    assert slip.value("Meter before the award") == "$40,000.00"
    assert slip.value("Meter after the award") == "$0.00"


def test_a_fixed_pay_at_the_table_has_no_meter_lines() -> None:
    hit = _hit(paid_from="table", level=None, award_cents=500_00, kind="hand", hand="FLUSH")
    entry = _entry(before=0, delta=0, kind="paid_at_table")
    slip = _slip(_source(hit, entry))
    assert slip.value("Paid") == "at the table (a fixed pay)"
    assert not slip.from_meter
    assert slip.value("Meter before the award") is None
    assert slip.value("History entry") == "9041 of link stud (paid_at_table)"


def test_no_cards_for_a_mystery_and_unverified_marks() -> None:
    hit = _hit(
        kind="mystery", hand="MYSTERY", cards=None, verified_by=None, verified_at_us=None,
        verified_cards=None, released_by=None, released_at_us=None,
    )  # fmt: skip
    slip = _slip(_source(hit))
    assert slip.value("Cards as dealt") == "none: a mystery level's trigger, decided by no cards"
    assert slip.value("Cards as verified") == "-"
    assert slip.value("Verified by") == "not verified"
    assert slip.value("Table reset by") == "not yet reset"


def test_refused_hits_and_missing_entries_have_no_slip() -> None:
    refused = _hit(status="refused", refusal="cards do not make the hand", award_cents=0)
    with pytest.raises(SlipRefused, match="nothing was paid"):
        _slip(_source(refused))
    with pytest.raises(SlipRefused, match="no entry of the meter history"):
        _slip(replace(_source(), entry=None))


def test_the_pdf_is_deterministic_and_reads_back() -> None:
    slip = _slip(_source())
    pdf = slip_pdf(slip, HEAD)
    assert pdf.startswith(b"%PDF") and pdf == slip_pdf(slip, HEAD)
    keep_pdf("jackpot-slip.pdf", pdf)
    text = pdf_text_or_skip(pdf)
    for seen in ("Riverside Casino", "IGC-0042", "As Ks Qs Js Ts", "stud-1#17", "b" * 64,
                 "America/Indiana/Indianapolis", "Technician", "Supervisor"):  # fmt: skip
        assert seen in text, seen
