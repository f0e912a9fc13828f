"""``progressive run --config FILE`` checks the whole file before anything is written.

A malformed file ends the command with exit status 2, every problem named with its place, no
traceback, and not one row written: no link, table, history entry, filing or document.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.roles import Role
from controller.rules.filing import Proposal, SubmissionKind, date_text
from controller.runtime.clock import FixedClock
from controller.runtime.config import parse_floor_config
from controller.runtime.links import LinkRuntime
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
from tests.controller.storage.helpers import Poller, make_link

K = SubmissionKind
AGENT = Role.COMMISSION_AGENT

GOOD_TABLE = '  [[link.table]]\n  id = "CS-1"\n  bus = "gw"\n  unit = 1\n  location = "pit 1"\n'


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
            '  location = "pit 1"\n'
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
                 "table": [{"id": "T2", "bus": "gw", "unit": 2, "location": "pit 1"}]},
                {"id": "taken", "game": "caribbean_stud", "rate": "80%", "reset": "$500",
                 "table": [{"id": "T1", "bus": "gw", "unit": 1, "location": "pit 1"}]},
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
        code, out, err = await progressive(
            "links", "create", "--location", "pit 1", *argv, db_url=db_url
        )
        assert code == 2 and message in err, (case, code, out, err)
        assert "Traceback" not in err, case
    assert await rows(store) == dict.fromkeys(await rows(store), 0)


# --------------------------------------------------------------------- after approved changes


def _classic_floor(rate: str = "70%", reset: str = "$500") -> Any:
    return parse_floor_config(
        {
            "bus": [{"name": "gw", "kind": "tcp", "host": "127.0.0.1"}],
            "link": [
                {"id": "stud", "game": "caribbean_stud", "rate": rate, "reset": reset,
                 "table": [{"id": t, "bus": "gw", "unit": u, "location": "pit 1"}
                           for u, t in enumerate(("T1", "T2", "T3"), start=1)]},
            ],
        }
    )  # fmt: skip


async def _restart(store: LedgerStore, floor: Any) -> tuple[LinkRuntime, list[str]]:
    """The controller started again on ``floor``: the path ``progressive run`` takes."""
    notes: list[str] = []
    rt = await open_floor(
        LedgerStore(store.engine, store.key), floor, FixedClock(T0), demonstration=True,
        notes=notes,
    )  # fmt: skip
    return rt, notes


async def test_a_restart_keeps_the_approved_rate_and_reset_and_says_whose_they_are(
    store: LedgerStore, db_url: str, tmp_path: Path
) -> None:
    """The file still gives the link's starting rate (70 %) and reset amount ($500); the
    commission approved 85 % and then $750, each applied at a jackpot reset (68 IAC
    10-1-1.1(d)). The controller starts on the database's terms, saying which approval each
    comes from; a file asking for what was never approved is refused with what to do."""
    rt = await open_floor(store, _classic_floor(), FixedClock(T0), demonstration=True)
    filing = FilingDesk(rt, demonstration=True)
    review = ReviewDesk(filing)
    await review.approve_new_links(reviewer="agent", role=AGENT)
    poll = Poller()
    await rt.readings.apply([poll.reading(t, 0) for t in ("T1", "T2", "T3")])
    await rt.readings.apply([poll.royal("T1", 1, seq=1)])  # the rate may now change
    rate = await filing.file_change(
        link_id="stud", proposal=Proposal(kind=K.RATE_CHANGE, rate_bp=8500), filed_by="sup"
    )
    await review.approve(rate.submission_id, reviewer="agent", role=AGENT)

    # Approved, not yet applied: the file may already say 85 %; 70 % plays until the reset.
    _, notes = await _restart(store, _classic_floor(rate="85%"))
    assert len(notes) == 1 and "the file's rate 85% was approved on " in notes[0], notes
    assert f"(submission {rate.submission_id}) and takes effect at the link's next" in notes[0]
    assert "until then rate 70%" in notes[0]

    await rt.readings.apply([poll.royal("T2", 1, seq=1)])  # applied at this reset
    reset = await filing.file_change(
        link_id="stud", proposal=Proposal(kind=K.RESET_CHANGE, reset_cents=750_00),
        filed_by="sup",
    )  # fmt: skip
    await review.approve(reset.submission_id, reviewer="agent", role=AGENT)
    await rt.readings.apply([poll.royal("T3", 1, seq=1)])
    played = rt.memory.states["stud"]
    assert (played.rate_bp, played.reset_cents) == (8500, 750_00)

    again, notes = await _restart(store, _classic_floor())
    assert again.memory.states["stud"] == played
    approved_on = f"approved on {date_text(T0)} by agent"
    assert notes == [
        f"link stud: rate 85% from the database, not the file's rate 70%: {approved_on} "
        f"(submission {rate.submission_id})",
        f"link stud: reset amount $750.00 from the database, not the file's reset amount "
        f"$500.00: {approved_on} (submission {reset.submission_id})",
    ]
    _, notes = await _restart(store, _classic_floor(rate="85%", reset="$750"))
    assert notes == []

    # Never approved: refused in one line, nothing written.
    before = await rows(store)
    with pytest.raises(FloorMismatch) as refused:
        await _restart(store, _classic_floor(rate="90%"))
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("link stud: the file's rate 90% was never approved; the link plays")
    assert "rate 85% (" + approved_on in message
    assert "File the change on /supervisor" in message
    assert "or set the file's rate back to 85%" in message
    assert await rows(store) == before

    # The command: the same refusal, exit status 1, no traceback; `links list` and `links show`
    # say which approval each term comes from.
    path = tmp_path / "floor.toml"
    path.write_text(
        floor_file(rate="90%").replace('id = "CS-1"', 'id = "T1"')
        + '  [[link.table]]\n  id = "T2"\n  bus = "gw"\n  unit = 2\n  location = "pit 1"\n'
        '  [[link.table]]\n  id = "T3"\n  bus = "gw"\n  unit = 3\n  location = "pit 1"\n'
    )
    code, out, err = await progressive(
        "run", "--config", str(path), "--no-checkpoints", "--port", "0", db_url=db_url
    )
    assert code == 1 and "the file's rate 90% was never approved" in err, (code, out, err)
    assert "Traceback" not in err
    code, out, err = await progressive("links", "list", db_url=db_url)
    assert code == 0, err
    header, line = out.splitlines()
    row = dict(zip(header.split("\t"), line.split("\t"), strict=True))
    assert row["APPROVED CHANGES"] == (
        f"rate 85% {approved_on} (submission {rate.submission_id}); "
        f"reset amount $750.00 {approved_on} (submission {reset.submission_id})"
    )
    code, out, err = await progressive("links", "show", "stud", db_url=db_url)
    assert f"approved change in force: rate 85% {approved_on}" in out, out
