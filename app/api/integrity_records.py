"""Devices removed from play over HTTP: the integrity record of each (68 IAC 10-1-6.2), its
remedial actions, the verification and the return to play."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from fastapi import APIRouter, Depends, status
from pydantic import BaseModel, Field

from app.api.deps import ServiceDep
from app.api.floor_models import errors
from app.api.text_fields import IdText, Line, Note, OptionalNote, Reference, optional_line
from app.security.authentication import Principal, require
from controller.paperwork import integrity
from controller.paperwork.pdf import letterhead_of
from controller.roles import Role
from controller.rules.integrity import INTEGRITY_CLAUSE, REMEDIAL_CLAUSE, VERIFICATION_CLAUSE
from controller.runtime.service import FloorService
from controller.storage.errors import NotFound
from controller.storage.papers.integrity import Employee, IntegrityRecord, RemedialActionRecord

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

    @classmethod
    def of(cls, a: RemedialActionRecord) -> RemedialActionRead:
        return cls.model_validate({**a._asdict(), "employees": [e._asdict() for e in a.employees]})


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
    def of(
        cls, row: IntegrityRecord, actions: Sequence[RemedialActionRecord]
    ) -> IntegrityRecordRead:
        """The record as read, its remedial actions with it and how long it was out."""
        out = None if row.returned_at_us is None else row.returned_at_us - row.removed_at_us
        return cls.model_validate({
            **row._asdict(),
            "out_of_play_us": out,
            "remedial_actions": [RemedialActionRead.of(a) for a in actions],
        })  # fmt: skip


async def _record(service: FloorService, row: IntegrityRecord) -> IntegrityRecordRead:
    actions = await integrity.remedial_actions(service.engine, row.record_id)
    return IntegrityRecordRead.of(row, actions)


async def _table_record(
    service: FloorService, table_id: str, record_id: str
) -> IntegrityRecordRead:
    row = await integrity.record(service.engine, record_id)
    if row.table_id != table_id:
        raise NotFound(f"no integrity record {record_id!r} for table {table_id!r}")
    return await _record(service, row)


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
    record_id = await integrity.remove_from_play(
        service.runtime,
        table_id=table_id,
        removal=integrity.DeviceRemoval(**body.model_dump()),
        actor=who.username,
        letterhead=letterhead_of(
            service.settings, service.statement(service.runtime.memory.link_of(table_id))
        ),
    )
    return await _table_record(service, table_id, record_id)


@router.get(
    "/tables/{table_id}/integrity-records",
    tags=["integrity"],
    summary="A table's records of removal from play, newest first",
    responses=errors(401, 403, 404),
)
async def list_records(
    table_id: IdText, service: ServiceDep, _: Annotated[Principal, Depends(RECORD_READERS)]
) -> list[IntegrityRecordRead]:
    service.runtime.memory.link_of(table_id)
    return [
        await _record(service, r)
        for r in await integrity.records(service.engine, table_id=table_id)
    ]


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
    return await _table_record(service, table_id, record_id)


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
    action = integrity.RemedialAction(
        description=body.description,
        employees=[Employee(**e.model_dump()) for e in body.employees],
        outside_company_name=body.outside_company_name,
        outside_company_address=body.outside_company_address,
        outside_company_telephone=body.outside_company_telephone,
        outside_individuals=body.outside_individuals,
    )
    await integrity.add_remedial_action(
        service.runtime, table_id=table_id, record_id=record_id, action=action, actor=who.username
    )
    return await _table_record(service, table_id, record_id)


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
    await integrity.record_verification(
        service.runtime,
        table_id=table_id,
        record_id=record_id,
        verification=body.verification,
        actor=who.username,
    )
    return await _table_record(service, table_id, record_id)


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
    await integrity.return_to_play(
        service.runtime, table_id=table_id, record_id=record_id, actor=who.username
    )
    return await _table_record(service, table_id, record_id)
