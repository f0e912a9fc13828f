"""The regulated paperwork over HTTP: devices removed from play, corrections by two people,
and the reconciliation of a link's meter for auditors."""

from __future__ import annotations

import io
import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, File, Form, Query, Response, UploadFile, status
from pydantic import BaseModel, Field

from app.api.floor_models import ServiceDep, SinceQuery, UntilQuery, bad_input, errors, period
from app.api.text_fields import IdText, Line, Note, OptionalNote, Reference, optional_line
from app.security import Principal, Role, require
from controller.core.money import MAX_AMOUNT_CENTS, displayed_cents, format_cents
from controller.paperwork import corrections, integrity, reconciliation
from controller.paperwork.corrections import CorrectionCategory
from controller.paperwork.documents import MAX_DOCUMENT_BYTES, DocumentRefused, accept_document
from controller.paperwork.export import CsvWriter, iso
from controller.paperwork.pdf import render_pdf
from controller.paperwork.reconciliation import Reconciliation
from controller.rules.integrity import INTEGRITY_CLAUSE, REMEDIAL_CLAUSE, VERIFICATION_CLAUSE
from controller.storage.store import NotFound

router = APIRouter(prefix="/api/v1")

TABLE_WORKERS = require(Role.TECHNICIAN, Role.SUPERVISOR)
RECORD_READERS = require(Role.TECHNICIAN, Role.SUPERVISOR, Role.AUDITOR, Role.ADMIN)
REQUESTERS = require(Role.SUPERVISOR)
APPROVERS = require(Role.SUPERVISOR, Role.ADMIN)
AUDIT_READERS = require(Role.AUDITOR, Role.SUPERVISOR, Role.ADMIN)


# ----------------------------------------------------------------------------- integrity


class IntegrityRecordCreate(BaseModel):
    """68 IAC 10-1-6.2(b)(1)-(3), (5) and (10), known when the device is removed."""

    questioned_at_us: int = Field(ge=0, description="(b)(1) when its integrity was questioned")
    device_type: Line = Field(description="(b)(2)")
    manufacturer_serial_number: Annotated[str, optional_line(100)] | None = Field(
        default=None, description="(b)(3)(A), if any"
    )
    commission_registration_number: Line = Field(description="(b)(3)(B)")
    malfunction_reason: Note = Field(description="(b)(5) why it is not functioning properly")
    complainant_name: Annotated[str, optional_line(200)] | None = Field(
        default=None, description="(b)(10)(A)"
    )
    complainant_address: Annotated[str, optional_line(500)] | None = None
    complainant_telephone: Annotated[str, optional_line(50)] | None = None
    complaint_nature: OptionalNote | None = Field(default=None, description="(b)(10)(B)")


class EmployeeModel(BaseModel):
    printed_name: Line
    signature: Line
    occupational_license_number: Line


class RemedialActionCreate(BaseModel):
    """68 IAC 10-1-6.2(b)(6)-(8)."""

    description: Note
    employees: list[EmployeeModel] = Field(default=[], max_length=20)
    outside_company_name: Annotated[str, optional_line(200)] | None = None
    outside_company_address: Annotated[str, optional_line(500)] | None = None
    outside_company_telephone: Annotated[str, optional_line(50)] | None = None
    outside_individuals: list[Line] = Field(default=[], max_length=20)


class VerificationCreate(BaseModel):
    verification: Note = Field(description="(b)(9) how the device was found to meet the rules")


class EmployeeRead(BaseModel):
    printed_name: str
    signature: str
    occupational_license_number: str


class RemedialActionRead(BaseModel):
    description: str
    employees: list[EmployeeRead]
    outside_company_name: str | None
    outside_company_address: str | None
    outside_company_telephone: str | None
    outside_individuals: list[str]
    recorded_by: str
    at_us: int


class IntegrityRecordRead(BaseModel):
    record_id: str
    link_id: str
    table_id: str
    questioned_at_us: int
    device_type: str
    manufacturer_serial_number: str | None
    commission_registration_number: str
    removed_at_us: int
    returned_at_us: int | None
    out_of_play_us: int | None = Field(description="(b)(4) how long it was out; None: still out")
    malfunction_reason: str
    remedial_actions: list[RemedialActionRead]
    verified_by: str | None
    verified_at_us: int | None
    verification: str | None
    returned_by: str | None
    complainant_name: str | None
    complainant_address: str | None
    complainant_telephone: str | None
    complaint_nature: str | None
    notice_sha256: str = Field(description="the written notice to the enforcement agent (PDF)")
    recorded_by: str


