"""The fault soak, short: eighteen seconds of faults, every kind at least once (the serial port
refusing its settings, a TCP gateway and the RS-485 line switched off, the database's
connections cut and refused, the last two at once), on PostgreSQL. No table silent, no leak
beyond the tolerance, the meter exact, the ledger whole. The hours of it:
python -m tests.reliability.soak_faults"""

from __future__ import annotations

import pytest

from tests.conftest import PG_DSN
from tests.reliability.database_faults import PostgresRestart
from tests.reliability.fault_schedule import (
    DATABASE_DOWN,
    GATEWAY_OFF,
    KINDS,
    LINE,
    SERIAL_REFUSED,
    Fault,
)
from tests.reliability.soak_faults import run_fault_soak
from tests.serial_line import pty_refuses_parity

SCHEDULE = (
    Fault(SERIAL_REFUSED, LINE, 0, 5),
    Fault(GATEWAY_OFF, "caribbean_draw", 1, 6),
    Fault(GATEWAY_OFF, LINE, 8, 10),  # the line's tables vanish, and go on failing through
    Fault(DATABASE_DOWN, "database", 9, 6),  # ... the database's absence
)


async def test_no_table_stops_silently_through_every_fault(
    own_database: tuple[str, str],
) -> None:
    if not pty_refuses_parity():
        pytest.skip("this system's serial ports do not refuse settings as Linux's do")
    name, url = own_database
    progress: list[str] = []
    report = await run_fault_soak(
        url,
        PostgresRestart(PG_DSN, name),
        run_s=18,
        schedule=SCHEDULE,
        tables=3,
        warm_up_s=4,
        sample_s=2,
        say=progress.append,
    )
    told = "\n".join(progress + report.lines())
    print(told)
    assert not report.kinds_missing and {f.fault.kind for f in report.faults} == set(KINDS)
    assert report.refusals > 0 and report.connections_cut > 0, told
    # Each table a fault took away was shown offline with the reason, and came back.
    assert all(i.shown_s is not None or i.masked for i in report.faults), told
    assert all(i.back_s is not None or i.masked for i in report.faults), told
    assert report.silences == [], told
    assert report.leaks == [], told
    assert report.checks.comparison is not None and report.checks.comparison.ok, told
    assert report.checks.ledger_problems == [] and report.checks.ledger_entries > 0, told
    assert report.ok, told
