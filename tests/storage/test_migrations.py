"""Migrations go up and down on both engines, and the hit guards survive the hand-pay columns."""

from __future__ import annotations

import pytest
from sqlalchemy import text, update
from sqlalchemy.exc import DBAPIError

from controller.storage.database import check_schema, downgrade, make_engine, upgrade
from controller.storage.models import HitRow
from controller.storage.store import LedgerStore
from tests.storage.helpers import Poller, make_link, runtime


async def test_down_to_the_first_revision_and_up_again(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        await check_schema(engine)
        await downgrade(engine, "0001")
        async with engine.connect() as conn:
            names = await conn.run_sync(lambda c: c.dialect.get_table_names(c))
        assert "users" not in names
        await upgrade(engine)
        await check_schema(engine)
    finally:
        await engine.dispose()


async def test_hand_pay_may_be_filled_in_but_the_facts_stay_fixed(store: LedgerStore) -> None:
    await make_link(store)
    rt = await runtime(store)
    poll = Poller()
    await rt.apply_readings([poll.reading("t1", 0)])
    await rt.apply_readings([poll.royal("t1", 5, seq=1)])
    async with store.engine.begin() as conn:
        hit_id = await conn.scalar(text("SELECT hit_id FROM hits"))
        await conn.execute(
            update(HitRow)
            .where(HitRow.hit_id == hit_id)
            .values(hand_paid_by="tech", hand_paid_at_us=1, hand_paid_cents=500_00)
        )
    with pytest.raises(DBAPIError, match=r"facts|never edited"):
        async with store.engine.begin() as conn:
            await conn.execute(update(HitRow).where(HitRow.hit_id == hit_id).values(award_cents=1))
