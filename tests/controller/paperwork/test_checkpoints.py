"""Signed checkpoints on both databases: history taken away is named, by ``ledger verify``
and by the controller refusing to start; the checkpoint file and exports checked offline.

Tampering is done as someone with database access but neither key: the history triggers
dropped (``drop_guards``), rows deleted, the link row set back so the chain looks whole."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, insert, select, text

from controller.core.ledger import ENTRY_COLUMNS, Checkpoint, seal_hash
from controller.paperwork.checkpoints import (
    load_private_key,
    load_public_key,
    make_key_pair,
    read_checkpoints,
    sign_line,
)
from controller.paperwork.export import ExportKind, export, verify_export
from controller.runtime.anchoring import BehindCheckpoint, Checkpointer
from controller.runtime.links import LinkRuntime
from controller.storage.models import Base
from controller.storage.store import LedgerStore
from controller.storage.verify import VerifyReport, verify_ledger
from tests.app.helpers import progressive
from tests.conftest import KEY, T0
from tests.controller.storage.helpers import Poller, drop_guards, make_link, runtime


class Floor:
    """One link played by a runtime whose commits are checkpointed into ``tmp``."""

    def __init__(self, store: LedgerStore, tmp: Path) -> None:
        self.store = store
        self.tmp = tmp
        if not (tmp / "checkpoint-signing.key").exists():
            make_key_pair(tmp)
        self.key = load_private_key(tmp / "checkpoint-signing.key")
        self.public = load_public_key(tmp / "checkpoint-signing.pub")
        self.file = tmp / "checkpoints.jsonl"
        self.p = Poller()
        self.rt: LinkRuntime | None = None
        self.cp: Checkpointer | None = None

    async def open(self) -> Checkpointer:
        self.cp = Checkpointer(self.key, self.file, interval_s=3600)
        await self.cp.open(self.store)
        self.rt = await runtime(self.store)
        return self.cp

    async def play(self, rounds: int, start: int = 0) -> None:
        assert self.rt is not None
        for n in range(start + 1, start + rounds + 1):
            await self.rt.readings.apply(
                [self.p.reading("t1", 40 * n), self.p.reading("t2", 10 * n)]
            )

    async def verify(self, *, signed: bool = True) -> VerifyReport:
        cps = read_checkpoints(self.file, self.public)
        assert not cps.problems, cps.problems
        return await verify_ledger(
            self.store.engine, KEY, checkpoints=cps.checkpoints if signed else ()
        )

    async def close(self) -> None:
        if self.cp is not None:
            await self.cp.stop()


async def head(store: LedgerStore) -> tuple[int, str, int]:
    return (await store.chain_heads())["stud"]


async def state_rows(store: LedgerStore) -> dict[str, list[dict[str, Any]]]:
    """A copy of the rows a link resumes from, seals and all, as an attacker would keep."""
    async with store.engine.connect() as conn:
        return {
            name: [dict(r._mapping) for r in await conn.execute(text(f"SELECT * FROM {name}"))]
            for name in ("links", "table_counters")
        }


async def rewind(
    store: LedgerStore,
    to: tuple[int, str, int],
    state: dict[str, list[dict[str, Any]]],
    *extra: str,
) -> None:
    """Delete every entry after ``to`` and put back the link's and tables' rows as they were
    then (``state``), seals included: the stored state and the chain agree again."""
    seq = to[0]
    async with store.engine.begin() as conn:
        await drop_guards(conn)
        for sql in extra:
            await conn.execute(text(sql))
        await conn.execute(
            text(f"DELETE FROM meter_entries WHERE link_id = 'stud' AND seq > {seq}")
        )
        for name, key in (("links", "link_id"), ("table_counters", "table_id")):
            for row in state[name]:
                columns = ", ".join(f"{c} = :{c}" for c in row if c != key)
                await conn.execute(text(f"UPDATE {name} SET {columns} WHERE {key} = :{key}"), row)


async def started(store: LedgerStore, tmp: Path) -> Floor:
    await make_link(store)
    f = Floor(store, tmp)
    await f.open()
    await f.rt.readings.apply([f.p.reading("t1", 0), f.p.reading("t2", 0)])  # type: ignore[union-attr]
    return f


# ----------------------------------------------------------------------------- taken away


async def test_truncated_tail_with_link_row_rewound_is_named(
    store: LedgerStore, tmp_path: Path
) -> None:
    f = await started(store, tmp_path)
    await f.play(3)
    before = await head(store)
    saved = await state_rows(store)
    await f.play(3, start=3)
    (cp,) = [c for c in await f.cp.flush()]  # type: ignore[union-attr]
    assert cp.seq == (await head(store))[0] > before[0]
    await f.close()

    await rewind(store, before, saved)
    assert (await f.verify(signed=False)).ok  # the chain alone looks whole
    report = await f.verify()
    assert not report.ok
    (problem,) = report.problems
    assert f"chain ends at entry {before[0]} but the checkpoint (signed at" in str(
        problem
    ) and f"covers entry {cp.seq}: entries truncated or database rolled back" in str(problem)
    assert problem.link_id == "stud"
    with pytest.raises(BehindCheckpoint, match=rf"link stud: chain ends at entry {before[0]}"):
        await Checkpointer(f.key, f.file).open(store)


async def test_removed_jackpot_at_the_tail_is_named(store: LedgerStore, tmp_path: Path) -> None:
    f = await started(store, tmp_path)
    cp = f.cp
    assert cp is not None and f.rt is not None
    cp.start()  # signs the heads now, then again only at a jackpot (the interval is an hour)
    await f.play(3)
    for _ in range(100):
        if cp.written:
            break
        await asyncio.sleep(0.01)
    before = await head(store)
    saved = await state_rows(store)
    written = cp.written
    await f.rt.readings.apply([f.p.royal("t1", 200, seq=1)])  # award and reset entries
    after = await head(store)
    for _ in range(200):
        if cp.last["stud"].seq == after[0]:
            break
        await asyncio.sleep(0.01)
    assert cp.written > written and cp.last["stud"].seq == after[0], "no checkpoint at the jackpot"
    await f.close()

    await rewind(store, before, saved, "DELETE FROM hits")
    async with store.engine.connect() as conn:
        kinds = (await conn.execute(text("SELECT kind FROM meter_entries"))).scalars().all()
    assert "award" not in kinds
    assert (await f.verify(signed=False)).ok
    report = await f.verify()
    assert [str(p) for p in report.problems] == [
        f"link stud: chain ends at entry {before[0]} but the checkpoint (signed at "
        f"{_at(cp.last['stud'].at_us)}, checkpoint line {_line_of(f.file, after[0])}) covers "
        f"entry {after[0]}: entries truncated or database rolled back"
    ]


def _at(at_us: int) -> str:
    from controller.periods import at_text

    return at_text(at_us)


def _line_of(path: Path, seq: int) -> int:
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if json.loads(line)["seq"] == seq:
            return n
    raise AssertionError(seq)


async def _snapshot(store: LedgerStore) -> dict[str, list[dict[str, Any]]]:
    async with store.engine.connect() as conn:
        return {
            t.name: [dict(r._mapping) for r in await conn.execute(select(t))]
            for t in Base.metadata.sorted_tables
        }


async def _put_back(store: LedgerStore, snap: dict[str, list[dict[str, Any]]]) -> None:
    async with store.engine.begin() as conn:
        await drop_guards(conn)
        if conn.dialect.name == "postgresql":
            await conn.execute(text("SET session_replication_role = replica"))
        for t in reversed(Base.metadata.sorted_tables):
            await conn.execute(delete(t))
        for t in Base.metadata.sorted_tables:
            if snap[t.name]:
                await conn.execute(insert(t), snap[t.name])


async def test_database_rolled_back_to_an_earlier_copy_is_named_and_refused(
    store: LedgerStore, tmp_path: Path, db_kind: str
) -> None:
    f = await started(store, tmp_path)
    await f.play(2)
    await f.cp.flush()  # type: ignore[union-attr]
    db_file = Path(store.engine.url.database or "")
    if db_kind == "sqlite":
        await store.engine.dispose()
        shutil.copy(db_file, tmp_path / "earlier.db")
    else:
        snap = await _snapshot(store)
    old_head = await head(store)
    await f.play(4, start=2)  # play on; the tables are credited
    (cp,) = await f.cp.flush()  # type: ignore[union-attr]
    await f.close()

    if db_kind == "sqlite":
        await store.engine.dispose()
        shutil.copy(tmp_path / "earlier.db", db_file)
    else:
        await _put_back(store, snap)
    assert await head(store) == old_head
    assert (await f.verify(signed=False)).ok
    report = await f.verify()
    assert [p.link_id for p in report.problems] == ["stud"]
    assert f"chain ends at entry {old_head[0]} but the checkpoint (signed at " in str(
        report.problems[0]
    )
    assert f"covers entry {cp.seq}: entries truncated or database rolled back" in str(
        report.problems[0]
    )
    with pytest.raises(
        BehindCheckpoint, match=r"refusing to start.*link stud: chain ends at entry"
    ):
        await Checkpointer(f.key, f.file).open(store)


async def test_history_rewritten_under_a_checkpoint_is_named(
    store: LedgerStore, tmp_path: Path
) -> None:
    """An entry rewritten after it was signed and sealed again by someone holding the ledger
    key (an insider): the chain is whole, the checkpoint still holds the old seal."""
    f = await started(store, tmp_path)
    await f.play(3)
    (cp,) = await f.cp.flush()  # type: ignore[union-attr]
    await f.close()
    async with store.engine.begin() as conn:
        await drop_guards(conn)
        cols = ", ".join(ENTRY_COLUMNS)
        row = list(
            (
                await conn.execute(text(f"SELECT {cols} FROM meter_entries WHERE seq = {cp.seq}"))
            ).one()
        )
        row[11] = row[11] + " (rewritten)"
        new_seal = seal_hash(KEY, row[:14])
        await conn.execute(
            text("UPDATE meter_entries SET explanation = :e, hash = :h WHERE seq = :s"),
            {"e": row[11], "h": new_seal, "s": cp.seq},
        )
        await conn.execute(text("UPDATE links SET last_hash = :h"), {"h": new_seal})
    # With the key the insider seals the link's stored state again too.
    insider = LedgerStore(store.engine, KEY)
    states, _ = await insider.load_checked(["stud"])
    last_seq, last_hash = insider._heads["stud"]
    resealed = insider._seal_link(states["stud"], last_seq, last_hash)
    async with store.engine.begin() as conn:
        await conn.execute(text("UPDATE links SET state_seal = :s"), {"s": resealed})
    assert (await f.verify(signed=False)).ok  # re-sealed with the key: the chain is whole
    report = await f.verify()
    assert any(
        f"entry {cp.seq}'s seal differs from the signed checkpoint" in str(p)
        and "history rewritten" in str(p)
        for p in report.problems
    ), report.problems
    with pytest.raises(BehindCheckpoint, match=f"entry {cp.seq}'s seal differs"):
        await Checkpointer(f.key, f.file).open(store)


async def test_a_link_the_database_no_longer_has_is_named(
    store: LedgerStore, tmp_path: Path
) -> None:
    f = await started(store, tmp_path)
    await f.cp.flush()  # type: ignore[union-attr]
    await f.close()
    async with store.engine.begin() as conn:
        await drop_guards(conn)
        if conn.dialect.name == "postgresql":
            await conn.execute(text("SET session_replication_role = replica"))
        for t in ("meter_entries", "table_counters", "tables", "submissions", "links"):
            await conn.execute(text(f"DELETE FROM {t}"))
    report = await f.verify()
    assert [p.link_id for p in report.problems] == ["stud"]
    assert "the database no longer has it" in str(report.problems[0])


# ----------------------------------------------------------------------------- the file


async def test_edited_line_and_line_of_another_key_are_named(
    store: LedgerStore, tmp_path: Path
) -> None:
    f = await started(store, tmp_path)
    await f.play(1)
    await f.cp.flush()  # type: ignore[union-attr]
    await f.play(1, start=1)
    await f.cp.flush()  # type: ignore[union-attr]
    await f.close()
    lines = f.file.read_text().splitlines()
    assert len(lines) == 2
    edited = json.loads(lines[0])
    edited["meter_units"] += 1_000_000
    other = tmp_path / "other"
    make_key_pair(other)
    forged = sign_line(
        load_private_key(other / "checkpoint-signing.key"),
        Checkpoint(
            **{k: v for k, v in json.loads(lines[1]).items() if k not in ("v", "key_id", "sig")}
        ),
    )
    f.file.write_text("\n".join([json.dumps(edited), lines[1], forged]) + "\n")
    read = read_checkpoints(f.file, f.public)
    assert [sc.line for sc in read.checkpoints] == [2]
    assert read.problems == [
        f"{f.file} line 1: the signature does not match the line's contents (edited or forged)",
        f"{f.file} line 3: signed with another key (key id "
        f"{json.loads(forged)['key_id']!r}, the public key given is "
        f"{json.loads(lines[1])['key_id']})",
    ]
    with pytest.raises(Exception, match="line 1: the signature does not match"):
        await Checkpointer(f.key, f.file).open(store)


async def test_verify_command_names_the_edited_line(
    store: LedgerStore, tmp_path: Path, db_url: str
) -> None:
    f = await started(store, tmp_path)
    await f.play(2)
    await f.cp.flush()  # type: ignore[union-attr]
    await f.close()
    args = (
        "ledger",
        "verify",
        "--checkpoints",
        str(f.file),
        "--public-key",
        str(tmp_path / "checkpoint-signing.pub"),
    )
    code, out, err = await progressive(*args, db_url=db_url)
    assert code == 0, err
    assert "checked against 1 signed checkpoints" in out
    line = json.loads(f.file.read_text())
    line["meter_units"] += 1
    f.file.write_text(json.dumps(line) + "\n")
    code, out, err = await progressive(*args, db_url=db_url)
    assert code == 1
    assert "line 1: the signature does not match the line's contents" in err


# ----------------------------------------------------------------------------- exports


async def _history_export(store: LedgerStore) -> dict[str, Any]:
    buf = io.StringIO()
    await export(
        store.engine, buf, kind=ExportKind.HISTORY, fmt="json", since_us=0, until_us=T0 * 2
    )
    return json.loads(buf.getvalue())  # type: ignore[no-any-return]


async def test_export_verified_offline_and_an_edited_one_refused(
    store: LedgerStore, tmp_path: Path
) -> None:
    f = await started(store, tmp_path)
    await f.play(3)
    await f.cp.flush()  # type: ignore[union-attr]
    await f.rt.readings.apply([f.p.royal("t1", 200, seq=1)])  # type: ignore[union-attr]
    await f.play(2, start=5)
    await f.close()  # the last checkpoint at the clean stop
    signed = read_checkpoints(f.file, f.public).checkpoints
    assert len(signed) == 2
    data = await _history_export(store)
    good = verify_export(data, signed)
    assert good.ok and good.anchored == good.entries == len(data["rows"]), good.problems

    edited = json.loads(json.dumps(data))
    row = next(r for r in edited["rows"] if r["kind"] == "award")
    row["explanation"] = row["explanation"] + " (half)"
    bad = verify_export(edited, signed)
    assert not bad.ok
    assert any("entries" in p and "differ from what the checkpoint" in p for p in bad.problems)

    removed = json.loads(json.dumps(data))
    del removed["rows"][4]
    assert not verify_export(removed, signed).ok

    (tmp_path / "export.json").write_text(json.dumps(data))
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    args = ("--checkpoints", str(f.file), "--public-key", str(tmp_path / "checkpoint-signing.pub"))
    code, out, err = await progressive(
        "ledger", "verify-export", str(tmp_path / "export.json"), *args, key=False
    )
    assert code == 0, err
    assert "export verified against the signed checkpoints" in out
    code, out, err = await progressive(
        "ledger", "verify-export", str(tmp_path / "edited.json"), *args, key=False
    )
    assert code == 1 and "differ from what the checkpoint" in err


async def test_run_refuses_without_a_checkpoint_key(tmp_path: Path) -> None:
    (tmp_path / "floor.toml").write_text(
        '[[bus]]\nname = "b"\nkind = "tcp"\nhost = "127.0.0.1"\n\n'
        '[[link]]\nid = "L"\ngame = "caribbean_stud"\nrate = "80%"\nreset = "$10,000"\n'
        '[[link.table]]\nid = "T1"\nbus = "b"\nunit = 1\n'
    )
    code, _, err = await progressive("run", "--config", str(tmp_path / "floor.toml"))
    assert code != 0 and "no checkpoint signing key" in err


# ----------------------------------------------------------------------------- copies elsewhere


async def test_each_line_is_copied_to_syslog_and_posted(store: LedgerStore, tmp_path: Path) -> None:
    import http.server
    import socket
    import threading

    from controller.runtime.anchoring import Sinks

    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(5)
    posted: list[bytes] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            posted.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    serving = threading.Thread(target=server.serve_forever, name="sink-server")
    serving.start()
    try:
        await make_link(store)
        f = Floor(store, tmp_path)
        sinks = Sinks(
            syslog=f"127.0.0.1:{udp.getsockname()[1]}",
            url=f"http://127.0.0.1:{server.server_address[1]}/checkpoints",
        )
        f.cp = Checkpointer(f.key, f.file, sinks=sinks)
        await f.cp.open(store)
        (cp,) = await f.cp.flush()
        await f.close()  # waits for the copies under way
        (line,) = f.file.read_text().splitlines()
        assert json.loads(line)["seq"] == cp.seq
        assert posted == [line.encode()]
        assert line in udp.recv(65536).decode()  # sent before close() returned
    finally:
        server.shutdown()
        serving.join()
        server.server_close()
        udp.close()
