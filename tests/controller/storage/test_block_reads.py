"""Every reader of the meter history sees the entries of blocks as it saw their rows, on real
SQLite and PostgreSQL: a history is read, compacted into blocks, and read again, with the
same answers (export bytes, history pages, the meter's chart, reconciliation, game
protection's tallies); the retention purge seals the same manifest over blocks as over rows,
removes blocks whole, and leaves ``ledger verify`` whole; an export streams a block at a
time."""

from __future__ import annotations

import hashlib
import io
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from controller.core.games import Game
from controller.core.ledger import GENESIS, SealedEntry, seal
from controller.core.reducer import EntryKind, MeterEvent
from controller.paperwork import reconciliation, record_views
from controller.paperwork.corrections import CorrectionCategory, Corrections
from controller.paperwork.export import ExportKind, export
from controller.paperwork.retention import run_retention, years_before
from controller.runtime.clock import FixedClock
from controller.runtime.links import LinkRuntime
from controller.storage.blocks import never_blocked, pack
from controller.storage.database import make_engine
from controller.storage.entries import Entries
from controller.storage.models import LedgerAnchorRow, MeterBlockRow, MeterEntryRow
from controller.storage.papers import retention as stored_retention
from controller.storage.papers.reconciliation import opening_units
from controller.storage.protection import ProtectionRecords
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from tests.conftest import KEY, T0, empty_database
from tests.controller.core.levels_history import Play, opening
from tests.controller.storage.helpers import DAY_US, Poller, compact, make_link, table
from tests.controller.storage.test_verify_levels import store_levels_link

SEC = 1_000_000
HOUR = 3_600 * SEC
PDF = b"%PDF-1.4 service report"
# Two periods whose bounds fall inside blocks, and the whole history.
PERIODS = [(T0, T0 + 10 * DAY_US), (T0 + 30 * HOUR + 7 * SEC, T0 + 70 * HOUR + 13 * SEC)]


# ----------------------------------------------------------------------------- the readers


async def _played(store: LedgerStore) -> None:
    """Four days of two links: a jackpot link (contributions, a royal flush paid, a
    correction) and a fixed-pay bonus link (bets registered), a reading every 20 minutes."""
    await make_link(store)
    await make_link(store, "bonus", ("b1",), game=Game.LET_IT_RIDE_BONUS, rate_bp=0, reset_cents=0)
    clock = FixedClock(T0)
    rt = LinkRuntime(store, clock)
    await rt.memory.load()
    poll = Poller(step_us=20 * 60 * SEC)
    credits = {"t1": 0, "t2": 0, "b1": 0}
    await rt.readings.apply(
        [poll.reading("t1", 0), poll.reading("t2", 0), poll.reading("b1", 0, rounds=0)]
    )
    for n in range(1, 96):
        credits["t2"] += 2 + n % 7
        credits["b1"] += 1 + n % 3
        readings = [poll.reading("t2", credits["t2"]), poll.reading("b1", credits["b1"], rounds=n)]
        if n < 40:
            credits["t1"] += 3 + n % 5
            readings.append(poll.reading("t1", credits["t1"]))
        elif n == 40:
            readings.append(poll.royal("t1", credits["t1"], seq=1))  # the table is held after
        await rt.readings.apply(readings)
        if n == 60:
            clock.advance(poll.at - clock.now_us())
            corrections = Corrections(store.engine, rt, clock)
            request_id = await corrections.ask(
                link_id="stud", delta_cents=-123, category=CorrectionCategory.TRANSFER,
                reason="moved to the draw link", requested_by="sup1", document=PDF,
                document_type="application/pdf",
            )  # fmt: skip
            await corrections.approve(request_id, approved_by="sup2")


async def _history_pages(
    store: LedgerStore, link_id: str, since: int, until: int, *, reductions: bool
) -> list[Any]:
    pages: list[Any] = []
    after = 0
    while True:
        page = await record_views.history(
            store.engine, link_id, since_us=since, until_us=until, after_seq=after, limit=7,
            reductions_only=reductions,
        )  # fmt: skip
        pages.append(page)
        if page.next_after_seq is None:
            return pages
        after = page.next_after_seq


