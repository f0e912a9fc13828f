"""What a submission is filed with and read as, and what a dry run of one answers.

Amounts and rates may be sent as numbers (``*_cents``, ``*_bp``) or as people write them
(``reset``: "$10,000.00", ``rate``: "82.5%"), read by ``controller.core.money``; one of the
two, not both.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from app.api.amount_text import CentsText, PaidCentsText, RateText, ShareOrNoneText, ShareText
from app.api.text_fields import IdText, Line, Note, optional_line
from controller.core.games import Game
from controller.core.games.paytables import MAX_PAYTABLE_LINES
from controller.core.money import BP_PER_WHOLE, MAX_AMOUNT_CENTS
from controller.core.reducer.levels import MAX_LEVELS
from controller.rules.filing import (
    AMENDMENT_NOTICE_CLAUSE,
    NEW_GAME_NOTICE_CLAUSE,
    WAIVER_TEXT_MAX,
    NoticeWaiver,
)
from controller.rules.jurisdictions import INDIANA
from controller.rules.progression import RATE_CLAUSE
from controller.storage.papers.submissions import Submission


class _Typed(BaseModel):
    """A model some of whose numbers may come as text: ``_TEXT`` maps the text field to the
    number field it fills."""

    _TEXT: ClassVar[dict[str, str]] = {}

    @model_validator(mode="after")
    def _from_text(self) -> Any:
        for text, number in self._TEXT.items():
            value = getattr(self, text)
            if value is None:
                continue
            if getattr(self, number) is not None:
                raise PydanticCustomError(
                    "both", "give {a} or {b}, not both", {"a": number, "b": text}
                )
            setattr(self, number, value)
            setattr(self, text, None)
        return self

    def values(self) -> dict[str, Any]:
        """The numbers, as the paperwork takes them (no text field, nothing unset)."""
        return self.model_dump(exclude_none=True, exclude=set(self._TEXT))


class PaytableLineIn(_Typed):
    _TEXT = {"percent": "percent_bp", "fixed": "fixed_cents", "envy": "envy_cents"}

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
    percent: ShareText | None = Field(default=None, description='percent_bp as text, "10%"')
    fixed: PaidCentsText | None = Field(default=None, description="fixed_cents as text")
    envy: PaidCentsText | None = Field(default=None, description="envy_cents as text")


class MysteryIn(BaseModel):
    floor_cents: int = Field(ge=0, le=MAX_AMOUNT_CENTS)
    ceiling_cents: int = Field(ge=0, le=MAX_AMOUNT_CENTS)


class LevelIn(_Typed):
    _TEXT = {
        "reset": "reset_cents",
        "rate": "rate_bp",
        "reserve": "reserve_bp",
        "limit": "limit_cents",
    }

    name: Line = Field(max_length=40, description="the level's name, as on the sign")
    reset_cents: int | None = Field(default=None, ge=0, le=MAX_AMOUNT_CENTS)
    rate_bp: int | None = Field(default=None, gt=0, le=BP_PER_WHOLE, description="shown share")
    reserve_bp: int | None = Field(
        default=None, ge=0, le=BP_PER_WHOLE, description="the hidden share (default none)"
    )
    limit_cents: int | None = Field(default=None, gt=0, le=MAX_AMOUNT_CENTS)
    above_limit: Literal["overflow", "next_level"] = "overflow"
    mystery: MysteryIn | None = None
    reset: CentsText | None = Field(default=None, description="reset_cents as text")
    rate: ShareText | None = Field(default=None, description="rate_bp as text")
    reserve: ShareOrNoneText | None = Field(default=None, description="reserve_bp as text")
    limit: PaidCentsText | None = Field(default=None, description="limit_cents as text")

    @model_validator(mode="after")
    def _complete(self) -> Any:
        for number in ("reset_cents", "rate_bp"):
            if getattr(self, number) is None:
                raise PydanticCustomError("missing", "a level gives its {what}", {"what": number})
        return self


class SubmissionCreate(_Typed):
    model_config = {
        "json_schema_extra": {
            "examples": [
                {"kind": "rate_change", "link_id": "stud", "rate_bp": 8500},
                {"kind": "reset_change", "link_id": "stud", "reset": "$10,000.00"},
            ]
        }
    }
    _TEXT = {"rate": "rate_bp", "reset": "reset_cents"}

    kind: Literal["new_link", "rate_change", "reset_change", "paytable_change", "levels_change"]
    link_id: IdText
    # Wide of the rule's range on purpose: a rate outside it is refused by the rule, with its
    # clause (68 IAC 10-1-1.1(c)); the field keeps out only numbers no rate could be.
    rate_bp: int | None = Field(
        default=None, ge=0, le=10 * BP_PER_WHOLE, description="rate_change: the new rate"
    )
    reset_cents: int | None = Field(
        default=None, ge=0, le=MAX_AMOUNT_CENTS, description="reset_change: the new amount"
    )
    rate: RateText | None = Field(default=None, description='rate_bp as text, "82.5%"')
    reset: CentsText | None = Field(default=None, description='reset_cents as text, "$10,000"')
    paytable: list[PaytableLineIn] | None = Field(
        default=None,
        max_length=MAX_PAYTABLE_LINES,
        description="paytable_change: the new paytable, one line per hand at most",
    )
    game: Game | None = Field(
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
    waiver: WaiverIn | None = Field(
        default=None,
        description="an amendment only: the executive director's written direction providing "
        f"otherwise ({AMENDMENT_NOTICE_CLAUSE}); with it the effective date may be sooner "
        "than the 30 days (never in the past). Kept with the submission, printed in its "
        "packet, and confirmed by the commission agent who approves it. A new link's 60 days "
        f"({NEW_GAME_NOTICE_CLAUSE}) are never waived.",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_notice_override(cls, data: Any) -> Any:
        # A field some callers still send: refused by name, never ignored, so nobody believes
        # a notice period was lifted.
        if isinstance(data, dict) and "notice_override" in data:
            raise PydanticCustomError(
                "notice_override",
                "notice_override is refused: an amendment the executive director allows sooner "
                "carries that written direction as its waiver (given_by, reference, given_on, "
                "document_sha256); a new link's notice period is never waived",
            )
        return data

    @field_validator("paytable", "levels", mode="before")
    @classmethod
    def _not_too_long(cls, value: Any, info: ValidationInfo) -> Any:
        # Counted before any line is read: a list past its bound costs its length, not the
        # reading of every line in it (which the bound's own check would do first).
        limit = MAX_PAYTABLE_LINES if info.field_name == "paytable" else MAX_LEVELS
        if isinstance(value, list) and len(value) > limit:
            raise PydanticCustomError(
                "too_long",
                "at most {limit} items (one per {what}), not {count}",
                {
                    "limit": limit,
                    "what": "hand" if info.field_name == "paytable" else "level",
                    "count": len(value),
                },
            )
        return value


class WaiverIn(BaseModel):
    """The executive director's written direction for one amendment (68 IAC 10-1-4(1))."""

    given_by: Annotated[str, optional_line(WAIVER_TEXT_MAX)] = Field(
        description="who gave it, by name", examples=["J. Doe, Executive Director"]
    )
    reference: Annotated[str, optional_line(WAIVER_TEXT_MAX)] = Field(
        description="its reference", examples=["IGC letter 2026-114"]
    )
    given_on: date = Field(
        description="the day it is dated (YYYY-MM-DD)",
        examples=["2026-09-20"],
        json_schema_extra={"maxLength": 10},
    )
    document_sha256: Annotated[str, optional_line(64)] = Field(
        description="the SHA-256 of the document that carries it (64 lowercase hex digits)",
        examples=["9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"],
    )

    @field_validator("given_on", mode="before")
    @classmethod
    def _a_day(cls, value: object) -> object:
        # A day is ten characters (YYYY-MM-DD): nothing longer is read.
        if isinstance(value, str) and len(value) > 10:
            raise PydanticCustomError("date_too_long", "a day is written YYYY-MM-DD")
        return value

    def waiver(self) -> NoticeWaiver:
        return NoticeWaiver(
            given_by=self.given_by.strip(),
            reference=self.reference.strip(),
            given_on=self.given_on,
            document_sha256=self.document_sha256.strip(),
        )


