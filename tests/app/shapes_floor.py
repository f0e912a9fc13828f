"""A floor with every game, every jackpot shape and every outcome of a hit, for the tests that
carry each one through every surface (``test_every_shape.py``).

The demo's own links (``app.demo_floor``: the mixed Caribbean Stud and Draw link of four levels
with a hidden share, limits with overflow, a mystery Mini and envy pays; Pai Gow Poker with its
joker on one meter; the Let It Ride bonus and Super Sevens as fixed-pay links) and one more
link of levels on Caribbean Stud tables, ``levels``, whose Major passes its excess on to the
next level and whose mystery Mini triggers within a round or two. Two tables of each game,
speaking the register map the demo's tables do, behind a Modbus TCP gateway on loopback, read
by the real poller into the real SQLite ledger; the tables deal only when told (a virtual
clock), every seat that matters forced, so the floor is the same every run.

The hits are then taken through the technician's steps over the API, one outcome each:
held, verified, signed off by a second person, hand-paid, reset, a refused claim, and fixed
pays paid at the table that nobody waits for.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from fastapi import FastAPI
from sqlalchemy import select

from app.demo_floor import GATEWAYS, LINKS, DemoGateway
from app.serve import Served, serve
from app.web import create_app
from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.runtime.config import parse_floor_config
from controller.runtime.service import FloorService
from controller.storage.models import HitRow
from link_adapters.simulator.clock import VirtualClock
from link_adapters.simulator.gateway import GatewaySpec
from link_adapters.simulator.server import SimFloor
from link_adapters.simulator.table import SimTable
from link_adapters.simulator.table_types import SimTableConfig, most_seats
from tests.app.auth import new_user
from tests.app.floor import settings_in
from tests.controller.permissive_law import KEY as PERMISSIVE_KEY
from tests.integration.harness import wait_until

H = HandCategory
TABLES = 2
# Seats made to bet, with a pair that pays nothing: the envy of a jackpot goes to them.
BETTING = range(2, 6)
# The link of levels the demo does not run: a Major passing its excess to the next level, and
# a mystery Mini drawn between $10.01 and $11 from a $10 reset, so it triggers within a round.
LEVELS_LINK = {
    "id": "levels",
    "name": "Caribbean Stud levels",
    "game": Game.CARIBBEAN_STUD.value,
    "level": [
        {"name": "Grand", "reset": "$10,000", "share": "40%", "hidden": "10%"},
        {"name": "Major", "reset": "$1,000", "share": "15%", "hidden": "5%",
         "limit": "$5,000", "above_limit": "next_level"},
        {"name": "Minor", "reset": "$100", "share": "8%", "limit": "$500"},
        {"name": "Mini", "reset": "$10", "share": "10%", "mystery_floor": "$10.01",
         "mystery_ceiling": "$11"},
    ],
    "paytable": [
        {"hand": "ROYAL_FLUSH", "pays": "100%", "level": 1},
        {"hand": "STRAIGHT_FLUSH", "pays": "100%", "level": 2},
        {"hand": "FOUR_OF_A_KIND", "pays": "100%", "level": 3},
        {"hand": "FULL_HOUSE", "pays": "$75"},
    ],
}  # fmt: skip
LEVELS_GATEWAY = DemoGateway("levels", Game.CARIBBEAN_STUD, "levels")
ALL_GATEWAYS = (*GATEWAYS, LEVELS_GATEWAY)
# A fixed pay from $100 waits for a technician (the full house at the Caribbean link), one
# under it does not (its flush at $50); a second person signs from $5,000 (the Grand).
TECHNICIAN_FROM_CENTS = 100_00
SECOND_SIGNATURE_FROM_CENTS = 5_000_00
# What each hit the floor is built with came to, by the name the tests give it.
OUTCOMES = (
    "held",  # the Pai Gow Poker five aces, with the joker, waiting for a technician
    "verified",  # the Major at Caribbean Draw, verified, its table not reset yet
    "second_signed",  # the Grand at Caribbean Stud, verified and signed off, not reset
    "hand_paid",  # a Let It Ride bonus fixed pay waiting for a technician, paid by hand
    "reset",  # the Super Sevens fixed pay, verified and its table reset
    "refused",  # a claim the cards do not make: refused, it holds its table
    "at_table",  # a fixed pay under the amount, paid at the table, nobody waits for it
    "mystery",  # the mystery Mini of the link of levels
    "envy",  # the envy pays of the Grand to the other seats of its round
)


@dataclass
class ShapesFloor:
    served: Served
    app: FastAPI
    service: FloorService
    sim: SimFloor
    clock: VirtualClock
    folder: Path
    # outcome -> the hit ids of that outcome
    hits: dict[str, list[str]] = field(default_factory=dict)
    # role -> a user of that role, signed in: name, bearer token
    users: dict[Role, tuple[str, str]] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return self.served.base_url

    @property
    def links(self) -> list[str]:
        return [*(link.link_id for link in LINKS), "levels"]

    def table(self, table_id: str) -> SimTable:
        gateway, unit = table_id.rsplit("-", 1)
        return self.sim.tables[(gateway, int(unit))]

    def one(self, outcome: str) -> str:
        return self.hits[outcome][0]

    def headers(self, role: Role) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.users[role][1]}"}


def _table(gw: DemoGateway, link_game: Game, n: int) -> dict[str, Any]:
    table: dict[str, Any] = {
        "id": f"{gw.name}-{n}",
        "bus": gw.name,
        "unit": n,
        "name": f"{gw.game.label} table {n}",
        "location": f"pit 1, {gw.game.label} {n}",
        "profile": gw.profile,
        "seats": most_seats(gw.game),
        "poll_interval_ms": 50,
        "min_round_ms": 10,
        "max_credits_per_seat": 1,
    }
    if gw.game is not link_game:
        table["game"] = gw.game.value
    return table


def floor_file(ports: dict[str, int]) -> dict[str, Any]:
    """The demo's floor file, two tables a game, and the link of levels."""
    links: list[dict[str, Any]] = [
        {"id": link.link_id, "name": link.name, "game": link.game.value, **link.terms}
        for link in LINKS
    ]
    links.append(dict(LEVELS_LINK))
    for link in links:
        game = Game(link["game"])
        link["table"] = [
            _table(gw, game, n)
            for gw in ALL_GATEWAYS
            if gw.link_id == link["id"]
            for n in range(1, TABLES + 1)
        ]
    return {
        "controller": {"offline_after_failures": 3},
        "bus": [
            {"name": gw.name, "kind": "tcp", "host": "127.0.0.1", "port": ports[gw.name],
             "timeout_ms": 300, "retries": 0}
            for gw in ALL_GATEWAYS
        ],
        "link": links,
    }  # fmt: skip


