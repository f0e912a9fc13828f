"""Records of devices removed from play (68 IAC 10-1-6.2) and their remedial actions."""

from __future__ import annotations

import json
from typing import NamedTuple

from sqlalchemy import func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from controller.storage.models import TableRow
from controller.storage.paperwork import IntegrityRecordRow, RemedialActionRow
from controller.storage.typed_rows import columns


class IntegrityRecord(NamedTuple):
    record_id: str
    link_id: str
    table_id: str
    questioned_at_us: int
    device_type: str
    manufacturer_serial_number: str | None
    commission_registration_number: str
    removed_at_us: int
    malfunction_reason: str
    complainant_name: str | None
    complainant_address: str | None
    complainant_telephone: str | None
    complaint_nature: str | None
    notice_sha256: str
    recorded_by: str
    at_us: int
    verified_by: str | None
    verified_at_us: int | None
    verification: str | None
    returned_by: str | None
    returned_at_us: int | None


class Employee(NamedTuple):
    """An employee who took part in a remedial action: 68 IAC 10-1-6.2(b)(7)."""

    printed_name: str
    signature: str
    occupational_license_number: str


class RemedialActionRecord(NamedTuple):
    """A remedial action as recorded; its lists are kept as JSON text, read back here."""

    record_id: str
    description: str
    employees: tuple[Employee, ...]
    outside_company_name: str | None
    outside_company_address: str | None
    outside_company_telephone: str | None
    outside_individuals: tuple[str, ...]
    recorded_by: str
    at_us: int

    def row(self) -> dict[str, object]:
        """The columns of its row: the lists as JSON text."""
        return {
            **self._asdict(),
            "employees": json.dumps([e._asdict() for e in self.employees], ensure_ascii=False),
            "outside_individuals": json.dumps(list(self.outside_individuals)),
        }

    @classmethod
    def of_row(cls, row: tuple[object, ...]) -> RemedialActionRecord:
        a = cls._make(row)
        employees = json.loads(str(a.employees))
        return a._replace(
            employees=tuple(Employee(**e) for e in employees),
            outside_individuals=tuple(json.loads(str(a.outside_individuals))),
        )


class TablePlace(NamedTuple):
    name: str
    location: str


_r = IntegrityRecordRow
_RECORD = columns(
    IntegrityRecord,
    _r.record_id, _r.link_id, _r.table_id, _r.questioned_at_us, _r.device_type,
    _r.manufacturer_serial_number, _r.commission_registration_number, _r.removed_at_us,
    _r.malfunction_reason, _r.complainant_name, _r.complainant_address,
    _r.complainant_telephone, _r.complaint_nature, _r.notice_sha256, _r.recorded_by, _r.at_us,
    _r.verified_by, _r.verified_at_us, _r.verification, _r.returned_by, _r.returned_at_us,
)  # fmt: skip
_a = RemedialActionRow
_ACTION = columns(
    RemedialActionRecord,
    _a.record_id, _a.description, _a.employees, _a.outside_company_name,
    _a.outside_company_address, _a.outside_company_telephone, _a.outside_individuals,
    _a.recorded_by, _a.at_us,
)  # fmt: skip


async def table_place(conn: AsyncConnection, table_id: str) -> TablePlace | None:
    row = (
        await conn.execute(
            select(TableRow.name, TableRow.location).where(TableRow.table_id == table_id)
        )
    ).one_or_none()
    return None if row is None else TablePlace._make(row)


async def insert_record(conn: AsyncConnection, record: IntegrityRecord) -> None:
    await conn.execute(insert(_r).values(**record._asdict()))


async def load_record(conn: AsyncConnection, record_id: str) -> IntegrityRecord | None:
    row = (await conn.execute(select(*_RECORD).where(_r.record_id == record_id))).one_or_none()
    return None if row is None else IntegrityRecord._make(row)


async def list_records(
    conn: AsyncConnection, *, table_id: str | None = None
) -> list[IntegrityRecord]:
    """Newest first."""
    q = select(*_RECORD).order_by(_r.at_us.desc())
    if table_id is not None:
        q = q.where(_r.table_id == table_id)
    return [IntegrityRecord._make(row) for row in await conn.execute(q)]


async def list_actions(conn: AsyncConnection, record_id: str) -> list[RemedialActionRecord]:
    """In the order they were recorded."""
    q = select(*_ACTION).where(_a.record_id == record_id).order_by(_a.action_id)
    return [RemedialActionRecord.of_row(tuple(row)) for row in await conn.execute(q)]


async def insert_action(conn: AsyncConnection, action: RemedialActionRecord) -> None:
    await conn.execute(insert(_a).values(**action.row()))


async def count_actions(conn: AsyncConnection, record_id: str) -> int:
    n = await conn.scalar(select(func.count()).where(_a.record_id == record_id))
    return int(n or 0)


async def verified_at(conn: AsyncConnection, record_id: str) -> int | None:
    return await conn.scalar(select(_r.verified_at_us).where(_r.record_id == record_id))


async def mark_verified(
    conn: AsyncConnection, record_id: str, *, verified_by: str, at_us: int, verification: str
) -> bool:
    """The verification, on a record not yet verified; False: it was."""
    result = await conn.execute(
        update(_r)
        .where(_r.record_id == record_id, _r.verified_at_us.is_(None))
        .values(verified_by=verified_by, verified_at_us=at_us, verification=verification)
    )
    return result.rowcount == 1


async def mark_returned(
    conn: AsyncConnection, record_id: str, *, returned_by: str, at_us: int
) -> bool:
    """The return to play, on a record whose device is still out; False: it was back."""
    result = await conn.execute(
        update(_r)
        .where(_r.record_id == record_id, _r.returned_at_us.is_(None))
        .values(returned_by=returned_by, returned_at_us=at_us)
    )
    return result.rowcount == 1
