"""Corrections of a meter over HTTP: one person asks, a second approves or rejects."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, File, Form, Query, UploadFile, status
from pydantic import BaseModel, Field

from app.api.deps import ServiceDep
from app.api.floor_models import bad_input, errors
from app.api.text_fields import IdText, Note, Reference
from app.security.authentication import Principal, require
from controller.core.money import MAX_AMOUNT_CENTS, displayed_cents, parse_cents
from controller.core.reducer import EngineError
from controller.paperwork.corrections import CorrectionCategory, Corrections
from controller.paperwork.documents import MAX_DOCUMENT_BYTES, accept_document
from controller.refusal import at
from controller.roles import Role
from controller.storage.papers.correction_records import CorrectionRequest

router = APIRouter(prefix="/api/v1")

REQUESTERS = require(Role.SUPERVISOR)
APPROVERS = require(Role.SUPERVISOR, Role.ADMIN)
AUDIT_READERS = require(Role.AUDITOR, Role.SUPERVISOR, Role.ADMIN)


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
    meter: str | None = Field(
        description="the meter of a link of levels it corrects (L2, L1.reserve...); "
        "null: the link's one meter"
    )
    meter_name: str | None = Field(description='the meter as people call it: "Grand reserve"')


class CorrectionMeterRead(BaseModel):
    meter: str = Field(examples=["L1.reserve"])
    name: str = Field(examples=["Grand reserve"])
    amount_cents: int


class RejectRequest(BaseModel):
    reason: Note


def _request(r: CorrectionRequest, corrections: Corrections) -> CorrectionRequestRead:
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
        meter=r.meter,
        meter_name=corrections.meter_name(r.link_id, r.meter),
    )


@router.post(
    "/links/{link_id}/corrections",
    tags=["corrections"],
    status_code=status.HTTP_201_CREATED,
    summary="Request a correction of the meter (applied when a second person approves)",
    description="Multipart form: delta_cents (negative lowers the meter; or delta, the amount "
    'as typed with its $, "-$120.00"), category, reason, meter (on a link of levels, the one '
    "to correct: L1, L1.reserve, L2.overflow..., as GET .../corrections/meters lists them) and "
    f"a supporting document (PDF, PNG, JPEG or UTF-8 text, at most "
    f"{MAX_DOCUMENT_BYTES // (1024 * 1024)} MB; required for a reduction).",
    responses=errors(401, 403, 404, 409, 422),
)
async def request_correction(
    link_id: IdText,
    service: ServiceDep,
    who: Annotated[Principal, Depends(REQUESTERS)],
    category: Annotated[CorrectionCategory, Form()],
    reason: Annotated[Note, Form()],
    delta_cents: Annotated[int | None, Form(ge=-MAX_AMOUNT_CENTS, le=MAX_AMOUNT_CENTS)] = None,
    delta: Annotated[
        str | None, Form(max_length=40, description='delta_cents as typed, "-$120.00"')
    ] = None,
    meter: Annotated[
        str | None,
        Form(max_length=32, description="on a link of levels: the meter to correct (L1.reserve)"),
    ] = None,
    document: Annotated[
        UploadFile | None, File(json_schema_extra={"maxLength": MAX_DOCUMENT_BYTES})
    ] = None,
) -> CorrectionRequestRead:
    if (delta is None) == (delta_cents is None):
        raise bad_input("body.delta_cents", "give the change as delta_cents or delta, one of them")
    if delta is not None:
        with at("body.delta"):
            # Typed with its $, as on the command line: "10" is never taken for $10.
            delta_cents = parse_cents(delta, allow_negative=True, unit_required=True)
    assert delta_cents is not None
    corrections = service.corrections
    try:
        meter = corrections.check_meter(link_id, meter or None)
    except EngineError as exc:
        # The engine refuses a meter the link does not have (409 when a correction is
        # applied); named by the request that is being made, it is input refused at its field.
        raise bad_input("body.meter", str(exc)) from None
    content: bytes | None = None
    name, kind = "document", "application/octet-stream"
    if document is not None:
        content = await document.read(MAX_DOCUMENT_BYTES + 1)
        with at("body.document"):
            name, kind = accept_document(
                content, filename=document.filename, content_type=document.content_type
            )
    request_id = await corrections.ask(
        link_id=link_id,
        delta_cents=delta_cents,
        category=category,
        reason=reason,
        requested_by=who.username,
        document=content,
        document_name=name,
        document_type=kind,
        meter=meter,
    )
    return _request(await corrections.request(request_id), corrections)


@router.get(
    "/links/{link_id}/corrections/meters",
    tags=["corrections"],
    summary="The meters a correction of a link of levels chooses from",
    description="Every meter of a link of levels, with its name and current amount; a "
    "correction names one. Empty for a link of one meter: its corrections need no choice.",
    responses=errors(401, 403, 404, 422),
)
async def correction_meters(
    link_id: IdText, service: ServiceDep, _: Annotated[Principal, Depends(REQUESTERS)]
) -> list[CorrectionMeterRead]:
    return [
        CorrectionMeterRead(meter=m.key, name=m.name, amount_cents=displayed_cents(m.units))
        for m in service.corrections.meters(link_id)
    ]


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
    corrections = service.corrections
    rows = await corrections.requests(link_id=link, status=status_)
    return [_request(r, corrections) for r in rows]


@router.post(
    "/corrections/{request_id}/approve",
    tags=["corrections"],
    summary="Approve a correction as the second person; it is applied at once",
    responses=errors(401, 403, 404, 409),
)
async def approve_correction(
    request_id: Reference, service: ServiceDep, who: Annotated[Principal, Depends(APPROVERS)]
) -> CorrectionRequestRead:
    corrections = service.corrections
    await corrections.approve(request_id, approved_by=who.username)
    return _request(await corrections.request(request_id), corrections)


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
    corrections = service.corrections
    await corrections.reject(request_id, rejected_by=who.username, reason=body.reason)
    return _request(await corrections.request(request_id), corrections)
