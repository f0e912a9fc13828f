"""Corrections of a meter by two people (68 IAC 10-6-5(c), 10-8-5(c)).

A supervisor requests a correction with a reason and a supporting document; it changes nothing
until a second, different person approves it. Approval applies it through the runtime, which
appends the correcting entry, the correction and the decision in one transaction.
``Corrections`` is that work for one floor's links.
"""

from __future__ import annotations

import enum
import hashlib
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from controller.access.duties import check_independent
from controller.core.money import MAX_AMOUNT_CENTS, UNITS_PER_CENT, check_cents
from controller.core.reducer import LinkState, correction_meter
from controller.core.reducer.levels import is_single_meter, meter_label, meters_of
from controller.paperwork.links import Links
from controller.periods import Clock
from controller.rules.house import TWO_PERSON_CLAUSE, check_correction_approval
from controller.rules.meter_records import check_correction_request
from controller.storage.errors import Conflict, NotFound, StoreError
from controller.storage.handles import Connection, Database
from controller.storage.papers import correction_records as stored
from controller.storage.papers.correction_records import CorrectionRequest
from controller.storage.papers.documents import load_document
from controller.storage.unit_of_work import connected


class CorrectionCategory(enum.StrEnum):
    MALFUNCTION = "malfunction"  # a malfunction fixed
    TRANSFER = "transfer"  # an amount moved to another link
    LIMIT_ADJUSTMENT = "limit_adjustment"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class CorrectionMeter:
    """A meter a correction of a link may move, as the form offers it."""

    key: str  # L1, L1.reserve, L2.overflow...
    name: str  # Grand, Grand reserve, Major overflow...
    units: int


def _decide(
    request_id: str,
    *,
    status: str,
    decided_by: str,
    decided_at_us: int,
    decision_reason: str | None = None,
    correction_id: str | None = None,
) -> Callable[[Connection], Awaitable[None]]:
    async def mark(conn: Connection) -> None:
        if not await stored.decide_request(
            conn, request_id, while_status="pending", status=status, decided_by=decided_by,
            decided_at_us=decided_at_us, decision_reason=decision_reason,
            correction_id=correction_id,
        ):  # fmt: skip
            raise Conflict(f"correction request {request_id} was decided meanwhile")

    return mark