async def _reads(store: LedgerStore) -> dict[str, Any]:
    """What every reader of the history answers."""
    out: dict[str, Any] = {}
    for kind in (ExportKind.HISTORY, ExportKind.REDUCTIONS):
        for fmt in ("csv", "json"):
            for link_id in (None, "stud", "bonus"):
                for since, until in PERIODS:
                    text = io.StringIO()
                    await export(
                        store.engine, text, kind=kind, fmt=fmt, since_us=since, until_us=until,
                        link_id=link_id,
                    )  # fmt: skip
                    out[f"export {kind} {fmt} {link_id} {since}"] = text.getvalue()
    records = ProtectionRecords(store.engine)
    for link_id in ("stud", "bonus"):
        for since, until in PERIODS:
            key = f"{link_id} {since}"
            for reductions in (False, True):
                out[f"pages {key} {reductions}"] = await _history_pages(
                    store, link_id, since, until, reductions=reductions
                )
            out[f"chart {key}"] = await record_views.meter_series(
                store.engine, link_id, since_us=since, until_us=until, points=40
            )
            total, weeks = await reconciliation.reconciliation(store.engine, link_id, since, until)
            out[f"reconciliation {key}"] = [reconciliation.summary(r) for r in (total, *weeks)]
            async with store.engine.connect() as conn:
                out[f"opening {key}"] = await opening_units(conn, link_id, since)
            out[f"bets {key}"] = sorted(await records.bets_in([link_id], since, until))
        seen = []
        after = 0
        while rows := await records.seen_after(link_id, after, 11):
            seen.append(rows)
            after = rows[-1].seq
        out[f"seen {link_id}"] = seen
        out[f"head {link_id}"] = await records.head(link_id)
        out[f"first {link_id}"] = [
            await records.first_seq_at(link_id, at)
            for at in (T0 - 1, T0 + 1, *(T0 + k * 7 * HOUR + 11 * SEC for k in range(16)))
        ]
        async with store.engine.connect() as conn:
            out[f"stream {link_id}"] = [e async for e in Entries(conn).stream(link_id, 0)]
    return out


async def test_every_reader_sees_blocks_as_the_rows_they_were(store: LedgerStore) -> None:
    await _played(store)
    before = await _reads(store)
    assert before[f"pages stud {T0} True"][0].entries  # the award, the correction
    rows = await _count(store, MeterEntryRow)
    made = await compact(store.engine, "stud", most=10) + await compact(
        store.engine, "bonus", most=10
    )
    assert made >= 20
    # Rows are left for the entries no block takes (the link opened, the hit's, the
    # correction's, a table's first reading) and nothing else.
    assert await _count(store, MeterEntryRow) < rows // 10
    after = await _reads(store)
    assert after.keys() == before.keys()
    assert [key for key, value in before.items() if after[key] != value] == []
    report = await verify_ledger(store.engine, KEY)
    assert report.ok, report.problems


async def _count(store: LedgerStore, model: Any) -> int:
    async with store.engine.connect() as conn:
        return int(await conn.scalar(select(func.count()).select_from(model)) or 0)


def test_a_read_by_a_kind_blocks_hold_is_refused() -> None:
    assert never_blocked([EntryKind.AWARD, EntryKind.MYSTERY_ARMED]) == ["award", "mystery_armed"]
    with pytest.raises(ValueError, match="blocks hold"):
        never_blocked([EntryKind.AWARD, EntryKind.CONTRIBUTION])


# ----------------------------------------------------------------------------- the purge


def _noon_now() -> int:
    """A moment at noon UTC no later than now: the five-year cut falls at noon too, in the
    middle of a day's readings, whatever the hour the test runs."""
    now = time.time_ns() // 1_000
    noon = now // DAY_US * DAY_US + 12 * HOUR
    return noon if noon <= now else noon - DAY_US


