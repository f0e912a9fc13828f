"""The jackpot slip of an award, as a printable PDF, and the tax form's reference it carries."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel, ConfigDict, Field

from app.api.deps import ServiceDep
from app.api.floor_models import errors
from app.api.text_fields import HitReference, one_line
from app.security.authentication import Principal, require
from controller.paperwork.slips import slip_content, slip_pdf
from controller.roles import Role

router = APIRouter(prefix="/api/v1/hits", tags=["hits"])

SLIP_READERS = require(Role.TECHNICIAN, Role.SUPERVISOR, Role.AUDITOR, Role.ADMIN)
TAX_FORM_WRITERS = require(Role.TECHNICIAN, Role.SUPERVISOR)


@router.get(
    "/{hit_id:hit}/slip.pdf",
    summary="The jackpot slip of an award, to print",
    description="The property's letterhead; the link, table, seat, game, level, hand and cards "
    "(as dealt and as verified); the amount and, for an award from a meter, the meter before "
    "and after it; who verified, signed and reset, and when (in the property's time zone); "
    "the tax form's reference from the operator's amount; the hit and its entry of the meter "
    "history (sequence number and seal) to check the slip against the ledger; a signature "
    "block. A fixed pay made at the table gets a slip saying so, with no meter lines. "
    "A refused hit paid nothing and has no slip (409).",
    responses={200: {"content": {"application/pdf": {}}}, **errors(401, 403, 404, 409, 422)},
)
async def jackpot_slip(
    hit_id: HitReference, service: ServiceDep, _: Annotated[Principal, Depends(SLIP_READERS)]
) -> Response:
    records = service.records
    hit = await records.hit(hit_id)
    source = await records.slip_source(hit)
    settings = service.settings
    letterhead = service.letterhead(hit.link_id)
    slip = slip_content(
        source,
        letterhead=letterhead,
        tax_reporting_from_cents=settings.tax_reporting_from,
        second_signature_from_cents=records.second_signature_from_cents,
    )
    async with service.workers.job() as job:
        pdf = await job.run(slip_pdf, slip, letterhead)
    # The file name from the stored hit id, its characters outside [A-Za-z0-9-] replaced.
    stem = "".join(c if c.isascii() and (c.isalnum() or c == "-") else "-" for c in hit.hit_id)
    return Response(
        pdf,
        media_type="application/pdf",
        headers={"Content-Disposition": f'attachment; filename="jackpot-slip-{stem}.pdf"'},
    )


class TaxFormRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"reference": "W2G-2026-000417"}]})

    reference: Annotated[str, one_line(64)] = Field(
        description="the reference number of the tax form the award was reported on (never "
        "the patron's identity)"
    )


class TaxFormRead(BaseModel):
    hit_id: str
    award_cents: int
    tax_form_reference: str
    tax_form_by: str
    tax_form_at_us: int


@router.post(
    "/{hit_id:hit}/tax-form",
    summary="Record the reference of the tax form an award was reported on",
    description="Only for an award at or above the operator's tax-reporting amount "
    "(PROGRESSIVE_TAX_REPORTING_FROM); recorded once, a second time is refused (409). The "
    "jackpot slip prints it. Audited.",
    responses=errors(401, 403, 404, 409, 422),
)
async def record_tax_form(
    hit_id: HitReference,
    body: TaxFormRequest,
    service: ServiceDep,
    who: Annotated[Principal, Depends(TAX_FORM_WRITERS)],
) -> TaxFormRead:
    row = await service.hits.record_tax_form(
        hit_id,
        reference=body.reference,
        from_cents=service.settings.tax_reporting_from,
        actor=who.username,
    )
    assert row.tax_form_reference is not None and row.tax_form_by is not None
    assert row.tax_form_at_us is not None
    return TaxFormRead(
        hit_id=row.hit_id,
        award_cents=row.award_cents,
        tax_form_reference=row.tax_form_reference,
        tax_form_by=row.tax_form_by,
        tax_form_at_us=row.tax_form_at_us,
    )
