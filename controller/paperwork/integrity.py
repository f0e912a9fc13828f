"""Live gaming devices removed from play (68 IAC 10-1-6.2).

A table whose integrity is questioned is removed from play: its record is written with every
fact of 10-1-6.2(b), the written notice to the enforcement agent is generated as a PDF and kept
as a document, and the link stops crediting the table, all in one transaction. Remedial actions
and the verification follow; the table returns to play only after both. ``IntegrityRecords`` is
that work for one floor's tables.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from controller.core import reducer
from controller.paperwork.links import Links
from controller.paperwork.pdf import Letterhead, render_pdf
from controller.periods import Clock
from controller.rules.integrity import (
    ENFORCEMENT_NOTICE,
    INTEGRITY_CLAUSE,
    check_remedial_action,
    check_removal,
    check_return_to_play,
    check_verification,
)
from controller.storage.errors import Conflict, NotFound
from controller.storage.handles import Connection, Database
from controller.storage.papers import integrity as stored
from controller.storage.papers.integrity import Employee, IntegrityRecord, RemedialActionRecord
from controller.storage.unit_of_work import connected

NOTICE_TYPE = "application/pdf"


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceRemoval:
    """What is known when a device is removed: 68 IAC 10-1-6.2(b)(1)-(3), (5) and (10)."""

    questioned_at_us: int  # (b)(1)
    device_type: str  # (b)(2)
    manufacturer_serial_number: str | None  # (b)(3)(A), "if any"
    commission_registration_number: str  # (b)(3)(B)
    malfunction_reason: str  # (b)(5)
    complainant_name: str | None = None  # (b)(10)(A)
    complainant_address: str | None = None
    complainant_telephone: str | None = None
    complaint_nature: str | None = None  # (b)(10)(B)

    def check(self, now_us: int) -> None:
        check_removal(
            device_type=self.device_type,
            commission_registration_number=self.commission_registration_number,
            malfunction_reason=self.malfunction_reason,
            questioned_at_us=self.questioned_at_us,
            now_us=now_us,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RemedialAction:
    """68 IAC 10-1-6.2(b)(6)-(8)."""

    description: str
    employees: Sequence[Employee] = ()
    outside_company_name: str | None = None
    outside_company_address: str | None = None
    outside_company_telephone: str | None = None
    outside_individuals: Sequence[str] = ()

    def check(self) -> None:
        check_remedial_action(
            description=self.description,
            employees=[
                (e.printed_name, e.signature, e.occupational_license_number) for e in self.employees
            ],
            outside_company=(
                self.outside_company_name,
                self.outside_company_address,
                self.outside_company_telephone,
            ),
            outside_individuals=self.outside_individuals,
        )


def notice_pdf(
    *, record_id: str, table_id: str, table_name: str, location: str, link_id: str,
    removal: DeviceRemoval, removed_at_us: int, recorded_by: str,
    letterhead: Letterhead | None = None,
) -> bytes:  # fmt: skip
    """The written notice to the enforcement agent (68 IAC 10-1-6.2(b), last paragraph),
    under the property's letterhead, its times in the property's zone."""
    r = removal
    head = letterhead or Letterhead()
    rows = [
        ["Field", "Recorded"],
        ["Record", record_id],
        ["Table", f"{table_name} ({table_id}), link {link_id}"],
        ["Location", location or "-"],
        ["(b)(1) Integrity questioned at", head.when(r.questioned_at_us)],
        ["(b)(2) Type of device", r.device_type],
        ["(b)(3)(A) Manufacturer serial number", r.manufacturer_serial_number or "none issued"],
        ["(b)(3)(B) Commission registration number", r.commission_registration_number],
        ["(b)(4) Removed from play at", head.when(removed_at_us)],
        ["(b)(5) Reason not functioning properly", r.malfunction_reason],
        ["(b)(10)(A) Complainant", r.complainant_name or "-"],
        ["Complainant address", r.complainant_address or "-"],
        ["Complainant telephone", r.complainant_telephone or "-"],
        ["(b)(10)(B) Nature of the complaint", r.complaint_nature or "-"],
        ["Recorded by", recorded_by],
    ]
    return render_pdf(
        "Notice to the enforcement agent: live gaming device removed from play",
        [
            (INTEGRITY_CLAUSE, [ENFORCEMENT_NOTICE]),
            ("The device", rows),
        ],
        letterhead=head,
        signatures=("Recorded by (technician)",),
    )


def _audit(
    at: int, actor: str, action: str, record_id: str, after: Any, before: Any = None
) -> dict[str, Any]:
    return {
        "at_us": at,
        "actor": actor,
        "action": action,
        "target": f"integrity_record:{record_id}",
        "before": before,
        "after": after,
    }


@dataclass(frozen=True, slots=True)
class RemovalRecord:
    """A removal from play as it is read: its integrity record and the remedial actions taken
    since, in the order they were recorded."""

    record: IntegrityRecord
    remedial_actions: tuple[RemedialActionRecord, ...]

    @property
    def out_of_play_us(self) -> int | None:
        """(b)(4): how long the device was out of play; None while it still is."""
        r = self.record
        return None if r.returned_at_us is None else r.returned_at_us - r.removed_at_us


class IntegrityRecords:
    """The tables of one floor removed from play: the record and notice of each removal, its
    remedial actions, the verification and the return to play, and the records as read.

    Built once per running service over its database, its links (their state in memory, the
    ledger they commit to, the command that takes a table out of play or back) and its
    clock, which dates each step as it is made; ``letterhead`` gives the property's
    letterhead on a document of a link (none: a plain one).
    """

    def __init__(
        self,
        engine: Database,
        links: Links,
        clock: Clock,
        *,
        letterhead: Callable[[str], Letterhead] | None = None,
    ) -> None:
        self._engine = engine
        self._links = links
        self._clock = clock
        self._letterhead = letterhead

    # ------------------------------------------------------------------------- the records

    async def records(self, table_id: str) -> list[RemovalRecord]:
        """A known table's records, newest first, each with its remedial actions."""
        self._links.memory.link_of(table_id)
        async with connected(self._engine) as conn:
            rows = await stored.list_records(conn, table_id=table_id)
            return [
                RemovalRecord(row, tuple(await stored.list_actions(conn, row.record_id)))
                for row in rows
            ]

    async def record(self, table_id: str, record_id: str) -> RemovalRecord:
        """One record of the table with its remedial actions, or not found."""
        async with connected(self._engine) as conn:
            row = await self._table_record(conn, table_id, record_id)
            actions = await stored.list_actions(conn, record_id)
        return RemovalRecord(row, tuple(actions))

    @staticmethod
    async def _table_record(conn: Connection, table_id: str, record_id: str) -> IntegrityRecord:
        row = await stored.load_record(conn, record_id)
        if row is None:
            raise NotFound(f"no integrity record {record_id!r}")
        if row.table_id != table_id:
            raise NotFound(f"no integrity record {record_id!r} for table {table_id!r}")
        return row

    async def _open_record(self, table_id: str, record_id: str) -> IntegrityRecord:
        """The table's record, refused once the table is back in play."""
        async with connected(self._engine) as conn:
            row = await self._table_record(conn, table_id, record_id)
        if row.returned_at_us is not None:
            raise Conflict(f"integrity record {record_id}: the table is already back in play")
        return row

    # ---------------------------------------------------------------------------- the steps

    async def remove_from_play(self, *, table_id: str, removal: DeviceRemoval, actor: str) -> str:
        """Record the removal, file the notice and stop the table's part in the link, as one.
        Returns the record's id."""
        memory = self._links.memory
        link_id = memory.link_of(table_id)
        now = self._clock.now_us()
        removal.check(now)
        record_id = uuid.uuid4().hex
        async with connected(self._engine) as conn:
            t = await stored.table_place(conn, table_id)
        if t is None:
            raise NotFound(f"no table {table_id!r}")
        notice = notice_pdf(
            record_id=record_id, table_id=table_id, table_name=t.name, location=t.location,
            link_id=link_id, removal=removal, removed_at_us=now, recorded_by=actor,
            letterhead=None if self._letterhead is None else self._letterhead(link_id),
        )  # fmt: skip

        async def record(conn: Connection) -> None:
            digest = await memory.store.store_document(
                conn,
                content=notice,
                filename=f"notice-{record_id}.pdf",
                content_type=NOTICE_TYPE,
                uploaded_by=actor,
                at_us=now,
            )
            r = removal
            await stored.insert_record(
                conn,
                IntegrityRecord(
                    record_id=record_id, link_id=link_id, table_id=table_id,
                    questioned_at_us=r.questioned_at_us, device_type=r.device_type,
                    manufacturer_serial_number=r.manufacturer_serial_number or None,
                    commission_registration_number=r.commission_registration_number,
                    removed_at_us=now, malfunction_reason=r.malfunction_reason,
                    complainant_name=r.complainant_name,
                    complainant_address=r.complainant_address,
                    complainant_telephone=r.complainant_telephone,
                    complaint_nature=r.complaint_nature, notice_sha256=digest,
                    recorded_by=actor, at_us=now, verified_by=None, verified_at_us=None,
                    verification=None, returned_by=None, returned_at_us=None,
                ),
            )  # fmt: skip

        await self._links.commands.command(
            link_id,
            lambda s, _at: reducer.remove_from_play(
                s,
                table_id=table_id,
                record_id=record_id,
                reason=removal.malfunction_reason,
                at_us=now,
                by=actor,
            ),
            actor=actor,
            action="table.remove_from_play",
            target=f"table:{table_id}",
            extra=record,
            audit_after={"integrity_record": record_id, "out_of_play": True},
        )
        return record_id

    async def add_remedial_action(
        self, *, table_id: str, record_id: str, action: RemedialAction, actor: str
    ) -> None:
        """68 IAC 10-1-6.2(b)(6)-(8), on a record whose table is still out of play."""
        action.check()
        await self._open_record(table_id, record_id)
        now = self._clock.now_us()
        employees = [e._asdict() for e in action.employees]

        async def write(conn: Connection) -> None:
            await stored.insert_action(
                conn,
                RemedialActionRecord(
                    record_id=record_id,
                    description=action.description,
                    employees=tuple(action.employees),
                    outside_company_name=action.outside_company_name or None,
                    outside_company_address=action.outside_company_address or None,
                    outside_company_telephone=action.outside_company_telephone or None,
                    outside_individuals=tuple(action.outside_individuals),
                    recorded_by=actor,
                    at_us=now,
                ),
            )

        await self._links.memory.store.commit(
            [],
            extra=write,
            audit=_audit(now, actor, "integrity.remedial_action", record_id, {
                "description": action.description, "employees": employees,
                "outside_company_name": action.outside_company_name,
            }),
        )  # fmt: skip

    async def verify(self, *, table_id: str, record_id: str, verification: str, actor: str) -> None:
        """68 IAC 10-1-6.2(b)(9): the device meets the requirements after the remedial
        action."""
        row = await self._open_record(table_id, record_id)
        if row.verified_at_us is not None:
            raise Conflict(
                f"integrity record {record_id} was already verified by {row.verified_by}"
            )
        check_verification(verification=verification, remedial_actions=None)
        now = self._clock.now_us()

        async def write(conn: Connection) -> None:
            actions = await stored.count_actions(conn, record_id)
            check_verification(verification=verification, remedial_actions=actions)
            if not await stored.mark_verified(
                conn, record_id, verified_by=actor, at_us=now, verification=verification
            ):
                raise Conflict(f"integrity record {record_id} was verified meanwhile")

        await self._links.memory.store.commit(
            [],
            extra=write,
            audit=_audit(
                now,
                actor,
                "integrity.verify",
                record_id,
                {"verified_by": actor, "verification": verification},
                before={"verified_by": None, "verification": None},
            ),
        )

    async def return_to_play(self, *, table_id: str, record_id: str, actor: str) -> None:
        """Back in play, once repaired (a remedial action) and verified; credits count
        again."""
        await self._open_record(table_id, record_id)
        link_id = self._links.memory.link_of(table_id)
        now = self._clock.now_us()

        async def write(conn: Connection) -> None:
            actions = await stored.count_actions(conn, record_id)
            verified = await stored.verified_at(conn, record_id)
            check_return_to_play(remedial_actions=actions, verified=verified is not None)
            if not await stored.mark_returned(conn, record_id, returned_by=actor, at_us=now):
                raise Conflict(f"integrity record {record_id}: returned to play meanwhile")

        await self._links.commands.command(
            link_id,
            lambda s, _at: reducer.return_to_play(
                s, table_id=table_id, record_id=record_id, at_us=now, by=actor
            ),
            actor=actor,
            action="table.return_to_play",
            target=f"table:{table_id}",
            extra=write,
            audit_after={"integrity_record": record_id, "out_of_play": False},
        )
