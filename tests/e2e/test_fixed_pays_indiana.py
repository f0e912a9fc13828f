"""The fixed-pay side bets under Indiana at every place a paytable enters, and over a link
already in the database: a Let It Ride bonus royal of $20,000 is refused (68 IAC 10-7-5(e):
"shall receive ten thousand dollars"), Super Sevens envy (10-12-3(e)) and a $2 Super Sevens
table (10-12-3(b)) too; each refusal names its clause. Where the law sets no amounts the same
terms are accepted; a link made there is reported under Indiana, never changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from controller.core.games import Game, default_paytable
from controller.roles import Role
from controller.runtime.clock import SystemClock
from controller.runtime.config import load_floor_config
from controller.runtime.floor_approvals import FloorMismatch
from controller.runtime.service import open_floor
from controller.storage.models import LinkRow
from controller.storage.store import LedgerStore
from tests.controller.permissive_law import permissive
from tests.e2e.pool import approve_filed, cli, controller, run_cli, signed_in

AMOUNTS = "68 IAC 10-7-5(e)"
FIRST_SEVEN = "68 IAC 10-12-3(e)"
BET = "68 IAC 10-12-3(b)"


def lines(game: Game, **changed: dict[str, Any]) -> list[dict[str, Any]]:
    """The lines of ``game``'s default paytable as a file writes them, some changed."""
    out = []
    for line in default_paytable(game).lines:
        d: dict[str, Any] = {"hand": line.hand.name, "pays": f"${(line.fixed_cents or 0) // 100}"}
        out.append({**d, **changed.get(line.hand.name, {})})
    return out


TWENTY = lines(Game.LET_IT_RIDE_BONUS, ROYAL_FLUSH={"pays": "$20,000"})
ENVY = lines(Game.SUPER_SEVENS, THREE_SUITED_SEVENS={"envy": "$5"})
# (game, its paytable's lines, the table, the clause, what the refusal says)
REFUSED = [
    ("let_it_ride_bonus", TWENTY, "T1", AMOUNTS, "pays a royal flush $20,000.00"),
    ("super_sevens", ENVY, "T1", FIRST_SEVEN, "three suited sevens line pays $5.00 envy"),
    ("super_sevens", lines(Game.SUPER_SEVENS), "T1:$2", BET, "bet is at most $1.00"),
]
IDS = ["royal-20000", "sevens-envy", "sevens-2-dollars"]


async def _create(
    db_url: str, folder: Path, game: str, paytable: list[dict[str, Any]], table: str, law: str
) -> tuple[int, str, str]:
    pt = folder / "paytable.json"
    pt.write_text(json.dumps(paytable))
    return await run_cli(
        "links", "create", "--location", "pit 1", "--id", "bonus", "--game", game, "--fixed-pay", "--paytable",
        str(pt), "--table", table, db_url=db_url, law=law,
    )  # fmt: skip


@pytest.mark.parametrize(("game", "paytable", "table", "clause", "named"), REFUSED, ids=IDS)
async def test_links_create_refuses_other_fixed_pays_under_indiana(
    db_url: str,
    tmp_path: Path,
    game: str,
    paytable: list[dict[str, Any]],
    table: str,
    clause: str,
    named: str,
) -> None:
    code, _, err = await _create(db_url, tmp_path, game, paytable, table, "indiana")
    assert code == 2, err
    assert named in err and f"({clause})" in err, err
    assert "no links yet" in (await run_cli("links", "list", db_url=db_url, law="indiana"))[2]
    if clause != BET:
        # Where the law sets no amounts, the same command makes the link.
        code, _, err = await _create(db_url, tmp_path, game, paytable, table, "new_jersey")
        assert code == 0, err


def _floor(folder: Path, game: str, paytable: list[dict[str, Any]], denomination: str) -> Path:
    text = ['[[bus]]\nname = "gw"\nkind = "tcp"\nhost = "127.0.0.1"\nport = 15020\n']
    text.append(f'[[link]]\nid = "bonus"\ngame = "{game}"\nfixed_pay = true\n')
    for line in paytable:
        text.append("  [[link.paytable]]\n")
        text += [f"  {k} = {json.dumps(v)}\n" for k, v in line.items()]
    text.append(
        f'  [[link.table]]\n  id = "T1"\n  bus = "gw"\n  unit = 1\n  location = "pit 1"\n'
        f'  denomination = "{denomination}"\n'
    )
    path = folder / "floor.toml"
    path.write_text("".join(text))
    return path


