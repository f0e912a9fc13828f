"""``ledger verify`` of a link of levels in a real database: meter by meter, every mystery
reveal against its arming, across segments checked apart, and after a retention purge."""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

import pytest
from sqlalchemy import select, update

from controller.core.ledger import GENESIS
from controller.core.reducer import EntryKind, Outcome
from controller.core.reducer.levels import mystery_commitment
from controller.paperwork.retention import run_retention, years_before
from controller.runtime.clock import FixedClock
from controller.runtime.links import LinkRuntime
from controller.storage import verify as verify_module
from controller.storage.models import MeterEntryRow
from controller.storage.store import LedgerStore
from controller.storage.unit_of_work import unit_of_work
from controller.storage.verify import verify_ledger
from tests.conftest import KEY
from tests.controller.core.levels_history import LINK, Play, opening, played


async def store_levels_link(store: LedgerStore, outcomes: list[Outcome]) -> None:
    """The link written as a store writes one: its row, its tables, then every step."""
    opened = outcomes[0]
    state = opened.state
    async with unit_of_work(store.engine) as uow:
        await store._start_sealing(uow)
        pt_id = await uow.links.add_paytable(LINK, state.paytable, opened.events[0].at_us)
        await uow.links.add(
            link_id=LINK,
            name="Pool of levels",
            game=str(state.game),
            rate_bp=state.rate_bp,
            reset_cents=state.reset_cents,
            hit_policy=state.hit_policy,
            paytable_id=pt_id,
            at_us=opened.events[0].at_us,
        )
        await uow.tables.add(LINK, [(ts.config, tid, "pit") for tid, ts in state.tables.items()], 0)
        store.book.heads[LINK] = (0, GENESIS)
        store.book.meters[LINK] = 0
        store.book.seals[LINK] = None
        await store._write(uow, [opened], insert_tables=True)
    for o in outcomes[1:]:
        await store.commit([o])


def forged(outcomes: list[Outcome], change: Any) -> list[Outcome]:
    """The steps with the first mystery reveal's details changed by ``change``: what the
    holder of the key could write through the store itself, every seal made with the key."""
    out = []
    done = False
    for o in outcomes:
        events = list(o.events)
        for i, e in enumerate(events):
            if not done and isinstance(e.details, dict) and "mystery" in e.details:
                d = json.loads(json.dumps(e.details))
                change(d["mystery"])
                events[i] = e._replace(details=d)
                done = True
        out.append(dataclasses.replace(o, events=tuple(events)))
    return out


async def test_a_link_of_levels_verifies_meter_by_meter(store: LedgerStore) -> None:
    p = played()
    await store_levels_link(store, p.outcomes)
    report = await verify_ledger(store.engine, KEY)
    assert report.ok, report.problems
    assert report.links[LINK] == len(p.events) and report.unverifiable == []


@pytest.mark.parametrize("segment", [100_000, 2, 5])
async def test_a_reveal_rewritten_with_the_key_is_caught(
    store: LedgerStore, monkeypatch: pytest.MonkeyPatch, segment: int
) -> None:
    # In segments of 2 or 5 entries the arming and its reveal are checked apart: the stitch
    # of the segments carries the commitment from one to the other.
    monkeypatch.setattr(verify_module, "SEGMENT", segment)

    def resalt(m: dict[str, Any]) -> None:
        m["salt"] = "ee" * 16
        m["commitment"] = mystery_commitment(LINK, m["level"], m["trigger_cents"], m["salt"])

    p = played()
    await store_levels_link(store, forged(p.outcomes, resalt))
    report = await verify_ledger(store.engine, KEY, workers=1)
    (problem,) = report.problems
    award = next(
        i + 1
        for i, e in enumerate(p.events)
        if e.kind == EntryKind.AWARD and "mystery" in e.details
    )
    assert problem.seq == award and "sealed" in problem.what, problem


