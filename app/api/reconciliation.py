"""The reconciliation of a link's meter for auditors over HTTP: as JSON, and the weekly meter
report as CSV or PDF."""

from __future__ import annotations

import datetime as dt
import io
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response
from pydantic import BaseModel, Field

from app.api.corrections import AUDIT_READERS
from app.api.deps import ServiceDep
from app.api.floor_models import SinceQuery, UntilQuery, errors, period
from app.api.text_fields import IdText
from app.security.authentication import Principal
from controller.core.money import format_cents
from controller.paperwork import reconciliation
from controller.paperwork.export import CsvWriter, iso
from controller.paperwork.pdf import Letterhead, render_pdf
from controller.paperwork.reconciliation import Reconciliation
from controller.paperwork.report_documents import REPORT_SIGNATURES, meters_table
from controller.rules.statement import Statement

router = APIRouter(prefix="/api/v1")


class TableContributionRead(BaseModel):
    table_id: str
    credits: int
    contributions_cents: int
    contributions_units: int


class MeterLineRead(BaseModel):
    """One meter of the pool over the period: a level's meter, its reserve or its overflow."""

    meter: str = Field(examples=["L2.reserve"], description="the meter's key")
    level: str = Field(examples=["L2"])
    pot: Literal["meter", "reserve", "overflow"]
    name: str | None = Field(description="the level's name, where the link is loaded")
    opening_cents: int
    opening_units: int
    contributed_cents: int
    contributed_units: int
    seeded_cents: int
    seeded_units: int
    moved_cents: int
    moved_units: int = Field(
        description="a reset's move: + into the level's meter from its reserve and overflow, "
        "- out of those; over the pool it adds up to 0"
    )
    awarded_cents: int
    awarded_units: int
    corrected_cents: int
    corrected_units: int
    other_cents: int
    other_units: int
    closing_cents: int
    closing_units: int
    difference_units: int


class FixedPayRead(BaseModel):
    """A fixed-pay link's side bets against its pays (68 IAC 10-7-5(b))."""

    bets_credits: int
    bets_cents: int = Field(description="credits x denomination, as each registration records")
    pays: int
    pays_cents: int = Field(description="the hits recorded as paid at the table")
    hold_cents: int = Field(description="bets less pays")
    clause: str


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
    meters: list[MeterLineRead] = Field(
        default=[], description="meter by meter (L1, L1.reserve, L1.overflow, L2, ...)"
    )
    fixed_pay: FixedPayRead | None = Field(
        default=None, description="a fixed-pay link's bets, pays and hold"
    )


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
    reconciliations = service.reconciliations
    since_us, until_us = period(since, until, reconciliations.now_us())
    async with service.workers.job() as job:
        total, weeks = await reconciliations.period(link_id, since_us, until_us, job=job)
        return await job.run(_report, total, weeks, reconciliations.level_names(link_id))


