"""CSV exports opened in a spreadsheet: text that starts like a formula stays text."""

from __future__ import annotations

import csv
import io
import json
import re

from sqlalchemy import insert

from controller.paperwork.corrections import CorrectionCategory, Corrections
from controller.paperwork.export import CsvWriter, ExportKind, csv_cell, export
from controller.runtime.clock import FixedClock
from controller.runtime.links import LinkRuntime
from controller.storage.models import HitRow, MeterEntryRow
from controller.storage.store import LedgerStore
from tests.conftest import T0
from tests.controller.storage.helpers import make_link

PDF = b"%PDF-1.4 service report"
FORMULA = '=HYPERLINK("http://example.invalid","refund")'


def test_text_that_starts_like_a_formula_is_neutralised_numbers_are_not() -> None:
    for text in ("=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "\nx", " =1+1", "\t=1+1"):
        assert csv_cell(text) == "'" + text
    # Every line of a cell, not only its first: a reader splitting lines sees each one.
    assert csv_cell("\r=1+1") == "'\r'=1+1"
    assert csv_cell("ran on\n  =1+1\r\n@A1") == "ran on\n'  =1+1\r\n'@A1"
    assert csv_cell("a = b\nc - d") == "a = b\nc - d"
    assert csv_cell("meter ran on") == "meter ran on"
    # A negative amount is a number; a spreadsheet must still be able to add it up.
    assert csv_cell(-5_000_000) == -5_000_000
    assert csv_cell(None) is None


async def test_a_reduction_explained_with_a_formula_exports_as_text(store: LedgerStore) -> None:
    await make_link(store)
    clock = FixedClock(T0)
    rt = LinkRuntime(store, clock)
    await rt.memory.load()
    corrections = Corrections(store.engine, rt, clock)
    request_id = await corrections.ask(
        link_id="stud", delta_cents=-500, category=CorrectionCategory.MALFUNCTION,
        reason=FORMULA, requested_by="sup1", document=PDF, document_name="report.pdf",
        document_type="application/pdf",
    )  # fmt: skip
    await corrections.approve(request_id, approved_by="sup2")
    out = io.StringIO()
    n = await export(
        store.engine, out, kind=ExportKind.REDUCTIONS, fmt="csv",
        since_us=T0 - 1, until_us=T0 + 1,
    )  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert n == len(rows) == 1
    (row,) = rows
    assert row["explanation"].endswith(FORMULA)
    assert row["delta_units"] == "-5000000"  # written as a number, not neutralised


async def test_an_explanation_starting_with_a_formula_is_written_as_text(
    store: LedgerStore,
) -> None:
    await make_link(store)
    # Whatever wrote it, text at the start of a cell is never run by the spreadsheet.
    async with store.engine.begin() as conn:
        await conn.execute(
            insert(MeterEntryRow).values(
                link_id="stud", seq=2, at_us=T0 + 1, kind="contribution",
                meter_before_units=0, delta_units=10_000, meter_after_units=10_000,
                explanation=FORMULA, details="{}", prev_hash="0" * 64, hash="1" * 64,
            )
        )  # fmt: skip
    out = io.StringIO()
    await export(
        store.engine, out, kind=ExportKind.HISTORY, fmt="csv", since_us=T0, until_us=T0 + 2
    )
    (row,) = [r for r in csv.DictReader(io.StringIO(out.getvalue())) if r["seq"] == "2"]
    assert row["explanation"] == "'" + FORMULA
    assert (row["delta_units"], row["meter_after_units"]) == ("10000", "10000")


# Text that older versions took in, or that reached the database some other way: the
# exports are safe whatever is stored.
HOSTILE = ("\r=1+1", " =1+1", "\t=1+1", "ran on\n=1+1", "ran on\r@SUM(A1)", "x\u2028-1+1")
FORMULA_CHARS = ("=", "+", "-", "@")


def _naive_lines(text: str) -> list[str]:
    """The lines a tool that splits on any CR or LF (or any line break) sees."""
    return re.split(r"\r\n|\r|\n", text) + text.splitlines()


def _assert_no_formula(text: str) -> None:
    for line in _naive_lines(text):
        assert not line.lstrip().startswith(FORMULA_CHARS), repr(line)
    for row in csv.reader(io.StringIO(text, newline="")):
        for cell in row:
            if not re.fullmatch(r"-?\d+", cell):
                assert not cell.lstrip().startswith(FORMULA_CHARS), repr(cell)


def test_the_one_writer_quotes_line_breaks_and_neutralises_every_line() -> None:
    out = io.StringIO()
    w = CsvWriter(out)
    w.row(["row", "reason", "amount"])
    for text in HOSTILE:
        w.row(["week", text, -500])
    text = out.getvalue()
    _assert_no_formula(text)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == 1 + len(HOSTILE)  # no cell spilled into a row of its own
    assert [r[1] for r in rows[1:]] == [csv_cell(t) for t in HOSTILE]
    assert {r[2] for r in rows[1:]} == {"-500"}


async def test_stored_reasons_with_line_breaks_export_without_a_formula_row(
    store: LedgerStore,
) -> None:
    await make_link(store)
    clock = FixedClock(T0)
    rt = LinkRuntime(store, clock)
    await rt.memory.load()
    corrections = Corrections(store.engine, rt, clock)
    # The correction's reason as an attacker sent it: a bare CR, then a formula.
    request_id = await corrections.ask(
        link_id="stud", delta_cents=-500, category=CorrectionCategory.MALFUNCTION,
        reason="\r=1+1", requested_by="sup1", document=PDF, document_name="report.pdf",
        document_type="application/pdf",
    )  # fmt: skip
    await corrections.approve(request_id, approved_by="sup2")
    async with store.engine.begin() as conn:
        for i, text in enumerate(HOSTILE):
            await conn.execute(
                insert(MeterEntryRow).values(
                    link_id="stud", seq=100 + i, at_us=T0, kind="contribution",
                    meter_before_units=0, delta_units=0, meter_after_units=0,
                    explanation=text, details="{}", prev_hash="0" * 64, hash="1" * 64,
                )
            )  # fmt: skip
    for kind in ExportKind:
        out = io.StringIO(newline="")
        n = await export(store.engine, out, kind=kind, fmt="csv", since_us=T0, until_us=T0 + 1)
        text = out.getvalue()
        _assert_no_formula(text)
        assert len(list(csv.DictReader(io.StringIO(text, newline="")))) == n
    out = io.StringIO(newline="")
    await export(
        store.engine, out, kind=ExportKind.REDUCTIONS, fmt="csv", since_us=T0, until_us=T0 + 1
    )
    (row,) = csv.DictReader(io.StringIO(out.getvalue(), newline=""))
    assert row["explanation"].endswith("\r'=1+1")  # kept whole, a line break and all


HIT_COLUMNS_EXPORTED = [
    "hit_id", "link_id", "table_id", "at", "seat", "hand", "round", "cards", "source", "status",
    "award_cents", "paid_from", "settlement_group", "settlement_order", "policy", "refusal",
    "entered_by", "verified_by", "released_by", "level", "kind", "needs_technician",
]  # fmt: skip


async def test_hits_export_their_columns_in_the_auditors_order(store: LedgerStore) -> None:
    await make_link(store)
    async with store.engine.begin() as conn:
        await conn.execute(
            insert(HitRow).values(
                hit_id="t1#1", link_id="stud", table_id="t1", table_seq=7, seat=2,
                hand="ROYAL_FLUSH", round=3, cards="1,2,3,4,5", source="table",
                status="awarded", award_cents=500_000, paid_from="meter", settlement_group="g",
                settlement_order=0, policy="split", at_us=T0, verified_by="tech",
                verified_at_us=T0 + 1, verified_cards="1,2,3,4,5", hand_paid_cents=1,
            )
        )  # fmt: skip
    period = {"since_us": T0 - 1, "until_us": T0 + 1}
    out = io.StringIO()
    assert await export(store.engine, out, kind=ExportKind.HITS, fmt="csv", **period) == 1
    header, line = list(csv.reader(io.StringIO(out.getvalue())))
    # Every row of a CSV export ends with the law it was made under.
    assert header == [*HIT_COLUMNS_EXPORTED, "jurisdiction", "demonstration"]
    assert line[-2:] == ["Indiana (68 IAC 10)", "no"]
    line = line[:-2]
    assert line[:4] == ["t1#1", "stud", "t1", "2026-01-01T00:00:00.000000+00:00"]
    assert line[7] == "2d 2h 2s 3c 3d"  # cards as people read them, not as codes
    assert line[-5:-3] == ["tech", ""]
    assert line[-3:-1] == ["", "hand"]  # a hit from before levels: no level, a hand
    out = io.StringIO()
    await export(store.engine, out, kind=ExportKind.HITS, fmt="json", **period)
    (row,) = json.loads(out.getvalue())["rows"]
    assert list(row) == HIT_COLUMNS_EXPORTED
    assert row["award_cents"] == 500_000 and row["at"] == line[3]
    assert row["cards"] == "2d 2h 2s 3c 3d"
    assert (row["level"], row["kind"], row["needs_technician"]) == (None, "hand", True)
