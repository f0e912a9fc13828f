"""``progressive demo`` as a newcomer runs it: play, a jackpot, a whole ledger, a clean resume."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import func, select

from controller.core.reducer import EntryKind
from controller.storage.database import make_engine
from controller.storage.models import HitRow, MeterEntryRow
from tests.app.helpers import progressive


async def test_demo_plays_pays_a_jackpot_and_resumes_exactly(tmp_path: Path) -> None:
    demo = (
        "demo",
        "--duration",
        "8",
        "--round-seconds",
        "0.2",
        "--jackpot-every",
        "3",
        "--seed",
        "11",
        "--port",
        "0",
        "--technician-after",
        "2",
    )
    code, out, _ = await progressive(*demo, cwd=tmp_path, key=False)
    assert code == 0, out
    assert "12 simulated tables on 3 links" in out
    assert "/display/stud" in out and "/tech" in out and "/audit" in out
    for role in ("technician", "auditor", "commission_agent", "admin"):
        assert f"    {role:<17} {role:<17} " in out  # one user per role, password shown
    assert "royal flush" in out and "jackpot won, meter reset" in out
    assert "stopped; every committed entry is in the database" in out

    env_url = f"sqlite+aiosqlite:///{tmp_path / 'progressive-demo.db'}"
    code, _, err = await progressive("ledger", "verify", db_url=env_url, cwd=tmp_path, key=False)
    assert code == 1 and "no ledger key" in err  # the demo keeps its key in its own file
    key_file = {"PROGRESSIVE_LEDGER_KEY_FILE": str(tmp_path / "progressive-demo.key")}
    code, out, err = await progressive(
        "ledger", "verify", db_url=env_url, cwd=tmp_path, key=False, env=key_file
    )
    assert code == 0 and "ledger whole" in out, err

    engine = make_engine(env_url)
    async with engine.connect() as conn:
        jackpots = await conn.scalar(
            select(func.count()).where(MeterEntryRow.kind == str(EntryKind.JACKPOT_RESET))
        )
        meter_hits = await conn.scalar(select(func.count()).where(HitRow.paid_from == "meter"))
        entries_before = await conn.scalar(select(func.count()).select_from(MeterEntryRow))
    assert jackpots >= 1 and meter_hits >= 1

    # Stopped and started again: the simulated tables resume from the committed counters, so
    # the controller sees no counter restart and simply goes on.
    code, out, _ = await progressive(*demo, cwd=tmp_path, key=False)
    assert code == 0, out
    async with engine.connect() as conn:
        restarts = await conn.scalar(
            select(func.count()).where(MeterEntryRow.kind == str(EntryKind.TABLE_COUNTER_RESET))
        )
        anomalies = await conn.scalar(
            select(func.count()).where(MeterEntryRow.kind == str(EntryKind.ANOMALY_HELD))
        )
        entries_after = await conn.scalar(select(func.count()).select_from(MeterEntryRow))
    await engine.dispose()
    assert restarts == 0 and anomalies == 0
    assert entries_after > entries_before