@pytest.mark.parametrize(
    ("game", "paytable", "clause", "named"),
    [(g, pt, c, n) for g, pt, _, c, n in REFUSED[:2]],
    ids=IDS[:2],
)
async def test_a_floor_file_of_other_fixed_pays_is_refused_before_anything_is_written(
    store: LedgerStore,
    tmp_path: Path,
    game: str,
    paytable: list[dict[str, Any]],
    clause: str,
    named: str,
) -> None:
    path = _floor(tmp_path, game, paytable, "$1")
    with pytest.raises(FloorMismatch) as caught:
        await open_floor(store, load_floor_config(path), SystemClock(), demonstration=True)
    text = str(caught.value)
    assert text.startswith("link bonus: under Indiana: ") and named in text
    assert f"({clause})" in text and "nothing was written" in text
    async with store.engine.connect() as conn:
        assert await conn.scalar(select(func.count()).select_from(LinkRow)) == 0
    rt = await open_floor(
        permissive(store), load_floor_config(path), SystemClock(), demonstration=True
    )
    assert "bonus" in rt.memory.states


async def test_a_two_dollar_super_sevens_table_in_a_floor_file_is_refused(
    store: LedgerStore, tmp_path: Path
) -> None:
    path = _floor(tmp_path, "super_sevens", lines(Game.SUPER_SEVENS), "$2")
    with pytest.raises(Exception, match=r"at most \$1\.00") as caught:
        load_floor_config(path)
    assert f"({BET})" in str(caught.value)
    half = _floor(tmp_path, "super_sevens", lines(Game.SUPER_SEVENS), "$0.50")
    rt = await open_floor(store, load_floor_config(half), SystemClock(), demonstration=True)
    assert rt.memory.states["bonus"].tables["T1"].config.denomination_cents == 50


async def test_a_paytable_change_over_the_api_is_held_to_indiana(
    db_url: str, tmp_path: Path
) -> None:
    """A lawful Let It Ride bonus link: a paytable change paying a $20,000 royal is refused
    with its clause (409), as its dry run says; an envy line too."""
    code, _, err = await _create(
        db_url, tmp_path, "let_it_ride_bonus", lines(Game.LET_IT_RIDE_BONUS), "T1", "indiana"
    )
    assert code == 0, err
    async with (
        controller(db_url, jurisdiction="indiana") as c,
        httpx.AsyncClient(base_url=c.base_url) as http,
    ):
        await approve_filed(c, http)
        sup = await signed_in(c, Role.SUPERVISOR)
        royal = [line.to_dict() for line in default_paytable(Game.LET_IT_RIDE_BONUS).lines]
        for changed, clause, named in (
            ({"fixed_cents": 20_000_00}, AMOUNTS, "pays a royal flush $20,000.00"),
            ({"envy_cents": 100_00}, "68 IAC 10-7-5(d)", "pays $100.00 envy"),
        ):
            body = {
                "link_id": "bonus",
                "kind": "paytable_change",
                "paytable": [{**royal[0], **changed}, *royal[1:]],
            }
            check = await http.post("/api/v1/submissions/check", json=body, headers=sup)
            assert check.status_code == 200 and not check.json()["ok"], check.text
            answer = await http.post("/api/v1/submissions", json=body, headers=sup)
            assert answer.status_code == 409, answer.text
            detail = answer.json()["detail"]
            assert named in detail and f"({clause})" in detail
            assert check.json()["problems"][0]["message"] in detail


async def test_a_link_made_where_the_law_sets_no_amounts_is_refused_approval_and_reported(
    db_url: str, tmp_path: Path
) -> None:
    """Made and filed where the law sets no amounts, then run under Indiana: the commission
    agent's approval is refused with the clause; /readyz and ``links list`` name the problem
    and the way into line; the paytable is never changed."""
    code, _, err = await _create(db_url, tmp_path, "let_it_ride_bonus", TWENTY, "T1", "new_jersey")
    assert code == 0, err
    async with (
        controller(db_url, jurisdiction="indiana") as c,
        httpx.AsyncClient(base_url=c.base_url) as http,
    ):
        agent = await signed_in(c, Role.COMMISSION_AGENT)
        [filed] = (await http.get("/api/v1/submissions?status=filed", headers=agent)).json()
        answer = await http.post(
            f"/api/v1/submissions/{filed['submission_id']}/approve", headers=agent
        )
        assert answer.status_code == 409, answer.text
        assert f"({AMOUNTS})" in answer.json()["detail"]
        ready = await http.get("/readyz")
        assert ready.status_code == 503
        problem = ready.json()["problems"]["link bonus"]
        assert problem.startswith("not lawful under Indiana: the Let It Ride bonus paytable pays")
        assert f"({AMOUNTS})" in problem and "file a paytable change" in problem
        state = c.service.runtime.memory.states["bonus"]
        assert state.paytable.lines[0].fixed_cents == 20_000_00
    listed = await cli("links", "list", db_url=db_url, law="indiana")
    lawful = listed.splitlines()[1].split("\t")[-1]
    assert lawful.startswith("NO: the Let It Ride bonus paytable pays a royal flush $20,000.00")
