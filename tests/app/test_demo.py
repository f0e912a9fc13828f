"""``progressive demo`` as a newcomer runs it: every jackpot shape on one floor (under New
Jersey, ``--jurisdiction new-jersey``), hits of every kind, a whole ledger, and a resume that
picks up every meter of every level exactly; Indiana's floor by default, with no level limit,
no mystery and no envy; and the manifest its controller checks itself against, which it makes,
loudly, when there is none."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from app.demo import demo_manifest, demo_settings
from app.demo_floor import EVERY_SHAPE, demo_floor
from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.core.reducer import EntryKind, LinkState
from controller.core.reducer.levels import meters_of, mystery_commitment
from controller.manifest import MANIFEST_NAME, make_manifest, verify_install
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.rules.filing import Proposal, SubmissionKind, date_text
from controller.runtime.service import FloorService
from controller.settings import load_ledger_key
from controller.storage.database import make_engine
from controller.storage.models import HitRow, LedgerMetaRow, MeterEntryRow
from controller.storage.store import LedgerStore
from tests.app.helpers import progressive
from tests.e2e.pool import Readings

README = Path(__file__).resolve().parents[2] / "README.md"

# The first run deals slowly enough that every reading sees the round a hit was dealt in, so
# the envy of a forced royal flush or straight flush is paid to the seats that bet; it forces
# a jackpot every 2 s. The second deals ten rounds a second per table, so the mystery Mini
# (trigger $50 to $80, 10 % of each wager) is reached within seconds, forcing nothing.
COMMON = ("demo", "--seed", "11", "--port", "0", "--technician-after", "2")
NJ = ("--jurisdiction", "new-jersey")
FIRST = (*COMMON, *NJ, "--duration", "10", "--round-seconds", "1", "--jackpot-every", "2")
SECOND = (*COMMON, *NJ, "--duration", "20", "--round-seconds", "0.1", "--jackpot-every", "60")


async def _states(
    folder: Path, jurisdiction: str | None = None
) -> tuple[dict[str, LinkState], dict[str, int]]:
    """Every link as the database holds it, read under the demo's jurisdiction, and each
    link's last entry number."""
    settings = demo_settings(folder, jurisdiction).model_copy(update={"ledger_key": None})
    engine = make_engine(settings.database_url)
    try:
        store = LedgerStore(engine, load_ledger_key(settings), law=settings.law)
        states = {lid: await store.load_link(lid) for lid in await store.link_ids()}
        async with engine.connect() as conn:
            rows = await conn.execute(
                select(MeterEntryRow.link_id, func.max(MeterEntryRow.seq)).group_by(
                    MeterEntryRow.link_id
                )
            )
            last = {link_id: seq for link_id, seq in rows}
    finally:
        await engine.dispose()
    return states, last


async def _entries(url: str, *where: Any) -> list[MeterEntryRow]:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            query = select(MeterEntryRow).where(*where).order_by(MeterEntryRow.seq)
            return list((await conn.execute(query)).all())  # type: ignore[arg-type]
    finally:
        await engine.dispose()


async def _count(url: str, *where: Any, of: Any = MeterEntryRow) -> int:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return int(await conn.scalar(select(func.count()).select_from(of).where(*where)) or 0)
    finally:
        await engine.dispose()