@pytest.fixture
async def twin(db_kind: str, tmp_path: Path) -> AsyncIterator[LedgerStore]:
    """A second empty database of the same kind, for the same history kept as rows."""
    async with empty_database(db_kind, tmp_path / "twin.db") as url:
        engine = make_engine(url)
        s = LedgerStore(engine, KEY)
        await s.check_key()
        yield s
        await engine.dispose()


async def _old_history(store: LedgerStore, now: int) -> None:
    """A link opened six years before ``now`` and read every four hours from three days
    before the five-year cut to three days after it (a royal flush paid the day before),
    then once four years ago: the same history wherever it is written."""
    cut = years_before(now, 5)
    await store.create_link(
        link_id="old", name="Old bank", game=Game.CARIBBEAN_STUD, rate_bp=8000,
        reset_cents=1_000_00, tables=[table("o1"), table("o2")], at_us=years_before(now, 6),
        actor="test",
    )  # fmt: skip
    clock = FixedClock(years_before(now, 6))
    rt = LinkRuntime(store, clock)
    await rt.memory.load()
    poll = Poller(step_us=2 * HOUR)
    poll.at = cut - 3 * DAY_US - 12 * HOUR
    await rt.readings.apply([poll.reading("o1", 0), poll.reading("o2", 0)])
    for n in range(1, 36):
        readings = [poll.reading("o2", 5 * n)]
        if n < 12:
            readings.append(poll.reading("o1", 4 * n))
        elif n == 12:
            readings.append(poll.royal("o1", 4 * n, seq=1))
        await rt.readings.apply(readings)
    poll.at = years_before(now, 4)
    await rt.readings.apply([poll.reading("o2", 200)])


async def _purge(store: LedgerStore, now: int) -> dict[str, Any]:
    rt = LinkRuntime(store, FixedClock(now))
    await rt.memory.load()
    report = await run_retention(rt, meter_years=5, integrity_years=1)
    manifest: dict[str, Any] = report.links["old"]
    return manifest


async def _anchor(store: LedgerStore) -> Any:
    async with store.engine.connect() as conn:
        return (await conn.execute(select(LedgerAnchorRow))).one()


async def _export(store: LedgerStore, now: int) -> str:
    out = io.StringIO()
    await export(
        store.engine, out, kind=ExportKind.HISTORY, fmt="json", since_us=0, until_us=now,
        link_id="old",
    )  # fmt: skip
    return out.getvalue()


async def test_a_purge_over_blocks_seals_the_manifest_it_seals_over_rows(
    store: LedgerStore, twin: LedgerStore
) -> None:
    now = _noon_now()
    cut = years_before(now, 5)
    for s in (store, twin):
        await _old_history(s, now)
    assert await _export(store, now) == await _export(twin, now)
    await compact(store.engine, "old", most=4, breaks=[cut])
    blocks = await _count(store, MeterBlockRow)
    manifest = await _purge(store, now)
    assert manifest == await _purge(twin, now)
    assert await _anchor(store) == await _anchor(twin)
    # The blocks before the cut went whole (the database lets blocks older than five years
    # go); those after it stay.
    async with store.engine.connect() as conn:
        first = await conn.scalar(select(func.min(MeterBlockRow.first_seq)))
    assert first is not None and first > manifest["last_seq"]
    assert 0 < await _count(store, MeterBlockRow) < blocks
    assert await _export(store, now) == await _export(twin, now)
    for s in (store, twin):
        report = await verify_ledger(s.engine, KEY)
        assert report.ok, report.problems


