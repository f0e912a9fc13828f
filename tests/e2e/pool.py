"""A link of levels taken whole: created through the command line or a floor file, approved by
a commission agent over the API, played with forced readings, read back from the database.

``controller(db_url)`` is the controller as a web process runs it in front of a database
(``FloorService`` without a floor, served by uvicorn on loopback): the test drives the
readings itself through ``service.runtime``, as the poller would.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr

from app.serve import serve
from app.web import create_app
from controller.access import users
from controller.core.hands import HandCategory, parse_cards
from controller.core.reducer import HitClaim, TableReading
from controller.roles import Role
from controller.runtime.links import LinkRuntime
from controller.runtime.service import FloorService
from controller.settings import Settings
from tests.app.helpers import progressive
from tests.conftest import KEY
from tests.controller.permissive_law import KEY as PERMISSIVE_KEY

H = HandCategory
ROYAL = parse_cards("As Ks Qs Js Ts")
QUADS = parse_cards("9c 9d 9h 9s 2c")

# One mystery level, one with a hidden share, one with a limit and overflow, one passing its
# share to the next level at its limit (every share with its unit, as people write them).
LEVELS: list[dict[str, str]] = [
    {"name": "Grand", "reset": "$10,000", "share": "40%", "hidden": "10%"},
    {"name": "Major", "reset": "$1,000", "share": "15%", "hidden": "5%", "limit": "$1,000.50",
     "above_limit": "next_level"},
    {"name": "Minor", "reset": "$100", "share": "8%", "limit": "$100.20"},
    {"name": "Mini", "reset": "$10", "share": "2%", "mystery_floor": "$10.01",
     "mystery_ceiling": "$20"},
]  # fmt: skip
STUD_LINES: list[dict[str, Any]] = [
    {"hand": "ROYAL_FLUSH", "pays": "100%", "level": 1},
    {"hand": "STRAIGHT_FLUSH", "pays": "100%", "level": 2},
    {"hand": "FOUR_OF_A_KIND", "pays": "100%", "level": 3, "envy": "$25"},
    {"hand": "FLUSH", "pays": "$50", "envy": "$5"},
]
DRAW_LINES: list[dict[str, Any]] = [
    {"hand": "ROYAL_FLUSH", "pays": "100%", "level": 1},
    {"hand": "FOUR_OF_A_KIND", "pays": "100%", "level": 3},
]
PAYTABLES = {"caribbean_stud": STUD_LINES, "caribbean_draw": DRAW_LINES}
KEYS = ("L1", "L1.reserve", "L2", "L2.reserve", "L3", "L3.overflow", "L4")


def write_terms(folder: Path) -> tuple[Path, Path]:
    levels = folder / "levels.json"
    levels.write_text(json.dumps(LEVELS))
    paytable = folder / "paytable.json"
    paytable.write_text(json.dumps(PAYTABLES))
    return levels, paytable


# The executive director let this floor play once approved (68 IAC 10-1-3(c)).


# The pool above has limits and a mystery level, which Indiana refuses (68 IAC 10-1-5(d)):
# these tests run under a jurisdiction that allows them, unless they name Indiana.
LAW = PERMISSIVE_KEY


async def run_cli(*args: str, db_url: str, law: str = LAW) -> tuple[int, str, str]:
    """``progressive ARGS`` under the jurisdiction ``law``: exit code, output, errors."""
    env = {"PROGRESSIVE_DEMONSTRATION": "1", "PROGRESSIVE_JURISDICTION": law}
    return await progressive(
        *args, db_url=db_url, env=env, module="tests.controller.permissive_cli"
    )


async def cli(*args: str, db_url: str, law: str = LAW) -> str:
    """``progressive ARGS`` as a user runs it; its standard output (it must succeed)."""
    code, out, err = await run_cli(*args, db_url=db_url, law=law)
    assert code == 0, f"progressive {' '.join(args)}: {err}"
    return out


async def create_pool(db_url: str, folder: Path) -> None:
    """``links create`` of link ``pool``: the four levels, a Stud table T1 and a Draw table D1."""
    levels, paytable = write_terms(folder)
    await cli(
        "links", "create", "--location", "pit 1", "--id", "pool", "--game", "caribbean_stud", "--levels", str(levels),
        "--paytable", str(paytable), "--table", "T1", "--table", "D1:$1:caribbean_draw",
        db_url=db_url,
    )  # fmt: skip


@dataclass
class Controller:
    """The started service and where its web application answers (what ``headers_for`` needs)."""

    service: FloorService
    base_url: str


def settings_for(db_url: str, **more: Any) -> Settings:
    more.setdefault("jurisdiction", LAW)
    return Settings(
        database_url=db_url,
        ledger_key=SecretStr(KEY.hex()),
        demonstration=True,
        **more,
    )


@contextlib.asynccontextmanager
async def controller(db_url: str, **settings: Any) -> AsyncIterator[Controller]:
    service = FloorService(settings_for(db_url, **settings), retention_schedule=False)
    await service.start()
    try:
        async with serve(create_app(service), port=0) as served:
            yield Controller(service, served.base_url)
    finally:
        await service.stop()


async def signed_in(c: Controller, role: Role) -> dict[str, str]:
    """A new user of ``role``, signed in through ``POST /api/v1/auth/token``."""
    name, password = f"{role.value.replace('_', '-')}-{time.monotonic_ns()}", "a long password"
    await users.create_user(
        c.service.engine, username=name, role=role, password=password, actor="test",
        at_us=c.service.clock.now_us(),
    )  # fmt: skip
    async with httpx.AsyncClient(base_url=c.base_url) as http:
        answer = await http.post(
            "/api/v1/auth/token", data={"username": name, "password": password}
        )
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


async def approve_filed(c: Controller, http: httpx.AsyncClient) -> list[str]:
    """A commission agent approves every filed submission over the API; their ids."""
    agent = await signed_in(c, Role.COMMISSION_AGENT)
    filed = (await http.get("/api/v1/submissions?status=filed", headers=agent)).json()
    for s in filed:
        r = await http.post(f"/api/v1/submissions/{s['submission_id']}/approve", headers=agent)
        assert r.status_code == 200, r.text
    return [s["submission_id"] for s in filed]


class Readings:
    """Readings as a poller takes them: each table's poll sequence, its counters, the time."""

    def __init__(self, now_us: Callable[[], int]) -> None:
        self.seq: dict[str, int] = {}
        self.credits: dict[str, int] = {}
        self.rounds: dict[str, int] = {}
        self.now_us = now_us
        self.at = 0

    def of(self, table_id: str, credits: int = 0, rounds: int = 1, **kw: Any) -> TableReading:
        """``credits`` and ``rounds`` more at ``table_id`` since its last reading."""
        self.seq[table_id] = self.seq.get(table_id, 0) + 1
        self.credits[table_id] = self.credits.get(table_id, -credits) + credits
        self.rounds[table_id] = self.rounds.get(table_id, -rounds) + rounds
        self.at = max(self.at + 1, self.now_us())  # taken now, after the one before
        return TableReading(
            table_id=table_id,
            poll_seq=self.seq[table_id],
            at_us=self.at,
            credits=self.credits[table_id],
            rounds=self.rounds[table_id],
            **kw,
        )

    def hit(
        self, table_id: str, hand: HandCategory, cards: Any, *, seat: int, hit_seq: int,
        bet_seats: frozenset[int] | None = None, credits: int = 0,
    ) -> TableReading:  # fmt: skip
        """A hand at the head of the table's hit FIFO, dealt in this reading's round."""
        rnd = self.rounds.get(table_id, 0) + 1
        claim = HitClaim(table_seq=hit_seq, seat=seat, hand=hand, round=rnd, cards=cards)
        return self.of(table_id, credits, pending_hits=1, head_hit=claim, bet_seats=bet_seats)


