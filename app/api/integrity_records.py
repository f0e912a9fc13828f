"""Devices removed from play over HTTP: the integrity record of each (68 IAC 10-1-6.2), its
remedial actions, the verification and the return to play."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, status
from pydantic import BaseModel, Field

from app.api.deps import ServiceDep
from app.api.floor_models import errors
from app.api.text_fields import IdText, Line, Note, OptionalNote, Reference, optional_line
from app.security.authentication import Principal, require
from controller.paperwork.integrity import DeviceRemoval, RemedialAction, RemovalRecord
from controller.roles import Role
from controller.rules.integrity import INTEGRITY_CLAUSE, REMEDIAL_CLAUSE, VERIFICATION_CLAUSE
from controller.storage.papers.integrity import Employee

router = APIRouter(prefix="/api/v1")

TABLE_WORKERS = require(Role.TECHNICIAN, Role.SUPERVISOR)
RECORD_READERS = require(Role.TECHNICIAN, Role.SUPERVISOR, Role.AUDITOR, Role.ADMIN)


class IntegrityRecordCreate(BaseModel):
    """68 IAC 10-1-6.2(b)(1)-(3), (5) and (10), known when the device is removed."""

    questioned_at_us: int = Field(
        ge=0, le=2**62, description="(b)(1) when its integrity was questioned"
    )
    device_type: Line = Field(description="(b)(2)")
    manufacturer_serial_number: Annotated[str, optional_line(100)] | None = Field(
        default=None, description="(b)(3)(A), if any"
    )
    commission_registration_number: Line = Field(description="(b)(3)(B)")
    malfunction_reason: Note = Field(description="(b)(5) why it is not functioning properly")
    complainant_name: Annotated[str, optional_line(200)] | None = Field(
        default=None, description="(b)(10)(A)"
    )
    complainant_address: Annotated[str, optional_line(500)] | None = None
    complainant_telephone: Annotated[str, optional_line(50)] | None = None
    complaint_nature: OptionalNote | None = Field(default=None, description="(b)(10)(B)")


class EmployeeModel(BaseModel):
    printed_name: Line
    signature: Line
    occupational_license_number: Line


class RemedialActionCreate(BaseModel):
    """68 IAC 10-1-6.2(b)(6)-(8)."""

    description: Note
    employees: list[EmployeeModel] = Field(default=[], max_length=20)
    outside_company_name: Annotated[str, optional_line(200)] | None = None
    outside_company_address: Annotated[str, optional_line(500)] | None = None
    outside_company_telephone: Annotated[str, optional_line(50)] | None = None
    outside_individuals: list[Line] = Field(default=[], max_length=20)


class VerificationCreate(BaseModel):
    verification: Note = Field(description="(b)(9) how the device was found to meet the rules")


class EmployeeRead(BaseModel):
    printed_name: str
    signature: str
    occupational_license_number: str


class RemedialActionRead(BaseModel):
    description: str
    employees: list[EmployeeRead]
    outside_company_name: str | None
    outside_company_address: str | None
    outside_company_telephone: str | None
    outside_individuals: list[str]
    recorded_by: str
    at_us: int


class IntegrityRecordRead(BaseModel):
    record_id: str
    link_id: str
    table_id: str
    questioned_at_us: int
    device_type: str
    manufacturer_serial_number: str | None
    commission_registration_number: str
    removed_at_us: int
    returned_at_us: int | None
    out_of_play_us: int | None = Field(description="(b)(4) how long it was out; None: still out")
    malfunction_reason: str
    remedial_actions: list[RemedialActionRead]
    verified_by: str | None
    verified_at_us: int | None
    verification: str | None
    returned_by: str | None
    complainant_name: str | None
    complainant_address: str | None
    complainant_telephone: str | None
    complaint_nature: str | None
    notice_sha256: str = Field(description="the written notice to the enforcement agent (PDF)")
    recorded_by: str

    @classmethod
    def of(cls, r: RemovalRecord) -> IntegrityRecordRead:
        """The record as read, its remedial actions with it and how long it was out."""
        return cls.model_validate(
            {
                **r.record._asdict(),
                "out_of_play_us": r.out_of_play_us,
                "remedial_actions": r.remedial_actions,
            },
            from_attributes=True,  # the remedial actions and their employees as read
        )


@router.post(
    "/tables/{table_id}/integrity-records",
    tags=["integrity"],
    status_code=status.HTTP_201_CREATED,
    summary=f"Remove a table from play ({INTEGRITY_CLAUSE})",
    description="Records (b)(1)-(5) and (10), files the written notice to the enforcement agent "
    "as a PDF, and stops the table's contributions and hits until it returns to play.",
    responses=errors(401, 403, 404, 409, 422),
)
async def remove_from_play(
    table_id: IdText,
    body: IntegrityRecordCreate,
    service: ServiceDep,
    who: Annotated[Principal, Depends(TABLE_WORKERS)],
) -> IntegrityRecordRead:
    integrity = service.integrity
    record_id = await integrity.remove_from_play(
        table_id=table_id, removal=DeviceRemoval(**body.model_dump()), actor=who.username
    )
    return IntegrityRecordRead.of(await integrity.record(table_id, record_id))


@router.get(
    "/tables/{table_id}/integrity-records",
    tags=["integrity"],
    summary="A table's records of removal from play, newest first",
    responses=errors(401, 403, 404),
)
async def list_records(
    table_id: IdText, service: ServiceDep, _: Annotated[Principal, Depends(RECORD_READERS)]
) -> list[IntegrityRecordRead]:
    return [IntegrityRecordRead.of(r) for r in await service.integrity.records(table_id)]


@router.get(
    "/tables/{table_id}/integrity-records/{record_id}",
    tags=["integrity"],
    summary="One record of removal from play",
    responses=errors(401, 403, 404),
)
async def get_record(
    table_id: IdText,
    record_id: Reference,
    service: ServiceDep,
    _: Annotated[Principal, Depends(RECORD_READERS)],
) -> IntegrityRecordRead:
    return IntegrityRecordRead.of(await service.integrity.record(table_id, record_id))


@router.post(
    "/tables/{table_id}/integrity-records/{record_id}/remedial-actions",
    tags=["integrity"],
    summary=f"Record a remedial action ({REMEDIAL_CLAUSE})",
    responses=errors(401, 403, 404, 409, 422),
)
async def add_remedial_action(
    table_id: IdText,
    record_id: Reference,
    body: RemedialActionCreate,
    service: ServiceDep,
    who: Annotated[Principal, Depends(TABLE_WORKERS)],
) -> IntegrityRecordRead:
    action = RemedialAction(
        description=body.description,
        employees=[Employee(**e.model_dump()) for e in body.employees],
        outside_company_name=body.outside_company_name,
        outside_company_address=body.outside_company_address,
        outside_company_telephone=body.outside_company_telephone,
        outside_individuals=body.outside_individuals,
    )
    integrity = service.integrity
    await integrity.add_remedial_action(
        table_id=table_id, record_id=record_id, action=action, actor=who.username
    )
    return IntegrityRecordRead.of(await integrity.record(table_id, record_id))


@router.post(
    "/tables/{table_id}/integrity-records/{record_id}/verification",
    tags=["integrity"],
    summary=f"Verify the device meets the requirements ({VERIFICATION_CLAUSE})",
    responses=errors(401, 403, 404, 409, 422),
)
async def verify_device(
    table_id: IdText,
    record_id: Reference,
    body: VerificationCreate,
    service: ServiceDep,
    who: Annotated[Principal, Depends(TABLE_WORKERS)],
) -> IntegrityRecordRead:
    integrity = service.integrity
    await integrity.verify(
        table_id=table_id, record_id=record_id, verification=body.verification, actor=who.username
    )
    return IntegrityRecordRead.of(await integrity.record(table_id, record_id))


@router.post(
    "/tables/{table_id}/integrity-records/{record_id}/return-to-play",
    tags=["integrity"],
    summary="Return a repaired, verified table to play",
    responses=errors(401, 403, 404, 409),
)
async def return_to_play(
    table_id: IdText,
    record_id: Reference,
    service: ServiceDep,
    who: Annotated[Principal, Depends(TABLE_WORKERS)],
) -> IntegrityRecordRead:
    integrity = service.integrity
    await integrity.return_to_play(table_id=table_id, record_id=record_id, actor=who.username)
    return IntegrityRecordRead.of(await integrity.record(table_id, record_id))