async def _hits_at(service: FloorService, table_id: str) -> list[HitRow]:
    async with service.engine.connect() as conn:
        rows = await conn.execute(
            select(HitRow).where(HitRow.table_id == table_id).order_by(HitRow.at_us)
        )
        return list(rows.all())  # type: ignore[arg-type]


class _Dealer:
    def __init__(self, sf: ShapesFloor) -> None:
        self.sf = sf

    def read(self, table_id: str) -> bool:
        table = self.sf.table(table_id)
        status = self.sf.service.table_status(table_id)
        return not table.hit_fifo and status.rounds == table.rounds

    async def deal(self, table_id: str, hands: dict[int, HandCategory]) -> list[HitRow]:
        """One round at ``table_id`` with ``hands`` forced, read; the table's hits after."""
        table = self.sf.table(table_id)
        for seat, hand in hands.items():
            table.force_hand(seat, hand)
        gateway, unit = table_id.rsplit("-", 1)
        self.sf.sim.play_round_now(gateway, int(unit))
        await wait_until(lambda: self.read(table_id))
        return await _hits_at(self.sf.service, table_id)


def hit_url(hit_id: str, action: str | None = None) -> str:
    path = f"/api/v1/hits/{quote(hit_id, safe='')}"
    return path if action is None else f"{path}/{action}"


