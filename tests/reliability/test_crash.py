"""The crash harness, short: the controller process killed five times, two of them right
after a forced jackpot hand is dealt; not a unit or a hit may be off at the end. The fifty
kills: python -m tests.reliability.crash --kills 50"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.reliability.crash import run_crash

KILLS = 5


@pytest.fixture
def db_kind() -> str:
    return "postgres"


async def test_killed_five_times_no_cent_and_no_hit_is_off(db_url: str, tmp_path: Path) -> None:
    seed = random.SystemRandom().randrange(1 << 31)
    progress: list[str] = []
    report = await run_crash(db_url, tmp_path, kills=KILLS, seed=seed, say=progress.append)
    told = "\n".join([f"seed {seed}", *progress, *report.lines()])
    print(told)
    assert report.kills == KILLS, told
    assert report.kills_during_hits >= 2, told
    assert report.comparison is not None, told
    assert report.comparison.hits_dealt >= report.kills_during_hits, told
    assert report.comparison.units_off == 0, told
    assert report.ok, told
