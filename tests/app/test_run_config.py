"""``progressive run --config FILE`` checks the whole file before anything is written.

A malformed file ends the command with exit status 2, every problem named with its place, no
traceback, and not one row written: no link, table, history entry, filing or document.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import func, select

from controller.runtime.clock import FixedClock
from controller.runtime.config import parse_floor_config
from controller.runtime.service import FloorMismatch, open_floor
from controller.storage.models import (
    AuditRow,
    DocumentRow,
    LinkRow,
    MeterEntryRow,
    PaytableRow,
    SubmissionRow,
    TableRow,
)
from controller.storage.store import LedgerStore
from tests.app.helpers import progressive
from tests.conftest import T0
from tests.storage.helpers import make_link

GOOD_TABLE = '  [[link.table]]\n  id = "CS-1"\n  bus = "gw"\n  unit = 1\n'


def floor_file(
    *, bus: str = "", rate: str = "80%", reset: str = "$500", table: str = "", more: str = ""
) -> str:
    """A small floor with one setting changed or added in the bus, link or table."""
    return (
        f'[[bus]]\nname = "gw"\nkind = "tcp"\nhost = "127.0.0.1"\n{bus}\n'
        f'[[link]]\nid = "stud"\ngame = "caribbean_stud"\nrate = "{rate}"\nreset = "{reset}"\n'
        f"{GOOD_TABLE}{table}\n{more}"
    )


# What each file gets wrong, and the place and rule its refusal must name.
MALFORMED = {
    "unknown profile": (
        floor_file(table='  profile = "no-such-table"\n'),
        "link #1 'stud', table #1 'CS-1', profile: no bundled profile is named 'no-such-table'",
    ),
    "port 70000": (floor_file(bus="port = 70000"), "bus #1 'gw', port: must be 1 to 65535"),
    "a duplicate link id": (
        floor_file(
            more='[[link]]\nid = "stud"\ngame = "caribbean_draw"\nrate = "80%"\n'
            'reset = "$500"\n  [[link.table]]\n  id = "CD-1"\n  bus = "gw"\n  unit = 2\n'
        ),
        "link #2 'stud', id: 'stud' is already the id of link #1 'stud'",
    ),
    "a huge reset": (
        floor_file(reset="$100,000,000,000,000,000"),
        "link #1 'stud', reset: must be $0.00 to $42,949,672.95",
    ),
    "not TOML": (floor_file(bus="port = 502\nport = 503"), "not valid TOML"),
    # Amounts and rates carry their unit in a floor file as on the command line.
    "a rate without its %": (
        floor_file(rate="80"),
        "link #1 'stud', rate: '80' needs its unit: write a percentage like 82.5%",
    ),
    "a reset without its $": (
        floor_file(reset="500"),
        "link #1 'stud', reset: '500' needs its unit: write an amount like $1,234.56",
    ),
    "a denomination without its $": (
        floor_file(table='  denomination = "5"\n'),
        "table #1 'CS-1', denomination: '5' needs its unit: write an amount like $1,234.56",
    ),
}


async def rows(store: LedgerStore) -> dict[str, int]:
    async with store.engine.connect() as conn:
        return {
            model.__tablename__: int(await conn.scalar(select(func.count()).select_from(model)))
            for model in (
                LinkRow, TableRow, PaytableRow, MeterEntryRow, SubmissionRow, DocumentRow,
                AuditRow,
            )
        }  # fmt: skip


@pytest.mark.parametrize("case", sorted(MALFORMED))
async def test_a_malformed_file_writes_nothing_and_names_the_place(
    case: str, store: LedgerStore, db_url: str, tmp_path: Path
) -> None:
    content, message = MALFORMED[case]
    path = tmp_path / "floor.toml"
    path.write_text(content)
    before = await rows(store)
    async with asyncio.timeout(120):
        code, out, err = await progressive(
            "run", "--config", str(path), "--no-checkpoints", "--port", "0", db_url=db_url
        )
    assert code == 2, (code, out, err)
    assert str(path) in err and message in err, err
    assert "nothing was written" in err
    assert "Traceback" not in err + out
    assert await rows(store) == before == dict.fromkeys(before, 0)


async def test_a_file_at_odds_with_the_database_writes_nothing(store: LedgerStore) -> None:
    """A new link whose table is already another link's in the database is refused before
    any link of the file is created, even one listed before it."""
    await make_link(store, "old", ("T1",))
    before = await rows(store)
    floor = parse_floor_config(
        {
            "bus": [{"name": "gw", "kind": "tcp", "host": "127.0.0.1"}],
            "link": [
                {"id": "fresh", "game": "caribbean_stud", "rate": "80%", "reset": "$500",
                 "table": [{"id": "T2", "bus": "gw", "unit": 2}]},
                {"id": "taken", "game": "caribbean_stud", "rate": "80%", "reset": "$500",
                 "table": [{"id": "T1", "bus": "gw", "unit": 1}]},
            ],
        }
    )  # fmt: skip
    with pytest.raises(FloorMismatch, match="table T1 is a table of link old in the database"):
        await open_floor(LedgerStore(store.engine, store.key), floor, FixedClock(T0))
    assert await rows(store) == before


LINKS_CREATE_REFUSED = {
    "a huge reset": (("--reset", "$100,000,000,000,000,000"), "$42,949,672.95"),
    "a huge denomination": (("--table", "T1:$1,000,000"), "outside $0.01 to $100.00"),
    "an id with a bidi override": (("--id", "stud\u202e"), "may not contain U+202E"),
    "credits per seat": (("--max-credits-per-seat", "0"), "0 is not in the range 1<=x<=1000"),
    "a bare rate": (("--rate", "80"), "'80' needs its unit: write a rate like 82.5%"),
    "a bare reset": (("--reset", "500"), "'500' needs its unit: write an amount like $1,234.56"),
    "a bare denomination": (("--table", "T1:1"), "table T1: denomination '1' needs its unit"),
}


async def test_links_create_refuses_what_a_configuration_file_would(
    db_url: str, store: LedgerStore
) -> None:
    base = {"--id": "stud", "--game": "caribbean_stud", "--rate": "80%", "--reset": "$500"}
    for case, ((option, value), message) in LINKS_CREATE_REFUSED.items():
        args = {**base, option: value}
        argv = [part for pair in args.items() for part in pair]
        if option != "--table":
            argv += ["--table", "T1"]
        code, out, err = await progressive("links", "create", *argv, db_url=db_url)
        assert code == 2 and message in err, (case, code, out, err)
        assert "Traceback" not in err, case
    assert await rows(store) == dict.fromkeys(await rows(store), 0)