async def _record(service: Any, row: Any) -> IntegrityRecordRead:
    actions = await integrity.remedial_actions(service.engine, row.record_id)
    return IntegrityRecordRead(
        record_id=row.record_id,
        link_id=row.link_id,
        table_id=row.table_id,
        questioned_at_us=row.questioned_at_us,
        device_type=row.device_type,
        manufacturer_serial_number=row.manufacturer_serial_number,
        commission_registration_number=row.commission_registration_number,
        removed_at_us=row.removed_at_us,
        returned_at_us=row.returned_at_us,
        out_of_play_us=(
            None if row.returned_at_us is None else row.returned_at_us - row.removed_at_us
        ),
        malfunction_reason=row.malfunction_reason,
        remedial_actions=[
            RemedialActionRead(
                description=a.description,
                employees=[EmployeeRead(**e) for e in json.loads(a.employees)],
                outside_company_name=a.outside_company_name,
                outside_company_address=a.outside_company_address,
                outside_company_telephone=a.outside_company_telephone,
                outside_individuals=json.loads(a.outside_individuals),
                recorded_by=a.recorded_by,
                at_us=a.at_us,
            )
            for a in actions
        ],
        verified_by=row.verified_by,
        verified_at_us=row.verified_at_us,
        verification=row.verification,
        returned_by=row.returned_by,
        complainant_name=row.complainant_name,
        complainant_address=row.complainant_address,
        complainant_telephone=row.complainant_telephone,
        complaint_nature=row.complaint_nature,
        notice_sha256=row.notice_sha256,
        recorded_by=row.recorded_by,
    )


async def _table_record(service: Any, table_id: str, record_id: str) -> IntegrityRecordRead:
    row = await integrity.record(service.engine, record_id)
    if row.table_id != table_id:
        raise NotFound(f"no integrity record {record_id!r} for table {table_id!r}")
    return await _record(service, row)


@router.post(
    "/tables/{table_id}/integrity-records",
    tags=["integrity"],
    status_code=status.HTTP_201_CREATED,
    summary=f"Remove a table from play ({INTEGRITY_CLAUSE})",
    description="Records (b)(1)-(5) and (10), files the written notice to the enforcement agent "
    "as a PDF, and stops the table's contributions and hits until it returns to play.",
    responses=errors(401, 403, 404, 409, 422),
)
async def remove_from_play(
    table_id: IdText,
    body: IntegrityRecordCreate,
    service: ServiceDep,
    who: Annotated[Principal, Depends(TABLE_WORKERS)],
) -> IntegrityRecordRead:
    record_id = await integrity.remove_from_play(
        service.runtime,
        table_id=table_id,
        removal=integrity.DeviceRemoval(**body.model_dump()),
        actor=who.username,
    )
    return await _table_record(service, table_id, record_id)


@router.get(
    "/tables/{table_id}/integrity-records",
    tags=["integrity"],
    summary="A table's records of removal from play, newest first",
    responses=errors(401, 403, 404),
)
async def list_records(
    table_id: IdText, service: ServiceDep, _: Annotated[Principal, Depends(RECORD_READERS)]
) -> list[IntegrityRecordRead]:
    service.runtime.link_of(table_id)
    return [
        await _record(service, r)
        for r in await integrity.records(service.engine, table_id=table_id)
    ]


@router.get(
    "/tables/{table_id}/integrity-records/{record_id}",
    tags=["integrity"],
    summary="One record of removal from play",
    responses=errors(401, 403, 404),
)
async def get_record(
    table_id: IdText,
    record_id: Reference,
    service: ServiceDep,
    _: Annotated[Principal, Depends(RECORD_READERS)],
) -> IntegrityRecordRead:
    return await _table_record(service, table_id, record_id)


@router.post(
    "/tables/{table_id}/integrity-records/{record_id}/remedial-actions",
    tags=["integrity"],
    summary=f"Record a remedial action ({REMEDIAL_CLAUSE})",
    responses=errors(401, 403, 404, 409, 422),
)
async def add_remedial_action(
    table_id: IdText,
    record_id: Reference,
    body: RemedialActionCreate,
    service: ServiceDep,
    who: Annotated[Principal, Depends(TABLE_WORKERS)],
) -> IntegrityRecordRead:
    action = integrity.RemedialAction(
        description=body.description,
        employees=[integrity.Employee(**e.model_dump()) for e in body.employees],
        outside_company_name=body.outside_company_name,
        outside_company_address=body.outside_company_address,
        outside_company_telephone=body.outside_company_telephone,
        outside_individuals=body.outside_individuals,
    )
    await integrity.add_remedial_action(
        service.runtime, table_id=table_id, record_id=record_id, action=action, actor=who.username
    )
    return await _table_record(service, table_id, record_id)


@router.post(
    "/tables/{table_id}/integrity-records/{record_id}/verification",
    tags=["integrity"],
    summary=f"Verify the device meets the requirements ({VERIFICATION_CLAUSE})",
    responses=errors(401, 403, 404, 409, 422),
)
async def verify_device(
    table_id: IdText,
    record_id: Reference,
    body: VerificationCreate,
    service: ServiceDep,
    who: Annotated[Principal, Depends(TABLE_WORKERS)],
) -> IntegrityRecordRead:
    await integrity.record_verification(
        service.runtime,
        table_id=table_id,
        record_id=record_id,
        verification=body.verification,
        actor=who.username,
    )
    return await _table_record(service, table_id, record_id)