async def test_the_purge_keeps_whole_a_block_that_reaches_past_the_cut(
    store: LedgerStore,
) -> None:
    now = _noon_now()
    cut = years_before(now, 5)
    await _old_history(store, now)
    async with store.engine.connect() as conn:
        history = [e async for e in Entries(conn).stream("old", 0)]
    await compact(store.engine, "old", most=1_000)  # a block a day: the cut's day straddles it
    async with store.engine.connect() as conn:
        straddling = (
            await conn.execute(
                select(MeterBlockRow.first_seq, MeterBlockRow.last_seq).where(
                    MeterBlockRow.first_at_us < cut, MeterBlockRow.last_at_us >= cut
                )
            )
        ).one()
    manifest = await _purge(store, now)
    last = straddling.first_seq - 1
    assert history[last].at_us < cut  # more is kept than the five years ask, never less
    removed = history[:last]
    assert manifest["last_seq"] == last and manifest["first_seq"] == 1
    assert manifest["counts"]["meter_entries"] == last
    assert (
        manifest["seals_sha256"]
        == hashlib.sha256("".join(e.hash for e in removed).encode()).hexdigest()
    )
    assert manifest["first_prev_hash"] == GENESIS
    assert manifest["last_hash"] == removed[-1].hash
    assert manifest["meter_units_at_anchor"] == removed[-1].meter_after_units
    assert manifest["last_at_us"] == removed[-1].at_us
    anchor = await _anchor(store)
    assert (anchor.seq, anchor.hash) == (last, removed[-1].hash)
    async with store.engine.connect() as conn:
        kept = [e async for e in Entries(conn).stream("old", anchor.seq)]
        held = await conn.scalar(
            select(MeterBlockRow.entries).where(MeterBlockRow.first_seq == straddling.first_seq)
        )
    assert held is not None and held > 0
    assert kept[:-1] == history[last:]
    assert kept[-1].kind == EntryKind.RETENTION_PURGE
    report = await verify_ledger(store.engine, KEY)
    assert report.ok, report.problems


