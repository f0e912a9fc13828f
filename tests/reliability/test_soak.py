"""The soak, short: half a simulated day of a ten-table floor (7,200 rounds) through the real
poller and service on PostgreSQL; memory and tasks stable, the meter exact, the ledger whole,
the reconciliation balanced. The thirty days of twenty tables: python -m tests.reliability.soak"""

from __future__ import annotations

import pytest

from tests.reliability.soak import ROUNDS_PER_TABLE_DAY, run_soak


@pytest.fixture
def db_kind() -> str:
    return "postgres"


async def test_half_a_day_of_ten_tables_stays_exact_and_stable(db_url: str) -> None:
    progress: list[str] = []
    report = await run_soak(db_url, days=0.5, tables=10, rate=50, say=progress.append)
    told = "\n".join(progress + report.lines())
    print(told)
    assert report.rounds >= ROUNDS_PER_TABLE_DAY * 10 // 2, told
    assert len(report.samples) >= 9, told
    assert report.checks.comparison is not None and report.checks.comparison.ok, told
    assert report.ok, told
