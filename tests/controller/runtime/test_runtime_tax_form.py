"""The tax form's reference of an award, on both databases: recorded once, audited, only from
the operator's tax-reporting amount."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from controller.rules import RuleViolation
from controller.storage.errors import NotFound
from controller.storage.models import AuditRow
from controller.storage.store import LedgerStore
from tests.controller.storage.helpers import Poller, make_link, runtime


async def test_recorded_once_from_the_amount_and_audited(store: LedgerStore) -> None:
    await make_link(store)
    rt = await runtime(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0), p.reading("t2", 0)])
    await rt.readings.apply([p.royal("t1", 501, seq=1)])
    (hit,) = await rt.hits.of_link("stud")
    award = hit.award_cents

    with pytest.raises(RuleViolation, match="under the tax-reporting amount"):
        await rt.hits.record_tax_form(
            hit.hit_id, reference="W2G-1", from_cents=award + 1, actor="sup"
        )
    recorded = await rt.hits.record_tax_form(
        hit.hit_id, reference="W2G-1", from_cents=award, actor="sup"
    )
    assert (recorded.tax_form_reference, recorded.tax_form_by) == ("W2G-1", "sup")
    assert recorded.tax_form_at_us is not None
    with pytest.raises(RuleViolation, match=r"already has its tax form recorded \(W2G-1\)"):
        await rt.hits.record_tax_form(hit.hit_id, reference="W2G-2", from_cents=award, actor="sup")
    assert (await rt.hits.get(hit.hit_id)).tax_form_reference == "W2G-1"
    with pytest.raises(NotFound):
        await rt.hits.record_tax_form("nope", reference="W2G-3", from_cents=1, actor="sup")

    async with store.engine.connect() as conn:
        (row,) = (
            await conn.execute(select(AuditRow).where(AuditRow.action == "hit.tax_form"))
        ).all()
    assert row.actor == "sup" and row.target == f"hit:{hit.hit_id}"
    assert json.loads(row.after)["tax_form_reference"] == "W2G-1"
