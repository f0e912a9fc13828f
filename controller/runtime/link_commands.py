"""Operator commands on a link: each computed, audited and committed as one, decided again
when another process committed to the link first."""

from __future__ import annotations

import contextlib
import hashlib
import uuid
from collections.abc import Callable
from typing import Any

from controller.core import reducer
from controller.core.money import UNITS_PER_CENT
from controller.core.reducer import LinkState, Outcome
from controller.rules.house import check_correction_approval, check_recovery
from controller.rules.meter_records import check_correction_reason
from controller.rules.software import check_recoverable
from controller.runtime.link_memory import LinkMemory
from controller.runtime.mystery_draws import draw, topped_up
from controller.storage.anomalies import Anomalies
from controller.storage.errors import Conflict, NotFound, StaleState
from controller.storage.handles import Connection
from controller.storage.papers.correction_records import insert_correction
from controller.storage.store import Extra

# A command that finds its link moved on by another process is decided again this many times.
COMMAND_TRIES = 5


class LinkCommands:
    """The operators' commands on the links of ``memory``."""

    def __init__(self, memory: LinkMemory) -> None:
        self.memory = memory

    async def command(
        self,
        link_id: str,
        step: Callable[[LinkState, int], Outcome],
        *,
        actor: str,
        action: str,
        target: str,
        extra: Extra | None = None,
        audit_after: Any = None,
    ) -> Outcome:
        """An operator command on one link: computed, audited and committed as one."""
        if link_id not in self.memory.states:
            raise NotFound(f"no link {link_id!r}")
        for attempt in range(1, COMMAND_TRIES + 1):
            async with contextlib.AsyncExitStack() as held:
                await held.enter_async_context(self.memory.lock(link_id))
                turns: list[str] = []
                if attempt > 1:
                    # Overtaken once: the link's turn, waited for, so the controller polling
                    # it does not overtake this command again however slow the machine.
                    await held.enter_async_context(self.memory.store.turn(link_id))
                    await self.memory.reload([link_id])
                    turns.append(link_id)
                await self.memory.reload_stale([link_id])
                self.memory.refuse_inoperable(link_id)
                at = self.memory.clock.now_us()
                before = self.memory.states[link_id]
                # A command may reset a level (a hit entered by hand): its draws made ready.
                o = step(topped_up(before), at)
                audit = {
                    "at_us": at,
                    "actor": actor,
                    "action": action,
                    "target": target,
                    "before": {
                        "meter_units": before.meter_units,
                        "rate_bp": before.rate_bp,
                        "reset_cents": before.reset_cents,
                    },
                    "after": {
                        "meter_units": o.state.meter_units,
                        "rate_bp": o.state.rate_bp,
                        "reset_cents": o.state.reset_cents,
                        **(audit_after or {}),
                    },
                }
                try:
                    await self.memory.commit([o], [link_id], audit=audit, extra=extra, turns=turns)
                except StaleState:
                    # Another process (the controller polling the link, when this is a web
                    # process) committed first: the link was read again; decide again from it.
                    if attempt == COMMAND_TRIES:
                        raise
                    continue
                return o
        raise AssertionError("unreachable")

    async def recover(self, link_id: str, *, reason: str, by: str, approved_by: str) -> Outcome:
        """Bring an inoperable link back on what its sealed history vouches for: asked by one
        person, approved by another, recorded as an entry of the history (see
        ``LedgerStore.recover_link``). Its tables are re-baselined from their next readings,
        nothing credited between, and held until a technician releases them. A link held by
        a failed check of the software is recovered so too, once the software passes."""
        check_recovery(reason=reason, by=by, approved_by=approved_by)
        check_recoverable(self.memory.software_fault)
        if link_id not in self.memory.states:
            raise NotFound(f"no link {link_id!r}")
        async with self.memory.lock(link_id):
            await self.memory.store.recover_link(
                link_id,
                at_us=self.memory.clock.now_us(),
                reason=reason,
                by=by,
                approved_by=approved_by,
                draw=draw,
            )
            self.memory.software_held.pop(link_id, None)  # its hold, if any, lifted with it
            await self.memory.reload([link_id])
            o = reducer.Outcome(self.memory.states[link_id])
        self.memory.tell_reloaded([link_id])
        return o

    async def change_rate(self, link_id: str, *, rate_bp: int, actor: str) -> Outcome:
        return await self.command(
            link_id,
            lambda s, at: reducer.change_rate(s, rate_bp=rate_bp, at_us=at, by=actor),
            actor=actor,
            action="link.rate",
            target=f"link:{link_id}",
        )

    async def change_reset_amount(self, link_id: str, *, reset_cents: int, actor: str) -> Outcome:
        return await self.command(
            link_id,
            lambda s, at: reducer.change_reset_amount(
                s, reset_cents=reset_cents, at_us=at, by=actor
            ),
            actor=actor,
            action="link.reset_amount",
            target=f"link:{link_id}",
        )

    async def table_offline(self, table_id: str, *, reason: str) -> Outcome:
        link_id = self.memory.link_of(table_id)
        async with self.memory.lock(link_id):
            await self.memory.reload_stale([link_id])
            if link_id in self.memory.inoperable:
                return reducer.Outcome(self.memory.states[link_id])
            o = reducer.table_offline(
                self.memory.states[link_id],
                table_id=table_id,
                at_us=self.memory.clock.now_us(),
                reason=reason,
            )
            if o.changed:
                await self.memory.commit([o], [link_id])
            return o

    async def review_anomaly(
        self, anomaly_id: str, *, approve: bool, reviewer: str, reason: str = ""
    ) -> Outcome:
        anomaly, status = await self.memory.store.load_anomaly(anomaly_id)
        if status != "held":
            raise Conflict(f"anomaly {anomaly_id} was already {status}")
        now = self.memory.clock.now_us()

        async def mark(conn: Connection) -> None:
            if not await Anomalies(conn).review(
                anomaly_id,
                approved=approve,
                reviewer=reviewer,
                reason=reason or None,
                at_us=now,
            ):
                raise Conflict(f"anomaly {anomaly_id} was reviewed meanwhile")

        def step(s: LinkState, at: int) -> Outcome:
            if approve:
                return reducer.approve_anomaly(s, anomaly, at_us=at, reviewer=reviewer)
            return reducer.reject_anomaly(s, anomaly, at_us=at, reviewer=reviewer, reason=reason)

        return await self.command(
            anomaly.link_id,
            step,
            actor=reviewer,
            action="anomaly.approve" if approve else "anomaly.reject",
            target=f"anomaly:{anomaly_id}",
            extra=mark,
            audit_after={"credits": anomaly.credits, "reason": reason},
        )

    async def correct(
        self,
        link_id: str,
        *,
        delta_cents: int,
        category: str,
        reason: str,
        requested_by: str,
        approved_by: str | None,
        document: bytes | None = None,
        document_name: str = "",
        document_type: str = "application/octet-stream",
        correction_id: str | None = None,
        also: Extra | None = None,
        meter: str | None = None,
    ) -> Outcome:
        """A correcting entry with its supporting document, all in one transaction.

        ``meter`` is the meter of a link of levels it moves (``L2``, ``L1.reserve``...), named
        in the entry's explanation; ``also`` writes what belongs with it (the approved
        request) in the same transaction.
        """
        check_correction_reason(reason)
        check_correction_approval(requested_by=requested_by, approved_by=approved_by)
        correction_id = correction_id or uuid.uuid4().hex
        digest = hashlib.sha256(document).hexdigest() if document is not None else None
        now = self.memory.clock.now_us()

        async def record(conn: Connection) -> None:
            if document is not None:
                await self.memory.store.store_document(
                    conn,
                    content=document,
                    filename=document_name or "document",
                    content_type=document_type,
                    uploaded_by=requested_by,
                    at_us=now,
                )
            await insert_correction(
                conn,
                correction_id=correction_id,
                link_id=link_id,
                delta_units=delta_cents * UNITS_PER_CENT,
                category=category,
                reason=reason,
                document_sha256=digest,
                requested_by=requested_by,
                approved_by=approved_by,
                at_us=now,
                meter=meter,
            )
            if also is not None:
                await also(conn)

        def step(s: LinkState, at: int) -> Outcome:
            which = "" if meter is None else f" of {reducer.correction_meter_label(s, meter)}"
            return reducer.apply_correction(
                s,
                correction_id=correction_id,
                delta_units=delta_cents * UNITS_PER_CENT,
                reason=f"correction ({category}){which} by {requested_by}: {reason}",
                at_us=at,
                document_sha256=digest,
                meter=meter,
            )

        return await self.command(
            link_id,
            step,
            # The approval is what changes the meter: the approver is the one who acted.
            actor=approved_by or requested_by,
            action="meter.correct",
            target=f"link:{link_id}",
            extra=record,
            audit_after={
                "correction_id": correction_id,
                "delta_cents": delta_cents,
                "meter": meter,
                "document_sha256": digest,
                "requested_by": requested_by,
                "approved_by": approved_by,
            },
        )