class WaiverRead(BaseModel):
    given_by: str
    reference: str
    given_on: str = Field(examples=["2026-09-20"])
    document_sha256: str


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
    notice_override: str | None = Field(
        description="a submission filed with the executive director's direction as one line "
        "of text (before waivers were filed whole); null for every other"
    )
    waiver: WaiverRead | None = Field(
        default=None,
        description="the executive director's written direction waiving this amendment's "
        f"notice period ({AMENDMENT_NOTICE_CLAUSE}); an approval confirms it (waiver_confirmed)",
    )
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
    jurisdiction: str = Field(
        default="",
        description="the jurisdiction it was filed under, its name and code",
        examples=[INDIANA.title],
    )
    demonstration: str | None = Field(
        default=None,
        description="filed in demonstration mode: the notice period it did not give; null: "
        "filed with its notice",
    )
    demonstration_statement: str | None = Field(
        default=None,
        description="what its packet states of demonstration mode on every page (filed by an "
        "installation in it, or of a link opened in it); null: neither",
    )

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
            waiver=None if row.waiver is None else WaiverRead(**row.waiver),
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


class RejectRequest(BaseModel):
    reason: Note


class ProblemRead(BaseModel):
    field: str | None = Field(
        description="what of the body the problem is about, as a dotted path "
        '("rate_bp", "paytable.2.fixed"); null: the submission as a whole',
        examples=["rate_bp"],
    )
    rule: str | None = Field(
        description="the clause that refuses it; null: the input could not be read",
        examples=[RATE_CLAUSE],
    )
    message: str = Field(examples=["rate of progression 55% is outside 60% to 100%"])


