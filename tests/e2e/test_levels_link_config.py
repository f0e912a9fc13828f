"""A link of levels of two games made from a floor file (``[[link.level]]``,
``[[link.paytable]]``), approved, played until its mystery level hits and a fixed pay with
envy and a level are won; then the controller restarts on the same file: no FloorMismatch,
every meter, the armed trigger and the draws made ready come back exactly."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select

from controller.core.hands import parse_cards
from controller.core.reducer.levels import meters_of
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.runtime.clock import SystemClock
from controller.runtime.config import load_floor_config
from controller.runtime.service import open_floor
from controller.storage.models import HitRow
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from tests.conftest import KEY
from tests.controller.permissive_law import PERMISSIVE, permissive
from tests.e2e.pool import LEVELS, PAYTABLES, ROYAL, H, Readings, until_mystery

FLUSH = parse_cards("2h 5h 8h Jh Kh")


def _toml(value: object) -> str:
    return json.dumps(value)  # a JSON string or number is a TOML one


def floor_file(folder: Path) -> Path:
    """Two tables of Caribbean Stud and one of Caribbean Draw on one link of four levels."""
    text = ['[[bus]]\nname = "gw"\nkind = "tcp"\nhost = "127.0.0.1"\nport = 15020\n']
    text.append('[[link]]\nid = "pool"\nname = "Stud and Draw pool"\ngame = "caribbean_stud"\n')
    for level in LEVELS:
        text.append("  [[link.level]]\n")
        text += [f"  {k} = {_toml(v)}\n" for k, v in level.items()]
    for game, lines in PAYTABLES.items():
        for line in lines:
            text.append(f'  [[link.paytable]]\n  game = "{game}"\n')
            text += [f"  {k} = {_toml(v)}\n" for k, v in line.items()]
    for unit, (tid, game) in enumerate(
        (("T1", "caribbean_stud"), ("T2", "caribbean_stud"), ("D1", "caribbean_draw")), start=1
    ):
        text.append(
            f'  [[link.table]]\n  id = "{tid}"\n  bus = "gw"\n  unit = {unit}\n'
            f'  game = "{game}"\n  denomination = "$1"\n  location = "pit 1"\n'
        )
    path = folder / "floor.toml"
    path.write_text("".join(text))
    return path


async def test_a_link_of_levels_from_a_floor_file_restarts_on_the_same_file(
    store: LedgerStore, tmp_path: Path
) -> None:
    permissive(store)
    path = floor_file(tmp_path)
    rt = await open_floor(store, load_floor_config(path), SystemClock(), demonstration=True)
    review = ReviewDesk(FilingDesk(rt))
    assert await review.approve_new_links(reviewer="agent", role=Role.COMMISSION_AGENT) == ["pool"]
    state = rt.memory.states["pool"]
    assert [lv.config.name for lv in state.levels] == ["Grand", "Major", "Minor", "Mini"]
    assert state.game_of("D1").value == "caribbean_draw" and len(state.games) == 2
    p = Readings(rt.memory.clock.now_us)
    await rt.readings.apply([p.of(t, 0, 0) for t in ("T1", "T2", "D1")])
    await until_mystery(rt, p, "pool", ("T2", "D1"))
    # A flush at T1 ($50 fixed, $5 envy to each other seat with a bet), then a royal flush at
    # the Draw table wins the Grand from its own game's paytable.
    await rt.readings.apply(
        [p.hit("T1", H.FLUSH, FLUSH, seat=3, hit_seq=1,
               bet_seats=frozenset({2, 3}))]
    )  # fmt: skip
    assert not rt.memory.states["pool"].tables["T1"].hit_pending  # under $1,200: paid by the dealer
    await rt.readings.apply([p.hit("D1", H.ROYAL_FLUSH, ROYAL, seat=5, hit_seq=1)])
    won = rt.memory.states["pool"].last_win
    assert won is not None and (won.level, won.table_id, won.seats) == ("L1", "D1", (5,))
    await rt.readings.apply([p.of("T2", 30, 5, seat_credits=(30, 0, 0, 0, 0, 0, 0))])
    played = rt.memory.states["pool"]
    grand, mini = played.levels[0], played.levels[3]
    assert grand.wins == 1 and mini.wins >= 1 and mini.armed is not None and mini.draws
    async with store.engine.connect() as conn:
        envy = (
            await conn.execute(
                select(HitRow.hit_id, HitRow.award_cents).where(HitRow.kind == "envy")
            )
        ).all()
    assert [tuple(e) for e in envy] == [("T1#1/envy2", 5_00)]

    # The controller restarts on the same file, on the database alone.
    again = await open_floor(
        LedgerStore(store.engine, KEY, law=PERMISSIVE), load_floor_config(path), SystemClock(),
        demonstration=True,
    )  # fmt: skip
    assert again.memory.inoperable == {}
    back = again.memory.states["pool"]
    assert back == played
    assert meters_of(back.levels) == meters_of(played.levels)
    assert (back.levels[3].armed, back.levels[3].draws) == (mini.armed, mini.draws)
    report = await verify_ledger(store.engine, KEY)
    assert report.ok, report.problems