@pytest.mark.parametrize("segment", [3, 5, 7])
async def test_segments_checked_apart_find_the_first_broken_meter(
    store: LedgerStore, monkeypatch: pytest.MonkeyPatch, segment: int
) -> None:
    p = played()
    await store_levels_link(store, p.outcomes)
    monkeypatch.setattr(verify_module, "SEGMENT", segment)
    assert (await verify_ledger(store.engine, KEY, workers=1)).ok
    # An entry's split edited in place (its seal then fails): found where it is, whatever
    # segment it falls in.
    second = [i + 1 for i, e in enumerate(p.events) if e.kind == EntryKind.CONTRIBUTION][1]
    async with store.engine.begin() as conn:
        from tests.controller.storage.helpers import drop_guards

        await drop_guards(conn)
        details = await conn.scalar(
            select(MeterEntryRow.details).where(MeterEntryRow.seq == second)
        )
        d = json.loads(details)
        d["meters"]["L1"][0] += 7
        await conn.execute(
            update(MeterEntryRow)
            .where(MeterEntryRow.seq == second)
            .values(details=json.dumps(d, sort_keys=True, separators=(",", ":")))
        )
    (problem,) = (await verify_ledger(store.engine, KEY, workers=1)).problems
    assert problem.seq == second


async def _purged_levels_link(store: LedgerStore, change: Any = None) -> tuple[Play, Any]:
    """A link of levels opened six years ago, armed and played a little then; its mystery
    hits four years ago; the purge removes what is older than five years."""
    now = time.time_ns() // 1_000
    p = Play(opening(t0=years_before(now, 6)))
    p.read("t1", 0, rounds=0)
    p.read("t2", 0, rounds=0)
    p.read("t1", 50, rounds=1)  # $1.00 to the Mini: short of its $15.00 trigger
    p.at = years_before(now, 4)
    p.read("t2", 300, rounds=5, seat_credits=(0, 100, 200, 0, 0, 0, 0))  # the mystery hits
    await store_levels_link(store, p.outcomes if change is None else forged(p.outcomes, change))
    rt = LinkRuntime(store, FixedClock(now))
    await rt.memory.load()
    report = await run_retention(rt, meter_years=5, integrity_years=1)
    return p, report.links[LINK]


async def test_a_purge_keeps_the_meters_and_the_commitment_and_verify_resumes_from_them(
    store: LedgerStore,
) -> None:
    p, manifest = await _purged_levels_link(store)
    purged = manifest["last_seq"]
    assert [e.kind for e in p.events[:purged]][-1] == EntryKind.CONTRIBUTION
    # The meters as they stood after the last entry purged, and the Mini's commitment.
    after = p.events[purged - 1].details
    assert isinstance(after, dict)
    for key, (before, delta) in after["meters"].items():
        assert manifest["meters_at_anchor"][key] == before + delta
    armed = next(e for e in p.events if e.kind == EntryKind.MYSTERY_ARMED)
    assert manifest["mystery_at_anchor"]["L4"]["commitment"] == armed.details["commitment"]  # type: ignore[index]
    report = await verify_ledger(store.engine, KEY)
    assert report.ok and report.unverifiable == [], (report.problems, report.unverifiable)


async def test_after_a_purge_a_rewritten_reveal_is_still_caught(store: LedgerStore) -> None:
    def resalt(m: dict[str, Any]) -> None:
        m["salt"] = "ee" * 16
        m["commitment"] = mystery_commitment(LINK, m["level"], m["trigger_cents"], m["salt"])

    await _purged_levels_link(store, resalt)
    (problem,) = (await verify_ledger(store.engine, KEY)).problems
    assert "the mystery reveal of L4 gives commitment" in problem.what, problem


async def test_segments_checked_in_worker_processes_carry_the_commitments(
    store: LedgerStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def resalt(m: dict[str, Any]) -> None:
        m["salt"] = "ee" * 16
        m["commitment"] = mystery_commitment(LINK, m["level"], m["trigger_cents"], m["salt"])

    p = played()
    await store_levels_link(store, forged(p.outcomes, resalt))
    monkeypatch.setattr(verify_module, "SEGMENT", 3)
    monkeypatch.setattr(verify_module, "PARALLEL_FROM", 0)
    (problem,) = (await verify_ledger(store.engine, KEY, workers=2)).problems
    assert "sealed" in problem.what and problem.seq == next(
        i + 1
        for i, e in enumerate(p.events)
        if e.kind == EntryKind.AWARD and "mystery" in e.details
    )
