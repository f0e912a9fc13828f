"""Gaming-day and shift reports of a played link, on both databases: every term of the meter
adds up to the closing, to the unit; two shifts meet where one closes and the next opens;
hits carry hand names and card faces, reductions their reasons."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from datetime import date, time
from pathlib import Path
from zoneinfo import ZoneInfo

from controller.paperwork.corrections import CorrectionCategory, Corrections
from controller.paperwork.floor_reports import FloorReport, floor_report
from controller.paperwork.pdf import Letterhead
from controller.paperwork.report_documents import report_csv, report_json, report_pdf
from controller.periods import FloorPeriod, gaming_day
from controller.runtime.clock import FixedClock
from controller.runtime.links import LinkRuntime
from controller.storage.store import LedgerStore
from tests.conftest import T0
from tests.controller.storage.helpers import Poller, make_link
from tests.pdf_text import pdf_text_or_skip

ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"
ZONE = ZoneInfo("America/New_York")
HEAD = Letterhead(property_name="Riverside Casino", licence="IGC-0042", zone=ZONE)


async def _played(store: LedgerStore) -> tuple[LinkRuntime, Poller, int]:
    """Contributions at two tables, a royal flush verified at t1, a correction approved by a
    second person, and more play after: returns the runtime, the poller and the middle."""
    await make_link(store)
    clock = FixedClock(T0)
    rt = LinkRuntime(store, clock)
    await rt.memory.load()
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0), p.reading("t2", 0)])
    await rt.readings.apply([p.reading("t1", 500), p.reading("t2", 333)])
    await rt.readings.apply([p.royal("t1", 501, seq=1)])
    (hit,) = await rt.hits.of_link("stud")
    clock.advance(p.at - T0 + 1_000_000)
    await rt.hits.verify(hit.hit_id, actor="tech")
    middle = clock.now_us() + 1
    clock.advance(2_000_000)
    corrections = Corrections(store.engine, rt, clock)
    request = await corrections.ask(
        link_id="stud", delta_cents=-25, category=CorrectionCategory.MALFUNCTION,
        reason="meter ran on after a sensor fault", requested_by="sup-a",
        document=b"%PDF-1.4 service report", document_name="report.pdf",
        document_type="application/pdf",
    )  # fmt: skip
    await corrections.approve(request, approved_by="sup-b")
    p.at = clock.now_us() + 1_000_000
    await rt.readings.apply([p.reading("t2", 1_000)])
    return rt, p, middle


def _law(report: FloorReport) -> int:
    t = report.total
    return (
        t.opening_units
        + t.contributions_units
        + t.seeded_units
        + t.anomalies_approved_units
        - t.awards_units
        + t.corrections_units
        + t.other_units
    )


async def test_a_gaming_day_and_its_shifts_reconcile_to_the_unit(store: LedgerStore) -> None:
    rt, p, middle = await _played(store)
    # 1 January 2026 00:00 UTC is 31 December 19:00 in New York: the gaming day from 06:00.
    day = gaming_day(date(2025, 12, 31), starts=time(6), zone=ZONE)
    assert day.since_us < T0 and p.at < day.until_us
    whole = await floor_report(store.engine, "stud", day, link_name="Caribbean Stud bank")
    t = whole.total
    assert t.balanced, t.problems
    assert _law(whole) == t.closing_units == rt.memory.states["stud"].meter_units
    # Opened that day, and reset to its reset amount after the royal.
    assert t.opening_units == 0 and t.seeded_units == 2 * 10_000_00 * 10_000
    assert t.corrections_units == -25 * 10_000
    (hit,) = whole.hits
    assert t.awards_units == hit.award_cents * 10_000
    assert {x.table_id for x in t.tables.values()} == {"t1", "t2"}

    # Two shifts cut at the middle of play: the first closes where the second opens, and
    # their terms add up to the day's.
    first = FloorPeriod(day.day, 1, day.since_us, middle)
    second = FloorPeriod(day.day, 2, middle, day.until_us)
    a = await floor_report(store.engine, "stud", first, link_name="bank")
    b = await floor_report(store.engine, "stud", second, link_name="bank")
    assert a.total.balanced and b.total.balanced
    assert a.total.closing_units == b.total.opening_units
    assert _law(a) == a.total.closing_units and _law(b) == b.total.closing_units
    assert a.total.contributions_units + b.total.contributions_units == t.contributions_units
    assert [h.hit_id for h in a.hits] == [hit.hit_id] and b.hits == []
    assert [r.entry.kind for r in a.reductions] == ["award"]
    (correction,) = b.reductions
    assert correction.entry.kind == "correction"
    assert correction.correction is not None and correction.correction.approved_by == "sup-b"


async def test_the_documents_write_hands_cards_and_reasons(store: LedgerStore) -> None:
    await _played(store)
    day = gaming_day(date(2025, 12, 31), starts=time(6), zone=ZONE)
    report = await floor_report(store.engine, "stud", day, link_name="Caribbean Stud bank")
    text = report_csv(report, HEAD)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[1][:4] == ["gaming day", "stud", "2025-12-31", ""]
    assert rows[1][4] == "2025-12-31T06:00:00-05:00" and rows[1][6] == "America/New_York"
    terms = {r[0]: int(r[2]) for r in rows if len(r) == 3 and r[0] in ("opening", "closing")}
    assert terms["closing"] == report.total.closing_units
    header = rows.index(next(r for r in rows if r[:2] == ["at", "hit_id"]))
    hit = dict(zip(rows[header], rows[header + 1], strict=True))
    assert hit["cards"] == "As Ks Qs Js Ts" == hit["verified_cards"]
    assert hit["hand_name"] == "royal flush" and hit["level"] == "L1"
    assert "29,28" not in text  # no card written as its code
    reasons = [r for r in rows if r and r[0].isdigit() and len(r) == 8]
    assert any("meter ran on after a sensor fault" in r[5] and "sup-b" in r[5] for r in reasons)

    doc = report_json(report, HEAD)
    assert doc["hits"][0]["cards"] == ["As", "Ks", "Qs", "Js", "Ts"]
    assert doc["reconciliation"]["balanced"] is True

    pdf = report_pdf(report, HEAD)
    assert pdf.startswith(b"%PDF") and pdf == report_pdf(report, HEAD)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "gaming-day-report.pdf").write_bytes(pdf)  # to look at


async def test_an_envy_row_says_whose_hand_it_was_paid_for(store: LedgerStore) -> None:
    await _played(store)
    day = gaming_day(date(2025, 12, 31), starts=time(6), zone=ZONE)
    report = await floor_report(store.engine, "stud", day, link_name="Caribbean Stud bank")
    (royal,) = report.hits
    # The royal flush at t1 seat 3 paid $500.00 envy to seat 5, recorded as the reducer
    # records one (controller.core.reducer.level_hits.pay_envy): the winner's hand, the seat
    # it was paid to, its id the winning hit's and "/envy5".
    envy = replace(
        royal, hit_id=f"{royal.hit_id}/envy5", table_seq=None, seat=5, cards=None,
        verified_cards=None, award_cents=500_00, paid_from="table", level=None, kind="envy",
    )  # fmt: skip
    text = pdf_text_or_skip(report_pdf(replace(report, hits=[royal, envy]), HEAD), layout=False)
    words = " ".join(text.split())
    assert "envy: $500.00 for the royal flush at t1 seat 3" in words, words