async def test_entries_moved_into_a_block_while_the_purge_reads_wait_for_the_next_run(
    store: LedgerStore, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    now = _noon_now()
    await _old_history(store, now)
    read = stored_retention.entries_through

    async def compacted_meanwhile(*args: Any) -> AsyncIterator[SealedEntry]:
        async for e in read(*args):
            yield e
        # The compactor, at the same moment: the cut's day goes into one block.
        await compact(store.engine, "old", most=1_000)

    monkeypatch.setattr(stored_retention, "entries_through", compacted_meanwhile)
    rt = LinkRuntime(store, FixedClock(now))
    await rt.memory.load()
    assert (await run_retention(rt, meter_years=5, integrity_years=1)).links == {}
    assert "there now; purged at the next run" in caplog.text
    async with store.engine.connect() as conn:
        assert await conn.scalar(select(func.min(MeterEntryRow.seq))) == 1  # nothing went
    monkeypatch.undo()
    manifest = await _purge(store, now)
    async with store.engine.connect() as conn:
        first = await conn.scalar(select(func.min(MeterBlockRow.first_seq)))
    assert first == manifest["last_seq"] + 1  # the block across the cut is kept whole
    report = await verify_ledger(store.engine, KEY)
    assert report.ok, report.problems


async def test_a_clock_ahead_of_the_databases_purges_only_what_the_database_lets_go(
    store: LedgerStore,
) -> None:
    now = _noon_now()
    await _old_history(store, now)
    await compact(store.engine, "old", most=3)
    # The controller's clock two days ahead of the database's (held at a newest recorded
    # time from a clock that ran fast): the database's own five-year mark bounds the cut.
    ahead = time.time_ns() // 1_000 + 2 * DAY_US
    manifest = await _purge(store, ahead)
    assert manifest["last_at_us"] < years_before(time.time_ns() // 1_000, 5)
    assert manifest["cutoff_us"] < years_before(ahead, 5)
    report = await verify_ledger(store.engine, KEY)
    assert report.ok, report.problems


async def test_a_link_of_levels_purged_over_blocks_keeps_its_meters_and_commitment(
    store: LedgerStore, twin: LedgerStore
) -> None:
    now = _noon_now()
    cut = years_before(now, 5)
    p = Play(opening(t0=years_before(now, 6)))
    p.read("t1", 0, rounds=0)
    p.read("t2", 0, rounds=0)
    p.at = cut - 2 * DAY_US
    for n in range(1, 25):
        p.at += 4 * HOUR - SEC
        p.read("t1", 8 * n, rounds=n)  # $0.16 a reading to the Mini: short of its trigger
    p.at = years_before(now, 4)
    p.read("t2", 300, rounds=5, seat_credits=(0, 100, 200, 0, 0, 0, 0))  # the mystery hits
    for s in (store, twin):
        await store_levels_link(s, p.outcomes)
    await compact(store.engine, "pool", most=3, breaks=[cut])
    assert await _count(store, MeterBlockRow) >= 6
    manifest = await _purge_levels(store, now)
    assert manifest == await _purge_levels(twin, now)
    assert manifest["meters_at_anchor"] and "L4" in manifest["mystery_at_anchor"]
    assert await _anchor(store) == await _anchor(twin)
    for s in (store, twin):
        report = await verify_ledger(s.engine, KEY)
        assert report.ok and report.unverifiable == [], (report.problems, report.unverifiable)


async def _purge_levels(store: LedgerStore, now: int) -> dict[str, Any]:
    rt = LinkRuntime(store, FixedClock(now))
    await rt.memory.load()
    report = await run_retention(rt, meter_years=5, integrity_years=1)
    manifest: dict[str, Any] = report.links["pool"]
    return manifest


# ----------------------------------------------------------------------------- memory


async def _year_of_blocks(store: LedgerStore, days: int) -> int:
    """A link's ``days`` days of contributions written straight into blocks, ``PER_DAY`` a
    day, a row between days (a table's reading that no block takes); the entries written."""
    events: list[MeterEvent] = []
    meter = 0
    for day in range(days):
        for n in range(PER_DAY):
            units = 825_000 * (1 + n % 7)
            kind = EntryKind.TABLE_ONLINE if n == 0 else EntryKind.CONTRIBUTION
            delta = 0 if n == 0 else units
            events.append(
                MeterEvent(
                    kind, T0 + day * DAY_US + n * 60 * SEC, meter, delta,
                    f"table T{n % 9}: {1 + n % 7} credits x 100c x 8250 bp", f"T{n % 9}",
                    details=f'{{"credits":{1 + n % 7},"denomination_cents":100,"rate_bp":8250}}',
                )
            )  # fmt: skip
            meter += delta
    entries = seal(KEY, "year", events, last_seq=0, last_hash=GENESIS)
    async with store.engine.begin() as conn:
        stored = Entries(conn)
        await stored.append([e for e in entries if e.kind != EntryKind.CONTRIBUTION])
        for day in range(days):
            await stored.add_block(pack(entries[day * PER_DAY + 1 : (day + 1) * PER_DAY]))
    return len(entries)


PER_DAY = 80


class _Sink(io.StringIO):
    """Where an export is written and not kept."""

    def write(self, text: str) -> int:
        return len(text)


async def _export_peak(store: LedgerStore, until_us: int) -> tuple[int, int]:
    tracemalloc.start()
    try:
        n = await export(
            store.engine, _Sink(), kind=ExportKind.HISTORY, fmt="csv",
            since_us=T0, until_us=until_us, link_id="year",
        )  # fmt: skip
        return n, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


async def test_a_years_export_of_blocks_takes_the_memory_of_a_quarters(store: LedgerStore) -> None:
    written = await _year_of_blocks(store, 365)
    await _export_peak(store, T0 + 7 * DAY_US)  # what is made once (statements, caches)
    quarter, quarter_peak = await _export_peak(store, T0 + 91 * DAY_US)
    year, year_peak = await _export_peak(store, T0 + 365 * DAY_US)
    assert (quarter, year) == (91 * PER_DAY, written)
    # Held at once: a batch of rows and a block, however long the period (four times the
    # entries would be about four times the memory if they were kept).
    assert year_peak < quarter_peak * 1.5, (quarter_peak, year_peak)
