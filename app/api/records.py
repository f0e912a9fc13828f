"""Records for supervisors and auditors: anomalies and their review, exports, documents, and
the ledger verification."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import IO, Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from app.api.deps import ServiceDep
from app.api.floor_models import ReviewRequest, SinceQuery, UntilQuery, errors, period
from app.api.text_fields import IdText, Reference
from app.metrics import metrics_of
from app.security.authentication import Principal, require
from controller.core.money import displayed_cents
from controller.paperwork.export import ExportKind, iso
from controller.roles import Role
from controller.storage.anomalies import AnomalyRecord

router = APIRouter(prefix="/api/v1", tags=["records"])

AUDIT_READERS = require(Role.AUDITOR, Role.SUPERVISOR, Role.ADMIN)
REVIEWERS = require(Role.SUPERVISOR)


class AnomalyRead(BaseModel):
    model_config = {
        "json_schema_extra": {
            "examples": [
                {
                    "anomaly_id": "stud-1@1767225600000000",
                    "link_id": "stud",
                    "table_id": "stud-1",
                    "at_us": 1767225600000000,
                    "credits": 5000,
                    "amount_cents": 400000,
                    "units": 4000000000,
                    "counter_before": 1200,
                    "counter_after": 6200,
                    "reason": "5000 credits in 2 s is more than the table can take",
                    "status": "held",
                    "reviewer": None,
                    "review_reason": None,
                    "reviewed_at_us": None,
                }
            ]
        }
    }

    anomaly_id: str
    link_id: str
    table_id: str
    at_us: int
    credits: int
    amount_cents: int = Field(description="what approving it adds to the meter, whole cents")
    units: int = Field(description="the exact amount, in 1/10,000 cent")
    counter_before: int
    counter_after: int
    reason: str
    status: Literal["held", "approved", "rejected"]
    reviewer: str | None
    review_reason: str | None
    reviewed_at_us: int | None


def _anomaly(r: AnomalyRecord) -> AnomalyRead:
    return AnomalyRead(
        anomaly_id=r.anomaly_id,
        link_id=r.link_id,
        table_id=r.table_id,
        at_us=r.at_us,
        credits=r.credits,
        amount_cents=displayed_cents(r.units),
        units=r.units,
        counter_before=r.counter_before,
        counter_after=r.counter_after,
        reason=r.reason,
        status=r.status,
        reviewer=r.reviewer,
        review_reason=r.review_reason,
        reviewed_at_us=r.reviewed_at_us,
    )


@router.get(
    "/anomalies",
    tags=["anomalies"],
    summary="Counter jumps held for review, newest first",
    responses=errors(401, 403, 404, 422),
)
async def list_anomalies(
    service: ServiceDep,
    _: Annotated[Principal, Depends(AUDIT_READERS)],
    status: Annotated[Literal["held", "approved", "rejected"] | None, Query()] = None,
    link: Annotated[IdText | None, Query(description="only this link's anomalies")] = None,
) -> list[AnomalyRead]:
    rows = await service.records.anomalies(status=status, link_id=link)
    return [_anomaly(r) for r in rows]


async def _review(
    service: ServiceDep, anomaly_id: str, who: Principal, body: ReviewRequest, *, approve: bool
) -> AnomalyRead:
    await service.commands.review_anomaly(
        anomaly_id, approve=approve, reviewer=who.username, reason=body.reason
    )
    return _anomaly(await service.records.anomaly(anomaly_id))


@router.post(
    "/anomalies/{anomaly_id}/approve",
    tags=["anomalies"],
    summary="Credit a held anomaly to the meter, with the reason",
    responses=errors(401, 403, 404, 409, 422),
)
async def approve_anomaly(
    anomaly_id: Reference,
    body: ReviewRequest,
    service: ServiceDep,
    who: Annotated[Principal, Depends(REVIEWERS)],
) -> AnomalyRead:
    return await _review(service, anomaly_id, who, body, approve=True)


@router.post(
    "/anomalies/{anomaly_id}/reject",
    tags=["anomalies"],
    summary="Reject a held anomaly (nothing is added), with the reason",
    responses=errors(401, 403, 404, 409, 422),
)
async def reject_anomaly(
    anomaly_id: Reference,
    body: ReviewRequest,
    service: ServiceDep,
    who: Annotated[Principal, Depends(REVIEWERS)],
) -> AnomalyRead:
    return await _review(service, anomaly_id, who, body, approve=False)


# ------------------------------------------------------------------------- exports

MEDIA = {"csv": "text/csv; charset=utf-8", "json": "application/json"}
CHUNK = 64 * 1024


def _chunks(f: IO[str]) -> Iterator[bytes]:
    try:
        f.seek(0)
        while block := f.read(CHUNK):
            yield block.encode("utf-8")
    finally:
        f.close()


@router.get(
    "/exports/{kind}",
    tags=["exports"],
    summary="Meter history, hits or reductions for a period, as a CSV or JSON download",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "the export as a file",
            "content": {"text/csv": {}, "application/json": {}},
        },
        **errors(401, 403, 404, 422, 503),
    },
)
async def export_records(
    kind: ExportKind,
    service: ServiceDep,
    _: Annotated[Principal, Depends(AUDIT_READERS)],
    since: SinceQuery = None,
    until: UntilQuery = None,
    link: Annotated[IdText | None, Query(description="one link; default every link")] = None,
    format: Annotated[Literal["csv", "json"], Query()] = "csv",
) -> StreamingResponse:
    records = service.records
    if link is not None:
        records.known_link(link)
    since_us, until_us = period(since, until, records.now_us())
    # Spooled to a file, not held in memory: five years of history is large.
    # Closed by the response once sent (see _chunks).
    out = tempfile.TemporaryFile("w+", encoding="utf-8", newline="")  # noqa: SIM115
    try:
        async with service.workers.job() as job:
            await records.export(
                out,
                kind=kind,
                fmt=format,
                since_us=since_us,
                until_us=until_us,
                link_id=link,
                job=job,
                law=service.settings.law,
                demonstration=service.settings.demonstration,
            )
    except BaseException:
        out.close()
        raise
    stamp = f"{iso(since_us)[:10]}_{iso(until_us)[:10]}"
    name = f"{kind}_{link or 'all'}_{stamp}.{format}"
    return StreamingResponse(
        _chunks(out),
        media_type=MEDIA[format],
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@router.get(
    "/documents/{sha256}",
    tags=["exports"],
    summary="A supporting document, as it was stored",
    response_class=Response,
    responses={200: {"description": "the document"}, **errors(401, 403, 404)},
)
async def get_document(
    sha256: Reference, service: ServiceDep, _: Annotated[Principal, Depends(AUDIT_READERS)]
) -> Response:
    doc = await service.records.document(sha256)
    safe = "".join(ch for ch in doc.filename if ch.isalnum() or ch in "._- ") or "document"
    return Response(
        content=doc.content,
        media_type=doc.content_type,
        headers={"Content-Disposition": f'attachment; filename="{safe}"'},
    )


# ------------------------------------------------------------------------- the ledger


class ChainProblemRead(BaseModel):
    link_id: str
    seq: int | None = Field(description="the first bad entry, when one is to blame")
    problem: str


class LedgerVerifyRead(BaseModel):
    model_config = {
        "json_schema_extra": {
            "examples": [
                {"ok": True, "entries_checked": 48211, "links": {"stud": 48211}, "problems": []}
            ]
        }
    }

    ok: bool
    entries_checked: int
    links: dict[str, int] = Field(description="entries checked per link")
    problems: list[ChainProblemRead]


@router.post(
    "/ledger/verify",
    tags=["ledger"],
    summary="Walk every link's hash chain and report the first broken entry of each",
    responses=errors(401, 403, 404, 422, 503),
)
async def ledger_verify(
    request: Request,
    service: ServiceDep,
    _: Annotated[Principal, Depends(AUDIT_READERS)],
    link: Annotated[IdText | None, Query(description="one link; default every link")] = None,
) -> LedgerVerifyRead:
    if link is not None:
        service.records.known_link(link)  # before a worker is taken
    # The walk runs in a thread of its own; the job keeps such walks few at once.
    async with service.workers.job():
        report = await service.records.verify_ledger(link)
    # One link found whole says nothing of the others: only a failure or a full walk counts.
    if (metrics := metrics_of(request.app)) is not None and (link is None or not report.ok):
        metrics.verified(ok=report.ok)
    return LedgerVerifyRead(
        ok=report.ok,
        entries_checked=report.entries,
        links=report.links,
        problems=[
            ChainProblemRead(link_id=p.link_id, seq=p.seq, problem=p.what) for p in report.problems
        ],
    )
