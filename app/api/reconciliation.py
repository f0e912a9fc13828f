"""The reconciliation of a link's meter for auditors over HTTP: as JSON, and the weekly meter
report as CSV or PDF."""

from __future__ import annotations

import io
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response
from pydantic import BaseModel, Field

from app.api.corrections import AUDIT_READERS
from app.api.floor_models import ServiceDep, SinceQuery, UntilQuery, errors, period
from app.api.text_fields import IdText
from app.security import Principal
from controller.core.money import format_cents
from controller.paperwork import reconciliation
from controller.paperwork.export import CsvWriter, iso
from controller.paperwork.pdf import render_pdf
from controller.paperwork.reconciliation import Reconciliation

router = APIRouter(prefix="/api/v1")


class TableContributionRead(BaseModel):
    table_id: str
    credits: int
    contributions_cents: int
    contributions_units: int


class ReconciliationRead(BaseModel):
    link_id: str
    since_us: int
    until_us: int
    opening_cents: int
    opening_units: int
    contributions_cents: int
    contributions_units: int
    seeded_cents: int
    seeded_units: int
    anomalies_approved_cents: int
    anomalies_approved_units: int
    awards_paid_cents: int
    awards_paid_units: int
    corrections_cents: int
    corrections_units: int
    other_cents: int
    other_units: int
    expected_closing_cents: int
    expected_closing_units: int
    closing_cents: int
    closing_units: int
    difference_units: int = Field(description="closing - expected; anything but 0 is flagged")
    balanced: bool
    entries: int
    problems: list[str]
    tables: list[TableContributionRead]


class ReconciliationReport(ReconciliationRead):
    weeks: list[ReconciliationRead] = Field(description="the weekly meter report (Monday, UTC)")


@router.get(
    "/links/{link_id}/reconciliation",
    tags=["reconciliation"],
    summary="Opening + contributions + seeds - awards + corrections = closing, to the unit",
    responses=errors(401, 403, 404, 422, 503),
)
async def get_reconciliation(
    link_id: IdText,
    service: ServiceDep,
    _: Annotated[Principal, Depends(AUDIT_READERS)],
    since: SinceQuery = None,
    until: UntilQuery = None,
) -> ReconciliationReport:
    since_us, until_us = period(since, until, service.clock.now_us())
    async with service.workers.job() as job:
        total, weeks = await reconciliation.reconciliation(
            service.engine, link_id, since_us, until_us, job=job
        )
        return await job.run(_report, total, weeks)


def _report(total: Reconciliation, weeks: list[Reconciliation]) -> ReconciliationReport:
    return ReconciliationReport(
        **reconciliation.summary(total),
        weeks=[ReconciliationRead(**reconciliation.summary(w)) for w in weeks],
    )


RECON_COLUMNS = (
    "period_start", "period_end", "opening_cents", "contributions_cents", "seeded_cents",
    "anomalies_approved_cents", "awards_paid_cents", "corrections_cents", "other_cents",
    "expected_closing_cents", "closing_cents", "difference_units", "balanced", "problems",
)  # fmt: skip


def _line(s: dict[str, Any]) -> list[Any]:
    return [
        iso(s["since_us"]), iso(s["until_us"]),
        *(s[c] for c in RECON_COLUMNS[2:12]),
        "yes" if s["balanced"] else "NO", "; ".join(s["problems"]),
    ]  # fmt: skip


