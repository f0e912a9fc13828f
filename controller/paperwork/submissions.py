"""The filing desk: submissions to the commission, their packets, and their review.

A change to a link's rate, reset amount or paytable, and every new link, is filed here with a
packet (JSON and PDF, kept as documents by SHA-256), reviewed by a commission agent, and only
then used: an approved change is armed on the link and takes effect at its first jackpot reset
on or after the effective date (``engine.arm_change``); an approved new link begins to play.
Rules live in ``controller.paperwork.governance``; this module reads and writes.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from controller.access.duties import check_independent
from controller.access.users import Role
from controller.core import reducer
from controller.core.games import Game
from controller.core.ledger import canonical_details
from controller.core.reducer import ArmedChange, LinkState
from controller.core.reducer.levels import levels_from_dicts
from controller.paperwork.governance import (
    PacketFacts,
    SubmissionStatus,
    TableFacts,
    build_packet,
    packet_json,
    packet_pdf,
)
from controller.paperwork.pdf import Letterhead, letterhead_of
from controller.paperwork.pool_packet import (
    current_terms,
    level_meters_cents,
    new_link_proposal,
    table_games,
)
from controller.rules.filing import (
    DAY_US,
    REVIEW_CLAUSE,
    Proposal,
    SubmissionKind,
    check_change,
    check_live,
    check_new_link,
    check_none_awaiting_review,
    check_not_yet_approved,
    check_nothing_armed,
    check_notice,
    check_paytable,
    check_rejection_reason,
    check_reviewer,
    notice_days,
)
from controller.runtime.links import Extra, LinkRuntime
from controller.settings import get_settings
from controller.storage.papers import submissions as stored
from controller.storage.papers.documents import load_document
from controller.storage.papers.submissions import Submission
from controller.storage.store import Conflict, NotFound


class SubmissionDesk:
    def __init__(
        self,
        runtime: LinkRuntime,
        *,
        notice_override: str | None = None,
        jackpot_odds_bound: int | None = None,
        letterhead: Letterhead | None = None,
    ) -> None:
        self.runtime = runtime
        self.store = runtime.store
        # PROGRESSIVE_NOTICE_OVERRIDE: the executive director's written direction for this
        # installation; recorded on every submission filed under it.
        self.notice_override = notice_override or None
        # PROGRESSIVE_JACKPOT_ODDS_BOUND unless given: the worst odds a jackpot line may have.
        self.jackpot_odds_bound = (
            get_settings().jackpot_odds_bound if jackpot_odds_bound is None else jackpot_odds_bound
        )
        # The property filing: recorded in each packet, heading its printed copy.
        self.letterhead = letterhead_of(get_settings()) if letterhead is None else letterhead

    # ------------------------------------------------------------------------- filing

    async def file_change(
        self,
        *,
        link_id: str,
        proposal: Proposal,
        filed_by: str,
        effective_at_us: int | None = None,
        override: str | None = None,
    ) -> Submission:
        state = self.runtime.states.get(link_id)
        if state is None:
            raise NotFound(f"no link {link_id!r}")
        check_live(link_id, live=self.runtime.is_live(link_id, self.runtime.clock.now_us()))
        check_nothing_armed(
            link_id,
            armed_submission_id=None if state.armed is None else state.armed.submission_id,
        )
        check_change(state, proposal, jackpot_odds_bound=self.jackpot_odds_bound)
        return await self._file(
            link_id=link_id,
            state=state,
            proposal=proposal,
            current=current_terms(state),
            filed_by=filed_by,
            effective_at_us=effective_at_us,
            override=override,
        )

    async def file_new_link(
        self,
        link_id: str,
        *,
        filed_by: str,
        effective_at_us: int | None = None,
        override: str | None = None,
        state: LinkState | None = None,
    ) -> Submission:
        """A link just created (or whose last submission was rejected) asks to play.

        ``state``: the link as it was opened, when the caller holds it (its levels, games
        and paytables); otherwise the link as the runtime holds it.
        """
        if state is None:
            state = self.runtime.states.get(link_id)
        if state is None:
            raise NotFound(f"no link {link_id!r}")
        check_not_yet_approved(link_id, approved=self.runtime.go_live_at.get(link_id) is not None)
        proposal = new_link_proposal(state)
        check_new_link(
            game=state.game,
            rate_bp=state.rate_bp,
            reset_cents=state.reset_cents,
            paytable=state.paytable,
            jackpot_odds_bound=self.jackpot_odds_bound,
            levels=proposal.levels,
            paytables=proposal.paytables,
        )
        row = await self._file(
            link_id=link_id,
            state=state,
            proposal=proposal,
            current=None,
            filed_by=filed_by,
            effective_at_us=effective_at_us,
            override=override,
        )
        self.runtime.go_live_at[link_id] = None
        return row

    async def _file(
        self,
        *,
        link_id: str,
        state: LinkState,
        proposal: Proposal,
        current: dict[str, Any] | None,
        filed_by: str,
        effective_at_us: int | None,
        override: str | None,
    ) -> Submission:
        now = self.runtime.clock.now_us()
        override = override if override is not None else self.notice_override
        if effective_at_us is None:
            effective_at_us = now if override else now + notice_days(proposal.kind)[0] * DAY_US
        days = check_notice(
            kind=proposal.kind, filed_at_us=now, effective_at_us=effective_at_us, override=override
        )
        submission_id = f"sub-{uuid.uuid4().hex[:12]}"
        async with self.store.engine.connect() as conn:
            awaiting = await stored.any_with_status(conn, link_id, "filed")
            check_none_awaiting_review(link_id, awaiting=awaiting is not None)
            link_name = await stored.link_name(conn, link_id)
            floor = await _floor_tables(conn)
        packet = build_packet(
            PacketFacts(
                submission_id=submission_id,
                kind=proposal.kind,
                link_id=link_id,
                link_name=link_name or link_id,
                game=state.game,
                current=current,
                proposal=proposal,
                effective_at_us=effective_at_us,
                notice_days=days,
                notice_override=override,
                filed_by=filed_by,
                filed_at_us=now,
                floor_tables=floor,
                meter_cents=state.meter_cents,
                jackpot_odds_bound=self.jackpot_odds_bound,
                level_meters_cents=level_meters_cents(state),
                table_games=table_games(state),
                letterhead=self.letterhead,
            )
        )
        as_json, as_pdf = packet_json(packet), packet_pdf(packet)

        async def record(conn: AsyncConnection) -> None:
            digests = []
            for content, ext, ctype in (
                (as_json, "json", "application/json"),
                (as_pdf, "pdf", "application/pdf"),
            ):
                digests.append(
                    await self.store.store_document(
                        conn,
                        content=content,
                        filename=f"{submission_id}.{ext}",
                        content_type=ctype,
                        uploaded_by=filed_by,
                        at_us=now,
                    )
                )
            await stored.insert_submission(
                conn,
                submission_id=submission_id,
                kind=str(proposal.kind),
                link_id=link_id,
                proposal=canonical_details(proposal.to_dict()),
                effective_at_us=effective_at_us,
                notice_days=days,
                notice_override=override,
                packet_json_sha256=digests[0],
                packet_pdf_sha256=digests[1],
                filed_by=filed_by,
                filed_at_us=now,
                status=str(SubmissionStatus.FILED),
            )

        await self.store.commit(
            [],
            extra=record,
            notify=[link_id] if proposal.kind is SubmissionKind.NEW_LINK else (),
            audit={
                "at_us": now,
                "actor": filed_by,
                "action": "submission.file",
                "target": f"submission:{submission_id}",
                "after": {
                    "link_id": link_id,
                    "proposal": proposal.to_dict(),
                    "effective_at_us": effective_at_us,
                    "notice_override": override,
                },
            },
        )
        return await self.get(submission_id)

    # ------------------------------------------------------------------------- reading

    async def find(
        self, *, link_id: str | None = None, status: str | None = None
    ) -> list[Submission]:
        async with self.store.engine.connect() as conn:
            return await stored.list_submissions(conn, link_id=link_id, status=status)

    async def get(self, submission_id: str) -> Submission:
        async with self.store.engine.connect() as conn:
            row = await stored.load_submission(conn, submission_id)
        if row is None:
            raise NotFound(f"no submission {submission_id!r}")
        return row

    async def packet(self, submission_id: str, kind: str) -> tuple[bytes, str, str]:
        """The kept packet (``json`` or ``pdf``): content, file name, content type."""
        row = await self.get(submission_id)
        digest = row.packet_json_sha256 if kind == "json" else row.packet_pdf_sha256
        async with self.store.engine.connect() as conn:
            doc = await load_document(conn, digest)
        if doc is None:
            raise NotFound(f"no packet for submission {submission_id!r}")
        return bytes(doc.content), doc.filename, doc.content_type

    # ------------------------------------------------------------------------- review

    async def _check_reviewer(self, row: Submission, *, reviewer: str, role: Role) -> None:
        check_reviewer(role=role, reviewer=reviewer, filed_by=row.filed_by)
        await check_independent(
            self.store.engine,
            approver=reviewer,
            filer=row.filed_by,
            clause=REVIEW_CLAUSE,
            what="submission",
        )

    async def approve(
        self, submission_id: str, *, reviewer: str, role: Role, reason: str | None = None
    ) -> Submission:
        """``reason``: why, kept with the decision (a rejection always has one)."""
        row = await self.get(submission_id)
        await self._check_reviewer(row, reviewer=reviewer, role=role)
        self._still_filed(row)
        kind = SubmissionKind(row.kind)
        now = self.runtime.clock.now_us()
        reason = (reason or "").strip() or None
        mark = self._mark(submission_id, SubmissionStatus.APPROVED, reviewer, now, reason)
        if kind is SubmissionKind.NEW_LINK:
            start = max(now, row.effective_at_us)

            async def mark_live(conn: AsyncConnection) -> None:
                await mark(conn)
                await stored.mark_applied(conn, submission_id, start)

            await self.store.commit(
                [],
                extra=mark_live,
                notify=[row.link_id],
                audit={
                    "at_us": now,
                    "actor": reviewer,
                    "action": "submission.approve",
                    "target": f"submission:{submission_id}",
                    "before": {"status": row.status},
                    "after": {
                        "status": "approved",
                        "link_id": row.link_id,
                        "plays_from": start,
                        "reason": reason,
                    },
                },
            )
            self.runtime.go_live_at[row.link_id] = start
            return await self.get(submission_id)
        state = self.runtime.states[row.link_id]
        change = self._change_of(state, row)
        await self.runtime.command(
            row.link_id,
            lambda s, at: reducer.arm_change(s, change=change, at_us=at, by=reviewer),
            actor=reviewer,
            action="submission.approve",
            target=f"submission:{submission_id}",
            extra=mark,
            audit_after={"status": "approved", "armed": change.to_dict(), "reason": reason},
        )
        return await self.get(submission_id)

    async def reject(
        self, submission_id: str, *, reviewer: str, role: Role, reason: str
    ) -> Submission:
        row = await self.get(submission_id)
        await self._check_reviewer(row, reviewer=reviewer, role=role)
        reason = check_rejection_reason(reason)
        self._still_filed(row)
        now = self.runtime.clock.now_us()
        await self.store.commit(
            [],
            extra=self._mark(submission_id, SubmissionStatus.REJECTED, reviewer, now, reason),
            audit={
                "at_us": now,
                "actor": reviewer,
                "action": "submission.reject",
                "target": f"submission:{submission_id}",
                "before": {"status": row.status},
                "after": {"status": "rejected", "reason": reason},
            },
        )
        return await self.get(submission_id)

    async def approve_new_links(self, *, reviewer: str, role: Role) -> list[str]:
        """Approve every new link waiting for review (a simulated floor's own agent)."""
        approved: list[str] = []
        for row in await self.find(status=str(SubmissionStatus.FILED)):
            if row.kind == SubmissionKind.NEW_LINK:
                await self.approve(row.submission_id, reviewer=reviewer, role=role)
                approved.append(row.link_id)
        return approved

    def _change_of(self, state: LinkState, row: Submission) -> ArmedChange:
        """The approved proposal as the change armed on the link, checked again against the
        link as it stands now (a levels change by ``check_levels``/``check_pool``)."""
        proposal = json.loads(row.proposal)
        lines = proposal.get("paytable")
        game = Game(proposal.get("game", state.game))
        raw_levels = proposal.get("levels")
        levels = None if raw_levels is None else levels_from_dicts(raw_levels)
        # Filed before a bound existed, it is refused here rather than armed.
        paytable = (
            None
            if lines is None
            else check_paytable(game, lines, jackpot_odds_bound=self.jackpot_odds_bound)
        )
        if levels is not None or paytable is not None:
            check_change(
                state,
                Proposal(
                    kind=SubmissionKind(row.kind),
                    paytable=paytable,
                    levels=levels,
                    game=None if "game" not in proposal else game,
                ),
                jackpot_odds_bound=self.jackpot_odds_bound,
            )
        return ArmedChange(
            submission_id=row.submission_id,
            effective_at_us=row.effective_at_us,
            rate_bp=proposal.get("rate_bp"),
            reset_cents=proposal.get("reset_cents"),
            paytable=paytable,
            levels=levels,
        )

    @staticmethod
    def _still_filed(row: Submission) -> None:
        if row.status != SubmissionStatus.FILED:
            raise Conflict(f"submission {row.submission_id} was already {row.status}")

    @staticmethod
    def _mark(
        submission_id: str, status: SubmissionStatus, reviewer: str, now: int, reason: str | None
    ) -> Extra:
        async def mark(conn: AsyncConnection) -> None:
            if not await stored.mark_reviewed(
                conn,
                submission_id,
                while_status=str(SubmissionStatus.FILED),
                status=str(status),
                reviewed_by=reviewer,
                reviewed_at_us=now,
                review_reason=reason,
            ):
                raise Conflict(f"submission {submission_id} was reviewed meanwhile")

        return mark


async def _floor_tables(conn: AsyncConnection) -> list[TableFacts]:
    return [
        TableFacts(
            table_id=r.table_id,
            name=r.name,
            location=r.location,
            link_id=r.link_id,
            game=Game(r.game),
            denomination_cents=r.denomination_cents,
            seats=r.seats,
        )
        for r in await stored.floor_tables(conn)
    ]
