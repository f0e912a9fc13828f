"""CSV exports opened in a spreadsheet: text that starts like a formula stays text."""

from __future__ import annotations

import csv
import io

from sqlalchemy import insert

from controller import corrections
from controller.clock import FixedClock
from controller.corrections import CorrectionCategory
from controller.export import ExportKind, csv_cell, export
from controller.runtime import LinkRuntime
from controller.storage.models import MeterEntryRow
from controller.storage.store import LedgerStore
from tests.conftest import T0
from tests.storage.helpers import make_link

PDF = b"%PDF-1.4 service report"
FORMULA = '=HYPERLINK("http://example.invalid","refund")'


def test_text_that_starts_like_a_formula_is_neutralised_numbers_are_not() -> None:
    for text in ("=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"):
        assert csv_cell(text) == "'" + text
    assert csv_cell("meter ran on") == "meter ran on"
    # A negative amount is a number; a spreadsheet must still be able to add it up.
    assert csv_cell(-5_000_000) == -5_000_000
    assert csv_cell(None) is None


async def test_a_reduction_explained_with_a_formula_exports_as_text(store: LedgerStore) -> None:
    await make_link(store)
    rt = LinkRuntime(store, FixedClock(T0))
    await rt.load()
    request_id = await corrections.request_correction(
        rt, link_id="stud", delta_cents=-500, category=CorrectionCategory.MALFUNCTION,
        reason=FORMULA, requested_by="sup1", document=PDF, document_name="report.pdf",
        document_type="application/pdf",
    )  # fmt: skip
    await corrections.approve_correction(rt, request_id, approved_by="sup2")
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