async def test_demo_shows_every_jackpot_shape_and_resumes_exactly(tmp_path: Path) -> None:
    code, out, _ = await progressive(*FIRST, cwd=tmp_path, key=False)
    assert code == 0, out
    assert "15 simulated tables on 4 links" in out
    assert "  jurisdiction:    New Jersey (N.J.A.C. 13:69E): every jackpot shape" in out
    for link_id in ("caribbean", "paigow", "lir", "sevens"):
        assert f"/display/{link_id}" in out
    assert "/tech" in out and "/audit" in out
    assert f"    {'ROLE':<17} {'USER':<17} PASSWORD" in out  # the user list has its heads
    for role in ("technician", "auditor", "commission_agent", "admin"):
        assert f"    {role:<17} {role:<17} " in out  # one user per role, password shown
    # A second admin, technician and supervisor: every two-person step from the pages alone.
    for name, role in (("admin-2", "admin"), ("technician-2", "technician"),
                       ("supervisor-2", "supervisor")):  # fmt: skip
        assert f"    {role:<17} {name:<17} " in out
    assert "royal flush (Grand)" in out and "caribbean: Grand won, meter reset to $10,000.00" in out
    assert "ENVY     caribbean/" in out
    # The board: every level with its amount, the Mini's ceiling, the fixed-pay links.
    for level in ("Grand", "Major", "Minor", "Mini"):
        assert f"\n    {level} " in out
    assert "must hit by $80.00" in out
    assert "lir        Let It Ride bonus: fixed pays" in out
    assert "sevens     Super Sevens: fixed pays" in out
    assert "stopped; every committed entry is in the database" in out
    # The demo runs in demonstration mode, the one way its links play at once, and says so
    # with the law it runs under (asserted above).
    assert "DEMONSTRATION MODE (PROGRESSIVE_DEMONSTRATION)" in out

    # Run in a checkout, the demo leaves nothing git would offer to commit: its keys, its
    # database and its checkpoints are ignored.
    made, kept = not_ignored(tmp_path)
    assert {"progressive-demo.key", "checkpoint-signing.key", "progressive-demo.db"} <= made
    assert kept == []

    url = f"sqlite+aiosqlite:///{tmp_path / 'progressive-demo.db'}"
    code, _, err = await progressive("ledger", "verify", db_url=url, cwd=tmp_path, key=False)
    assert code == 1 and "no ledger key" in err  # the demo keeps its key in its own file

    states, last = await _states(tmp_path, "new-jersey")
    assert set(states) == {"caribbean", "paigow", "lir", "sevens"}
    # Each link's first sealed entry says it was opened in demonstration mode, and the link
    # read back from the database is marked so; the ledger's meta says since when.
    for link_id, state in states.items():
        assert state.demonstration, link_id
        (opened,) = await _entries(
            url, MeterEntryRow.link_id == link_id, MeterEntryRow.kind == "link_opened"
        )
        assert json.loads(opened.details)["demonstration"] is True
        assert "demonstration mode" in opened.explanation
    assert await _count(url, LedgerMetaRow.name == "demonstration_since", of=LedgerMetaRow) == 1
    pool = states["caribbean"]
    assert [lv.config.name for lv in pool.levels] == ["Grand", "Major", "Minor", "Mini"]
    shares = [(c.rate_bp, c.reserve_bp, c.limit_cents) for c in pool.level_configs]
    assert shares == [
        (4_000, 1_000, None),
        (1_200, 0, 2_500_00),
        (600, 0, 500_00),
        (1_000, 0, None),
    ]
    assert pool.law.key == "new_jersey" and set(pool.games) == {
        Game.CARIBBEAN_STUD,
        Game.CARIBBEAN_DRAW,
    }
    mini = pool.levels[3]
    assert mini.config.mystery is not None and mini.armed is not None
    armed = await _entries(
        url, MeterEntryRow.link_id == "caribbean", MeterEntryRow.kind == "mystery_armed"
    )
    commitment = json.loads(armed[-1].details)["commitment"]
    assert commitment == mini.armed.commitment("caribbean", "L4")
    for fixed in ("lir", "sevens"):
        assert states[fixed].fixed_pay and states[fixed].levels == ()
        assert states[fixed].meter_units == 0
    assert states["paigow"].meter_cents >= 5_000_00
    # Super Sevens and Pai Gow Poker tables are read over register map v2: their hits carry
    # the one to three and the seven cards (the joker as 52) that map v1 cannot.
    floor = demo_floor(
        {name: 1 for name in ("stud", "draw", "paigow", "lir", "sevens")}, EVERY_SHAPE
    )
    for entry in floor.tables:
        is_v2 = entry.config.table_id.startswith(("sevens", "paigow"))
        assert (entry.profile.name == "reference-v2") is is_v2, entry.config.table_id
        assert states[_link(entry.config.table_id)].tables[entry.config.table_id].credits
    for prefix, cards in (("sevens", range(1, 4)), ("paigow", (7,))):
        engine = make_engine(url)
        async with engine.connect() as conn:
            rows = (
                await conn.execute(
                    select(HitRow.cards).where(
                        HitRow.table_id.like(f"{prefix}-%"), HitRow.cards.is_not(None)
                    )
                )
            ).all()
        await engine.dispose()
        assert rows and all(len(r.cards.split(",")) in cards for r in rows), prefix

    won = await _entries(
        url, MeterEntryRow.link_id == "caribbean", MeterEntryRow.kind == "jackpot_reset"
    )
    assert "L1" in {json.loads(e.details)["level"] for e in won}  # the Grand was won
    envy = await _count(url, HitRow.kind == "envy", HitRow.status == "awarded", of=HitRow)
    assert envy >= 1

    # Stopped and started again (dealing faster): the controller resumes from every meter of
    # every level and the Mini's armed trigger; the tables from their committed counters.
    code, out, _ = await progressive(*SECOND, cwd=tmp_path, key=False)
    assert code == 0, out
    for kind in (EntryKind.TABLE_COUNTER_RESET, EntryKind.ANOMALY_HELD):
        assert await _count(url, MeterEntryRow.kind == str(kind)) == 0
    for link_id, state in states.items():
        later = await _entries(
            url, MeterEntryRow.link_id == link_id, MeterEntryRow.seq > last[link_id]
        )
        if link_id in ("lir", "sevens"):
            assert all(e.meter_before_units == 0 and e.delta_units == 0 for e in later)
            continue
        assert later, link_id
        assert later[0].meter_before_units == state.meter_units, link_id
        meters = json.loads(later[0].details).get("meters")
        if meters is not None:
            before = meters_of(state.levels)
            assert {k: v[0] for k, v in meters.items()} == {k: before[k] for k in meters}
    # The Mini hits in the second run with the trigger armed in the first: nothing was drawn
    # again at the restart, and the reveal matches the commitment sealed before play.
    later = await _entries(
        url, MeterEntryRow.link_id == "caribbean", MeterEntryRow.seq > last["caribbean"]
    )
    kinds = [(e.kind, json.loads(e.details)) for e in later]
    first_hit = next(i for i, (k, d) in enumerate(kinds) if k == "award" and "mystery" in d)
    assert all(k != "mystery_armed" for k, _ in kinds[:first_hit])
    reveal = kinds[first_hit][1]["mystery"]
    assert reveal["commitment"] == commitment
    assert (
        mystery_commitment("caribbean", "L4", reveal["trigger_cents"], reveal["salt"]) == commitment
    )
    assert "MYSTERY  caribbean/" in out and "mystery (Mini)" in out

    # The README's commands after the demo, run as written in the demo's folder.
    env, commands = readme_demo_commands()
    assert [c[:2] for c in commands] == [["ledger", "verify"], ["export", "history"]]
    outputs = []
    for args in commands:
        code, out, err = await progressive(*args, cwd=tmp_path, key=False, env=env)
        assert code == 0, (args, err)
        outputs.append(out)
    assert "ledger whole" in outputs[0]
    for link_id in ("caribbean", "paigow", "lir", "sevens"):
        assert f"link {link_id}: " in outputs[0]
        assert f"{link_id}," in outputs[1]  # every link's entries, as CSV

    # The same folder under Indiana, the default: New Jersey's levels are not Indiana's floor,
    # and the demo says what to do before anything plays.
    code, out, err = await progressive(*COMMON, "--duration", "2", cwd=tmp_path, key=False)
    assert code == 1, out
    assert "caribbean (levels of another floor)" in err and "(--jurisdiction)" in err, err


