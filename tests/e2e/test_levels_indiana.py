"""Indiana read exactly, at every place a link is made or changed and over a link already in
the database: a capped or mystery jackpot is refused (68 IAC 10-1-5(d): a jackpot is limited
only by limiting the wager), the rate of progression is the shown shares (10-1-1.1(b)-(c)),
and a level's share is locked until its own jackpot is won (10-1-1.1(d)). Each refusal names
its clause and what to change; a link made under another setting is reported, not changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from controller.roles import Role
from controller.runtime.clock import SystemClock
from controller.runtime.config import load_floor_config
from controller.runtime.floor_approvals import FloorMismatch
from controller.runtime.service import open_floor
from controller.storage.models import LinkRow
from controller.storage.store import LedgerStore
from tests.controller.permissive_law import permissive
from tests.e2e.pool import (
    QUADS,
    H,
    Readings,
    approve_filed,
    cli,
    controller,
    create_pool,
    run_cli,
    signed_in,
)

CAPPED = "68 IAC 10-1-5(d)"
SHOWN = "68 IAC 10-1-1.1(b)-(c)"
LOCK = "68 IAC 10-1-1.1(d)"

# A pool Indiana allows: no limit, no mystery level; 68% shown (the rate of progression),
# 10% hidden funding the Grand's resets.
LAWFUL: list[dict[str, str]] = [
    {"name": "Grand", "reset": "$10,000", "share": "45%", "hidden": "10%"},
    {"name": "Major", "reset": "$1,000", "share": "15%"},
    {"name": "Minor", "reset": "$100", "share": "8%"},
]
LINES: list[dict[str, Any]] = [
    {"hand": "ROYAL_FLUSH", "pays": "100%", "level": 1},
    {"hand": "STRAIGHT_FLUSH", "pays": "100%", "level": 2},
    {"hand": "FOUR_OF_A_KIND", "pays": "100%", "level": 3},
]
# Caribbean Stud whose only jackpot is capped at $2,000.
CAPPED_STUD = [{"name": "Jackpot", "reset": "$1,000", "share": "80%", "limit": "$2,000"}]
MYSTERY = [
    *LAWFUL[:2],
    {"name": "Minor", "reset": "$100", "share": "8%", "mystery_floor": "$100.01",
     "mystery_ceiling": "$200"},
]  # fmt: skip
# 1% shown and 59% hidden: 60% of every wager, but the jackpot grows by 1%.
HIDDEN_FUNDED = [{"name": "Grand", "reset": "$10,000", "share": "1%", "hidden": "59%"}]
REFUSED = [
    (CAPPED_STUD, CAPPED, "level 1 (Jackpot) is capped at $2,000.00", "give the level no limit"),
    (MYSTERY, CAPPED, "level 3 (Minor) is a mystery level that must hit by $200.00",
     "make it a level a hand wins"),
    (HIDDEN_FUNDED, SHOWN, "rate of progression 1% is outside 60% to 100%",
     "raise the shown shares to at least 60%"),
]  # fmt: skip


def _files(folder: Path, levels: list[dict[str, str]]) -> tuple[Path, Path]:
    lv, pt = folder / "levels.json", folder / "paytable.json"
    lv.write_text(json.dumps(levels))
    pt.write_text(json.dumps(LINES[: len(levels)]))
    return lv, pt


async def _create(db_url: str, folder: Path, levels: list[dict[str, str]]) -> tuple[int, str, str]:
    lv, pt = _files(folder, levels)
    return await run_cli(
        "links", "create", "--location", "pit 1", "--id", "pool", "--game", "caribbean_stud", "--levels", str(lv),
        "--paytable", str(pt), "--table", "T1", db_url=db_url, law="indiana",
    )  # fmt: skip


@pytest.mark.parametrize(("levels", "clause", "named", "fix"), REFUSED)
async def test_links_create_refuses_what_indiana_forbids(
    db_url: str, tmp_path: Path, levels: list[dict[str, str]], clause: str, named: str, fix: str
) -> None:
    code, _, err = await _create(db_url, tmp_path, levels)
    assert code == 2, err
    assert named in err and fix in err and f"({clause})" in err and "under Indiana" in err
    assert "no links yet" in (await run_cli("links", "list", db_url=db_url, law="indiana"))[2]
    # Where the jurisdiction allows the shape, the same command makes the link.
    code, _, err = await run_cli(
        "links", "create", "--location", "pit 1", "--id", "pool", "--game", "caribbean_stud",
        "--levels", str(tmp_path / "levels.json"), "--paytable", str(tmp_path / "paytable.json"),
        "--table", "T1", db_url=db_url,
    )  # fmt: skip
    assert code == 0, err


def _floor(folder: Path, levels: list[dict[str, str]]) -> Path:
    text = ['[[bus]]\nname = "gw"\nkind = "tcp"\nhost = "127.0.0.1"\nport = 15020\n']
    text.append('[[link]]\nid = "pool"\ngame = "caribbean_stud"\n')
    for level in levels:
        text.append("  [[link.level]]\n")
        text += [f"  {k} = {json.dumps(v)}\n" for k, v in level.items()]
    for line in LINES[: len(levels)]:
        text.append("  [[link.paytable]]\n")
        text += [f"  {k} = {json.dumps(v)}\n" for k, v in line.items()]
    text.append(
        '  [[link.table]]\n  id = "T1"\n  bus = "gw"\n  unit = 1\n  denomination = "$1"\n'
        '  location = "pit 1"\n'
    )
    path = folder / "floor.toml"
    path.write_text("".join(text))
    return path


@pytest.mark.parametrize(("levels", "clause", "named", "fix"), REFUSED)
async def test_a_floor_file_making_what_indiana_forbids_is_refused_before_anything_is_written(
    store: LedgerStore,
    tmp_path: Path,
    levels: list[dict[str, str]],
    clause: str,
    named: str,
    fix: str,
) -> None:
    path = _floor(tmp_path, levels)
    with pytest.raises(FloorMismatch) as caught:
        await open_floor(store, load_floor_config(path), SystemClock(), demonstration=True)
    text = str(caught.value)
    assert text.startswith("link pool: under Indiana: ") and named in text and fix in text
    assert f"({clause})" in text and "nothing was written" in text
    async with store.engine.connect() as conn:
        assert await conn.scalar(select(func.count()).select_from(LinkRow)) == 0
    rt = await open_floor(
        permissive(store), load_floor_config(path), SystemClock(), demonstration=True
    )
    assert "pool" in rt.memory.states


async def test_a_levels_change_over_the_api_is_held_to_indiana(db_url: str, tmp_path: Path) -> None:
    """A lawful Indiana link of levels: a levels change adding a limit, a mystery level or
    hidden shares taking more than the wager is refused with its clause (409), as its dry run
    says; a change of the Grand's share after only the Minor was won is refused (each level's
    lock is its own); the Minor's own share may change."""
    code, _, err = await _create(db_url, tmp_path, LAWFUL)
    assert code == 0, err
    async with (
        controller(db_url, jurisdiction="indiana") as c,
        httpx.AsyncClient(base_url=c.base_url) as http,
    ):
        await approve_filed(c, http)
        rt = c.service.runtime
        state = rt.memory.states["pool"]
        assert (state.rate_bp, state.rate_of_progression_bp) == (7_800, 6_800)
        listed = (await http.get("/api/v1/links/pool")).json()
        assert (listed["rate_bp"], listed["rate"]) == (6_800, "68%")
        p = Readings(c.service.clock.now_us)
        await rt.readings.apply([p.of("T1", 0, 0)])
        await rt.readings.apply([p.hit("T1", H.FOUR_OF_A_KIND, QUADS, seat=2, hit_seq=1)])
        assert rt.memory.states["pool"].won_since_share_set() == (False, False, True)
        sup = await signed_in(c, Role.SUPERVISOR)
        base = [cfg.to_dict() for cfg in state.level_configs]

        async def filed(levels: list[dict[str, Any]]) -> httpx.Response:
            body = {"link_id": "pool", "kind": "levels_change", "levels": levels}
            check = await http.post("/api/v1/submissions/check", json=body, headers=sup)
            answer = await http.post("/api/v1/submissions", json=body, headers=sup)
            if answer.status_code != 201:
                assert not check.json()["ok"]
                assert check.json()["problems"][0]["message"] in answer.json()["detail"]
            return answer

        capped = [base[0], base[1], {**base[2], "limit_cents": 200_00}]
        answer = await filed(capped)
        assert answer.status_code == 409
        assert "level 3 (Minor) is capped at $200.00" in answer.json()["detail"]
        assert f"({CAPPED})" in answer.json()["detail"]
        mystery = [base[0], base[1],
                   {**base[2], "mystery": {"floor_cents": 100_01, "ceiling_cents": 200_00}}]  # fmt: skip
        answer = await filed(mystery)
        assert answer.status_code == 409 and f"({CAPPED})" in answer.json()["detail"]
        # 68% shown and 43% hidden: more than the wager (the shown shares alone are lawful).
        hidden = [base[0], base[1], {**base[2], "reserve_bp": 3_300}]
        answer = await filed(hidden)
        assert answer.status_code == 409 and f"({SHOWN})" in answer.json()["detail"]
        assert "the levels take 111% of every wager" in answer.json()["detail"]
        assert "lower the hidden shares to at most 32% together" in answer.json()["detail"]
        grand = [{**base[0], "rate_bp": 4_400}, base[1], {**base[2], "rate_bp": 900}]
        answer = await filed(grand)
        assert answer.status_code == 409 and f"({LOCK})" in answer.json()["detail"]
        assert "until a patron wins the Grand" in answer.json()["detail"]
        minor = [base[0], base[1], {**base[2], "rate_bp": 900}]
        answer = await filed(minor)
        assert answer.status_code == 201, answer.text
        # Approved: the commission agent's approval checks it again and arms it.
        await approve_filed(c, http)
        assert rt.memory.states["pool"].armed is not None