@router.post(
    "/tables/{table_id}/integrity-records/{record_id}/return-to-play",
    tags=["integrity"],
    summary="Return a repaired, verified table to play",
    responses=errors(401, 403, 404, 409),
)
async def return_to_play(
    table_id: IdText,
    record_id: Reference,
    service: ServiceDep,
    who: Annotated[Principal, Depends(TABLE_WORKERS)],
) -> IntegrityRecordRead:
    await integrity.return_to_play(
        service.runtime, table_id=table_id, record_id=record_id, actor=who.username
    )
    return await _table_record(service, table_id, record_id)


# ----------------------------------------------------------------------------- corrections


class CorrectionRequestRead(BaseModel):
    request_id: str
    link_id: str
    delta_cents: int
    category: str
    reason: str
    document_sha256: str | None
    requested_by: str
    at_us: int
    status: Literal["pending", "approved", "rejected"]
    decided_by: str | None
    decided_at_us: int | None
    decision_reason: str | None
    correction_id: str | None


class RejectRequest(BaseModel):
    reason: Note


def _request(r: Any) -> CorrectionRequestRead:
    return CorrectionRequestRead(
        request_id=r.request_id,
        link_id=r.link_id,
        delta_cents=displayed_cents(r.delta_units),
        category=r.category,
        reason=r.reason,
        document_sha256=r.document_sha256,
        requested_by=r.requested_by,
        at_us=r.at_us,
        status=r.status,
        decided_by=r.decided_by,
        decided_at_us=r.decided_at_us,
        decision_reason=r.decision_reason,
        correction_id=r.correction_id,
    )


@router.post(
    "/links/{link_id}/corrections",
    tags=["corrections"],
    status_code=status.HTTP_201_CREATED,
    summary="Request a correction of the meter (applied when a second person approves)",
    description="Multipart form: delta_cents (negative lowers the meter), category, reason and "
    f"a supporting document (PDF, PNG, JPEG or UTF-8 text, at most "
    f"{MAX_DOCUMENT_BYTES // (1024 * 1024)} MB; required for a reduction).",
    responses=errors(401, 403, 404, 409, 422),
)
async def request_correction(
    link_id: IdText,
    service: ServiceDep,
    who: Annotated[Principal, Depends(REQUESTERS)],
    delta_cents: Annotated[int, Form(ge=-MAX_AMOUNT_CENTS, le=MAX_AMOUNT_CENTS)],
    category: Annotated[CorrectionCategory, Form()],
    reason: Annotated[Note, Form()],
    document: Annotated[UploadFile | None, File()] = None,
) -> CorrectionRequestRead:
    content: bytes | None = None
    name, kind = "document", "application/octet-stream"
    if document is not None:
        content = await document.read(MAX_DOCUMENT_BYTES + 1)
        try:
            name, kind = accept_document(
                content, filename=document.filename, content_type=document.content_type
            )
        except DocumentRefused as exc:
            raise bad_input("body.document", str(exc)) from None
    request_id = await corrections.request_correction(
        service.runtime,
        link_id=link_id,
        delta_cents=delta_cents,
        category=category,
        reason=reason,
        requested_by=who.username,
        document=content,
        document_name=name,
        document_type=kind,
    )
    return _request(await corrections.correction_request(service.engine, request_id))


@router.get(
    "/corrections",
    tags=["corrections"],
    summary="Correction requests, newest first",
    responses=errors(401, 403, 404, 422),
)
async def list_corrections(
    service: ServiceDep,
    _: Annotated[Principal, Depends(AUDIT_READERS)],
    link: Annotated[IdText | None, Query()] = None,
    status_: Annotated[
        Literal["pending", "approved", "rejected"] | None, Query(alias="status")
    ] = None,
) -> list[CorrectionRequestRead]:
    if link is not None and link not in service.runtime.states:
        raise NotFound(f"no link {link!r}")
    rows = await corrections.correction_requests(service.engine, link_id=link, status=status_)
    return [_request(r) for r in rows]


@router.post(
    "/corrections/{request_id}/approve",
    tags=["corrections"],
    summary="Approve a correction as the second person; it is applied at once",
    responses=errors(401, 403, 404, 409),
)
async def approve_correction(
    request_id: Reference, service: ServiceDep, who: Annotated[Principal, Depends(APPROVERS)]
) -> CorrectionRequestRead:
    await corrections.approve_correction(service.runtime, request_id, approved_by=who.username)
    return _request(await corrections.correction_request(service.engine, request_id))


@router.post(
    "/corrections/{request_id}/reject",
    tags=["corrections"],
    summary="Reject a correction request with a reason",
    responses=errors(401, 403, 404, 409, 422),
)
async def reject_correction(
    request_id: Reference,
    body: RejectRequest,
    service: ServiceDep,
    who: Annotated[Principal, Depends(APPROVERS)],
) -> CorrectionRequestRead:
    await corrections.reject_correction(
        service.runtime, request_id, rejected_by=who.username, reason=body.reason
    )
    return _request(await corrections.correction_request(service.engine, request_id))


# ----------------------------------------------------------------------------- reconciliation


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
