"""Filing a submission with the commission: every check a filing makes, and its packet.
What was filed is read and reviewed at the review desk (``controller.paperwork.submissions``).

``prepare_change`` and ``prepare_new_link`` run the checks and write nothing, so a dry run
(a form checking as a person types) and a filing refuse the same proposal with the same
rule; ``file_change`` and ``file_new_link`` prepare, then write the packet and the row.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from controller.core.games import Game
from controller.core.ledger import canonical_details
from controller.core.reducer import LinkState
from controller.paperwork.governance import (
    PacketFacts,
    SubmissionStatus,
    TableFacts,
    build_packet,
    packet_json,
    packet_pdf,
)
from controller.paperwork.links import Links
from controller.paperwork.pdf import Letterhead, letterhead_of
from controller.paperwork.pool_packet import (
    current_terms,
    level_meters_cents,
    new_link_proposal,
    table_games,
)
from controller.rules.filing import (
    DAY_US,
    SUBJECTS,
    NoticeWaiver,
    Proposal,
    SubmissionKind,
    check_change,
    check_live,
    check_new_link,
    check_none_awaiting_review,
    check_not_yet_approved,
    check_nothing_armed,
    check_notice,
    check_table_locations,
    notice_days,
    notice_not_given,
)
from controller.rules.jurisdictions import Jurisdiction, jurisdiction
from controller.rules.statement import statement
from controller.rules.violation import about
from controller.settings import get_settings
from controller.storage.errors import NotFound
from controller.storage.handles import Connection
from controller.storage.papers import submissions as stored
from controller.storage.papers.submissions import Submission
from controller.storage.unit_of_work import connected


@dataclass(frozen=True, slots=True, kw_only=True)
class Filing:
    """A submission every check has passed, not yet written: what filing it would record."""

    link_id: str
    state: LinkState
    proposal: Proposal
    current: dict[str, Any] | None
    filed_at_us: int
    effective_at_us: int
    notice_days: int
    # The executive director's written direction for this amendment (68 IAC 10-1-4(1)).
    waiver: NoticeWaiver | None
    # Filed in demonstration mode short of its notice period: what was not given.
    notice_not_given: str | None = None


class FilingDesk:
    """Filing submissions (``prepare_*``, ``file_*``, ``file``) and reading one back
    (``get``), under the installation's law, bound on a jackpot's odds and letterhead."""

    def __init__(
        self,
        runtime: Links,
        *,
        jackpot_odds_bound: int | None = None,
        letterhead: Letterhead | None = None,
        demonstration: bool = False,
    ) -> None:
        self.runtime = runtime
        self.store = runtime.memory.store
        # PROGRESSIVE_DEMONSTRATION: filings are accepted from now on, without their notice
        # periods (``filing.check_notice``), each saying so in its packet and audit entry.
        self.demonstration = demonstration
        # The jurisdiction the links play under: every packet states it.
        self.law = jurisdiction(self.store.law.key)
        # PROGRESSIVE_JACKPOT_ODDS_BOUND unless given: the worst odds a jackpot line may have.
        self.jackpot_odds_bound = self.law.odds_bound(
            get_settings().jackpot_odds_bound if jackpot_odds_bound is None else jackpot_odds_bound
        )
        # The property filing: recorded in each packet, heading its printed copy.
        self.letterhead = letterhead_of(get_settings()) if letterhead is None else letterhead

    async def prepare_change(
        self,
        *,
        link_id: str,
        proposal: Proposal,
        effective_at_us: int | None = None,
        waiver: NoticeWaiver | None = None,
    ) -> Filing:
        """Every check filing a change makes, nothing written: the filing to make, or the
        first refusal (its ``subject`` naming the proposal's field it is about)."""
        state = self.runtime.memory.states.get(link_id)
        if state is None:
            raise NotFound(f"no link {link_id!r}")
        check_live(
            link_id, live=self.runtime.memory.is_live(link_id, self.runtime.memory.clock.now_us())
        )
        check_nothing_armed(
            link_id,
            armed_submission_id=None if state.armed is None else state.armed.submission_id,
        )
        with about(SUBJECTS.get(proposal.kind)):
            check_change(state, proposal, jackpot_odds_bound=self.jackpot_odds_bound)
        return await self._prepare(
            link_id=link_id,
            state=state,
            proposal=proposal,
            current=current_terms(state),
            effective_at_us=effective_at_us,
            waiver=waiver,
        )

    async def file_change(
        self,
        *,
        link_id: str,
        proposal: Proposal,
        filed_by: str,
        effective_at_us: int | None = None,
        waiver: NoticeWaiver | None = None,
    ) -> Submission:
        filing = await self.prepare_change(
            link_id=link_id, proposal=proposal, effective_at_us=effective_at_us, waiver=waiver
        )
        return await self.file(filing, filed_by=filed_by)

    async def prepare_new_link(
        self,
        link_id: str,
        *,
        effective_at_us: int | None = None,
        waiver: NoticeWaiver | None = None,
        state: LinkState | None = None,
    ) -> Filing:
        """Every check filing a new link makes, nothing written (see ``file_new_link``)."""
        if state is None:
            state = self.runtime.memory.states.get(link_id)
        if state is None:
            raise NotFound(f"no link {link_id!r}")
        check_not_yet_approved(
            link_id, approved=self.runtime.memory.go_live_at.get(link_id) is not None
        )
        proposal = new_link_proposal(state)
        law = state.law if isinstance(state.law, Jurisdiction) else self.law
        async with connected(self.store.engine) as conn:
            on_link = [t for t in await _floor_tables(conn) if t.link_id == link_id]
        with about("tables"):
            check_table_locations(
                [(t.table_id, t.location) for t in on_link], clause=law.clauses.location
            )
        self.check_as_new_link(state, proposal)
        return await self._prepare(
            link_id=link_id,
            state=state,
            proposal=proposal,
            current=None,
            effective_at_us=effective_at_us,
            waiver=waiver,
        )

    async def file_new_link(
        self,
        link_id: str,
        *,
        filed_by: str,
        effective_at_us: int | None = None,
        waiver: NoticeWaiver | None = None,
        state: LinkState | None = None,
    ) -> Submission:
        """A link just created (or whose last submission was rejected) asks to play.

        ``state``: the link as it was opened, when the caller holds it (its levels, games
        and paytables); otherwise the link as the runtime holds it.
        """
        filing = await self.prepare_new_link(
            link_id, effective_at_us=effective_at_us, waiver=waiver, state=state
        )
        row = await self.file(filing, filed_by=filed_by)
        self.runtime.memory.go_live_at[link_id] = None
        return row

    def effective_default(
        self,
        kind: SubmissionKind,
        waiver: NoticeWaiver | None = None,
        *,
        now: int | None = None,
    ) -> int:
        """The effective date a filing made now (``now``: the filing's time, read once) gets
        when it names none: at once with the executive director's waiver of an amendment's
        notice or in demonstration mode, otherwise the earliest its notice period allows."""
        now = self.runtime.memory.clock.now_us() if now is None else now
        if self.demonstration or waiver is not None:
            return now
        return now + notice_days(kind, self.law)[0] * DAY_US

    def check_as_new_link(self, state: LinkState, proposal: Proposal | None = None) -> None:
        """The link as a new link's filing gives it (its terms, levels and paytables), held to
        the law it plays under and the bound on a jackpot's odds in force."""
        proposal = new_link_proposal(state) if proposal is None else proposal
        check_new_link(
            law=state.law,
            game=state.game,
            rate_bp=state.rate_bp,
            reset_cents=state.reset_cents,
            paytable=state.paytable,
            jackpot_odds_bound=self.jackpot_odds_bound,
            levels=proposal.levels,
            paytables=proposal.paytables,
        )

    async def _prepare(
        self,
        *,
        link_id: str,
        state: LinkState,
        proposal: Proposal,
        current: dict[str, Any] | None,
        effective_at_us: int | None,
        waiver: NoticeWaiver | None,
    ) -> Filing:
        now = self.runtime.memory.clock.now_us()
        if effective_at_us is None:
            effective_at_us = self.effective_default(proposal.kind, waiver, now=now)
        with about("waiver" if waiver is not None else "effective_at_us"):
            days = check_notice(
                kind=proposal.kind,
                filed_at_us=now,
                effective_at_us=effective_at_us,
                waiver=waiver,
                demonstration=self.demonstration,
                law=self.law,
            )
        short = self.demonstration and waiver is None and effective_at_us - now < days * DAY_US
        async with connected(self.store.engine) as conn:
            awaiting = await stored.any_with_status(conn, link_id, "filed")
        check_none_awaiting_review(link_id, awaiting=awaiting is not None)
        return Filing(
            link_id=link_id,
            state=state,
            proposal=proposal,
            current=current,
            filed_at_us=now,
            effective_at_us=effective_at_us,
            notice_days=days,
            waiver=waiver,
            notice_not_given=notice_not_given(proposal.kind, self.law) if short else None,
        )

    async def file(self, filing: Filing, *, filed_by: str) -> Submission:
        link_id, state, proposal = filing.link_id, filing.state, filing.proposal
        now, waiver = filing.filed_at_us, filing.waiver
        effective_at_us, days = filing.effective_at_us, filing.notice_days
        submission_id = f"sub-{uuid.uuid4().hex[:12]}"
        async with connected(self.store.engine) as conn:
            # Asked again: another filing may have been made since this one was checked.
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
                current=filing.current,
                proposal=proposal,
                effective_at_us=effective_at_us,
                notice_days=days,
                notice_override=None,
                waiver=waiver,
                filed_by=filed_by,
                filed_at_us=now,
                floor_tables=floor,
                meter_cents=state.meter_cents,
                jackpot_odds_bound=self.jackpot_odds_bound,
                level_meters_cents=level_meters_cents(state),
                table_games=table_games(state),
                letterhead=self.letterhead,
                law=state.law if isinstance(state.law, Jurisdiction) else self.law,
                notice_not_given=filing.notice_not_given,
                demonstration=statement(
                    self.law,
                    installation=self.demonstration,
                    links=[link_id] if state.demonstration else (),
                ).demonstration,
            )
        )
        as_json, as_pdf = packet_json(packet), packet_pdf(packet)

        async def record(conn: Connection) -> None:
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
                notice_override=None,
                waiver=None if waiver is None else waiver.to_dict(),
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
                    **({"waiver": waiver.to_dict()} if waiver is not None else {}),
                    "jurisdiction": self.law.key,
                    **(
                        {"demonstration": filing.notice_not_given}
                        if filing.notice_not_given
                        else {}
                    ),
                },
            },
        )
        return await self.get(submission_id)

    async def get(self, submission_id: str) -> Submission:
        async with connected(self.store.engine) as conn:
            row = await stored.load_submission(conn, submission_id)
        if row is None:
            raise NotFound(f"no submission {submission_id!r}")
        return row


async def _floor_tables(conn: Connection) -> list[TableFacts]:
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
