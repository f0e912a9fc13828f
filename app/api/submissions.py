"""Submissions to the commission: filed by supervisors, read by auditors, reviewed by agents."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.responses import Response
from pydantic import BaseModel, Field

from app.api.floor_models import ServiceDep, errors
from app.api.text_fields import IdText, Line, Note, Reference
from app.security import Principal, Role, require
from controller.core.games import Game
from controller.core.money import BP_PER_WHOLE, MAX_AMOUNT_CENTS
from controller.core.reducer.levels import MAX_LEVELS, LevelError, levels_from_dicts
from controller.paperwork.pdf import letterhead_of
from controller.paperwork.submission_views import submission_document, submission_words
from controller.paperwork.submissions import SubmissionDesk
from controller.rules.filing import (
    AMENDMENT_NOTICE_CLAUSE,
    Proposal,
    SubmissionKind,
    check_paytable,
)
from controller.runtime.service import FloorService
from controller.storage.papers.submissions import Submission
from controller.storage.store import NotFound

router = APIRouter(prefix="/api/v1/submissions", tags=["submissions"])

FILERS = require(Role.SUPERVISOR, Role.ADMIN)
READERS = require(Role.COMMISSION_AGENT, Role.SUPERVISOR, Role.AUDITOR, Role.ADMIN)
# 68 IAC 10-1-3(c)(2), 10-1-4(2): the commission reviews; nobody else.
REVIEWERS = require(Role.COMMISSION_AGENT)


def desk(service: FloorService) -> SubmissionDesk:
    return SubmissionDesk(
        service.runtime,
        notice_override=service.settings.notice_override,
        jackpot_odds_bound=service.settings.jackpot_odds_bound,
        letterhead=letterhead_of(service.settings),
    )


class PaytableLineIn(BaseModel):
    hand: IdText = Field(examples=["ROYAL_FLUSH"])
    percent_bp: int | None = Field(
        default=None, gt=0, le=BP_PER_WHOLE, description="share of the meter paid"
    )
    fixed_cents: int | None = Field(
        default=None, gt=0, le=MAX_AMOUNT_CENTS, description="fixed amount paid at the table"
    )
    level: int | None = Field(
        default=None, ge=1, le=MAX_LEVELS, description="the level a share is paid from (from 1)"
    )
    envy_cents: int | None = Field(
        default=None,
        gt=0,
        le=MAX_AMOUNT_CENTS,
        description="envy: paid to every other seat with a side bet when this hand hits",
    )


class MysteryIn(BaseModel):
    floor_cents: int = Field(ge=0, le=MAX_AMOUNT_CENTS)
    ceiling_cents: int = Field(ge=0, le=MAX_AMOUNT_CENTS)


class LevelIn(BaseModel):
    name: Line = Field(max_length=40, description="the level's name, as on the sign")
    reset_cents: int = Field(ge=0, le=MAX_AMOUNT_CENTS)
    rate_bp: int = Field(gt=0, le=BP_PER_WHOLE, description="the shown share")
    reserve_bp: int = Field(default=0, ge=0, le=BP_PER_WHOLE, description="the hidden share")
    limit_cents: int | None = Field(default=None, gt=0, le=MAX_AMOUNT_CENTS)
    above_limit: Literal["overflow", "next_level"] = "overflow"
    mystery: MysteryIn | None = None


class SubmissionCreate(BaseModel):
    model_config = {
        "json_schema_extra": {
            "examples": [{"kind": "rate_change", "link_id": "stud", "rate_bp": 8500}]
        }
    }

    kind: Literal["new_link", "rate_change", "reset_change", "paytable_change", "levels_change"]
    link_id: IdText
    rate_bp: int | None = Field(default=None, description="rate_change: the new rate")
    reset_cents: int | None = Field(
        default=None, ge=0, le=MAX_AMOUNT_CENTS, description="reset_change: the new amount"
    )
    paytable: list[PaytableLineIn] | None = Field(
        default=None, description="paytable_change: the new paytable"
    )
    game: Literal["caribbean_stud", "caribbean_draw", "let_it_ride_bonus"] | None = Field(
        default=None,
        description="paytable_change on a link whose tables deal several games: the game",
    )
    levels: list[LevelIn] | None = Field(
        default=None,
        max_length=MAX_LEVELS,
        description="levels_change: every level of the link (a link of levels)",
    )
    effective_at_us: int | None = Field(
        default=None,
        ge=0,
        le=2**62,
        description="requested effective date; default: the earliest the notice period allows",
    )
    notice_override: Note | None = Field(
        default=None,
        description="admin only: the executive director's written direction providing "
        f"otherwise ({AMENDMENT_NOTICE_CLAUSE}); lifts the notice period and is kept with the "
        "filing",
    )


class ChangeLine(BaseModel):
    label: str
    current: str | None = Field(description="as it is now, in words; none for a new link")
    proposed: str | None


class SubmissionWords(BaseModel):
    """The submission in words, times in the property's time zone (for lists and pages)."""

    kind: str = Field(examples=["change of the rate of progression"])
    change: list[ChangeLine] = Field(description="each changed line, current and proposed")
    filed_at: str = Field(examples=["23 Sep 2026 10:00:00 EDT"])
    effective_on: str = Field(examples=["23 Oct 2026"])
    reviewed_at: str | None


