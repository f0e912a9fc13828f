"""A technician's work after a hit, on both databases: verify, hand pay, reset, all audited."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from controller.core.hands import HandCategory, parse_cards
from controller.core.reducer import HitClaim
from controller.core.verification import HitWorkRefused
from controller.rules import RuleViolation
from controller.storage.errors import StoreError
from controller.storage.models import AuditRow, HitRow
from controller.storage.store import LedgerStore
from tests.controller.storage.helpers import ROYAL, Poller, make_link, runtime


async def _audit(store: LedgerStore, action: str) -> list[AuditRow]:
    async with store.engine.connect() as conn:
        rows = await conn.execute(select(AuditRow).where(AuditRow.action == action))
        return list(rows.all())  # type: ignore[arg-type]


async def test_reported_cards_verified_paid_and_table_reset(store: LedgerStore) -> None:
    await make_link(store)
    rt = await runtime(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0), p.reading("t2", 0)])
    await rt.readings.apply([p.reading("t1", 500)])
    await rt.readings.apply([p.royal("t1", 501, seq=1)])
    assert rt.memory.states["stud"].tables["t1"].hit_pending
    (hit,) = await rt.hits.of_link("stud")
    assert hit.status == "awarded" and hit.paid_from == "meter"

    with pytest.raises(HitWorkRefused, match="cannot be reset before its hits are verified"):
        await rt.hits.release_table("t1", actor="tech")
    assert rt.memory.states["stud"].tables["t1"].hit_pending

    with pytest.raises(HitWorkRefused, match="not the cards the table reported"):
        await rt.hits.verify(hit.hit_id, actor="tech", cards=parse_cards("As Ks Qs Js 9s"))
    with pytest.raises(HitWorkRefused, match="verify the hand before recording its pay"):
        await rt.hits.record_hand_pay(hit.hit_id, amount_cents=hit.award_cents, actor="tech")

    verified = await rt.hits.verify(hit.hit_id, actor="tech")
    assert verified.verified_by == "tech"
    assert verified.verified_cards == ",".join(str(c) for c in ROYAL)
    with pytest.raises(StoreError, match="already verified by tech"):
        await rt.hits.verify(hit.hit_id, actor="other")

    with pytest.raises(HitWorkRefused, match="does not match it"):
        await rt.hits.record_hand_pay(hit.hit_id, amount_cents=hit.award_cents + 1, actor="tech")
    paid = await rt.hits.record_hand_pay(hit.hit_id, amount_cents=hit.award_cents, actor="tech")
    assert paid.hand_paid_cents == hit.award_cents and paid.hand_paid_by == "tech"
    with pytest.raises(HitWorkRefused, match="already recorded"):
        await rt.hits.record_hand_pay(hit.hit_id, amount_cents=hit.award_cents, actor="tech")

    # The royal reaches the second-signature amount: a second person signs before the reset.
    assert hit.award_cents >= rt.hits.second_signature_from_cents
    with pytest.raises(RuleViolation, match="signed off by a second person"):
        await rt.hits.release_table("t1", actor="tech")
    await rt.hits.sign_off(hit.hit_id, actor="supervisor")
    await rt.hits.release_table("t1", actor="tech")
    assert not rt.memory.states["stud"].tables["t1"].hit_pending
    released = await rt.hits.get(hit.hit_id)
    assert released.released_by == "tech"

    (verify_audit,) = await _audit(store, "hit.verify")
    assert verify_audit.actor == "tech" and verify_audit.target == f"hit:{hit.hit_id}"
    assert json.loads(verify_audit.before)["verified_by"] is None
    assert json.loads(verify_audit.after)["verified_cards"] == list(ROYAL)
    (pay_audit,) = await _audit(store, "hit.hand_pay")
    assert json.loads(pay_audit.after)["hand_paid_cents"] == hit.award_cents
    assert len(await _audit(store, "table.release")) == 1


async def test_cards_entered_by_the_technician_must_make_the_claimed_hand(
    store: LedgerStore,
) -> None:
    await make_link(store)
    rt = await runtime(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0), p.reading("t2", 0)])
    await rt.readings.apply([p.reading("t2", 300)])
    claim = HitClaim(table_seq=None, seat=2, hand=HandCategory.ROYAL_FLUSH, round=7)
    await rt.hits.enter("t2", claim, actor="tech")
    (hit,) = await rt.hits.of_link("stud")
    assert hit.cards is None

    with pytest.raises(HitWorkRefused, match="reported no cards; enter the five cards"):
        await rt.hits.verify(hit.hit_id, actor="tech")
    with pytest.raises(HitWorkRefused, match="make one pair, not the claimed royal flush"):
        await rt.hits.verify(hit.hit_id, actor="tech", cards=parse_cards("Ah Ad Qs Js Ts"))
    with pytest.raises(HitWorkRefused, match="a hand is five cards; 4 were entered"):
        await rt.hits.verify(hit.hit_id, actor="tech", cards=parse_cards("Ah Kh Qh Jh"))
    with pytest.raises(HitWorkRefused, match="appears twice"):
        await rt.hits.verify(hit.hit_id, actor="tech", cards=parse_cards("Ah Ah Qh Jh Th"))
    async with store.engine.connect() as conn:
        still = (await conn.execute(select(HitRow).where(HitRow.hit_id == hit.hit_id))).one()
    assert still.verified_by is None

    hearts = parse_cards("Ah Kh Qh Jh Th")
    verified = await rt.hits.verify(hit.hit_id, actor="tech", cards=hearts)
    assert verified.verified_cards == ",".join(str(c) for c in hearts)
    (audit,) = await _audit(store, "hit.verify")
    assert json.loads(audit.after)["entered_by_technician"] is True
    await rt.hits.sign_off(hit.hit_id, actor="supervisor")  # at or above the amount
    await rt.hits.release_table("t2", actor="tech")
    assert not rt.memory.states["stud"].tables["t2"].hit_pending


async def test_unknown_hit_is_named(store: LedgerStore) -> None:
    await make_link(store)
    rt = await runtime(store)
    with pytest.raises(StoreError, match="no hit 'nope'"):
        await rt.hits.verify("nope", actor="tech")
    with pytest.raises(StoreError, match="no hit 'nope'"):
        await rt.hits.record_hand_pay("nope", amount_cents=100, actor="tech")
