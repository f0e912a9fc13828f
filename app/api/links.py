"""Links: current amounts (public, as on the floor; a pool's hidden meters to signed-in staff
only, each table's state to those who may read the tables), meter history and its chart,
hits."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field, model_validator

from app.api.deps import ServiceDep
from app.api.floor_models import LinkRead, SinceQuery, TableRead, UntilQuery, errors, period
from app.api.hit_models import HitRead
from app.api.hits import read_hits
from app.api.text_fields import IdText
from app.security.authentication import (
    STAFF_VIEWERS,
    TABLE_VIEWERS,
    DisplayReader,
    Principal,
    require,
)
from controller.paperwork import record_views
from controller.roles import Role
from controller.runtime.service import FloorService
from controller.storage.papers.documents import DocumentFile

router = APIRouter(prefix="/api/v1/links", tags=["links"])

AUDIT_READERS = require(Role.AUDITOR, Role.SUPERVISOR, Role.ADMIN)
# Surveillance reads the history and the hits behind game protection's alerts (each alert
# links to them); it changes nothing.
HISTORY_READERS = require(Role.AUDITOR, Role.SUPERVISOR, Role.ADMIN, Role.SURVEILLANCE)
LINK_HIT_READERS = require(
    Role.TECHNICIAN, Role.SUPERVISOR, Role.AUDITOR, Role.ADMIN, Role.SURVEILLANCE
)

NOT_FOUND = errors(401, 403, 404, 422)


async def _link(
    service: FloorService, link_id: str, names: dict[str, str], reader: Principal | None
) -> LinkRead:
    records = service.records
    state = records.link_state(link_id)
    # Each table's state: as GET /api/v1/tables shows it, to the same people.
    table_viewer = reader is not None and reader.role in TABLE_VIEWERS
    dealing = await service.dealers.dealing() if table_viewer else {}
    tables = [
        TableRead.of(s, state, dealing.get(s.table_id)) for s in service.table_statuses(link_id)
    ]
    return LinkRead.of(
        state,
        names.get(link_id, link_id),
        tables,
        inoperable=records.inoperable(link_id),
        level_hits={} if state.fixed_pay else await records.level_hits(link_id),
        # A pool's hidden (reserve) meters: signed-in staff only, never a patron's screen.
        staff=reader is not None and reader.role in STAFF_VIEWERS,
        table_viewer=table_viewer,
        statement=service.statement(link_id),
    )


@router.get("", summary="Every link with its current amount and tables")
async def list_links(service: ServiceDep, reader: DisplayReader) -> list[LinkRead]:
    records = service.records
    names = await records.link_names()
    return [await _link(service, lid, names, reader) for lid in records.link_ids()]


@router.get(
    "/{link_id}", summary="One link with its current amount and tables", responses=NOT_FOUND
)
async def get_link(link_id: IdText, service: ServiceDep, reader: DisplayReader) -> LinkRead:
    return await _link(service, link_id, await service.records.link_names(), reader)


class DocumentRead(BaseModel):
    sha256: str
    filename: str
    content_type: str
    size: int
    url: str = Field(description="where an auditor downloads it")

    @model_validator(mode="before")
    @classmethod
    def _where(cls, data: Any) -> Any:
        # A document as the records name it: the answer also says where it is downloaded.
        if isinstance(data, DocumentFile):
            return {**data._asdict(), "url": f"/api/v1/documents/{data.sha256}"}
        return data


class HistoryEntryRead(BaseModel):
    seq: int
    at_us: int
    kind: str = Field(examples=["award"])
    meter_before_cents: int
    meter_after_cents: int
    delta_cents: int = Field(description="change in the amount shown, whole cents")
    delta_units: int = Field(description="exact change, in 1/10,000 cent")
    table_id: str | None
    hit_id: str | None
    anomaly_id: str | None
    correction_id: str | None
    explanation: str
    reduction_reason: str | None = Field(description="set on every entry lowering the meter")
    correction_category: str | None
    approved_by: str | None
    documents: list[DocumentRead]


class HistoryRead(BaseModel):
    model_config = {
        "json_schema_extra": {
            "examples": [
                {
                    "link_id": "stud",
                    "since_us": 1767225600000000,
                    "until_us": 1767312000000000,
                    "entries": [
                        {
                            "seq": 812,
                            "at_us": 1767230000000000,
                            "kind": "award",
                            "meter_before_cents": 1234567,
                            "meter_after_cents": 0,
                            "delta_cents": -1234567,
                            "delta_units": -12345670000,
                            "table_id": "stud-1",
                            "hit_id": "stud-1#3",
                            "anomaly_id": None,
                            "correction_id": None,
                            "explanation": "hit: table stud-1 seat 3, royal flush: 100% of "
                            "the meter = $12,345.67",
                            "reduction_reason": "hit: table stud-1 seat 3, royal flush: 100% "
                            "of the meter = $12,345.67",
                            "correction_category": None,
                            "approved_by": None,
                            "documents": [],
                        }
                    ],
                    "next_after_seq": None,
                }
            ]
        }
    }

    link_id: str
    since_us: int
    until_us: int
    entries: list[HistoryEntryRead]
    next_after_seq: int | None = Field(
        description="more entries follow: ask again with after_seq set to this"
    )


@router.get(
    "/{link_id}/history",
    summary="Meter history for a period, every reduction with its reason and documents",
    responses=NOT_FOUND,
)
async def link_history(
    link_id: IdText,
    service: ServiceDep,
    _: Annotated[Principal, Depends(HISTORY_READERS)],
    since: SinceQuery = None,
    until: UntilQuery = None,
    after_seq: Annotated[
        int, Query(ge=0, le=record_views.MAX_POSITION, description="continue after this entry")
    ] = 0,
    limit: Annotated[int, Query(ge=1, le=record_views.MAX_PAGE)] = 1000,
    reductions_only: Annotated[bool, Query(description="only entries lowering the meter")] = False,
) -> HistoryRead:
    records = service.records
    records.known_link(link_id)
    since_us, until_us = period(since, until, records.now_us())
    page = await records.history(
        link_id,
        since_us=since_us,
        until_us=until_us,
        after_seq=after_seq,
        limit=limit,
        reductions_only=reductions_only,
    )
    return HistoryRead(
        link_id=link_id,
        since_us=since_us,
        until_us=until_us,
        next_after_seq=page.next_after_seq,
        entries=[HistoryEntryRead.model_validate(e, from_attributes=True) for e in page.entries],
    )


class MeterPointRead(BaseModel):
    at_us: int
    meter_cents: int
    low_cents: int
    high_cents: int


class MeterSeriesRead(BaseModel):
    link_id: str
    since_us: int
    until_us: int
    points: list[MeterPointRead]


@router.get(
    "/{link_id}/meter",
    summary="The meter over a period, for a chart (each point the last of its time bucket)",
    responses=errors(401, 403, 404, 422, 503),
)
async def link_meter(
    link_id: IdText,
    service: ServiceDep,
    _: Annotated[Principal, Depends(AUDIT_READERS)],
    since: SinceQuery = None,
    until: UntilQuery = None,
    points: Annotated[int, Query(ge=2, le=record_views.MAX_POINTS)] = 500,
) -> MeterSeriesRead:
    records = service.records
    records.known_link(link_id)
    since_us, until_us = period(since, until, records.now_us())
    async with service.workers.job() as job:
        series = await records.meter_series(
            link_id, since_us=since_us, until_us=until_us, points=points, job=job
        )
    return MeterSeriesRead(
        link_id=link_id,
        since_us=since_us,
        until_us=until_us,
        points=[
            MeterPointRead(
                at_us=p.at_us,
                meter_cents=p.meter_cents,
                low_cents=p.low_cents,
                high_cents=p.high_cents,
            )
            for p in series
        ],
    )


@router.get("/{link_id}/hits", summary="The link's hits, newest first", responses=NOT_FOUND)
async def link_hits(
    link_id: IdText,
    service: ServiceDep,
    _: Annotated[Principal, Depends(LINK_HIT_READERS)],
    pending: Annotated[bool, Query(description="only hits with technician work left")] = False,
    limit: Annotated[int, Query(ge=1, le=record_views.MAX_PAGE)] = 200,
) -> list[HitRead]:
    rows = await service.records.hits(link_id=link_id, pending=pending, limit=limit)
    return read_hits(service, rows)