async def test_a_link_made_under_another_setting_is_reported_on_readyz_and_keeps_playing(
    db_url: str, tmp_path: Path
) -> None:
    """Made where limits and mystery levels are allowed, then run under Indiana: /readyz names
    the link as a problem with each clause and the way into line; its history, meters and
    levels are never changed, and it keeps crediting its meters."""
    await create_pool(db_url, tmp_path)
    async with controller(db_url) as c, httpx.AsyncClient(base_url=c.base_url) as http:
        await approve_filed(c, http)
        ready = await http.get("/readyz")
        assert "link pool" not in ready.json()["problems"]
    async with (
        controller(db_url, jurisdiction="indiana") as c,
        httpx.AsyncClient(base_url=c.base_url) as http,
    ):
        rt = c.service.runtime
        assert rt.memory.inoperable == {}
        before = rt.memory.states["pool"]
        ready = await http.get("/readyz")
        assert ready.status_code == 503
        problem = ready.json()["problems"]["link pool"]
        assert problem.startswith("not lawful under Indiana: level 2 (Major) is capped")
        assert f"({CAPPED})" in problem and "file a levels change" in problem
        assert "level 4 (Mini) is a mystery level" in problem
        p = Readings(c.service.clock.now_us)
        await rt.readings.apply([p.of(t, 0, 0) for t in ("T1", "D1")])
        await rt.readings.apply([p.of("T1", 10, 1)])
        after = rt.memory.states["pool"]
        assert after.level_configs == before.level_configs
        assert after.meter_units > before.meter_units
    listed = await cli("links", "list", db_url=db_url, law="indiana")
    assert listed.splitlines()[1].split("\t")[-1].startswith("NO: level 2 (Major) is capped")