# Indiana's floor, dealt a round a second, a hand forced every 2 s: the Grand, five aces, the
# Major, the Mini and the Minor in turn, each held table released by the demo technician.
INDIANA_RUN = (*COMMON, "--duration", "16", "--round-seconds", "1", "--jackpot-every", "2")


async def test_the_default_demo_runs_indianas_floor(tmp_path: Path) -> None:
    code, out, _ = await progressive(*INDIANA_RUN, cwd=tmp_path, key=False)
    assert code == 0, out
    assert "  jurisdiction:    Indiana (68 IAC 10): levels with no limit" in out
    for level in ("Grand", "Major", "Minor", "Mini"):
        assert f"\n    {level} " in out  # every level on the board
    assert "must hit by" not in out and "MYSTERY" not in out and "ENVY" not in out
    assert "caribbean: Grand won, meter reset to $10,000.00" in out
    assert "lir        Let It Ride bonus: fixed pays" in out

    states, _ = await _states(tmp_path)
    pool = states["caribbean"]
    assert pool.law.key == "indiana"
    assert all(c.limit_cents is None and c.mystery is None for c in pool.level_configs)
    assert sum(c.rate_bp for c in pool.level_configs) == 7_500
    for fixed in ("lir", "sevens"):
        assert states[fixed].fixed_pay and states[fixed].levels == ()
    url = f"sqlite+aiosqlite:///{tmp_path / 'progressive-demo.db'}"
    won = await _entries(
        url, MeterEntryRow.link_id == "caribbean", MeterEntryRow.kind == "jackpot_reset"
    )
    # Every level is won by a hand: the Mini by a full house at Stud.
    assert {json.loads(e.details)["level"] for e in won} >= {"L1", "L2", "L4"}
    assert await _count(url, HitRow.kind == "envy", of=HitRow) == 0
    assert await _count(url, HitRow.kind == "mystery", of=HitRow) == 0