async def _ok(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code == 200, (answer.request.url, answer.text)
    body: dict[str, Any] = answer.json()
    return body


async def _play(sf: ShapesFloor) -> None:
    dealer = _Dealer(sf)
    hits = sf.hits
    # The Grand at Caribbean Stud, every other seat betting: each is paid the royal's envy.
    dealt = await dealer.deal("stud-1", {1: H.ROYAL_FLUSH, **dict.fromkeys(BETTING, H.ONE_PAIR)})
    hits["second_signed"] = [
        h.hit_id for h in dealt if h.kind == "hand" and h.hand == "ROYAL_FLUSH"
    ]
    hits["envy"] = [h.hit_id for h in dealt if h.kind == "envy"]
    # The Major at Caribbean Draw.
    dealt = await dealer.deal("draw-1", {1: H.STRAIGHT_FLUSH})
    hits["verified"] = [h.hit_id for h in dealt if h.kind == "hand"]
    # The flush at Caribbean Stud ($50): under the amount, paid at the table.
    dealt = await dealer.deal("stud-2", {1: H.FLUSH})
    hits["at_table"] = [h.hit_id for h in dealt if not h.needs_technician]
    # A claim of a royal flush whose cards are no royal flush: refused, it holds the table.
    sf.table("draw-2").force_hit(1, H.ROYAL_FLUSH, [0, 13, 26, 39, 1], lying=True)
    dealt = await dealer.deal("draw-2", {})
    hits["refused"] = [h.hit_id for h in dealt if h.status == "refused"]
    # The Pai Gow Poker five aces: four aces and the joker.
    dealt = await dealer.deal("paigow-1", {1: H.FIVE_ACES})
    hits["held"] = [h.hit_id for h in dealt if h.hand == "FIVE_ACES"]
    # Let It Ride bonus: a royal flush, a fixed pay waiting for a technician.
    dealt = await dealer.deal("lir-1", {1: H.ROYAL_FLUSH})
    hits["hand_paid"] = [h.hit_id for h in dealt if h.hand == "ROYAL_FLUSH"]
    # Super Sevens: three suited sevens from the six-deck shoe, from the first cards dealt.
    dealt = await dealer.deal("sevens-1", {1: H.THREE_SUITED_SEVENS})
    hits["reset"] = [h.hit_id for h in dealt if h.hand == "THREE_SUITED_SEVENS"]
    # The mystery Mini: rounds of seven bets until it triggers.
    for _ in range(10):
        dealt = await dealer.deal("levels-1", dict.fromkeys(BETTING, H.ONE_PAIR))
        hits["mystery"] = [h.hit_id for h in dealt if h.kind == "mystery"]
        if hits["mystery"]:
            break
    missing = [o for o in OUTCOMES if not hits.get(o)]
    assert not missing, (missing, hits)

    async with httpx.AsyncClient(base_url=sf.base_url) as http:
        for role in Role:
            name, password = await new_user(sf, role)  # type: ignore[arg-type]
            token = await http.post(
                "/api/v1/auth/token", data={"username": name, "password": password}
            )
            assert token.status_code == 200, token.text
            sf.users[role] = (name, token.json()["access_token"])
        tech, second = sf.headers(Role.TECHNICIAN), sf.headers(Role.SUPERVISOR)
        for outcome in ("verified", "second_signed", "hand_paid", "reset"):
            await _ok(await http.post(hit_url(sf.one(outcome), "verify"), headers=tech, json={}))
        await _ok(await http.post(hit_url(sf.one("second_signed"), "sign-off"), headers=second))
        for outcome in ("hand_paid", "reset"):
            hit = await _ok(await http.get(hit_url(sf.one(outcome)), headers=tech))
            pay = {"amount_cents": hit["award_cents"]}
            await _ok(await http.post(hit_url(sf.one(outcome), "hand-pay"), headers=tech, json=pay))
        await _ok(await http.post("/api/v1/tables/sevens-1/reset", headers=tech))


@contextlib.asynccontextmanager
async def shapes_floor(folder: Path) -> AsyncIterator[ShapesFloor]:
    clock = VirtualClock()
    sim = SimFloor(
        [
            GatewaySpec(
                game=gw.game,
                tables=TABLES,
                port=0,
                name=gw.name,
                table=SimTableConfig(game=gw.game),
            )
            for gw in ALL_GATEWAYS
        ],
        seed=11,
        now_us=clock.now_us,
        autodeal=False,
    )
    await sim.start()
    try:
        settings = settings_in(folder).model_copy(
            update={
                # Every shape, limits and a mystery level among them (Indiana refuses both).
                "jurisdiction": PERMISSIVE_KEY,
                "fixed_pay_technician_from": TECHNICIAN_FROM_CENTS,
                "second_signature_from": SECOND_SIGNATURE_FROM_CENTS,
                # The floor outlives its module's first minute, when the retention purge would
                # first run: inside one of its tests, the purge's next wait started there would
                # count as a task the test left behind. Nothing here is old enough to purge.
                "retention_first_run_s": 24 * 60 * 60.0,
            }
        )
        floor = parse_floor_config(floor_file(sim.ports))
        service = FloorService(settings, floor=floor, migrate=True, create_key=True)
        await service.start()
        try:
            await ReviewDesk(FilingDesk(service.runtime)).approve_new_links(
                reviewer="commission", role=Role.COMMISSION_AGENT
            )
            poller = service.poller
            assert poller is not None
            async with asyncio.timeout(20):
                while not all(tp.last_ok_us for tp in poller.tables.values()):  # noqa: ASYNC110
                    await asyncio.sleep(0.02)
            await wait_until(
                lambda: not any(t.progressive_disabled(clock.now_us()) for t in sim.tables.values())
            )
            app = create_app(service)
            async with serve(app, port=0) as served:
                sf = ShapesFloor(served, app, service, sim, clock, folder)
                await _play(sf)
                yield sf
        finally:
            await service.stop()
    finally:
        await sim.stop()