async def test_a_new_link_filed_again_over_the_api_is_held_to_indiana(
    db_url: str, tmp_path: Path
) -> None:
    """A link of 1% shown and 59% hidden, made and filed where hidden shares count, rejected;
    filed again over the API under Indiana: refused, its jackpot growing by 1% a credit."""
    lv, pt = _files(tmp_path, HIDDEN_FUNDED)
    await cli(
        "links", "create", "--location", "pit 1", "--id", "pool", "--game", "caribbean_stud", "--levels", str(lv),
        "--paytable", str(pt), "--table", "T1", db_url=db_url,
    )  # fmt: skip
    async with (
        controller(db_url, jurisdiction="indiana") as c,
        httpx.AsyncClient(base_url=c.base_url) as http,
    ):
        agent = await signed_in(c, Role.COMMISSION_AGENT)
        [filed] = (await http.get("/api/v1/submissions?status=filed", headers=agent)).json()
        rejected = await http.post(
            f"/api/v1/submissions/{filed['submission_id']}/reject",
            json={"reason": "the jackpot grows by 1% a credit"},
            headers=agent,
        )
        assert rejected.status_code == 200, rejected.text
        sup = await signed_in(c, Role.SUPERVISOR)
        answer = await http.post(
            "/api/v1/submissions", json={"link_id": "pool", "kind": "new_link"}, headers=sup
        )
        assert answer.status_code == 409, answer.text
        detail = answer.json()["detail"]
        assert "rate of progression 1% is outside 60% to 100%" in detail
        assert "a hidden share funds the next reset and does not count" in detail
        assert f"({SHOWN})" in detail
