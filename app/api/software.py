"""The check of the installed software against its manifest: the last result, and a check
now, asked by an admin (audited)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from app.api.deps import ServiceDep
from app.api.floor_models import errors
from app.security.authentication import Principal, require
from controller.roles import Role
from controller.runtime.service import FloorService

router = APIRouter(prefix="/api/v1", tags=["health"])

SOFTWARE_READERS = require(Role.ADMIN, Role.AUDITOR)
SOFTWARE_CHECKERS = require(Role.ADMIN)


class MismatchRead(BaseModel):
    path: str = Field(description="the file, relative to the install")
    problem: Literal["differs", "missing", "extra"] = Field(
        description="differs: another digest than the manifest's; missing: listed, not there; "
        "extra: there, not listed"
    )


class SelfCheckRead(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "state": "passed",
                    "checked_at_us": 1767225600000000,
                    "asked_by": "schedule",
                    "by": "controller",
                    "manifest": "/opt/progressive/progressive-manifest.json",
                    "manifest_sha256": "664c6f76b63239aa4845261ae68b12be"
                    "8dcec8d2f04ce16bd786cd477acc2459",
                    "files": 299,
                    "seconds": 0.021,
                    "fault": None,
                    "mismatched": 0,
                    "mismatches": [],
                    "interval_s": 86400.0,
                    "inoperable_links": {},
                }
            ]
        }
    )

    state: Literal["passed", "failed", "unchecked"]
    checked_at_us: int | None = Field(description="when the last check was made")
    asked_by: Literal["start", "schedule", "demand"] | None = Field(
        default=None, description="what made it: the start, the schedule, or a person"
    )
    by: str | None = Field(default=None, description="who asked for it (controller: itself)")
    manifest: str | None = None
    manifest_sha256: str | None = Field(
        default=None, description="the manifest's own digest, to compare with the release's"
    )
    files: int = Field(default=0, description="files the manifest lists")
    seconds: float | None = Field(default=None, description="how long the check took")
    fault: str | None = Field(
        default=None, description="why the software does not pass, when it does not"
    )
    mismatched: int = Field(default=0, description="files that do not match, in all")
    mismatches: list[MismatchRead] = Field(
        default_factory=list, description="the first fifty of them"
    )
    interval_s: float | None = Field(
        default=None, description="the most time between two checks of the running controller"
    )
    inoperable_links: dict[str, str] = Field(
        default_factory=dict,
        description="links that do not play now, with why: a failed check holds every link "
        "until two people recover it (`progressive links recover`) once the software passes",
    )

    @classmethod
    def of(cls, service: FloorService) -> SelfCheckRead:
        shown: dict[str, Any] = dict(service.software())
        shown.pop("checked_at", None)
        return cls(**shown, inoperable_links=service.records.inoperable_links())


@router.get(
    "/self-check",
    summary="The last check of the installed software against its manifest",
    responses=errors(401, 403),
)
async def last_self_check(
    service: ServiceDep, _: Annotated[Principal, Depends(SOFTWARE_READERS)]
) -> SelfCheckRead:
    return SelfCheckRead.of(service)


@router.post(
    "/self-check",
    summary="Check the installed software against its manifest now",
    description="Every installed file is hashed and compared with the manifest. A failure makes "
    "every link inoperable (their tables take no side bets) until the software passes again "
    "and two people recover each link. Audited, with its result.",
    responses=errors(401, 403),
)
async def self_check_now(
    service: ServiceDep, who: Annotated[Principal, Depends(SOFTWARE_CHECKERS)]
) -> SelfCheckRead:
    check = service.self_check
    assert check is not None  # made by the service's start
    await check.run_once(why="demand", by=who.username)
    return SelfCheckRead.of(service)
