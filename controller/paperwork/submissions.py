"""The review desk: submissions to the commission as filed, their packets, and their review.

A change to a link's rate, reset amount or paytable, and every new link, is filed with a
packet (JSON and PDF, kept as documents by SHA-256) at the filing desk
(``controller.paperwork.filing_desk``), reviewed here by a commission agent, and only then
used: an approved change is armed on the link and takes effect at its first jackpot reset on
or after the effective date (``engine.arm_change``); an approved new link begins to play.
Rules live in ``controller.paperwork.governance``; this module reads and writes.
"""

from __future__ import annotations

import json

from controller.access.duties import check_independent
from controller.core import reducer
from controller.core.games import Game
from controller.core.reducer import ArmedChange, LinkState
from controller.core.reducer.levels import levels_from_dicts
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.governance import SubmissionStatus
from controller.roles import Role
from controller.rules.filing import (
    REVIEW_CLAUSE,
    NoticeWaiver,
    Proposal,
    SubmissionKind,
    check_change,
    check_paytable,
    check_rejection_reason,
    check_reviewer,
    check_waiver_confirmed,
)
from controller.storage.errors import Conflict, NotFound
from controller.storage.handles import Connection
from controller.storage.papers import submissions as stored
from controller.storage.papers.documents import load_document
from controller.storage.papers.submissions import Submission
from controller.storage.store import Extra
from controller.storage.unit_of_work import connected

__all__ = ["ReviewDesk"]


class ReviewDesk:
    """The reading and the review of what was filed at ``filing``, the filing desk: a
    submission is read with ``filing.get``, and approving one holds it to the same law and
    bound on a jackpot's odds it was filed under."""

    def __init__(self, filing: FilingDesk) -> None:
        self.filing = filing
        self.runtime = filing.runtime
        self.store = filing.store

    # ------------------------------------------------------------------------- reading

    async def find(
        self, *, link_id: str | None = None, status: str | None = None
    ) -> list[Submission]:
        async with connected(self.store.engine) as conn:
            return await stored.list_submissions(conn, link_id=link_id, status=status)

    async def packet(self, submission_id: str, kind: str) -> tuple[bytes, str, str]:
        """The kept packet (``json`` or ``pdf``): content, file name, content type."""
        row = await self.filing.get(submission_id)
        digest = row.packet_json_sha256 if kind == "json" else row.packet_pdf_sha256
        async with connected(self.store.engine) as conn:
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
        self,
        submission_id: str,
        *,
        reviewer: str,
        role: Role,
        reason: str | None = None,
        waiver_confirmed: bool = False,
    ) -> Submission:
        """``reason``: why, kept with the decision (a rejection always has one).
        ``waiver_confirmed``: the agent confirmed the executive director's written direction
        the submission carries (68 IAC 10-1-4(1)); one that carries a waiver is approved
        only so."""
        row = await self.filing.get(submission_id)
        await self._check_reviewer(row, reviewer=reviewer, role=role)
        self._still_filed(row)
        waiver = None if row.waiver is None else NoticeWaiver.from_dict(row.waiver)
        check_waiver_confirmed(
            waiver=waiver, confirmed=waiver_confirmed, clause=self.filing.law.waiver.clause
        )
        confirmed = {"waiver_confirmed": row.waiver} if waiver is not None else {}
        kind = SubmissionKind(row.kind)
        now = self.runtime.memory.clock.now_us()
        reason = (reason or "").strip() or None
        mark = self._mark(submission_id, SubmissionStatus.APPROVED, reviewer, now, reason)
        if kind is SubmissionKind.NEW_LINK:
            self._check_new_link_again(row)
            start = max(now, row.effective_at_us)

            async def mark_live(conn: Connection) -> None:
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
                        **confirmed,
                    },
                },
            )
            self.runtime.memory.go_live_at[row.link_id] = start
            return await self.filing.get(submission_id)
        state = self.runtime.memory.states[row.link_id]
        change = self._change_of(state, row)
        await self.runtime.commands.command(
            row.link_id,
            lambda s, at: reducer.arm_change(s, change=change, at_us=at, by=reviewer),
            actor=reviewer,
            action="submission.approve",
            target=f"submission:{submission_id}",
            extra=mark,
            audit_after={
                "status": "approved",
                "armed": change.to_dict(),
                "reason": reason,
                **confirmed,
            },
        )
        return await self.filing.get(submission_id)

    async def reject(
        self, submission_id: str, *, reviewer: str, role: Role, reason: str
    ) -> Submission:
        row = await self.filing.get(submission_id)
        await self._check_reviewer(row, reviewer=reviewer, role=role)
        reason = check_rejection_reason(reason)
        self._still_filed(row)
        now = self.runtime.memory.clock.now_us()
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
        return await self.filing.get(submission_id)

    async def approve_new_links(self, *, reviewer: str, role: Role) -> list[str]:
        """Approve every new link waiting for review (a simulated floor's own agent)."""
        approved: list[str] = []
        for row in await self.find(status=str(SubmissionStatus.FILED)):
            if row.kind == SubmissionKind.NEW_LINK:
                await self.approve(row.submission_id, reviewer=reviewer, role=role)
                approved.append(row.link_id)
        return approved

    def _check_new_link_again(self, row: Submission) -> None:
        """A new link, checked again against the law in force before it plays: filed before a
        rule was enforced (a fixed-pay side bet's amounts, 68 IAC 10-7-5(e), 10-12-3(f)), it is
        refused here rather than approved."""
        state = self.runtime.memory.states.get(row.link_id)
        if state is not None:
            self.filing.check_as_new_link(state)

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
            else check_paytable(game, lines, jackpot_odds_bound=self.filing.jackpot_odds_bound)
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
                jackpot_odds_bound=self.filing.jackpot_odds_bound,
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
        async def mark(conn: Connection) -> None:
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