class SubmissionCheckRead(BaseModel):
    model_config = {
        "json_schema_extra": {
            "examples": [
                {
                    "ok": False,
                    "problems": [
                        {
                            "field": "rate_bp",
                            "rule": RATE_CLAUSE,
                            "message": "rate of progression 55% is outside 60% to 100%",
                        }
                    ],
                    "proposal": {"kind": "rate_change", "rate_bp": 5500},
                    "effective_at_us": 1767225600000000,
                    "notice_days": 30,
                }
            ]
        }
    }

    ok: bool = Field(description="filing this body now would be accepted")
    problems: list[ProblemRead] = Field(
        description="what filing it would refuse: every field that cannot be read, or else "
        "the first rule it breaks (filing stops at the first, and so does this)"
    )
    proposal: dict[str, Any] | None = Field(
        description="the proposal as it would be filed (text read into cents and basis "
        "points); null when it could not be read"
    )
    effective_at_us: int | None = Field(
        description="when the change would take effect: the date asked for, or the earliest "
        "its notice period allows; a change of a playing link then waits for its next "
        "jackpot reset"
    )
    notice_days: int | None = Field(description="the notice period the filing needs, in days")
    jurisdiction: str = Field(
        default="",
        description="the jurisdiction whose clauses the problems cite",
        examples=[INDIANA.title],
    )
    demonstration: str | None = Field(
        default=None,
        description="demonstration mode: the notice period the filing would not give",
    )


class HandRead(BaseModel):
    hand: str = Field(examples=["ROYAL_FLUSH"])
    label: str = Field(examples=["royal flush"])


class TermsLineRead(HandRead):
    percent_bp: int | None
    fixed_cents: int | None
    level: int | None
    envy_cents: int | None
    description: str = Field(examples=["royal flush: 100% of the meter"])


class TermsGameRead(BaseModel):
    game: str
    label: str
    hands: list[HandRead] = Field(description="the hands its paytable may pay, best first")
    paytable: list[TermsLineRead] = Field(description="the paytable it plays now")


class TermsLevelRead(BaseModel):
    name: str
    reset_cents: int
    rate_bp: int
    reserve_bp: int
    limit_cents: int | None
    above_limit: Literal["overflow", "next_level"]
    mystery: MysteryIn | None
    won_since_share_set: bool = Field(
        default=False,
        description="whether this level's jackpot was won since its share was set: only then "
        "may a levels change move its share (each level's rate is locked until its own win)",
    )


class KindRead(BaseModel):
    kind: str = Field(examples=["rate_change"])
    label: str = Field(examples=["change of the rate of progression"])


class FilingTermsRead(BaseModel):
    """What a link plays now, as a form to propose a change starts from."""

    link_id: str
    shape: Literal["classic", "levels", "fixed_pay"] = Field(
        description="classic: one meter; levels: a pool of levels (its rate and reset amounts "
        "change together, as a levels change); fixed_pay: no meter, fixed amounts only"
    )
    kinds: list[KindRead] = Field(description="the changes a link of this shape is filed with")
    rate_bp: int
    reset_cents: int
    jackpot_won_since_rate_set: bool = Field(
        description="a jackpot was won since the rate was set: the rate may be changed"
    )
    armed_submission_id: str | None = Field(
        description="an approved change waiting for its reset; the next is filed after it"
    )
    games: list[TermsGameRead]
    levels: list[TermsLevelRead]
    effective_at_us: int = Field(description="a filing made now takes effect from this")
    notice_days: int


class ApproveRequest(BaseModel):
    reason: Note | None = Field(default=None, description="why, kept with the decision")
    waiver_confirmed: bool = Field(
        default=False,
        description="the agent confirmed the executive director's written direction the "
        "submission carries (who gave it, its reference, its date, its document): a "
        f"submission with a waiver is approved only so ({AMENDMENT_NOTICE_CLAUSE})",
    )


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
    jurisdiction: str | None = Field(default=None, description="filed under; its name and code")
    demonstration: str | None = Field(
        default=None, description="what the packet states of demonstration mode; null: none"
    )
    sections: list[DocumentSection]
