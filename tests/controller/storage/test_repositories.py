"""Storage's typed rows agree with the schema, and one unit of work is one transaction."""

from __future__ import annotations

import dataclasses

import pytest

from controller.core.ledger import ENTRY_COLUMNS, SealedEntry
from controller.storage.hits import HIT_COLUMNS, HitRecord
from controller.storage.links import StoredLink
from controller.storage.models import HitRow, LinkRow, MeterEntryRow, table_of
from controller.storage.store import LedgerStore
from controller.storage.unit_of_work import reading, unit_of_work
from tests.conftest import T0
from tests.controller.storage.helpers import make_link, runtime


def test_a_stored_hit_has_every_column_of_the_hits_table() -> None:
    assert set(HIT_COLUMNS) == set(table_of(HitRow).c.keys())
    assert tuple(f.name for f in dataclasses.fields(HitRecord)) == HIT_COLUMNS


def test_typed_rows_name_columns_of_their_tables() -> None:
    assert set(f.name for f in dataclasses.fields(StoredLink)) <= set(table_of(LinkRow).c.keys())
    assert SealedEntry._fields == ENTRY_COLUMNS
    assert set(ENTRY_COLUMNS) == set(table_of(MeterEntryRow).c.keys())


async def test_a_unit_of_work_writes_all_or_nothing(store: LedgerStore) -> None:
    with pytest.raises(RuntimeError):
        async with unit_of_work(store.engine) as uow:
            await uow.audit.write(at_us=T0, actor="test", action="a", target="x")
            await uow.meta.put("probe", "1")
            raise RuntimeError("the command fails")
    async with reading(store.engine) as uow:
        assert await uow.meta.get("probe") is None
    async with unit_of_work(store.engine) as uow:
        await uow.meta.put("probe", "1")
    async with reading(store.engine) as uow:
        assert await uow.meta.get("probe") == "1"


async def test_history_comes_back_as_sealed_entries(store: LedgerStore) -> None:
    await make_link(store)
    await runtime(store)
    entries = [e async for e in store.entries_after("stud", 0, batch=1)]
    assert entries and all(isinstance(e, SealedEntry) for e in entries)
    assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
    heads = await store.chain_heads()
    assert heads["stud"] == (entries[-1].seq, entries[-1].hash, entries[-1].meter_after_units)
