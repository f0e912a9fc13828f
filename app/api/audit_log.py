"""The audit log: every privileged action with who, when, and before and after."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict

from app.api.deps import ServiceDep
from app.api.floor_models import TimeText, instant
from app.api.text_fields import IdText, Line
from app.security.authentication import Principal, require
from controller.roles import Role
from controller.storage import audit

router = APIRouter(prefix="/api/v1", tags=["audit"])


class AuditEntryRead(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "audit_id": 42,
                    "at_us": 1767225600000000,
                    "actor": "admin",
                    "action": "user.disable",
                    "target": "user pat.tech",
                    "before": '{"disabled":false,"role":"technician"}',
                    "after": '{"disabled":true,"role":"technician"}',
                }
            ]
        }
    )

    audit_id: int
    at_us: int
    actor: str
    action: str
    target: str
    before: str | None  # canonical JSON
    after: str | None

    @classmethod
    def of(cls, entry: audit.AuditEntry) -> AuditEntryRead:
        return cls(
            audit_id=entry.audit_id,
            at_us=entry.at_us,
            actor=entry.actor,
            action=entry.action,
            target=entry.target,
            before=entry.before,
            after=entry.after,
        )


@router.get("/audit-log", summary="Privileged actions of a period, newest first")
async def audit_log(
    _: Annotated[Principal, Depends(require(Role.AUDITOR, Role.SUPERVISOR, Role.ADMIN))],
    service: ServiceDep,
    since: Annotated[
        TimeText | None,
        Query(
            description="start (included): a date or ISO 8601 time, UTC unless it says "
            "otherwise; default: the beginning",
            examples=["2026-01-01"],
        ),
    ] = None,
    until: Annotated[
        TimeText | None,
        Query(description="end (excluded); default: now", examples=["2026-01-02T08:00"]),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=10_000, description="at most this many")] = 1000,
    actor: Annotated[
        Line | None, Query(max_length=100, description="only what this person did")
    ] = None,
    action: Annotated[
        IdText | None,
        Query(description="only this kind of action", examples=["hit.sign_off"]),
    ] = None,
) -> list[AuditEntryRead]:
    # Any span: what is read is bounded by ``limit``, newest first.
    entries = await service.accounts.audit_entries(
        since_us=None if since is None else instant("since", since),
        until_us=None if until is None else instant("until", until),
        limit=limit,
        actor=actor,
        action=action,
    )
    return [AuditEntryRead.of(e) for e in entries]
