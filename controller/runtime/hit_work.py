"""The technician's work after a hit: the hit entered by hand, its hand verified, its hand pay
and its tax form's reference recorded, each once and audited, and the table reset only once
its awards are verified."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from controller.access.duties import check_independent
from controller.core import reducer
from controller.core.hands import HandCategory, InvalidCards, read_stored_cards
from controller.core.reducer import HitClaim, Outcome
from controller.core.verification import (
    HitWorkRefused,
    check_hand_pay,
    check_release,
    confirmed_cards,
)
from controller.rules.house import (
    SECOND_SIGNATURE_CLAUSE,
    SECOND_SIGNATURE_FROM_CENTS,
    check_second_signature,
    check_sign_off,
    check_tax_form,
    needs_second_signature,
)
from controller.runtime.link_commands import LinkCommands
from controller.runtime.link_memory import LinkMemory
from controller.storage.errors import Conflict, NotFound
from controller.storage.handles import Connection
from controller.storage.hits import HitRecord, Hits
from controller.storage.unit_of_work import connected


class HitWork:
    """The technician's work on the hits of the links of ``memory``; the table's reset and a
    hit entered by hand are ``commands`` on its link."""

    def __init__(self, memory: LinkMemory, commands: LinkCommands) -> None:
        self.memory = memory
        self.commands = commands
        # The award from which a second person signs before the reset: the service sets it
        # from its settings (PROGRESSIVE_SECOND_SIGNATURE_FROM).
        self.second_signature_from_cents = SECOND_SIGNATURE_FROM_CENTS

    async def release_table(self, table_id: str, *, actor: str) -> Outcome:
        """Reset a table held for a hit; refused until its awards are verified, and those at
        or above the second-signature amount signed off."""
        link_id = self.memory.link_of(table_id)

        async def mark_hits(conn: Connection) -> None:
            # Checked in the transaction that releases, so a verification or a signature
            # cannot race it.
            hits = Hits(conn)
            waiting = await hits.unverified(table_id)
            check_release(table_id=table_id, unverified_hit_ids=[h.hit_id for h in waiting])
            unsigned = self._needing_signature(await hits.unsigned(table_id))
            check_second_signature(table_id=table_id, unsigned_hit_ids=[h.hit_id for h in unsigned])
            await hits.mark_released(table_id, by=actor, at_us=self.memory.clock.now_us())

        return await self.commands.command(
            link_id,
            lambda s, at: reducer.release_table(s, table_id=table_id, at_us=at, by=actor),
            actor=actor,
            action="table.release",
            target=f"table:{table_id}",
            extra=mark_hits,
        )

    async def enter(self, table_id: str, claim: HitClaim, *, actor: str) -> Outcome:
        link_id = self.memory.link_of(table_id)
        hit_id = f"{table_id}#manual-{uuid.uuid4().hex[:12]}"
        return await self.commands.command(
            link_id,
            lambda s, at: reducer.enter_hit(
                s, hit_id=hit_id, table_id=table_id, claim=claim, at_us=at, entered_by=actor
            ),
            actor=actor,
            action="hit.enter",
            target=f"table:{table_id}",
            audit_after={"hit_id": hit_id, "claim": claim.to_dict()},
        )

    async def of_link(self, link_id: str) -> list[HitRecord]:
        async with connected(self.memory.store.engine) as conn:
            return await Hits(conn).of_link(link_id)

    async def unverified(self, table_id: str) -> list[HitRecord]:
        """The awards a held table waits on before it may be reset, oldest first."""
        async with connected(self.memory.store.engine) as conn:
            return await Hits(conn).unverified(table_id)

    async def unsigned(self, table_id: str) -> list[HitRecord]:
        """The awards a held table waits on for a second signature, oldest first."""
        async with connected(self.memory.store.engine) as conn:
            return self._needing_signature(await Hits(conn).unsigned(table_id))

    def _needing_signature(self, unsigned: Sequence[HitRecord]) -> list[HitRecord]:
        """Of a table's unsigned awards from the meter, those the house's amount makes need a
        second signature."""
        return [
            h
            for h in unsigned
            if needs_second_signature(
                award_cents=h.award_cents, from_cents=self.second_signature_from_cents
            )
        ]

    async def get(self, hit_id: str) -> HitRecord:
        async with connected(self.memory.store.engine) as conn:
            row = await Hits(conn).get(hit_id)
        if row is None:
            raise NotFound(f"no hit {hit_id!r}")
        return row

    async def verify(
        self, hit_id: str, *, actor: str, cards: Sequence[int] | None = None
    ) -> HitRecord:
        """The technician's verification of a hit's hand, recorded once and audited.

        Cards the table reported are confirmed; when it reported none, ``cards`` are the five
        the technician saw, and they must make the claimed hand.
        """
        row = await self.get(hit_id)
        if row.verified_by is not None:
            raise Conflict(f"hit {hit_id} was already verified by {row.verified_by}")
        try:
            reported = read_stored_cards(row.cards)
        except InvalidCards as exc:
            raise HitWorkRefused(f"hit {hit_id}: {exc}; its record needs correcting") from None
        state = self.memory.states.get(row.link_id)
        if state is None:
            raise NotFound(f"hit {hit_id}: link {row.link_id} is not on this floor")
        confirmed = confirmed_cards(
            hit_id=hit_id,
            status=row.status,
            claimed=HandCategory[row.hand],
            reported=reported,
            entered=None if cards is None else tuple(cards),
            game=state.game_of(row.table_id),
            kind=row.kind,
        )
        stored = ",".join(str(c) for c in confirmed)
        await self._fill_in(
            row,
            mark=lambda conn, now: Hits(conn).mark_verified(
                hit_id, by=actor, at_us=now, cards=stored
            ),
            meanwhile="was verified meanwhile",
            actor=actor,
            action="hit.verify",
            before={"verified_by": None, "reported_cards": reported},
            after={
                "verified_by": actor,
                "verified_cards": list(confirmed),
                "entered_by_technician": reported is None,
            },
        )
        return await self.get(hit_id)

    async def sign_off(self, hit_id: str, *, actor: str) -> HitRecord:
        """A second person's signature on a verified award at or above the amount, recorded
        once and audited (``check_sign_off``)."""
        row = await self.get(hit_id)
        check_sign_off(
            hit_id=hit_id,
            award_cents=row.award_cents,
            from_cents=self.second_signature_from_cents,
            from_meter=row.status == "awarded" and row.paid_from == "meter",
            verified_by=row.verified_by,
            signed_off_by=row.signed_off_by,
            signer=actor,
        )
        assert row.verified_by is not None  # check_sign_off refused an unverified hit
        # Not the verifier's creature either: whoever made, revived, promoted or reset the
        # verifier's account (or the other way round) is not a second person.
        await check_independent(
            self.memory.store.engine,
            approver=actor,
            filer=row.verified_by,
            clause=SECOND_SIGNATURE_CLAUSE,
            what=f"verification of hit {hit_id}",
        )
        await self._fill_in(
            row,
            mark=lambda conn, now: Hits(conn).mark_signed_off(hit_id, by=actor, at_us=now),
            meanwhile="was signed off meanwhile",
            actor=actor,
            action="hit.sign_off",
            before={"signed_off_by": None, "verified_by": row.verified_by},
            after={"signed_off_by": actor, "award_cents": row.award_cents},
        )
        return await self.get(hit_id)

    async def record_hand_pay(self, hit_id: str, *, amount_cents: int, actor: str) -> HitRecord:
        """A verified award paid by hand at the table, recorded once and audited."""
        row = await self.get(hit_id)
        check_hand_pay(
            hit_id=hit_id,
            status=row.status,
            award_cents=row.award_cents,
            amount_cents=amount_cents,
            verified=row.verified_by is not None,
            already_paid_cents=row.hand_paid_cents,
        )
        await self._fill_in(
            row,
            mark=lambda conn, now: Hits(conn).mark_hand_paid(
                hit_id, by=actor, at_us=now, cents=amount_cents
            ),
            meanwhile="had a hand pay recorded meanwhile",
            actor=actor,
            action="hit.hand_pay",
            before={"hand_paid_cents": None, "award_cents": row.award_cents},
            after={"hand_paid_by": actor, "hand_paid_cents": amount_cents},
        )
        return await self.get(hit_id)

    async def record_tax_form(
        self, hit_id: str, *, reference: str, from_cents: int, actor: str
    ) -> HitRecord:
        """The reference of the tax form an award was reported on, recorded once and audited;
        only for an award at or above the operator's tax-reporting amount ``from_cents``."""
        row = await self.get(hit_id)
        check_tax_form(
            hit_id=hit_id,
            status=row.status,
            award_cents=row.award_cents,
            from_cents=from_cents,
            recorded=row.tax_form_reference,
        )
        await self._fill_in(
            row,
            mark=lambda conn, now: Hits(conn).mark_tax_form(
                hit_id, by=actor, at_us=now, reference=reference
            ),
            meanwhile="had its tax form recorded meanwhile",
            actor=actor,
            action="hit.tax_form",
            before={"tax_form_reference": None, "award_cents": row.award_cents},
            after={"tax_form_by": actor, "tax_form_reference": reference},
        )
        return await self.get(hit_id)

    async def _fill_in(
        self,
        row: HitRecord,
        *,
        mark: Callable[[Connection, int], Awaitable[bool]],
        meanwhile: str,
        actor: str,
        action: str,
        before: Mapping[str, Any],
        after: Mapping[str, Any],
    ) -> None:
        """Fill in a technician's fields of a hit once (its facts never change), audited in
        the same transaction; refused if someone filled them in meanwhile."""
        hit_id = row.hit_id
        async with self.memory.lock(row.link_id):
            now = self.memory.clock.now_us()

            async def fill_in(conn: Connection) -> None:
                if not await mark(conn, now):
                    raise Conflict(f"hit {hit_id} {meanwhile}")

            await self.memory.store.commit(
                [],
                extra=fill_in,
                audit={
                    "at_us": now,
                    "actor": actor,
                    "action": action,
                    "target": f"hit:{hit_id}",
                    "before": dict(before),
                    "after": dict(after),
                },
            )