def not_ignored(folder: Path) -> tuple[set[str], list[str]]:
    """The files in ``folder``, and those of them that the checkout's .gitignore would not
    ignore at its top."""
    names = sorted(p.name for p in folder.iterdir())
    found = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        input="\n".join(names) + "\n",
        cwd=README.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.returncode in (0, 1), found.stderr
    return set(names), sorted(set(names) - set(found.stdout.split()))


def readme_demo_commands() -> tuple[dict[str, str], list[list[str]]]:
    """The README's commands for after the demo: the settings its block exports, and each
    ``progressive`` command's arguments (its lines joined where they end in a backslash)."""
    text = README.read_text(encoding="utf-8")
    block = text[text.index("Then, in the same folder") :].split("\n\n")[1]
    lines = block.replace("\\\n", " ").splitlines()
    env: dict[str, str] = {}
    commands: list[list[str]] = []
    for line in lines:
        words = shlex.split(line)
        if words[0] == "export":
            name, _, value = words[1].partition("=")
            env[name] = value
        else:
            assert words[0] == "progressive", line
            commands.append(words[1:])
    return env, commands


def _link(table_id: str) -> str:
    prefix = table_id.split("-")[0]
    return {"stud": "caribbean", "draw": "caribbean"}.get(prefix, prefix)


# Four aces, the joker (52) and two small cards: five aces at Pai Gow Poker.
FIVE_ACES = (48, 49, 50, 51, 52, 0, 5)


