"""Submissions to the commission: filed by supervisors, read by auditors, reviewed by agents."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Query
from fastapi.responses import Response
from pydantic import ValidationError

from app.api.deps import ServiceDep
from app.api.floor_models import errors
from app.api.proposal_form import terms_of
from app.api.submission_models import (
    ApproveRequest,
    FilingTermsRead,
    ProblemRead,
    RejectRequest,
    SubmissionCheckRead,
    SubmissionCreate,
    SubmissionDocument,
    SubmissionRead,
    SubmissionWords,
)
from app.api.text_fields import IdText, Reference
from app.security.authentication import Principal, require
from controller.core.games import Game
from controller.core.reducer.levels import LevelError, levels_from_dicts
from controller.paperwork.filing_desk import Filing, FilingDesk
from controller.paperwork.submission_views import submission_document, submission_words
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.rules import RuleViolation
from controller.rules.filing import (
    AMENDMENT_NOTICE_CLAUSE,
    Proposal,
    SubmissionKind,
    check_paytable,
    notice_days,
)
from controller.rules.violation import about
from controller.runtime.service import FloorService
from controller.storage.errors import NotFound
from controller.storage.papers.submissions import Submission

router = APIRouter(prefix="/api/v1/submissions", tags=["submissions"])

FILERS = require(Role.SUPERVISOR, Role.ADMIN)
READERS = require(Role.COMMISSION_AGENT, Role.SUPERVISOR, Role.AUDITOR, Role.ADMIN)
# 68 IAC 10-1-3(c)(2), 10-1-4(2): the commission reviews; nobody else.
REVIEWERS = require(Role.COMMISSION_AGENT)


async def read(d: ReviewDesk, row: Submission) -> SubmissionRead:
    """A submission with its words (what it changes, current and proposed), the jurisdiction
    it was filed under and what it says of demonstration mode, from its packet as filed."""
    out = SubmissionRead.of(row)
    document = await submission_document(d, row)
    out.words = SubmissionWords.model_validate(await submission_words(d, row, document))
    out.jurisdiction = document["jurisdiction"] or d.filing.law.title
    out.demonstration = document["notice_not_given"]
    out.demonstration_statement = document["demonstration"]
    return out


@router.post(
    "",
    status_code=201,
    summary="File a change or a new link with the commission",
    description="The proposal is checked first (rate 60-100 %, the rate locked until a "
    "jackpot is won, a reset amount and paytable the game allows, the notice period); the "
    "packet is kept as JSON and PDF. Audited.",
    responses=errors(401, 403, 404, 409, 422),
)
async def file_submission(
    body: SubmissionCreate,
    service: ServiceDep,
    who: Annotated[Principal, Depends(FILERS)],
) -> SubmissionRead:
    d = service.filing_desk
    filing = await _prepare(d, body, service, who)
    row = await d.file(filing, filed_by=who.username)
    return await read(service.review_desk, row)


async def _prepare(
    d: FilingDesk, body: SubmissionCreate, service: FloorService, who: Principal
) -> Filing:
    """Every check of a filing, in the order filing makes them; nothing written. Filing and
    its dry run (``check_submission``) both come here, so they refuse alike."""
    kind = SubmissionKind(body.kind)
    waiver = None if body.waiver is None else body.waiver.waiver()
    if kind is SubmissionKind.NEW_LINK:
        return await d.prepare_new_link(
            body.link_id, effective_at_us=body.effective_at_us, waiver=waiver
        )
    state = service.records.link_state(body.link_id)
    game = None if body.game is None else Game(body.game)
    paytable = None
    if body.paytable is not None:
        with about("paytable"):
            paytable = check_paytable(
                game or state.game,
                [line.values() for line in body.paytable],
                jackpot_odds_bound=service.settings.odds_bound,
            )
    levels = None
    if body.levels is not None:
        levels = levels_from_dicts(lv.values() for lv in body.levels)
    proposal = Proposal(
        kind=kind,
        rate_bp=body.rate_bp,
        reset_cents=body.reset_cents,
        paytable=paytable,
        levels=levels,
        game=game,
    )
    return await d.prepare_change(
        link_id=body.link_id,
        proposal=proposal,
        effective_at_us=body.effective_at_us,
        waiver=waiver,
    )


@router.post(
    "/check",
    summary="Check a submission without filing it (a dry run)",
    description="The same body as filing, the same checks in the same order, nothing filed: "
    "200 with ``ok`` and the problems filing would refuse, each with the field it is about "
    'and the clause. Amounts and rates may be sent as typed (``reset``: "$10,000.00", '
    '``rate``: "82.5%").',
    responses=errors(401, 403, 422),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/SubmissionCreate"}}
            },
        }
    },
)
async def check_submission(
    raw: Annotated[dict[str, Any], Body()],
    service: ServiceDep,
    who: Annotated[Principal, Depends(FILERS)],
) -> SubmissionCheckRead:
    # Read here rather than by FastAPI: a field that cannot be read is a problem to show
    # next to it, not a refused request.
    try:
        body = SubmissionCreate.model_validate(raw)
    except ValidationError as exc:
        return SubmissionCheckRead(
            ok=False,
            problems=[
                ProblemRead(field=_where(e["loc"]), rule=None, message=e["msg"])
                for e in exc.errors()
            ],
            proposal=None,
            effective_at_us=None,
            notice_days=None,
            jurisdiction=service.settings.law.title,
        )
    d = service.filing_desk
    kind = SubmissionKind(body.kind)
    proposal = body.values()
    effective = body.effective_at_us
    if effective is None:
        effective = d.effective_default(kind, None if body.waiver is None else body.waiver.waiver())
    try:
        filing = await _prepare(d, body, service, who)
    except RuleViolation as exc:
        problem = ProblemRead(field=exc.subject, rule=exc.clause, message=exc.message)
    except LevelError as exc:
        problem = ProblemRead(field="levels", rule=None, message=str(exc))
    except NotFound as exc:
        problem = ProblemRead(field="link_id", rule=None, message=str(exc))
    else:
        return SubmissionCheckRead(
            ok=True,
            problems=[],
            proposal=filing.proposal.to_dict(),
            effective_at_us=filing.effective_at_us,
            notice_days=filing.notice_days,
            jurisdiction=d.law.title,
            demonstration=filing.notice_not_given,
        )
    proposal.pop("link_id", None)
    proposal.pop("effective_at_us", None)
    proposal.pop("waiver", None)
    return SubmissionCheckRead(
        ok=False,
        problems=[problem],
        proposal=proposal,
        effective_at_us=effective,
        notice_days=notice_days(kind, d.law)[0],
        jurisdiction=d.law.title,
    )


def _where(loc: tuple[int | str, ...]) -> str | None:
    return ".".join(str(p) for p in loc) or None


@router.get(
    "/terms/{link_id}",
    summary="What a link plays now, to propose a change from",
    responses=errors(401, 403, 404, 422),
)
async def filing_terms(
    link_id: IdText, service: ServiceDep, _: Annotated[Principal, Depends(FILERS)]
) -> FilingTermsRead:
    return terms_of(service.records.link_state(link_id), service.filing_desk)


@router.get("", summary="Submissions, newest first", responses=errors(401, 403, 422))
async def list_submissions(
    service: ServiceDep,
    _: Annotated[Principal, Depends(READERS)],
    status: Annotated[Literal["filed", "approved", "rejected"] | None, Query()] = None,
    link: Annotated[IdText | None, Query(description="only this link's submissions")] = None,
) -> list[SubmissionRead]:
    d = service.review_desk
    rows = await d.find(link_id=link, status=status)
    return [await read(d, r) for r in rows]


@router.get("/{submission_id}", summary="One submission", responses=errors(401, 403, 404))
async def get_submission(
    submission_id: Reference, service: ServiceDep, _: Annotated[Principal, Depends(READERS)]
) -> SubmissionRead:
    d = service.review_desk
    return await read(d, await d.filing.get(submission_id))


@router.get(
    "/{submission_id}/document",
    summary="The packet as the document people read",
    description="Built from the packet as filed: current and proposed side by side, the "
    "paytable with hand names, the notice period and the decision, in words, times in the "
    "property's time zone; the same words as the packet's PDF.",
    responses=errors(401, 403, 404),
)
async def document(
    submission_id: Reference, service: ServiceDep, _: Annotated[Principal, Depends(READERS)]
) -> SubmissionDocument:
    d = service.review_desk
    doc = await submission_document(d, await d.filing.get(submission_id))
    return SubmissionDocument.model_validate(doc)


PACKET_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"content": {"application/json": {}, "application/pdf": {}}, "description": "packet"},
    **errors(401, 403, 404),
}


@router.get(
    "/{submission_id}/packet.json",
    summary="The packet as filed, JSON",
    response_class=Response,
    responses=PACKET_RESPONSES,
)
async def packet_json(
    submission_id: Reference, service: ServiceDep, _: Annotated[Principal, Depends(READERS)]
) -> Response:
    content, name, ctype = await service.review_desk.packet(submission_id, "json")
    return Response(
        content, media_type=ctype, headers={"Content-Disposition": f'inline; filename="{name}"'}
    )


@router.get(
    "/{submission_id}/packet.pdf",
    summary="The packet as filed, PDF",
    response_class=Response,
    responses=PACKET_RESPONSES,
)
async def packet_pdf(
    submission_id: Reference, service: ServiceDep, _: Annotated[Principal, Depends(READERS)]
) -> Response:
    content, name, ctype = await service.review_desk.packet(submission_id, "pdf")
    return Response(
        content, media_type=ctype, headers={"Content-Disposition": f'inline; filename="{name}"'}
    )


@router.post(
    "/{submission_id}/approve",
    summary="Approve a submission (commission agents only)",
    description="A change is armed on its link and takes effect at the first jackpot reset "
    "on or after its effective date; a new link begins to play. A submission filed with the "
    "executive director's waiver of its notice period is approved only with "
    f"``waiver_confirmed`` ({AMENDMENT_NOTICE_CLAUSE}). Audited.",
    responses=errors(401, 403, 404, 409),
)
async def approve(
    submission_id: Reference,
    service: ServiceDep,
    who: Annotated[Principal, Depends(REVIEWERS)],
    body: ApproveRequest | None = None,
) -> SubmissionRead:
    d = service.review_desk
    row = await d.approve(
        submission_id,
        reviewer=who.username,
        role=who.role,
        reason=None if body is None else body.reason,
        waiver_confirmed=body is not None and body.waiver_confirmed,
    )
    return await read(d, row)


@router.post(
    "/{submission_id}/reject",
    summary="Reject a submission with a reason (commission agents only)",
    responses=errors(401, 403, 404, 409, 422),
)
async def reject(
    submission_id: Reference,
    body: RejectRequest,
    service: ServiceDep,
    who: Annotated[Principal, Depends(REVIEWERS)],
) -> SubmissionRead:
    d = service.review_desk
    row = await d.reject(submission_id, reviewer=who.username, role=who.role, reason=body.reason)
    return await read(d, row)
