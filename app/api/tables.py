"""Tables: their state for the pit, the dealer and the technician; the reset after a hit."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from app.api.deps import ServiceDep
from app.api.floor_models import TableRead, errors
from app.api.text_fields import IdText
from app.security.authentication import TABLE_VIEWERS, Principal, require
from controller.roles import Role
from controller.runtime.service import FloorService

router = APIRouter(prefix="/api/v1/tables", tags=["tables"])

TABLE_READERS = require(*TABLE_VIEWERS)
TABLE_RESETTERS = require(Role.TECHNICIAN, Role.SUPERVISOR)


def _read(service: FloorService, table_id: str) -> TableRead:
    status = service.table_status(table_id)
    return TableRead.of(status, service.records.link_state(status.link_id))


@router.get("", summary="Every table's state", responses=errors(401, 403, 404, 422))
async def list_tables(
    service: ServiceDep,
    _: Annotated[Principal, Depends(TABLE_READERS)],
    link: Annotated[IdText | None, Query(description="only the tables of this link")] = None,
) -> list[TableRead]:
    records = service.records
    return [
        TableRead.of(s, records.link_state(s.link_id)) for s in service.table_statuses(link_id=link)
    ]


@router.get(
    "/{table_id}",
    summary="One table: state, counters, round, seats with side bets this round",
    responses=errors(401, 403, 404),
)
async def get_table(
    table_id: IdText, service: ServiceDep, _: Annotated[Principal, Depends(TABLE_READERS)]
) -> TableRead:
    return _read(service, table_id)


@router.post(
    "/{table_id}/reset",
    summary="Reset a table held for a hit, once its hits are verified and signed off",
    description="The table takes progressive bets again. Refused (409) while a hit paid from "
    "the meter at this table is not verified, or one at or above the second-signature amount "
    "is not signed off by a second person (the refusal names the hits), or when the table "
    "has no hit pending. Audited.",
    responses=errors(401, 403, 404, 409),
)
async def reset_table(
    table_id: IdText,
    service: ServiceDep,
    who: Annotated[Principal, Depends(TABLE_RESETTERS)],
) -> TableRead:
    await service.hits.release_table(table_id, actor=who.username)
    return _read(service, table_id)
