"""``progressive demo`` as a newcomer runs it: play, a jackpot, a whole ledger, a clean resume."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from sqlalchemy import func, select

from controller.engine import EntryKind
from controller.storage.database import make_engine
from controller.storage.models import HitRow, MeterEntryRow


async def run(*args: str, cwd: Path) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROGRESSIVE_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        *args,
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode()


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
    )
    code, out = await run(*demo, cwd=tmp_path)
    assert code == 0, out
    assert "12 simulated tables on 3 links" in out
    assert "royal flush" in out and "jackpot won, meter reset" in out
    assert "stopped; every committed entry is in the database" in out

    env_url = f"sqlite+aiosqlite:///{tmp_path / 'progressive-demo.db'}"
    code, out = await run("ledger", "verify", "--database-url", env_url, cwd=tmp_path)
    assert code == 1 and "no ledger key" in out  # the demo's key is its own file...
    os.environ["PROGRESSIVE_LEDGER_KEY_FILE"] = str(tmp_path / "progressive-demo.key")
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "app.cli",
            "ledger",
            "verify",
            "--database-url",
            env_url,
            cwd=tmp_path,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        verified, _ = await proc.communicate()
    finally:
        del os.environ["PROGRESSIVE_LEDGER_KEY_FILE"]
    assert proc.returncode == 0, verified.decode()
    assert "ledger whole" in verified.decode()

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
    code, out = await run(*demo, cwd=tmp_path)
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
