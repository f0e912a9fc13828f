"""Hits: the technician's list of work, verification of the hand, the second signature, the
hand pay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field

from app.api.deps import ServiceDep
from app.api.floor_models import HandPayRequest, VerifyRequest, errors
from app.api.hit_models import HitRead, note_problems
from app.api.text_fields import HitReference, IdText
from app.security.authentication import Principal, require
from controller.paperwork import record_views
from controller.roles import Role
from controller.runtime.service import FloorService
from controller.storage.hits import HitRecord

router = APIRouter(prefix="/api/v1/hits", tags=["hits"])

HIT_READERS = require(Role.TECHNICIAN, Role.SUPERVISOR, Role.AUDITOR, Role.ADMIN)
HIT_WORKERS = require(Role.TECHNICIAN, Role.SUPERVISOR)

HitKind = Literal["hand", "mystery", "envy"]


def read_hit(service: FloorService, row: HitRecord) -> HitRead:
    """A hit as the API shows it, under this floor's amounts and its pool's level names. The
    second-signature amount is the one the runtime enforces at a reset."""
    records = service.records
    shown = HitRead.of(
        row,
        second_signature_from_cents=records.second_signature_from_cents,
        tax_reporting_from_cents=service.settings.tax_reporting_from,
        level_name=records.level_name(row.link_id, row.level),
    )
    note_problems(service, (shown,))
    return shown


def read_hits(service: FloorService, rows: Iterable[HitRecord]) -> list[HitRead]:
    """Hits as the API shows them, each whatever the others' records hold."""
    return [read_hit(service, r) for r in rows]


LinkQuery = Annotated[IdText | None, Query(description="only this link's hits")]
TableQuery = Annotated[IdText | None, Query(description="only this table's hits")]
KindQuery = Annotated[
    HitKind | None, Query(description="only hits of this kind: a hand, a mystery draw, envy")
]


@router.get("", summary="Hits on every link, newest first", responses=errors(401, 403, 404, 422))
async def list_hits(
    service: ServiceDep,
    _: Annotated[Principal, Depends(HIT_READERS)],
    pending: Annotated[
        bool,
        Query(
            description="only hits with technician work left: a held table not yet reset, or "
            "a payout at the table not yet recorded"
        ),
    ] = False,
    table: TableQuery = None,
    limit: Annotated[int, Query(ge=1, le=record_views.MAX_PAGE)] = 200,
) -> list[HitRead]:
    rows = await service.records.hits(table_id=table, pending=pending, limit=limit)
    return read_hits(service, rows)


class WorkRead(BaseModel):
    holding: list[HitRead] = Field(
        description="every hit that holds a table (an award from a meter or a refused claim "
        "at a table not reset since), oldest first: always complete, never paged"
    )
    other: list[HitRead] = Field(
        description="the newest of the rest of the technician's work (fixed pays at or above "
        "the operator's amount, their hand pay not recorded), at most `limit`"
    )
    other_total: int = Field(description="how many the rest are in all")
    escalate_after_s: int = Field(description="a holding hit waiting longer is overdue")
    second_signature_from_cents: int
    tax_reporting_from_cents: int


@router.get(
    "/work",
    summary="The technician's work: every hit holding a table, then a page of the rest",
    description="`holding` is never cut by a page size, so a jackpot holding a table is "
    "always there however much other work waits; `limit` pages only `other`.",
    responses=errors(401, 403, 404, 422),
)
async def technician_work(
    service: ServiceDep,
    _: Annotated[Principal, Depends(HIT_READERS)],
    link: LinkQuery = None,
    table: TableQuery = None,
    kind: KindQuery = None,
    limit: Annotated[
        int, Query(ge=1, le=record_views.MAX_PAGE, description="at most this many of `other`")
    ] = 200,
) -> WorkRead:
    records = service.records
    work = await records.technician_work(records.hit_filter(link, table, kind), limit=limit)
    settings = service.settings
    return WorkRead(
        holding=read_hits(service, work.holding),
        other=read_hits(service, work.other),
        other_total=work.other_total,
        escalate_after_s=settings.escalate_after_minutes * 60,
        second_signature_from_cents=records.second_signature_from_cents,
        tax_reporting_from_cents=settings.tax_reporting_from,
    )


class QuietPage(BaseModel):
    hits: list[HitRead]
    total: int = Field(description="how many such fixed pays there are in all")
    offset: int


