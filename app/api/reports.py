"""A link's gaming-day and shift reports for auditors, as PDF, CSV or JSON, and the calendar
they follow (the property's time zone, the gaming day's start, the shifts)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from app.api.corrections import AUDIT_READERS
from app.api.deps import ServiceDep
from app.api.floor_models import errors
from app.api.text_fields import IdText
from app.security.authentication import Principal
from controller import periods
from controller.paperwork.report_documents import report_csv, report_json, report_pdf
from controller.periods import FloorPeriod
from controller.refusal import at
from controller.runtime.service import FloorService

router = APIRouter(prefix="/api/v1", tags=["reports"])

Format = Annotated[Literal["pdf", "csv", "json"], Query(description="the document's format")]
DayQuery = Annotated[
    str,
    Query(
        max_length=10,
        description="the gaming day, named by the local date it starts on",
        examples=["2026-11-23"],
    ),
]


class ShiftRead(BaseModel):
    shift: int = Field(description="1, 2, ... in the order the shifts start within the day")
    starts: str = Field(examples=["14:00"], description="local time")


class CalendarRead(BaseModel):
    time_zone: str = Field(examples=["America/Indiana/Indianapolis"])
    gaming_day_starts: str = Field(examples=["06:00"], description="local time")
    shifts: list[ShiftRead]
    today: str = Field(description="the gaming day under way now", examples=["2026-11-23"])


@router.get(
    "/reports/calendar",
    summary="The gaming day and shifts reports follow",
    responses=errors(401, 403),
)
async def calendar(
    service: ServiceDep, _: Annotated[Principal, Depends(AUDIT_READERS)]
) -> CalendarRead:
    s = service.settings
    order = periods.shift_starts_in_day(s.gaming_day_starts, s.shift_starts)
    today = periods.gaming_day_of(service.records.now_us(), starts=s.gaming_day_starts, zone=s.zone)
    return CalendarRead(
        time_zone=s.property_time_zone,
        gaming_day_starts=s.gaming_day_starts.strftime("%H:%M"),
        shifts=[ShiftRead(shift=i + 1, starts=t.strftime("%H:%M")) for i, t in enumerate(order)],
        today=today.isoformat(),
    )


async def _answer(service: FloorService, link_id: str, period: FloorPeriod, fmt: str) -> Response:
    records = service.records
    link_name = await records.link_name(link_id)
    letterhead = service.letterhead(link_id)
    async with service.workers.job() as job:
        report = await records.floor_report(link_id, period, link_name=link_name, job=job)
        # The file name from checked values only: the link id, the date, the shift.
        stem = f"{link_id}-{period.day.isoformat()}" + (
            f"-shift-{period.shift}" if period.shift else "-gaming-day"
        )
        if fmt == "json":
            body: dict[str, Any] = await job.run(report_json, report, letterhead)
            return JSONResponse(body)
        if fmt == "csv":
            text = await job.run(report_csv, report, letterhead)
            return Response(
                text,
                media_type="text/csv",
                headers={"Content-Disposition": f'attachment; filename="{stem}.csv"'},
            )
        pdf = await job.run(report_pdf, report, letterhead)
    return Response(
        pdf,
        media_type="application/pdf",
        headers={"Content-Disposition": f'attachment; filename="{stem}.pdf"'},
    )


_DOCUMENTS = {
    200: {"content": {"application/pdf": {}, "text/csv": {}, "application/json": {}}},
    **errors(401, 403, 404, 422, 503),
}


@router.get(
    "/links/{link_id}/reports/gaming-day",
    summary="A link's gaming-day report",
    description="From the gaming day's start (PROGRESSIVE_GAMING_DAY_STARTS, local time) to "
    "the next day's: 23 or 25 hours across a change of daylight saving time. The opening and "
    "closing meter and every term between them to the unit, contributions by table, hits "
    "(hand, cards, amount, level), reductions with their reasons, a fixed-pay link's bets.",
    responses=_DOCUMENTS,
)
async def gaming_day_report(
    link_id: IdText,
    date: DayQuery,
    service: ServiceDep,
    _: Annotated[Principal, Depends(AUDIT_READERS)],
    format: Format = "pdf",
) -> Response:
    s = service.settings
    with at("query"):
        period = periods.gaming_day(
            periods.parse_day(date), starts=s.gaming_day_starts, zone=s.zone
        )
    return await _answer(service, link_id, period, format)


@router.get(
    "/links/{link_id}/reports/shift",
    summary="A link's shift report",
    description="Shift 1, 2, ... of a gaming day in the order the shifts start "
    "(PROGRESSIVE_SHIFT_STARTS, local times), to the next shift's start. The same content "
    "as the gaming-day report.",
    responses=_DOCUMENTS,
)
async def shift_report(
    link_id: IdText,
    date: DayQuery,
    shift: Annotated[int, Query(ge=1, le=24)],
    service: ServiceDep,
    _: Annotated[Principal, Depends(AUDIT_READERS)],
    format: Format = "pdf",
) -> Response:
    s = service.settings
    with at("query"):
        period = periods.shift_period(
            periods.parse_day(date),
            shift,
            starts=s.gaming_day_starts,
            shifts=s.shift_starts,
            zone=s.zone,
        )
    return await _answer(service, link_id, period, format)
