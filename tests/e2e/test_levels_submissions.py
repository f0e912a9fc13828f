"""Changes to a link of levels filed by a supervisor and approved by a commission agent over
the API, armed, kept across a restart of the controller, applied at the link's next reset
and kept in the database: its levels as a whole, and the paytable of its other game."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from controller.core.games import Game, default_paytable
from controller.core.reducer import EntryKind, LinkState
from controller.core.reducer.levels import levels_from_dicts
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.rules.filing import Proposal, SubmissionKind, date_text
from controller.runtime.clock import SystemClock
from controller.runtime.config import load_floor_config
from controller.runtime.service import FloorMismatch, open_floor
from controller.storage.database import make_engine
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from tests.conftest import KEY
from tests.controller.permissive_law import PERMISSIVE, permissive
from tests.e2e.pool import (
    ROYAL,
    Controller,
    H,
    Readings,
    approve_filed,
    controller,
    create_pool,
    signed_in,
    until_mystery,
)
from tests.e2e.test_levels_link_config import floor_file

# The Mini, just won, takes a point more of every wager and may now climb to $30; the
# Grand's share stays (68 IAC 10-1-1.1(d): no one has won the Grand since it was set).
NEW_LEVELS: list[dict[str, Any]] = [
    {"name": "Grand", "reset_cents": 10_000_00, "rate_bp": 4_000, "reserve_bp": 1_000},
    {"name": "Major", "reset_cents": 1_000_00, "rate_bp": 1_500, "reserve_bp": 500,
     "limit_cents": 1_000_50, "above_limit": "next_level"},
    {"name": "Minor", "reset_cents": 100_00, "rate_bp": 800, "limit_cents": 100_20},
    {"name": "Mini", "reset_cents": 10_00, "rate_bp": 300,
     "mystery": {"floor_cents": 10_01, "ceiling_cents": 30_00}},
]  # fmt: skip
# What the same filing would have been before each level had its own lock: the Grand giving
# two points of its share to the Minor, after only the Mini was won.
GRAND_TO_MINOR: list[dict[str, Any]] = [
    {**NEW_LEVELS[0], "rate_bp": 3_800},
    NEW_LEVELS[1],
    {**NEW_LEVELS[2], "rate_bp": 1_000},
    {**NEW_LEVELS[3], "rate_bp": 200},
]
DRAW_LINES = [
    {"hand": "ROYAL_FLUSH", "percent_bp": 10_000, "level": 1},
    {"hand": "STRAIGHT_FLUSH", "percent_bp": 10_000, "level": 2},
    {"hand": "FOUR_OF_A_KIND", "percent_bp": 5_000, "level": 3, "envy_cents": 10_00},
]


async def _file_and_approve(c: Controller, http: httpx.AsyncClient, body: dict[str, Any]) -> str:
    """Filed by a supervisor once a level was won (68 IAC 10-1-1.1(d)), approved by an agent."""
    rt = c.service.runtime
    p = Readings(c.service.clock.now_us)
    await rt.readings.apply([p.of(t, 0, 0) for t in ("T1", "D1")])
    await until_mystery(rt, p, "pool", ("T1", "D1"))
    sup = await signed_in(c, Role.SUPERVISOR)
    if body.get("kind") == "levels_change":
        # Only the Mini was won: a win of the Mini never unlocks the Grand's share.
        refused = await http.post(
            "/api/v1/submissions",
            json={"link_id": "pool", "kind": "levels_change", "levels": GRAND_TO_MINOR},
            headers=sup,
        )
        assert refused.status_code == 409, refused.text
        detail = refused.json()["detail"]
        assert "level 1 (Grand)'s share 40% + 10% hidden cannot change" in detail
        assert "until a patron wins the Grand" in detail and "(68 IAC 10-1-1.1(d))" in detail
    filed = await http.post("/api/v1/submissions", json={"link_id": "pool", **body}, headers=sup)
    assert filed.status_code == 201, filed.text
    sid = str(filed.json()["submission_id"])
    assert await approve_filed(c, http) == [sid]
    assert rt.memory.states["pool"].armed is not None
    return sid


async def _restart_and_reset(db_url: str, sid: str) -> tuple[LinkState, LinkState]:
    """A new controller on the database: the link as it comes back, then after a royal flush
    at the Stud table (the Grand's reset, where the change applies)."""
    async with controller(db_url) as c, httpx.AsyncClient(base_url=c.base_url) as http:
        rt = c.service.runtime
        back = rt.memory.states["pool"]
        assert back.armed is not None and back.armed.submission_id == sid
        p = Readings(c.service.clock.now_us)
        p.seq = {t: ts.poll_seq for t, ts in back.tables.items()}
        p.credits = {t: ts.credits or 0 for t, ts in back.tables.items()}
        p.rounds = {t: ts.rounds or 0 for t, ts in back.tables.items()}
        await rt.readings.apply([p.hit("T1", H.ROYAL_FLUSH, ROYAL, seat=1, hit_seq=1)])
        after = rt.memory.states["pool"]
        assert after.armed is None and after.levels[0].wins == 1
        auditor = await signed_in(c, Role.AUDITOR)
        done = (await http.get(f"/api/v1/submissions/{sid}", headers=auditor)).json()
        assert done["applied_at_us"] == after.last_at_us
    return back, after


async def _from_the_database(db_url: str) -> LinkState:
    engine = make_engine(db_url)
    try:
        store = LedgerStore(engine, KEY, law=PERMISSIVE)
        state = await store.load_link("pool")
        report = await verify_ledger(engine, KEY)
        assert report.ok, report.problems
        return state
    finally:
        await engine.dispose()


async def test_a_levels_change_survives_a_restart_and_applies_at_the_next_reset(
    db_url: str, tmp_path: Path
) -> None:
    await create_pool(db_url, tmp_path)
    async with controller(db_url) as c, httpx.AsyncClient(base_url=c.base_url) as http:
        await approve_filed(c, http)
        sid = await _file_and_approve(c, http, {"kind": "levels_change", "levels": NEW_LEVELS})
        before = c.service.runtime.memory.states["pool"]
    wanted = levels_from_dicts(NEW_LEVELS)
    back, after = await _restart_and_reset(db_url, sid)
    assert back == before and back.armed is not None and back.armed.levels == wanted
    assert after.level_configs == wanted and after.rate_bp == 8_100
    stored = await _from_the_database(db_url)
    assert stored == after
    assert EntryKind.LEVELS_CHANGED in await _entries(db_url)


async def test_a_paytable_change_of_the_other_game_applies_at_the_next_reset(
    db_url: str, tmp_path: Path
) -> None:
    await create_pool(db_url, tmp_path)
    body = {"kind": "paytable_change", "game": "caribbean_draw", "paytable": DRAW_LINES}
    async with controller(db_url) as c, httpx.AsyncClient(base_url=c.base_url) as http:
        await approve_filed(c, http)
        sid = await _file_and_approve(c, http, body)
        stud_before = c.service.runtime.memory.states["pool"].paytable
    back, after = await _restart_and_reset(db_url, sid)
    assert back.armed is not None and back.armed.paytable is not None
    assert back.armed.paytable.game is Game.CARIBBEAN_DRAW
    draw = after.paytable_for(Game.CARIBBEAN_DRAW)
    assert [(ln.hand.name, ln.percent_bp, ln.level, ln.envy_cents) for ln in draw.lines] == [
        (ln["hand"], ln["percent_bp"], ln["level"], ln.get("envy_cents")) for ln in DRAW_LINES
    ]
    assert after.paytable == stud_before  # the Stud tables' own lines are as they were
    stored = await _from_the_database(db_url)
    assert stored == after and stored.paytable_for(Game.CARIBBEAN_DRAW) == draw


async def _entries(db_url: str) -> list[Any]:
    from sqlalchemy import select

    from controller.storage.models import MeterEntryRow

    engine = make_engine(db_url)
    try:
        async with engine.connect() as conn:
            kinds = (await conn.scalars(select(MeterEntryRow.kind))).all()
    finally:
        await engine.dispose()
    return [EntryKind(k) for k in kinds]


async def test_a_floor_file_restarts_after_an_approved_levels_change(
    store: LedgerStore, tmp_path: Path
) -> None:
    """A link of levels made from a floor file; its levels changed by an approved submission
    and applied at the Grand's reset. Restarted on the file as it was: the approved levels
    are kept and the difference named with its approval (68 IAC 10-1-1.1(d)-(e)); a file
    giving levels no one approved is refused."""
    permissive(store)
    path = floor_file(tmp_path)
    rt = await open_floor(store, load_floor_config(path), SystemClock(), demonstration=True)
    filing = FilingDesk(rt, demonstration=True)
    review = ReviewDesk(filing)
    await review.approve_new_links(reviewer="agent", role=Role.COMMISSION_AGENT)
    p = Readings(rt.memory.clock.now_us)
    await rt.readings.apply([p.of(t, 0, 0) for t in ("T1", "T2", "D1")])
    await rt.readings.apply([p.hit("T1", H.ROYAL_FLUSH, ROYAL, seat=1, hit_seq=1)])
    # The Grand was won: its share may change (to 38%); no other level's may.
    wanted = levels_from_dicts(
        [{**NEW_LEVELS[0], "rate_bp": 3_800}, *NEW_LEVELS[1:3], {**NEW_LEVELS[3], "rate_bp": 200}]
    )
    filed = await filing.file_change(
        link_id="pool", proposal=Proposal(kind=SubmissionKind.LEVELS_CHANGE, levels=wanted),
        filed_by="sup",
    )  # fmt: skip
    approved = await review.approve(
        filed.submission_id, reviewer="agent", role=Role.COMMISSION_AGENT
    )
    await rt.readings.apply([p.hit("D1", H.ROYAL_FLUSH, ROYAL, seat=5, hit_seq=1)])
    played = rt.memory.states["pool"]
    assert played.level_configs == wanted and played.armed is None

    notes: list[str] = []
    again = await open_floor(
        LedgerStore(store.engine, KEY, law=PERMISSIVE), load_floor_config(path), SystemClock(),
        demonstration=True, notes=notes,
    )  # fmt: skip
    assert again.memory.states["pool"] == played
    assert approved.reviewed_at_us is not None
    assert notes == [
        "link pool: levels Grand 38%, Major 15%, Minor 8%, Mini 2% from the database, not "
        "the file's levels Grand 40%, Major 15%, Minor 8%, Mini 2%: approved on "
        f"{date_text(approved.reviewed_at_us)} by agent (submission {filed.submission_id})"
    ]

    path.write_text(path.read_text().replace('share = "8%"', 'share = "9%"'))
    with pytest.raises(FloorMismatch, match=r"^link pool: the file's levels Grand 40%, Major "
                       r"15%, Minor 9%, Mini 2% was never approved; .* File the change on "
                       r"/supervisor .* set the file's \[\[link.level\]\] back"):  # fmt: skip
        await open_floor(
            LedgerStore(store.engine, KEY, law=PERMISSIVE), load_floor_config(path), SystemClock(),
            demonstration=True,
        )  # fmt: skip


@pytest.mark.parametrize("game", [str(g) for g in Game])
async def test_a_paytable_change_may_name_every_game_and_one_the_link_deals_not_is_refused(
    db_url: str, tmp_path: Path, game: str
) -> None:
    """Every game the controller knows is a name the filing reads (Super Sevens and Pai Gow
    too); one the link's tables do not deal is refused by the rules, not by the form."""
    await create_pool(db_url, tmp_path)
    lines = default_paytable(Game(game)).to_dicts()
    body = {"link_id": "pool", "kind": "paytable_change", "game": game, "paytable": lines}
    async with controller(db_url) as c, httpx.AsyncClient(base_url=c.base_url) as http:
        await approve_filed(c, http)
        sup = await signed_in(c, Role.SUPERVISOR)
        checked = await http.post("/api/v1/submissions/check", json=body, headers=sup)
    assert checked.status_code == 200, checked.text
    problems = checked.json()["problems"]
    dealt = "it deals Caribbean Stud Poker, Caribbean Draw Poker"
    if game in (Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW):
        assert not any(dealt in p["message"] for p in problems), problems
    else:
        assert [p["message"] for p in problems] == [
            f"link pool does not deal {Game(game).label}; {dealt}"
        ]