class SubmissionRead(BaseModel):
    submission_id: str
    kind: str
    link_id: str
    status: Literal["filed", "approved", "rejected"]
    proposal: dict[str, Any]
    effective_at_us: int
    notice_days: int
    notice_override: str | None
    filed_by: str
    filed_at_us: int
    reviewed_by: str | None
    reviewed_at_us: int | None
    review_reason: str | None
    applied_at_us: int | None = Field(description="when the change took effect (or play began)")
    packet_json_sha256: str
    packet_pdf_sha256: str
    packet_json_url: str
    packet_pdf_url: str
    document_url: str = ""
    words: SubmissionWords | None = None

    @classmethod
    def of(cls, row: Submission) -> SubmissionRead:
        base = f"/api/v1/submissions/{row.submission_id}"
        return cls(
            submission_id=row.submission_id,
            kind=row.kind,
            link_id=row.link_id,
            status=row.status,
            proposal=json.loads(row.proposal),
            effective_at_us=row.effective_at_us,
            notice_days=row.notice_days,
            notice_override=row.notice_override,
            filed_by=row.filed_by,
            filed_at_us=row.filed_at_us,
            reviewed_by=row.reviewed_by,
            reviewed_at_us=row.reviewed_at_us,
            review_reason=row.review_reason,
            applied_at_us=row.applied_at_us,
            packet_json_sha256=row.packet_json_sha256,
            packet_pdf_sha256=row.packet_pdf_sha256,
            packet_json_url=f"{base}/packet.json",
            packet_pdf_url=f"{base}/packet.pdf",
            document_url=f"{base}/document",
        )


async def read(d: SubmissionDesk, row: Submission) -> SubmissionRead:
    """A submission with its words (what it changes, current and proposed)."""
    out = SubmissionRead.of(row)
    out.words = SubmissionWords.model_validate(await submission_words(d, row))
    return out


class RejectRequest(BaseModel):
    reason: Note


class ApproveRequest(BaseModel):
    reason: Note | None = Field(default=None, description="why, kept with the decision")


class DocumentSection(BaseModel):
    key: str = Field(
        description="what the section is: submission, notice, terms, paytable, returns, "
        "decision, particulars"
    )
    heading: str
    part: Literal["main", "particulars"]
    kind: Literal["facts", "table", "text"]
    facts: list[dict[str, str]] | None = None
    compare: bool | None = Field(
        default=None, description="a table of current (2nd column) and proposed (3rd)"
    )
    columns: list[str] | None = None
    rows: list[dict[str, Any]] | None = Field(
        default=None, description="each {cells: [...], changed: whether it differs}"
    )
    paragraphs: list[str] | None = None


