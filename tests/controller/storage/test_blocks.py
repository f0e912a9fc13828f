"""The history of closed gaming days in blocks, on real SQLite and PostgreSQL: the same
entries read back from every read of the chain, verify whole, the database's guards, and an
edited or removed block found."""

from __future__ import annotations

import zoneinfo
from datetime import time

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from controller.core.ledger import SealedEntry
from controller.periods import FloorCalendar
from controller.runtime.clock import FixedClock
from controller.runtime.links import LinkRuntime
from controller.storage.blocks import BLOCK_KINDS, blockable, decode, encode
from controller.storage.compaction import compact_link
from controller.storage.models import MeterBlockRow, MeterEntryRow
from controller.storage.store import LedgerStore
from controller.storage.unit_of_work import reading
from controller.storage.verify import verify_ledger
from tests.conftest import KEY, T0
from tests.controller.storage.helpers import Poller, drop_guards, make_link, runtime

DAY = 86_400_000_000
CALENDAR = FloorCalendar(time(6), (time(6), time(14), time(22)), zoneinfo.ZoneInfo("UTC"))


day_end = CALENDAR.day_end


async def _three_days(store: LedgerStore) -> Poller:
    """Two tables over two closed gaming days and one still open, a royal flush on the
    first (its award and reset are rows of their own between the contributions)."""
    await make_link(store)
    clock = FixedClock(T0)
    rt = LinkRuntime(store, clock)
    await rt.memory.load()
    p = Poller()
    credits = {"t1": 0, "t2": 0}
    await rt.readings.apply([p.reading("t1", 0), p.reading("t2", 0)])
    for day in range(3):
        p.at = T0 + 6 * 3_600_000_000 + day * DAY + 60_000_000  # a minute into the gaming day
        for n in range(40 if day < 2 else 10):
            credits["t1"] += 3 + n % 5
            credits["t2"] += 1 + n % 3
            await rt.readings.apply(
                [p.reading("t1", credits["t1"]), p.reading("t2", credits["t2"])]
            )
            if day == 0 and n == 20:
                await rt.readings.apply([p.royal("t1", credits["t1"], seq=1)])
                clock.advance(p.at + 1 - clock.now_us())  # the technician, at once
                hit = (await rt.hits.unverified("t1"))[0]
                await rt.hits.verify(hit.hit_id, actor="tech1")
                await rt.hits.sign_off(hit.hit_id, actor="sup1")
                await rt.hits.release_table("t1", actor="tech1")
    return p


async def _all(store: LedgerStore) -> list[SealedEntry]:
    async with reading(store.engine) as uow:
        return [e async for e in uow.entries.stream("stud", 0)]


async def _open_day_start() -> int:
    return CALENDAR.day_start(CALENDAR.day(T0 + 2 * DAY + 7 * 3_600_000_000))


