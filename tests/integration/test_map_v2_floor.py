"""A table speaking register map v2 next to a v1 table on the same link, polled by the real
controller over Modbus TCP and over an RS-485 line (pseudo-terminals), on SQLite and
PostgreSQL: the v2 hit reaches the engine's claim with its seven cards (the joker as 52) and
its level, the v1 table beside it plays and hits as it always did."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from sqlalchemy import select

from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.core.reducer import HitClaim, TableReading
from controller.storage.models import HitRow
from controller.storage.store import LedgerStore
from link_adapters.simulator.table_types import SimTableConfig
from tests.integration.harness import FloorHarness, LinkPlan

GW = "caribbean_stud"
# A K Q J of spades, the joker (68 IAC 10-9-3(b)), the deuce of clubs, the three of diamonds.
SEVEN_WITH_JOKER = (51, 47, 43, 39, 52, 0, 5)


def mixed(serial: bool) -> LinkPlan:
    """Table 1 speaks map v1 (read with reference-v1), table 2 map v2 (reference-v2)."""
    v1 = SimTableConfig(game=Game.CARIBBEAN_STUD)
    v2 = SimTableConfig(game=Game.CARIBBEAN_STUD, register_map=2)
    return LinkPlan(
        "mixed",
        GW,
        GW,
        tables=2,
        rate_bp=8000,
        table=v1,
        serial=serial,
        unit_tables={2: v2},
        profiles={2: "reference-v2"},
    )


@pytest.mark.parametrize("serial", [False, True], ids=["tcp", "rs485"])
async def test_a_v2_hit_reaches_the_claim_and_the_v1_table_beside_it_is_unchanged(
    store: LedgerStore, serial: bool
) -> None:
    plan = mixed(serial)
    h = FloorHarness(store, (plan,))
    claims: list[tuple[str, HitClaim]] = []
    try:
        await h.start_floor()
        await h.start_controller()
        assert h.floor is not None and h.runtime is not None
        runtime = h.runtime
        apply = runtime.readings.apply

        async def noting_claims(readings: Sequence[TableReading]) -> object:
            claims.extend((r.table_id, r.head_hit) for r in readings if r.head_hit is not None)
            return await apply(readings)

        runtime.readings.apply = noting_claims  # type: ignore[method-assign]
        await h.play(0.3)
        await h.drained()
        # A stud table made to lie: map v2 carries seven cards with the joker.
        h.floor.force_hit(GW, 2, 4, HandCategory.ROYAL_FLUSH, SEVEN_WITH_JOKER, level=2, lying=True)
        v2_round = h.floor.play_round_now(GW, 2)
        h.floor.force_hand(GW, 1, 3, HandCategory.ROYAL_FLUSH)
        v1_round = h.floor.play_round_now(GW, 1)
        await h.play(0.3)
        await h.drained()
    finally:
        await h.stop()
    await h.check_exact()  # every credit of both tables on the meter, every hit once

    v2_hit = next(x for x in v2_round.hits if x.seat == 4)
    v1_hit = next(x for x in v1_round.hits if x.seat == 3)
    seen = {(table, c.table_seq): c for table, c in claims}
    v2_claim, v1_claim = seen[("mixed-2", v2_hit.seq)], seen[("mixed-1", v1_hit.seq)]
    assert (v2_claim.seat, v2_claim.hand) == (4, HandCategory.ROYAL_FLUSH)
    assert (v2_claim.cards, v2_claim.level) == (SEVEN_WITH_JOKER, 2)
    assert (v1_claim.seat, v1_claim.hand) == (3, HandCategory.ROYAL_FLUSH)
    assert (v1_claim.cards, v1_claim.level) == (v1_hit.cards, None)
    assert len(v1_claim.cards or ()) == 5

    async with store.engine.connect() as conn:
        rows = {
            (r.table_id, r.table_seq): r
            for r in (await conn.execute(select(HitRow).where(HitRow.link_id == "mixed"))).all()
        }
    # Recorded as the table reported them, the joker as 52 (whether seven cards with the joker
    # make the claimed hand is the hand evaluation's to say).
    assert rows[("mixed-2", v2_hit.seq)].cards == "51,47,43,39,52,0,5"
    v1_row = rows[("mixed-1", v1_hit.seq)]
    assert v1_row.cards == ",".join(map(str, v1_hit.cards))
    assert (v1_row.status, v1_row.paid_from) == ("awarded", "meter")