@router.get(
    "/paid-without-technician",
    summary="Fixed pays under the operator's amount, which no technician deals with",
    description="Newest first, a page at `offset`. Read-only: nothing waits for these.",
    responses=errors(401, 403, 404, 422),
)
async def paid_without_technician(
    service: ServiceDep,
    _: Annotated[Principal, Depends(HIT_READERS)],
    link: LinkQuery = None,
    table: TableQuery = None,
    kind: KindQuery = None,
    limit: Annotated[int, Query(ge=1, le=record_views.MAX_PAGE)] = 50,
    offset: Annotated[int, Query(ge=0, le=record_views.MAX_POSITION)] = 0,
) -> QuietPage:
    records = service.records
    rows, total = await records.paid_without_technician(
        records.hit_filter(link, table, kind), limit=limit, offset=offset
    )
    return QuietPage(hits=read_hits(service, rows), total=total, offset=offset)


class TaxFormsDue(BaseModel):
    hits: list[HitRead] = Field(description="the newest first, at most `limit`")
    total: int = Field(description="how many awards wait for their tax form's reference")
    tax_reporting_from_cents: int


@router.get(
    "/tax-forms-due",
    summary="Awards whose tax form's reference is still to be recorded",
    description="Every award at or above the operator's tax-reporting amount "
    "(PROGRESSIVE_TAX_REPORTING_FROM) with no tax form's reference yet, its table reset or "
    "not, newest first: the reference is recorded with `POST /api/v1/hits/{hit_id}/tax-form` "
    "and printed on the jackpot slip.",
    responses=errors(401, 403, 404, 422),
)
async def tax_forms_due(
    service: ServiceDep,
    _: Annotated[Principal, Depends(HIT_READERS)],
    link: LinkQuery = None,
    table: TableQuery = None,
    kind: KindQuery = None,
    limit: Annotated[int, Query(ge=1, le=record_views.MAX_PAGE)] = 50,
) -> TaxFormsDue:
    from_cents = service.settings.tax_reporting_from
    records = service.records
    rows, total = await records.tax_forms_due(
        records.hit_filter(link, table, kind), from_cents=from_cents, limit=limit
    )
    return TaxFormsDue(
        hits=[read_hit(service, r) for r in rows], total=total, tax_reporting_from_cents=from_cents
    )


@router.get("/{hit_id:hit}", summary="One hit", responses=errors(401, 403, 404))
async def get_hit(
    hit_id: HitReference, service: ServiceDep, _: Annotated[Principal, Depends(HIT_READERS)]
) -> HitRead:
    return read_hit(service, await service.records.hit(hit_id))


@router.post(
    "/{hit_id:hit}/verify",
    summary="Verify the hand of a hit",
    description="When the table reported cards, this confirms them (cards sent must be the "
    "same). When it reported none, send the five cards seen: the evaluator checks they make "
    "the claimed hand. Recorded once; a second verification is refused (409). Audited.",
    responses=errors(401, 403, 404, 409, 422),
)
async def verify_hit(
    hit_id: HitReference,
    service: ServiceDep,
    who: Annotated[Principal, Depends(HIT_WORKERS)],
    body: VerifyRequest | None = None,
) -> HitRead:
    cards = body.codes() if body is not None else None
    row = await service.hits.verify(hit_id, actor=who.username, cards=cards)
    return read_hit(service, row)


@router.post(
    "/{hit_id:hit}/sign-off",
    summary="Sign off a verified award as the second person",
    description="An award paid from a meter at or above the second-signature amount is "
    "signed off by a second person, not the one who verified it, before its table may be "
    "reset. Refused (409) before the verification, by the verifier, a second time, or for "
    "an award that needs no second signature. Audited.",
    responses=errors(401, 403, 404, 409),
)
async def sign_off_hit(
    hit_id: HitReference,
    service: ServiceDep,
    who: Annotated[Principal, Depends(HIT_WORKERS)],
) -> HitRead:
    row = await service.hits.sign_off(hit_id, actor=who.username)
    return read_hit(service, row)


@router.post(
    "/{hit_id:hit}/hand-pay",
    summary="Record the hand pay of a verified hit",
    description="The amount must be the award, in whole cents. Recorded once. Audited.",
    responses=errors(401, 403, 404, 409, 422),
)
async def hand_pay(
    hit_id: HitReference,
    body: HandPayRequest,
    service: ServiceDep,
    who: Annotated[Principal, Depends(HIT_WORKERS)],
) -> HitRead:
    row = await service.hits.record_hand_pay(
        hit_id, amount_cents=body.amount_cents, actor=who.username
    )
    return read_hit(service, row)