async def test_closed_days_move_into_blocks_and_every_read_gives_the_same(
    store: LedgerStore,
) -> None:
    await _three_days(store)
    before = await _all(store)
    async with reading(store.engine) as uow:
        extents, ends = await uow.entries.extents(), await uow.entries.ends(["stud"])
    until = await _open_day_start()
    done = await compact_link(
        store.engine, "stud", key=KEY, until_us=until, day_end=day_end, most=50
    )
    blockable_before = [e for e in before if e.at_us < until and blockable(e)]
    assert done.entries == len(blockable_before) > 100
    async with store.engine.connect() as conn:
        blocks = (await conn.execute(select(MeterBlockRow))).all()
        rows = (await conn.execute(select(MeterEntryRow.seq, MeterEntryRow.kind))).all()
    # At most 50 to a block, none spanning two gaming days, the open day left as rows.
    assert len(blocks) >= 4
    for b in blocks:
        assert b.entries <= 50
        assert CALENDAR.day(b.first_at_us) == CALENDAR.day(b.last_at_us)
        assert b.last_at_us < until
    kept = {seq for seq, _ in rows}
    assert all(e.seq in kept for e in before if e.at_us >= until or e.kind not in BLOCK_KINDS)
    assert len(kept) == len(before) - done.entries
    # Every read of the chain gives what it gave when every entry was a row.
    after = await _all(store)
    assert after == before
    inside = blockable_before[len(blockable_before) // 2]
    async with reading(store.engine) as uow:
        assert await uow.entries.extents() == extents
        assert await uow.entries.ends(["stud"]) == ends
        assert (
            await uow.entries.after("stud", inside.seq - 3, 7)
            == [e for e in before if e.seq > inside.seq - 3][:7]
        )
        assert (await uow.entries.at([("stud", inside.seq)]))["stud"] == inside
        assert await uow.entries.seals([("stud", inside.seq)]) == {
            ("stud", inside.seq): inside.hash
        }
    # Verify walks rows and blocks alike, in one process and in parallel segments.
    report = await verify_ledger(store.engine, KEY)
    assert report.ok, report.problems
    assert report.entries == len(before)
    # A restart resumes from the same chain; a second run has nothing left to move.
    again = await runtime(LedgerStore(store.engine, KEY))
    assert again.memory.states["stud"].meter_units == before[-1].meter_after_units
    assert (
        await compact_link(store.engine, "stud", key=KEY, until_us=until, day_end=day_end)
    ).entries == 0


async def test_the_database_keeps_blocks_as_history(store: LedgerStore) -> None:
    await _three_days(store)
    await compact_link(
        store.engine, "stud", key=KEY, until_us=await _open_day_start(), day_end=day_end
    )
    async with store.engine.connect() as conn:
        award = await conn.scalar(
            select(MeterEntryRow.seq).where(MeterEntryRow.kind == "award").limit(1)
        )
        young = await conn.scalar(
            select(func.max(MeterEntryRow.seq)).where(MeterEntryRow.kind == "contribution")
        )
    for statement, words in (
        ("UPDATE meter_blocks SET entries = entries + 1", "append-only"),
        ("DELETE FROM meter_blocks", "older than 5 years"),
        # An award inside a block's range, and a contribution of the open day: never moved.
        (f"DELETE FROM meter_entries WHERE seq = {award}", "older than 5 years"),
        (f"DELETE FROM meter_entries WHERE seq = {young}", "older than 5 years"),
    ):
        with pytest.raises((IntegrityError, DBAPIError)) as refused:
            async with store.engine.begin() as conn:
                await conn.execute(text(statement))
        assert words in str(refused.value), statement


async def test_an_edited_or_removed_block_is_found(store: LedgerStore) -> None:
    await _three_days(store)
    await compact_link(
        store.engine, "stud", key=KEY, until_us=await _open_day_start(), day_end=day_end, most=30
    )
    async with store.engine.begin() as conn:
        await drop_guards(conn)
        first, second, body = (
            await conn.execute(
                select(MeterBlockRow.first_seq, MeterBlockRow.last_seq, MeterBlockRow.body)
                .order_by(MeterBlockRow.first_seq)
                .offset(1)
                .limit(1)
            )
        ).one()
    # One credit more in an entry, the block written anew without the key: its seal fails.
    entries = decode("stud", body)
    e = entries[5]
    entries[5] = e._replace(
        delta_units=e.delta_units + 1, meter_after_units=e.meter_after_units + 1
    )
    forged, _ = encode(entries)
    async with store.engine.begin() as conn:
        await conn.execute(
            MeterBlockRow.__table__.update()
            .where(MeterBlockRow.first_seq == first)
            .values(body=forged)
        )
    report = await verify_ledger(store.engine, KEY)
    assert not report.ok and report.problems[0].seq == e.seq
    # Bytes that are no block at all are named as such.
    async with store.engine.begin() as conn:
        await conn.execute(
            MeterBlockRow.__table__.update()
            .where(MeterBlockRow.first_seq == first)
            .values(body=b"\x00\x00\x00\x04junkjunk")
        )
    report = await verify_ledger(store.engine, KEY)
    assert not report.ok and "not readable" in report.problems[0].what
    # The block removed: its entries are missing.
    async with store.engine.begin() as conn:
        await conn.execute(MeterBlockRow.__table__.delete().where(MeterBlockRow.first_seq == first))
    report = await verify_ledger(store.engine, KEY)
    assert not report.ok and "missing" in report.problems[0].what
    assert first <= (report.problems[0].seq or 0) <= second