async def until_mystery(
    runtime: LinkRuntime, readings: Readings, link_id: str, tables: Sequence[str]
) -> None:
    """Wagers of $1 credits, 50 a reading at each table in turn (seat 2 wagering them), until
    the link's mystery level hits once: its trigger is drawn at random, so not before."""
    index = next(
        i for i, lv in enumerate(runtime.memory.states[link_id].levels) if lv.config.mystery
    )
    wins = runtime.memory.states[link_id].levels[index].wins
    for n in range(200):
        seats = (0, 50, 0, 0, 0, 0, 0)
        await runtime.readings.apply(
            [readings.of(tables[n % len(tables)], 50, 10, seat_credits=seats)]
        )
        if runtime.memory.states[link_id].levels[index].wins > wins:
            return
    raise AssertionError("the mystery level never hit")


def meters_of_export(rows: list[Mapping[str, Any]]) -> dict[str, int]:
    """Each meter as a history export's rows leave it, each row checked to start where the
    one before left its meter: the export reconciles meter by meter."""
    meters: dict[str, int] = {}
    for row in rows:
        split = json.loads(row["meters"]) if row["meters"] else {}
        for key, (before, delta) in split.items():
            assert meters.get(key, 0) == before, (row["seq"], key, meters.get(key), before)
            meters[key] = before + delta
        assert sum(meters.values()) == row["meter_after_units"] or not split, row
    return meters