@router.get(
    "/links/{link_id}/reconciliation/export",
    tags=["reconciliation"],
    summary="The reconciliation and weekly meter report as CSV or PDF",
    responses={
        200: {"content": {"text/csv": {}, "application/pdf": {}}},
        **errors(401, 403, 404, 422, 503),
    },
)
async def export_reconciliation(
    link_id: IdText,
    service: ServiceDep,
    _: Annotated[Principal, Depends(AUDIT_READERS)],
    format: Annotated[Literal["csv", "pdf"], Query()] = "csv",
    since: SinceQuery = None,
    until: UntilQuery = None,
) -> Response:
    since_us, until_us = period(since, until, service.clock.now_us())
    async with service.workers.job() as job:
        total, weeks = await reconciliation.reconciliation(
            service.engine, link_id, since_us, until_us, job=job
        )
        anchors = reconciliation.anchor_lines(
            await reconciliation.chain_head(service.engine, link_id),
            service.last_checkpoint(link_id),
        )
        # The file name is built from checked values only, never from what a caller typed.
        stem = f"reconciliation-{since_us}-{until_us}"
        if format == "csv":
            text = await job.run(_report_csv, total, weeks, anchors)
            return Response(
                text,
                media_type="text/csv",
                headers={"Content-Disposition": f'attachment; filename="{stem}.csv"'},
            )
        pdf = await job.run(_report_pdf, link_id, total, weeks, anchors)
    return Response(
        pdf,
        media_type="application/pdf",
        headers={"Content-Disposition": f'attachment; filename="{stem}.pdf"'},
    )


def _report_csv(total: Reconciliation, weeks: list[Reconciliation], anchors: list[str]) -> str:
    s = reconciliation.summary(total)
    out = io.StringIO()
    w = CsvWriter(out)
    w.row(["row", *RECON_COLUMNS])
    w.row(["period", *_line(s)])
    for week in weeks:
        w.row(["week", *_line(reconciliation.summary(week))])
    w.row([])
    w.row(["table_id", "credits", "contributions_cents", "contributions_units"])
    for t in s["tables"]:
        w.row([t["table_id"], t["credits"], t["contributions_cents"], t["contributions_units"]])
    w.row([])
    for line in anchors:
        w.row([line])
    return out.getvalue()


def _report_pdf(
    link_id: str, total: Reconciliation, weeks: list[Reconciliation], anchors: list[str]
) -> bytes:
    s = reconciliation.summary(total)
    lines = [reconciliation.summary(w) for w in weeks]
    verdict = (
        "BALANCED to the unit"
        if s["balanced"]
        else f"NOT BALANCED: difference {s['difference_units']:+d} units"
    )
    terms = [
        ["Term", "Amount"],
        ["Opening meter", format_cents(s["opening_cents"])],
        ["+ Contributions", format_cents(s["contributions_cents"])],
        ["+ Reset amounts seeded", format_cents(s["seeded_cents"])],
        ["+ Anomalies approved", format_cents(s["anomalies_approved_cents"])],
        ["- Awards paid", format_cents(s["awards_paid_cents"])],
        ["+ Corrections", format_cents(s["corrections_cents"])],
        ["+ Other", format_cents(s["other_cents"])],
        ["= Expected closing", format_cents(s["expected_closing_cents"])],
        ["Closing meter", format_cents(s["closing_cents"])],
    ]
    by_table = [["Table", "Credits", "Contributions"]] + [
        [t["table_id"], str(t["credits"]), format_cents(t["contributions_cents"])]
        for t in s["tables"]
    ]
    by_week = [["Week from", "Opening", "Contributions", "Awards", "Closing", "Balanced"]] + [
        [
            iso(wk["since_us"])[:10],
            format_cents(wk["opening_cents"]),
            format_cents(wk["contributions_cents"]),
            format_cents(wk["awards_paid_cents"]),
            format_cents(wk["closing_cents"]),
            "yes" if wk["balanced"] else "NO",
        ]
        for wk in lines
    ]
    return render_pdf(
        f"Meter reconciliation, link {link_id}",
        [
            ("Period", [f"{iso(s['since_us'])} to {iso(s['until_us'])} (UTC)", verdict]),
            ("Reconciliation", terms),
            ("Contributions by table", by_table),
            ("Weekly meter report", by_week),
            ("Problems", s["problems"] or ["none"]),
            ("History anchors", anchors),
        ],
    )