class SubmissionDocument(BaseModel):
    title: str
    letterhead: str
    time_zone: str
    sections: list[DocumentSection]


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
    if body.notice_override is not None and who.role is not Role.ADMIN:
        raise HTTPException(403, "only an admin records the executive director's override")
    d = desk(service)
    kind = SubmissionKind(body.kind)
    if kind is SubmissionKind.NEW_LINK:
        row = await d.file_new_link(
            body.link_id,
            filed_by=who.username,
            effective_at_us=body.effective_at_us,
            override=body.notice_override,
        )
        return SubmissionRead.of(row)
    state = service.runtime.states.get(body.link_id)
    if state is None:
        raise NotFound(f"no link {body.link_id!r}")
    game = None if body.game is None else Game(body.game)
    paytable = None
    if body.paytable is not None:
        paytable = check_paytable(
            game or state.game,
            [line.model_dump(exclude_none=True) for line in body.paytable],
            jackpot_odds_bound=service.settings.jackpot_odds_bound,
        )
    levels = None
    if body.levels is not None:
        try:
            levels = levels_from_dicts(lv.model_dump(exclude_none=True) for lv in body.levels)
        except LevelError as exc:
            raise HTTPException(422, str(exc)) from None
    proposal = Proposal(
        kind=kind,
        rate_bp=body.rate_bp,
        reset_cents=body.reset_cents,
        paytable=paytable,
        levels=levels,
        game=game,
    )
    row = await d.file_change(
        link_id=body.link_id,
        proposal=proposal,
        filed_by=who.username,
        effective_at_us=body.effective_at_us,
        override=body.notice_override,
    )
    return SubmissionRead.of(row)


@router.get("", summary="Submissions, newest first", responses=errors(401, 403, 422))
async def list_submissions(
    service: ServiceDep,
    _: Annotated[Principal, Depends(READERS)],
    status: Annotated[Literal["filed", "approved", "rejected"] | None, Query()] = None,
    link: Annotated[IdText | None, Query(description="only this link's submissions")] = None,
) -> list[SubmissionRead]:
    d = desk(service)
    rows = await d.find(link_id=link, status=status)
    return [await read(d, r) for r in rows]


@router.get("/{submission_id}", summary="One submission", responses=errors(401, 403, 404))
async def get_submission(
    submission_id: Reference, service: ServiceDep, _: Annotated[Principal, Depends(READERS)]
) -> SubmissionRead:
    d = desk(service)
    return await read(d, await d.get(submission_id))


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
    d = desk(service)
    doc = await submission_document(d, await d.get(submission_id))
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
    content, name, ctype = await desk(service).packet(submission_id, "json")
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
    content, name, ctype = await desk(service).packet(submission_id, "pdf")
    return Response(
        content, media_type=ctype, headers={"Content-Disposition": f'inline; filename="{name}"'}
    )


@router.post(
    "/{submission_id}/approve",
    summary="Approve a submission (commission agents only)",
    description="A change is armed on its link and takes effect at the first jackpot reset "
    "on or after its effective date; a new link begins to play. Audited.",
    responses=errors(401, 403, 404, 409),
)
async def approve(
    submission_id: Reference,
    service: ServiceDep,
    who: Annotated[Principal, Depends(REVIEWERS)],
    body: ApproveRequest | None = None,
) -> SubmissionRead:
    d = desk(service)
    row = await d.approve(
        submission_id,
        reviewer=who.username,
        role=who.role,
        reason=None if body is None else body.reason,
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
    d = desk(service)
    row = await d.reject(submission_id, reviewer=who.username, role=who.role, reason=body.reason)
    return await read(d, row)
