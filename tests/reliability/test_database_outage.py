"""PostgreSQL stopped for 60 seconds during play: polling and displays go on (degraded), hits
are held, nothing is lost, ``/readyz`` says not ready meanwhile. The scenario and its checks
are in ``tests.reliability.outage``; run with ``-s`` to see the figures it measures."""

from __future__ import annotations

import pytest

from tests.conftest import IN_CI
from tests.private_pg import available
from tests.reliability.outage import run_outage

OUTAGE_S = 60.0


async def test_a_minute_without_the_database_loses_nothing_and_pays_no_hit_twice() -> None:
    problem = available()
    if problem is not None:
        if IN_CI:
            pytest.fail(f"a private PostgreSQL server is needed: {problem}", pytrace=False)
        pytest.skip(f"a private PostgreSQL server is needed: {problem}")
    figures = await run_outage(OUTAGE_S)
    print("\n" + "\n".join(figures.lines()))