def _day(at_us: int) -> str:
    """The UTC day of ``at_us``: ``2026-01-31``."""
    return (_EPOCH + dt.timedelta(microseconds=at_us)).date().isoformat()


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _report(
    total: Reconciliation, weeks: list[Reconciliation], names: dict[str, str]
) -> ReconciliationReport:
    return ReconciliationReport(
        **reconciliation.summary(total, names),
        weeks=[ReconciliationRead(**reconciliation.summary(w, names)) for w in weeks],
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
    reconciliations = service.reconciliations
    since_us, until_us = period(since, until, reconciliations.now_us())
    async with service.workers.job() as job:
        total, weeks = await reconciliations.period(link_id, since_us, until_us, job=job)
        anchors = reconciliation.anchor_lines(
            await reconciliations.chain_head(link_id), service.last_checkpoint(link_id)
        )
        # The file name is built from checked values only, never from what a caller typed:
        # the link and the first and last days of the period (UTC, as the period is read).
        stem = f"reconciliation-{link_id}-{_day(since_us)}-{_day(max(since_us, until_us - 1))}"
        names = reconciliations.level_names(link_id)
        said = service.statement(link_id)
        if format == "csv":
            text = await job.run(_report_csv, total, weeks, anchors, names, said)
            return Response(
                text,
                media_type="text/csv",
                headers={"Content-Disposition": f'attachment; filename="{stem}.csv"'},
            )
        letterhead = service.letterhead(link_id)
        pdf = await job.run(_report_pdf, link_id, total, weeks, anchors, names, letterhead)
    return Response(
        pdf,
        media_type="application/pdf",
        headers={"Content-Disposition": f'attachment; filename="{stem}.pdf"'},
    )


METER_COLUMNS = (
    "meter", "name", "opening_units", "contributed_units", "seeded_units", "moved_units",
    "awarded_units", "corrected_units", "other_units", "closing_units", "difference_units",
)  # fmt: skip
FIXED_PAY_COLUMNS = ("bets_credits", "bets_cents", "pays", "pays_cents", "hold_cents", "clause")


def _report_csv(
    total: Reconciliation,
    weeks: list[Reconciliation],
    anchors: list[str],
    names: dict[str, str] | None = None,
    said: Statement | None = None,
) -> str:
    """``said``: the law the report is made under, in two last columns of its first rows."""
    s = reconciliation.summary(total, names)
    out = io.StringIO()
    w = CsvWriter(out)
    w.row(["row", *RECON_COLUMNS, "jurisdiction", "demonstration"])
    law = ["", ""] if said is None else [said.jurisdiction, said.demonstration or ""]
    w.row(["period", *_line(s), *law])
    for week in weeks:
        w.row(["week", *_line(reconciliation.summary(week))])
    w.row([])
    w.row(["table_id", "credits", "contributions_cents", "contributions_units"])
    for t in s["tables"]:
        w.row([t["table_id"], t["credits"], t["contributions_cents"], t["contributions_units"]])
    w.row([])
    if len(s["meters"]) > 1:
        w.row(METER_COLUMNS)
        for m in s["meters"]:
            w.row(m[c] for c in METER_COLUMNS)
        w.row([])
    if s["fixed_pay"] is not None:
        w.row(FIXED_PAY_COLUMNS)
        w.row(s["fixed_pay"][c] for c in FIXED_PAY_COLUMNS)
        w.row([])
    for line in anchors:
        w.row([line])
    return out.getvalue()


def _report_pdf(
    link_id: str,
    total: Reconciliation,
    weeks: list[Reconciliation],
    anchors: list[str],
    names: dict[str, str] | None = None,
    letterhead: Letterhead | None = None,
) -> bytes:
    """The reconciliation and weekly meter report, printed: with a ``letterhead``, headed by
    the property, its times in the property's zone, signed by who prepared and reviewed it."""
    s = reconciliation.summary(total, names)
    when = letterhead.when if letterhead is not None else (lambda at_us: iso(at_us))
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
            when(wk["since_us"]) if letterhead is not None else iso(wk["since_us"])[:10],
            format_cents(wk["opening_cents"]),
            format_cents(wk["contributions_cents"]),
            format_cents(wk["awards_paid_cents"]),
            format_cents(wk["closing_cents"]),
            "yes" if wk["balanced"] else "NO",
        ]
        for wk in lines
    ]
    zone = " (UTC)" if letterhead is None else ""
    sections: list[tuple[str, list[Any]]] = [
        ("Period", [f"{when(s['since_us'])} to {when(s['until_us'])}{zone}", verdict]),
        ("Reconciliation", terms),
    ]
    if len(s["meters"]) > 1:
        sections.append(("Meter by meter", meters_table(s["meters"])))
    if (fp := s["fixed_pay"]) is not None:
        sections.append(
            (
                f"Fixed pays ({fp['clause']})",
                [
                    ["Term", "Amount"],
                    [
                        f"Bets registered ({fp['bets_credits']} credits)",
                        format_cents(fp["bets_cents"]),
                    ],
                    [f"- Fixed pays recorded ({fp['pays']})", format_cents(fp["pays_cents"])],
                    ["= Hold", format_cents(fp["hold_cents"])],
                ],
            )
        )
    return render_pdf(
        f"Meter reconciliation, link {link_id}",
        [
            *sections,
            ("Contributions by table", by_table),
            ("Weekly meter report", by_week),
            ("Problems", s["problems"] or ["none"]),
            ("History anchors", anchors),
        ],
        letterhead=letterhead,
        signatures=REPORT_SIGNATURES if letterhead is not None else (),
    )
