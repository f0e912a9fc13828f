"""Hits: the technician's list of work, verification of the hand, the hand pay."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from app.api.floor_models import HandPayRequest, HitRead, ServiceDep, VerifyRequest, errors
from app.api.text_fields import IdText, Reference
from app.security import Principal, Role, require
from controller.paperwork import records

router = APIRouter(prefix="/api/v1/hits", tags=["hits"])

HIT_READERS = require(Role.TECHNICIAN, Role.SUPERVISOR, Role.AUDITOR, Role.ADMIN)
HIT_WORKERS = require(Role.TECHNICIAN, Role.SUPERVISOR)


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
    table: Annotated[IdText | None, Query(description="only this table's hits")] = None,
    limit: Annotated[int, Query(ge=1, le=records.MAX_PAGE)] = 200,
) -> list[HitRead]:
    if table is not None:
        service.runtime.link_of(table)  # 404 for a table that does not exist
    rows = await records.hits(service.engine, table_id=table, pending=pending, limit=limit)
    return [HitRead.of(r) for r in rows]


@router.get("/{hit_id}", summary="One hit", responses=errors(401, 403, 404))
async def get_hit(
    hit_id: Reference, service: ServiceDep, _: Annotated[Principal, Depends(HIT_READERS)]
) -> HitRead:
    return HitRead.of(await service.runtime.hit(hit_id))


@router.post(
    "/{hit_id}/verify",
    summary="Verify the hand of a hit",
    description="When the table reported cards, this confirms them (cards sent must be the "
    "same). When it reported none, send the five cards seen: the evaluator checks they make "
    "the claimed hand. Recorded once; a second verification is refused (409). Audited.",
    responses=errors(401, 403, 404, 409, 422),
)
async def verify_hit(
    hit_id: Reference,
    service: ServiceDep,
    who: Annotated[Principal, Depends(HIT_WORKERS)],
    body: VerifyRequest | None = None,
) -> HitRead:
    cards = body.codes() if body is not None else None
    row = await service.runtime.verify_hit(hit_id, actor=who.username, cards=cards)
    return HitRead.of(row)


@router.post(
    "/{hit_id}/hand-pay",
    summary="Record the hand pay of a verified hit",
    description="The amount must be the award, in whole cents. Recorded once. Audited.",
    responses=errors(401, 403, 404, 409, 422),
)
async def hand_pay(
    hit_id: Reference,
    body: HandPayRequest,
    service: ServiceDep,
    who: Annotated[Principal, Depends(HIT_WORKERS)],
) -> HitRead:
    row = await service.runtime.record_hand_pay(
        hit_id, amount_cents=body.amount_cents, actor=who.username
    )
    return HitRead.of(row)