async def test_the_demo_starts_again_after_an_approved_rate_change(tmp_path: Path) -> None:
    """Pai Gow's rate filed from 70 % to 85 %, approved by the commission agent, applied at
    the link's next jackpot (68 IAC 10-1-1.1(d)): the demo, whose floor still says 70 %,
    starts again on the approved 85 % and says whose approval that is."""
    code, out, _ = await progressive(
        *COMMON, "--duration", "2", "--jackpot-every", "600", cwd=tmp_path, key=False
    )
    assert code == 0, out
    settings = demo_settings(tmp_path).model_copy(update={"ledger_key": None})
    service = FloorService(settings, retention_schedule=False)
    await service.start()
    try:
        rt = service.runtime
        filing = FilingDesk(rt, demonstration=settings.demonstration)
        state = rt.memory.states["paigow"]
        free = [t for t, ts in sorted(state.tables.items()) if not ts.hit_pending]
        p = Readings(service.clock.now_us)
        p.seq = {t: ts.poll_seq for t, ts in state.tables.items()}
        p.credits = {t: ts.credits or 0 for t, ts in state.tables.items()}
        p.rounds = {t: ts.rounds or 0 for t, ts in state.tables.items()}

        async def five_aces(table_id: str) -> None:
            seq = (state.tables[table_id].last_hit_seq or 0) + 1
            await rt.readings.apply(
                [p.hit(table_id, HandCategory.FIVE_ACES, FIVE_ACES, seat=1, hit_seq=seq)]
            )

        await five_aces(free[0])  # the rate may change once the jackpot is won
        filed = await filing.file_change(
            link_id="paigow",
            proposal=Proposal(kind=SubmissionKind.RATE_CHANGE, rate_bp=8_500),
            filed_by="supervisor",
        )
        approved = await ReviewDesk(filing).approve(
            filed.submission_id, reviewer="commission_agent", role=Role.COMMISSION_AGENT
        )
        await five_aces(free[1])  # applied at this jackpot's reset
        assert rt.memory.states["paigow"].rate_bp == 8_500
    finally:
        await service.stop()
    assert approved.reviewed_at_us is not None

    code, out, err = await progressive(*COMMON, "--duration", "2", cwd=tmp_path, key=False)
    assert code == 0, out + err
    assert (
        "link paigow: rate 85% from the database, not the file's rate 70%: approved on "
        f"{date_text(approved.reviewed_at_us)} by commission_agent "
        f"(submission {filed.submission_id})"
    ) in out, out
    states, _ = await _states(tmp_path)
    assert states["paigow"].rate_bp == 8_500


async def test_a_second_demo_on_a_busy_port_is_refused_before_anything_is_made(
    tmp_path: Path,
) -> None:
    """Another demo serves 127.0.0.1 on the port: refused in one line, exit status 2, and no
    folder, database or key is made."""
    with socket.socket() as serving:
        serving.bind(("127.0.0.1", 0))
        serving.listen()
        port = serving.getsockname()[1]
        code, out, err = await progressive(
            "demo", "--port", str(port), "--folder", str(tmp_path / "second"),
            cwd=tmp_path, key=False,
        )  # fmt: skip
    assert code == 2, (code, out, err)
    assert err.splitlines() == [
        f"Error: 127.0.0.1:{port} is already in use (another progressive demo or controller "
        "serving there?): stop it, or give --port another port; nothing was created"
    ], err
    assert os.listdir(tmp_path) == []


def test_the_demo_makes_its_own_manifest_and_says_so_when_the_install_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PROGRESSIVE_MANIFEST_FILE", raising=False)
    nowhere = tmp_path / "install" / MANIFEST_NAME
    said: list[str] = []
    settings = demo_manifest(demo_settings(tmp_path), tmp_path, said.append, installed=nowhere)
    own = tmp_path / "progressive-demo-manifest.json"
    assert settings.manifest_file == own and verify_install(own).passed
    assert said and all(line.startswith("!! ") for line in said)
    assert f"NO MANIFEST of the installed software at {nowhere}" in said[0]
    assert "progressive self-check --make" in said[-1]
    # The next run checks against it, and says nothing more of it.
    said.clear()
    again = demo_manifest(demo_settings(tmp_path), tmp_path, said.append, installed=nowhere)
    assert again.manifest_file == own and said == []
    # The installation's own manifest, when there is one; the setting's, whatever else.
    installed = make_manifest(tmp_path / "installed.json").path
    other = tmp_path / "other"
    chosen = demo_manifest(demo_settings(other), other, said.append, installed=installed)
    assert chosen.manifest_file == installed and said == []
    monkeypatch.setenv("PROGRESSIVE_MANIFEST_FILE", str(tmp_path / "named.json"))
    named = demo_manifest(demo_settings(other), other, said.append, installed=installed)
    assert named.manifest_file == tmp_path / "named.json" and said == []