class Corrections:
    """Every correction of one floor's links: the requests a supervisor files, the meters they
    name, and the second person's approval or rejection, each checked against the links in
    memory first (an unknown link is not found).

    Built once per running service over its database, its links (their state in memory, the
    ledger they commit to, the command that applies a correction) and its clock, which dates
    each request and decision as it is made.
    """

    def __init__(self, engine: Database, links: Links, clock: Clock) -> None:
        self._engine = engine
        self._links = links
        self._clock = clock

    def _state(self, link_id: str) -> LinkState:
        state = self._links.memory.states.get(link_id)
        if state is None:
            raise NotFound(f"no link {link_id!r}")
        return state

    def known_link(self, link_id: str) -> None:
        """Nothing, or not found for a link that does not exist."""
        self._state(link_id)

    # -------------------------------------------------------------------------- the meters

    def meters(self, link_id: str) -> list[CorrectionMeter]:
        """The meters of a link of levels, one to be named by each correction of it; none for
        a link of one meter, whose corrections need no choice."""
        state = self._state(link_id)
        levels = [lv.config for lv in state.levels]
        if not levels or is_single_meter(levels):
            return []
        return [
            CorrectionMeter(key, meter_label(levels, key), units)
            for key, units in meters_of(state.levels).items()
        ]

    def check_meter(self, link_id: str, meter: str | None) -> str | None:
        """The meter a correction of ``link_id`` names, checked against the link's meters when
        it is filed (and again when it is applied): None for a link of one meter."""
        return correction_meter(self._state(link_id), meter)

    def meter_name(self, link_id: str, meter: str | None) -> str | None:
        """The meter a request names as people call it ("Grand reserve"); None for a link's
        one meter or a link no longer in memory."""
        state = self._links.memory.states.get(link_id)
        if meter is None or state is None:
            return None
        return meter_label([lv.config for lv in state.levels], meter)

    # ------------------------------------------------------------------------ the requests

    async def ask(
        self,
        *,
        link_id: str,
        delta_cents: int,
        category: CorrectionCategory,
        reason: str,
        requested_by: str,
        document: bytes | None,
        document_name: str = "document",
        document_type: str = "application/octet-stream",
        meter: str | None = None,
    ) -> str:
        """A pending request, its document kept; the meter does not move yet. ``meter``: the
        one of a link of levels it corrects (``L2``, ``L1.reserve``...), refused unless the
        link has it. Returns the request's id."""
        meter = self.check_meter(link_id, meter)
        check_cents("a correction", delta_cents, low=-MAX_AMOUNT_CENTS)
        delta_units = delta_cents * UNITS_PER_CENT
        now = self._clock.now_us()
        request_id = uuid.uuid4().hex
        digest = hashlib.sha256(document).hexdigest() if document is not None else None
        check_correction_request(delta_units=delta_units, reason=reason, document_sha256=digest)
        store = self._links.memory.store

        async def write(conn: Connection) -> None:
            if document is not None:
                await store.store_document(
                    conn,
                    content=document,
                    filename=document_name,
                    content_type=document_type,
                    uploaded_by=requested_by,
                    at_us=now,
                )
            await stored.insert_request(
                conn, request_id=request_id, link_id=link_id, delta_units=delta_units,
                category=str(category), reason=reason, document_sha256=digest,
                requested_by=requested_by, at_us=now, status="pending", meter=meter,
            )  # fmt: skip

        await store.commit(
            [],
            extra=write,
            audit={
                "at_us": now,
                "actor": requested_by,
                "action": "correction.request",
                "target": f"link:{link_id}",
                "after": {
                    "request_id": request_id,
                    "delta_cents": delta_cents,
                    "meter": meter,
                    "category": str(category),
                    "reason": reason,
                    "document_sha256": digest,
                },
            },
        )
        return request_id

    async def request(self, request_id: str) -> CorrectionRequest:
        """One request as it stands, or not found."""
        async with connected(self._engine) as conn:
            row = await stored.load_request(conn, request_id)
        if row is None:
            raise NotFound(f"no correction request {request_id!r}")
        return row

    async def requests(
        self, *, link_id: str | None = None, status: str | None = None
    ) -> list[CorrectionRequest]:
        """Requests newest first, of a known link when one is named, of ``status`` when
        given."""
        if link_id is not None:
            self.known_link(link_id)
        async with connected(self._engine) as conn:
            return await stored.list_requests(conn, link_id=link_id, status=status)

    # ------------------------------------------------------------------------ the decision

    async def approve(self, request_id: str, *, approved_by: str) -> str:
        """The second person's approval: the correction is applied now. Returns its id."""
        req = await self.request(request_id)
        if req.status != "pending":
            raise Conflict(f"correction request {request_id} was already {req.status}")
        check_correction_approval(requested_by=req.requested_by, approved_by=approved_by)
        await check_independent(
            self._engine,
            approver=approved_by,
            filer=req.requested_by,
            clause=TWO_PERSON_CLAUSE,
            what="correction",
        )
        document: bytes | None = None
        name, kind = "document", "application/octet-stream"
        if req.document_sha256 is not None:
            async with connected(self._engine) as conn:
                doc = await load_document(conn, req.document_sha256)
            if doc is None:
                raise NotFound(f"no document {req.document_sha256!r}")
            document, name, kind = doc.content, doc.filename, doc.content_type
        correction_id = uuid.uuid4().hex
        await self._links.commands.correct(
            req.link_id,
            delta_cents=req.delta_units // UNITS_PER_CENT,
            category=req.category,
            reason=req.reason,
            requested_by=req.requested_by,
            approved_by=approved_by,
            document=document,
            document_name=name,
            document_type=kind,
            correction_id=correction_id,
            meter=req.meter,
            also=_decide(
                request_id,
                status="approved",
                decided_by=approved_by,
                decided_at_us=self._clock.now_us(),
                correction_id=correction_id,
            ),
        )
        return correction_id

    async def reject(self, request_id: str, *, rejected_by: str, reason: str) -> None:
        """A pending request turned down, with its reason; the meter does not move."""
        req = await self.request(request_id)
        if req.status != "pending":
            raise Conflict(f"correction request {request_id} was already {req.status}")
        if not reason.strip():
            raise StoreError(f"correction request {request_id}: a rejection states its reason")
        now = self._clock.now_us()
        await self._links.memory.store.commit(
            [],
            extra=_decide(
                request_id,
                status="rejected",
                decided_by=rejected_by,
                decided_at_us=now,
                decision_reason=reason,
            ),
            audit={
                "at_us": now,
                "actor": rejected_by,
                "action": "correction.reject",
                "target": f"link:{req.link_id}",
                "before": {"request_id": request_id, "status": "pending"},
                "after": {"request_id": request_id, "status": "rejected", "reason": reason},
            },
        )
