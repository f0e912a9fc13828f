"""A floor where the joker has been dealt: two Pai Gow Poker tables (register map v2, the joker
as code 52) and a Caribbean Stud table, dealt by the simulated tables and read by the real
poller into a real database (SQLite, or the PostgreSQL schema a test gives).

``paigow-1`` is held by five aces (four aces and the joker, the meter's 100 %); ``paigow-2``
paid four aces made with the joker (a $50 fixed pay, under the amount a technician deals
with); ``caribbean-1`` is held by a royal flush, so an auditor has another link's hits to
switch from.

    async with joker_floor(tmp_path) as jf:
        jf.five_aces, jf.four_aces, jf.royal, jf.base_url
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from controller.core.games import Game
from controller.core.hands import HandCategory, parse_cards
from controller.storage.hits import HitRecord
from link_adapters.simulator.clock import VirtualClock
from tests.app.floor import WebFloor, settings_in, web_floor
from tests.integration.harness import wait_until

H = HandCategory
LINKS = {"caribbean": (Game.CARIBBEAN_STUD, 1), "paigow": (Game.PAI_GOW_POKER, 2)}
# Five aces: four aces and the joker (68 IAC 10-9-1(d)(5)); seven cards, as Pai Gow deals.
FIVE_ACES = parse_cards("As Ah Ad Ac JK 2c 3d", joker=True)
# Four of a kind made with the joker as the fourth ace (10-9-3(c)).
FOUR_ACES = parse_cards("As Ah Ad JK 2c 5d 9h", joker=True)


@dataclass
class JokerFloor:
    wf: WebFloor
    clock: VirtualClock
    five_aces: HitRecord  # holds paigow-1
    four_aces: HitRecord  # a fixed pay at paigow-2, paid with no technician
    royal: HitRecord  # holds caribbean-1

    @property
    def base_url(self) -> str:
        return self.wf.base_url


async def _hit(wf: WebFloor, table_id: str, seat: int, hand: HandCategory) -> HitRecord:
    """The hit the table reported, once the controller has taken it."""
    link_id = table_id.rsplit("-", 1)[0]
    async with asyncio.timeout(20):
        while True:
            rows = await wf.service.runtime.hits.of_link(link_id)
            found = [h for h in rows if (h.table_id, h.seat, h.hand) == (table_id, seat, hand.name)]
            if found:
                return found[0]
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def joker_floor(
    folder: Path, *, database_url: str | None = None
) -> AsyncIterator[JokerFloor]:
    settings = settings_in(folder)
    if database_url is not None:
        settings = settings.model_copy(update={"database_url": database_url})
    clock = VirtualClock()
    async with web_floor(
        folder,
        links=LINKS,
        seed=11,
        settings=settings,
        sim_clock=clock.now_us,
        sim_autodeal=False,
        poll_interval_ms=50,
    ) as wf:
        await wait_until(
            lambda: not any(t.progressive_disabled(clock.now_us()) for t in wf.sim.tables.values())
        )
        wf.table("caribbean", 1).force_hand(3, H.ROYAL_FLUSH)
        wf.play_round_now("caribbean", 1)
        royal = await _hit(wf, "caribbean-1", 3, H.ROYAL_FLUSH)
        wf.table("paigow", 2).force_hit(1, H.FOUR_OF_A_KIND, FOUR_ACES)
        wf.play_round_now("paigow", 2)
        four_aces = await _hit(wf, "paigow-2", 1, H.FOUR_OF_A_KIND)
        wf.table("paigow", 1).force_hit(2, H.FIVE_ACES, FIVE_ACES)
        wf.play_round_now("paigow", 1)
        five_aces = await _hit(wf, "paigow-1", 2, H.FIVE_ACES)
        await wait_until(lambda: wf.service.table_status("paigow-1").hit_pending)
        yield JokerFloor(wf, clock, five_aces=five_aces, four_aces=four_aces, royal=royal)
