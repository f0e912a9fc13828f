"""The ``progressive`` command as a user runs it: a real process against a real database."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text

from controller.core.ledger import seal_hash
from controller.storage.database import make_engine
from controller.storage.models import TableRow
from controller.storage.store import LedgerStore
from tests.app.helpers import progressive
from tests.controller.permissive_law import KEY as PERMISSIVE_KEY
from tests.controller.storage.helpers import Poller, drop_guards, make_link, runtime


async def play(store: LedgerStore) -> None:
    """A short history: baselines, contributions, a royal flush, its reset, more play."""
    await make_link(store)
    rt = await runtime(store)
    p = Poller()
    await rt.readings.apply([p.reading("t1", 0), p.reading("t2", 0)])  # seq 2, 3
    for n in range(1, 6):  # seq 4..13
        await rt.readings.apply([p.reading("t1", 40 * n), p.reading("t2", 10 * n)])
    await rt.readings.apply([p.royal("t1", 200, seq=1)])  # award + reset: seq 14, 15
    await rt.readings.apply([p.reading("t2", 70)])  # seq 16


async def test_verify_says_whole_for_untouched_history(store: LedgerStore, db_url: str) -> None:
    await play(store)
    code, out, err = await progressive("ledger", "verify", db_url=db_url)
    assert code == 0, err
    assert "link stud: 16 entries whole" in out
    assert "ledger whole: 16 entries in 1 links" in out


async def _tamper(store: LedgerStore, *statements: str) -> None:
    async with store.engine.begin() as conn:
        await drop_guards(conn)
        for sql in statements:
            await conn.execute(text(sql))


TAMPERING = {
    "amount edited": (
        [
            "UPDATE meter_entries SET delta_units = delta_units + 10000, "
            "meter_after_units = meter_after_units + 10000 WHERE seq = 6"
        ],
        "entry 6",
    ),
    "explanation edited": (
        ["UPDATE meter_entries SET explanation = 'nothing to see' WHERE seq = 14"],
        "entry 14: the seal does not match",
    ),
    "middle entry deleted": (["DELETE FROM meter_entries WHERE seq = 9"], "entry 9 missing"),
    "last entry deleted": (["DELETE FROM meter_entries WHERE seq = 16"], "entry 16 missing"),
    "reduction relabelled": (
        ["UPDATE meter_entries SET kind = 'contribution' WHERE seq = 14"],
        "entry 14: a reduction of kind 'contribution' without a stated reason",
    ),
    "meter of the link edited": (
        ["UPDATE links SET meter_units = meter_units + 1000000"],
        "the link shows meter",
    ),
    "hit inserted with no award": (
        [
            "INSERT INTO hits (hit_id, link_id, table_id, seat, hand, round, source, status, "
            "award_cents, paid_from, settlement_group, settlement_order, policy, at_us) VALUES "
            "('t2#99', 'stud', 't2', 1, 'ROYAL_FLUSH', 1, 'table', 'awarded', 500000, 'meter', "
            "'g', 0, 'split', 1)"
        ],
        "hit t2#99 was paid from the meter but has no award entry",
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPERING))
async def test_verify_catches_each_kind_of_tampering(
    case: str, store: LedgerStore, db_url: str
) -> None:
    await play(store)
    statements, expected = TAMPERING[case]
    await _tamper(store, *statements)
    code, out, err = await progressive("ledger", "verify", db_url=db_url)
    assert code == 1, out
    assert "link stud" in err and expected in err, err
    assert "ledger NOT whole" in err


async def test_verify_catches_an_inserted_entry_resealed_without_the_key(
    store: LedgerStore, db_url: str
) -> None:
    """Someone who re-chains the hashes still lacks the key: the first forged seal is found."""
    await play(store)
    async with store.engine.begin() as conn:
        await drop_guards(conn)
        rows = (
            await conn.execute(
                text(
                    "SELECT link_id, seq, at_us, kind, meter_before_units, delta_units, meter_after_units, "
                    "table_id, hit_id, anomaly_id, correction_id, explanation, details, prev_hash, hash "
                    "FROM meter_entries ORDER BY seq"
                )
            )
        ).all()
        await conn.execute(text("DELETE FROM meter_entries"))
        forged_key = b"guessed key, not the real one"
        prev = "0" * 64
        meter = 0
        for seq, r in enumerate(rows, start=1):
            delta = r.delta_units + (5_000_000 if r.seq == 8 else 0)  # an extra $5 slipped in
            row = [
                r.link_id,
                seq,
                r.at_us,
                r.kind,
                meter,
                delta,
                meter + delta,
                r.table_id,
                r.hit_id,
                r.anomaly_id,
                r.correction_id,
                r.explanation,
                r.details,
                prev,
            ]
            h = seal_hash(forged_key, row)
            await conn.execute(
                text(
                    "INSERT INTO meter_entries VALUES (:a,:b,:c,:d,:e,:f,:g,:h,:i,:j,:k,:l,:m,:n,:o)"
                ),
                dict(zip("abcdefghijklmno", [*row, h], strict=True)),
            )
            prev, meter = h, meter + delta
        await conn.execute(
            text("UPDATE links SET meter_units = :m, last_hash = :h"), {"m": meter, "h": prev}
        )
    code, _, err = await progressive("ledger", "verify", db_url=db_url)
    assert code == 1
    assert "link stud, entry 1: the seal does not match" in err


async def test_verify_without_the_key_explains_how_to_provide_it(
    store: LedgerStore, db_url: str, tmp_path: Path
) -> None:
    await play(store)
    code, _, err = await progressive("ledger", "verify", db_url=db_url, cwd=tmp_path, key=False)
    assert code == 1
    assert "no ledger key" in err and "PROGRESSIVE_LEDGER_KEY " in err
    # Both ways of giving it: the key itself, or the file that holds it.
    assert "PROGRESSIVE_LEDGER_KEY_FILE" in err and "progressive-ledger.key" in err


async def test_export_history_hits_and_reductions(
    store: LedgerStore, db_url: str, tmp_path: Path
) -> None:
    await play(store)
    period = ["--since", "2026-01-01", "--until", "2026-01-02"]
    code, out, err = await progressive("export", "history", *period, db_url=db_url)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [int(r["seq"]) for r in rows] == list(range(1, 17))
    assert rows[-1]["meter_after_units"] == str(
        int(rows[-2]["meter_after_units"]) + int(rows[-1]["delta_units"])
    )
    target = tmp_path / "hits.json"
    code, _, err = await progressive(
        "export", "hits", *period, "--format", "json", "-o", str(target), db_url=db_url
    )
    assert code == 0, err
    doc = json.loads(target.read_text())
    assert [h["hand"] for h in doc["rows"]] == ["ROYAL_FLUSH"]
    assert "1 hits rows" in err
    code, out, _ = await progressive(
        "export", "reductions", *period, "--format", "json", db_url=db_url
    )
    reductions = json.loads(out)["rows"]
    assert (
        len(reductions) == 1
        and reductions[0]["kind"] == "award"
        and reductions[0]["hit_id"] == "t1#1"
    )
    # A period before any play is empty, not an error; a reversed one is refused clearly.
    code, out, _ = await progressive(
        "export", "history", "--since", "2025-01-01", "--until", "2025-02-01", db_url=db_url
    )
    assert code == 0 and out.strip() == ",".join(next(csv.reader(io.StringIO(out))))
    code, _, err = await progressive(
        "export", "hits", "--since", "2026-02-01", "--until", "2026-01-01", db_url=db_url
    )
    assert code != 0 and "the period is empty" in err


async def test_db_upgrade_creates_the_key_and_links_create_parses_operator_input(
    db_kind: str, tmp_path: Path, db_url: str
) -> None:
    code, out, err = await progressive("db", "upgrade", db_url=db_url, cwd=tmp_path, key=False)
    assert code == 0, err
    key_file = tmp_path / "progressive-ledger.key"
    assert key_file.exists() and oct(key_file.stat().st_mode & 0o777) == "0o600"
    env_args = ("--id", "lir", "--game", "let_it_ride_bonus", "--reset", "$0")
    code, _, err = await progressive(
        "links",
        "create",
        "--location",
        "pit 1",
        *env_args,
        "--rate",
        "100.01%",
        "--table",
        "T1",
        db_url=db_url,
        cwd=tmp_path,
        key=False,
    )
    assert code == 2 and "68 IAC 10-1-1.1(c)" in err
    code, _, err = await progressive(
        "links",
        "create",
        "--location",
        "pit 1",
        *env_args,
        "--rate",
        "75%",
        "--table",
        "T1:$5",
        db_url=db_url,
        cwd=tmp_path,
        key=False,
    )
    assert code == 2 and "68 IAC 10-7-5(b)" in err
    # 68 IAC 10-7-5(e): the Let It Ride bonus is a fixed-pay link, with no rate to give.
    code, _, err = await progressive(
        "links", "create", "--location", "pit 1", *env_args, "--rate", "75%", "--table", "T1",
        db_url=db_url, cwd=tmp_path, key=False,
    )  # fmt: skip
    assert code == 2 and "a fixed-pay link has no meter" in err and "68 IAC 10-7-5(e)" in err
    code, out, err = await progressive(
        "links", "create", "--location", "pit 1", "--id", "stud", "--game", "caribbean_stud", "--rate", "75%",
        "--reset", "$0", "--table", "T1", "--table", "T2:$1.00",
        db_url=db_url, cwd=tmp_path, key=False,
    )  # fmt: skip
    assert code == 0, err
    assert "filed with the commission as submission sub-" in out  # 68 IAC 10-1-3(c)
    code, out, _ = await progressive("links", "list", db_url=db_url, cwd=tmp_path, key=False)
    header, line = out.splitlines()
    assert header.split("\t")[:4] == ["LINK", "STATE", "GAMES", "METER"]
    assert (
        line
        == "stud\tAWAITING APPROVAL\tCaribbean Stud Poker\t$0.00\t75%\t$0.00\t2\tclassic\t-\tyes"
    )


async def test_links_recover_brings_back_a_link_whose_counters_were_edited(
    store: LedgerStore, db_url: str
) -> None:
    await play(store)
    await _tamper(store, "UPDATE table_counters SET credits = 0 WHERE table_id = 't2'")
    code, out, err = await progressive("links", "list", db_url=db_url)
    assert code == 0, err
    assert "INOPERABLE: table t2" in out
    code, out, err = await progressive(
        "links", "recover", "stud", "--reason", "edited", "--by", "ann", "--approved-by", "ann",
        db_url=db_url,
    )  # fmt: skip
    assert code != 0 and "second person" in err
    code, out, err = await progressive(
        "links", "recover", "stud", "--reason", "counters edited", "--by", "ann",
        "--approved-by", "bob", db_url=db_url,
    )  # fmt: skip
    assert code == 0, err
    assert "found table t2" in out and "recovered" in out
    code, out, err = await progressive("ledger", "verify", db_url=db_url)
    assert code == 0, err
    code, out, err = await progressive("links", "list", db_url=db_url)
    assert "INOPERABLE" not in out


async def test_text_typed_on_the_command_line_follows_the_text_rules(
    store: LedgerStore, db_url: str
) -> None:
    await make_link(store)
    base = (
        "links",
        "create",
        "--location",
        "pit 1",
        "--game",
        "caribbean_stud",
        "--rate",
        "80%",
        "--reset",
        "$1,000",
    )
    for args, problem in (
        (("--id", "st\u202eud2", "--table", "T9"), "U+202E RIGHT-TO-LEFT OVERRIDE"),
        (("--id", "stud 2", "--table", "T9"), "'stud 2' is not a valid id"),
        (("--id", "stud2", "--table", "T\u200b9"), "U+200B ZERO WIDTH SPACE"),
        (("--id", "stud2", "--name", "Stud\rbank", "--table", "T9"), "U+000D CARRIAGE RETURN"),
    ):
        code, _, err = await progressive(*base, *args, db_url=db_url)
        assert code == 2 and problem in err, err
    code, _, err = await progressive(
        "links", "recover", "stud", "--reason", "\r=1+1", "--by", "pat",
        "--approved-by", "sam\u2066", db_url=db_url,
    )  # fmt: skip
    assert code == 2 and "U+000D CARRIAGE RETURN" in err, err
    code, _, err = await progressive("display-tokens", "create", "pit\x1b[2J", db_url=db_url)
    assert code == 2 and "U+001B" in err, err


LEVELS_FILE = [
    {"name": "Grand", "reset": "$10,000", "share": "40%", "hidden": "10%"},
    {"name": "Major", "reset": "$1,000", "share": "20%", "limit": "$2,000",
     "above_limit": "overflow"},
    {"name": "Mini", "reset": "$10", "share": "10%", "mystery_floor": "$10.01",
     "mystery_ceiling": "$20"},
]  # fmt: skip
PAYTABLE_FILE = [
    {"hand": "ROYAL_FLUSH", "pays": "100%", "level": 1},
    {"hand": "STRAIGHT_FLUSH", "pays": "100%", "level": 2, "envy": "$25"},
    {"hand": "FLUSH", "pays": "$50"},
    {"game": "caribbean_draw", "hand": "ROYAL_FLUSH", "pays": "50%", "level": 1},
]

PERMISSIVE: dict[str, Any] = {
    "env": {"PROGRESSIVE_JURISDICTION": PERMISSIVE_KEY},
    "module": "tests.controller.permissive_cli",
}


async def test_links_create_reads_levels_and_paytable_lines_with_their_units(
    tmp_path: Path, db_url: str
) -> None:
    # Limits and a mystery level: shapes Indiana forbids (68 IAC 10-1-5(d)), read here under
    # the test jurisdiction that allows every shape.
    levels, lines = tmp_path / "levels.json", tmp_path / "paytable.json"
    lines.write_text(json.dumps(PAYTABLE_FILE))
    base = ("links", "create", "--location", "pit 1", "--id", "pool", "--game", "caribbean_stud", "--table", "T1",
            "--table", "D1:$5:caribbean_draw", "--paytable", str(lines), "--levels", str(levels))  # fmt: skip
    bare = [*LEVELS_FILE[:2], {**LEVELS_FILE[2], "reset": "10"}]
    levels.write_text(json.dumps(bare))
    code, _, err = await progressive(*base, db_url=db_url, **PERMISSIVE)
    assert code == 2 and "level 3 (Mini): reset '10' needs its unit" in err, err
    assert "$1,234.56" in err  # the form to use
    too_much = [{**LEVELS_FILE[0], "share": "70%"}, *LEVELS_FILE[1:]]
    levels.write_text(json.dumps(too_much))
    code, _, err = await progressive(*base, db_url=db_url, **PERMISSIVE)
    assert code == 2 and "68 IAC 10-1-1.1(c)" in err and "Grand 70% + 10% hidden" in err, err
    levels.write_text(json.dumps(LEVELS_FILE))
    code, _, err = await progressive(*base, "--rate", "80%", db_url=db_url, **PERMISSIVE)
    assert code == 2 and "not both" in err, err
    code, out, err = await progressive(*base, db_url=db_url, **PERMISSIVE)
    assert code == 0, err
    assert "link pool: Caribbean Stud Poker, Caribbean Draw Poker, 3 levels, rate 80%" in out
    assert "filed with the commission as submission sub-" in out
    code, out, err = await progressive("links", "list", db_url=db_url, **PERMISSIVE)
    assert code == 0 and "pool\tAWAITING APPROVAL\t" in out, err


async def test_a_fixed_pay_paytable_may_not_pay_from_a_meter(tmp_path: Path, db_url: str) -> None:
    lines = tmp_path / "paytable.json"
    lines.write_text(json.dumps([{"hand": "ROYAL_FLUSH", "pays": "100%"}]))
    code, _, err = await progressive(
        "links", "create", "--location", "pit 1", "--id", "fp", "--game", "caribbean_stud", "--fixed-pay",
        "--paytable", str(lines), "--table", "T1", db_url=db_url,
    )  # fmt: skip
    assert code == 2 and "68 IAC 10-7-5(e)" in err and "royal flush line" in err, err


async def test_a_let_it_ride_link_is_created_as_a_fixed_pay_link(db_url: str) -> None:
    code, out, err = await progressive(
        "links", "create", "--location", "pit 1", "--id", "lir", "--game", "let_it_ride_bonus", "--table", "T1",
        db_url=db_url,
    )  # fmt: skip
    assert code == 0, err
    assert "fixed-pay link: no meter" in out
    code, out, err = await progressive("links", "show", "lir", db_url=db_url)
    assert "fixed-pay link: no meter" in out, err


async def test_links_create_gives_every_tables_location(db_url: str) -> None:
    """68 IAC 10-1-1.1(e)(2): a new link's filing gives the location of its tables; without
    --location nothing is created."""
    base = ("links", "create", "--id", "loc", "--game", "caribbean_stud", "--rate", "80%",
            "--reset", "$1,000", "--table", "L1", "--table", "L2")  # fmt: skip
    code, _, err = await progressive(*base, db_url=db_url)
    assert code != 0 and "68 IAC 10-1-1.1(e)(2)" in err and "--location" in err, err
    code, _, err = await progressive(
        *base, "--location", "pit 1", "--location", "pit 2", "--location", "pit 3", db_url=db_url
    )
    assert code != 0 and "3 locations for 2 tables" in err, err
    code, out, err = await progressive("links", "list", db_url=db_url)
    assert "loc" not in out.split(), out
    code, out, err = await progressive(
        *base, "--location", "pit 3, north", "--location", "pit 4", db_url=db_url
    )
    assert code == 0, err
    engine = make_engine(db_url)
    try:
        async with engine.connect() as conn:
            rows = (await conn.execute(select(TableRow.table_id, TableRow.location))).all()
    finally:
        await engine.dispose()
    assert sorted(map(tuple, rows)) == [("L1", "pit 3, north"), ("L2", "pit 4")]


async def test_a_table_already_on_a_link_is_refused_in_one_line(db_url: str) -> None:
    """A table plays on one link: a new link naming a table another link has is refused with
    both named, and nothing of the new link is written."""
    one = ("links", "create", "--location", "pit 1", "--id", "one", "--game", "caribbean_stud",
           "--rate", "80%", "--reset", "$1,000", "--table", "T1")  # fmt: skip
    code, _, err = await progressive(*one, db_url=db_url)
    assert code == 0, err
    two = ("links", "create", "--location", "pit 2", "--location", "pit 3", "--id", "two",
           "--game", "caribbean_stud", "--rate", "80%", "--reset", "$1,000",
           "--table", "T2", "--table", "T1")  # fmt: skip
    code, out, err = await progressive(*two, db_url=db_url)
    assert code == 1, (out, err)
    assert "table 'T1' already plays on link 'one'" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    code, out, _ = await progressive("links", "list", db_url=db_url)
    assert "two" not in out.split(), out


async def test_compacted_history_verifies_through_its_blocks_seals(
    store: LedgerStore, db_url: str
) -> None:
    await play(store)
    code, out, err = await progressive("ledger", "compact", db_url=db_url)
    assert code == 0, err
    assert "11 entries of closed gaming days moved into 1 blocks" in out, out
    code, out, err = await progressive("ledger", "verify", db_url=db_url)
    assert code == 0, err
    assert "ledger whole: 16 entries in 1 links" in out
    assert "11 entries checked through the seals of the blocks that hold them" in out
    code, out, err = await progressive("ledger", "verify", "--every-seal", db_url=db_url)
    assert code == 0, err
    assert "ledger whole: 16 entries in 1 links" in out and "seals of the blocks" not in out
    # A block's seal edited: named, with the block's entries.
    await _tamper(store, "UPDATE meter_blocks SET seal = runs")
    code, out, err = await progressive("ledger", "verify", db_url=db_url)
    assert code == 1 and "the seal of the block of entries" in err, err
