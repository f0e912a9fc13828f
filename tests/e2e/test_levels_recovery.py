"""A link of levels made inoperable by an edit of its row's levels (the seal fails), brought
back by two people with ``links recover``: its levels rebuilt from the history, its mystery
level armed anew (a new MYSTERY_ARMED after the recovery entry), the same after a restart,
and ``ledger verify`` whole."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select, update

from controller.core.reducer import EntryKind
from controller.core.reducer.levels import meters_of
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.runtime.links import LinkRuntime
from controller.storage.models import LinkRow, MeterEntryRow
from controller.storage.store import LedgerStore
from tests.conftest import KEY
from tests.controller.permissive_law import PERMISSIVE, permissive
from tests.e2e.pool import QUADS, H, Readings, cli, create_pool, until_mystery


async def _runtime(store: LedgerStore) -> LinkRuntime:
    rt = LinkRuntime(
        LedgerStore(store.engine, KEY, law=PERMISSIVE)
    )  # a new process: nothing in memory
    await rt.memory.load()
    return rt


async def test_a_link_of_levels_whose_row_was_edited_is_recovered_from_its_history(
    store: LedgerStore, db_url: str, tmp_path: Path
) -> None:
    permissive(store)
    await create_pool(db_url, tmp_path)
    rt = await _runtime(store)
    await ReviewDesk(FilingDesk(rt)).approve_new_links(reviewer="agent", role=Role.COMMISSION_AGENT)
    p = Readings(rt.memory.clock.now_us)
    await rt.readings.apply([p.of(t, 0, 0) for t in ("T1", "D1")])
    await until_mystery(rt, p, "pool", ("T1", "D1"))
    await rt.readings.apply([p.hit("D1", H.FOUR_OF_A_KIND, QUADS, seat=2, hit_seq=1)])
    played = rt.memory.states["pool"]
    meters = meters_of(played.levels)

    # Someone with the database moves $100 from the Grand's meter to the Minor's.
    async with store.engine.begin() as conn:
        levels = json.loads(await conn.scalar(select(LinkRow.levels)))
        levels[0]["meter_units"] -= 1_000_000
        levels[2]["meter_units"] += 1_000_000
        await conn.execute(update(LinkRow).values(levels=json.dumps(levels)))
    found = (await _runtime(store)).memory.is_inoperable("pool")
    assert found is not None and "levels" in found, found
    assert "INOPERABLE" in await cli("links", "list", db_url=db_url)

    out = await cli(
        "links", "recover", "pool", "--reason", "levels edited outside the controller",
        "--by", "alice", "--approved-by", "bob", db_url=db_url,
    )  # fmt: skip
    assert "link pool recovered" in out, out
    again = await _runtime(store)
    assert again.memory.inoperable == {}
    back = again.memory.states["pool"]
    assert meters_of(back.levels) == meters
    assert [lv.wins for lv in back.levels] == [lv.wins for lv in played.levels]
    assert back.level_configs == played.level_configs and back.paytables == played.paytables
    mini = back.levels[3]
    assert mini.armed is not None and mini.armed != played.levels[3].armed
    async with store.engine.connect() as conn:
        kinds = list(
            (await conn.scalars(select(MeterEntryRow.kind).order_by(MeterEntryRow.seq))).all()
        )
    recovered = kinds.index(str(EntryKind.STATE_RECOVERED))
    assert str(EntryKind.MYSTERY_ARMED) in kinds[recovered + 1 :]
    # Every table waits for a technician; then the link plays on from the history.
    assert all(ts.hit_pending for ts in back.tables.values())
    for tid in back.tables:
        for hit in await again.hits.unverified(tid):
            await again.hits.verify(hit.hit_id, actor="tech")
        await again.hits.release_table(tid, actor="tech")
    p.seq = {t: 0 for t in back.tables}
    await again.readings.apply([p.of("T1", 0, 0), p.of("D1", 0, 0)])
    await again.readings.apply([p.of("T1", 10, 1)])
    restarted = await _runtime(store)
    assert restarted.memory.states == again.memory.states
    assert "ledger whole" in await cli("ledger", "verify", db_url=db_url)
