"""Conservation through real storage: any play, written and read back, adds up to the unit.

Each example plays a random sequence (readings with wraps, counter restarts, implausible jumps,
replays, hits with and without cards, anomaly reviews, corrections) on a fresh link of a real
SQLite or PostgreSQL database, then checks from the stored history alone that

    meter = seeds + contributions - awards + corrections

for the link row, that a restart reads back exactly the state held in memory, and that the
chain verifies.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from controller.core.games import Game
from controller.core.hands import HandCategory, parse_cards
from controller.core.money import U32
from controller.core.reducer import EntryKind, HitClaim, HitPolicy, TableConfig, TableReading
from controller.storage.links import TableSpec
from controller.storage.models import AnomalyRow, LinkRow, MeterEntryRow
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from tests.conftest import KEY, T0
from tests.controller.storage.helpers import runtime

HANDS = {
    HandCategory.ROYAL_FLUSH: parse_cards("As Ks Qs Js Ts"),
    HandCategory.STRAIGHT_FLUSH: parse_cards("9h 8h 7h 6h 5h"),
    HandCategory.FULL_HOUSE: parse_cards("Kd Kc Kh 2s 2d"),
    HandCategory.FLUSH: parse_cards("Ac 9c 7c 4c 2c"),
}
SEEDS = (EntryKind.LINK_OPENED, EntryKind.JACKPOT_RESET)
CONTRIBUTIONS = (EntryKind.CONTRIBUTION, EntryKind.ANOMALY_APPROVED)

step = st.one_of(
    st.tuples(st.just("bet"), st.sampled_from(["t1", "t2"]), st.integers(0, 40)),
    st.tuples(st.just("jump"), st.sampled_from(["t1", "t2"]), st.integers(10_000, 2**31)),
    st.tuples(st.just("restart"), st.sampled_from(["t1", "t2"]), st.integers(0, 30)),
    st.tuples(st.just("replay"), st.sampled_from(["t1", "t2"]), st.just(0)),
    st.tuples(st.just("hit"), st.sampled_from(list(HANDS)), st.booleans()),
    st.tuples(st.just("review"), st.booleans(), st.just(0)),
    st.tuples(st.just("correct"), st.integers(-500, 500), st.just(0)),
)
_links = itertools.count(1)


async def _play(store: LedgerStore, steps: list, policy: str) -> None:
    link_id = f"p{next(_links)}"
    tables = [
        TableSpec(
            config=TableConfig(
                table_id=f"{link_id}{t}",
                denomination_cents=500,
                seats=7,
                max_credits_per_seat_round=5,
                min_round_us=1_000_000,
            )
        )
        for t in ("t1", "t2")
    ]
    await store.create_link(
        link_id=link_id,
        name=link_id,
        game=Game.CARIBBEAN_STUD,
        rate_bp=6137,
        reset_cents=1_000_00,
        tables=tables,
        at_us=T0,
        actor="prop",
        hit_policy=HitPolicy(policy),
    )
    rt = await runtime(store)
    counters = {"t1": U32 - 50, "t2": 0}
    poll = {"t1": 0, "t2": 0}
    last: dict[str, TableReading] = {}
    at = T0
    hit_seq = 0

    async def read(t: str, **kw: object) -> None:
        nonlocal at
        poll[t] += 1
        at += 2_000_000
        r = TableReading(
            table_id=f"{link_id}{t}", poll_seq=poll[t], at_us=at, credits=counters[t], **kw
        )
        last[t] = r
        await rt.readings.apply([r])

    await read("t1")
    await read("t2")
    for kind, a, b in steps:
        if kind in ("bet", "jump"):
            counters[a] = (counters[a] + b) % U32
            await read(a)
        elif kind == "restart":
            counters[a] = b
            await read(a)
        elif kind == "replay" and a in last:
            await rt.readings.apply([last[a]])
        elif kind == "hit":
            hit_seq += 1
            claim = HitClaim(
                table_seq=hit_seq,
                seat=1 + hit_seq % 7,
                hand=a,
                round=hit_seq,
                cards=HANDS[a] if b else None,
            )
            await read("t1", pending_hits=1, head_hit=claim)
            if rt.memory.states[link_id].table(f"{link_id}t1").hit_pending:
                for hit in await rt.hits.unverified(f"{link_id}t1"):
                    seen = HANDS[HandCategory[hit.hand]] if hit.cards is None else None
                    await rt.hits.verify(hit.hit_id, actor="tech", cards=seen)
                # An award at or above the house's amount takes a second person's signature.
                for hit in await rt.hits.unsigned(f"{link_id}t1"):
                    await rt.hits.sign_off(hit.hit_id, actor="sup")
                await rt.hits.release_table(f"{link_id}t1", actor="tech")
        elif kind == "review":
            async with store.engine.connect() as conn:
                held = await conn.scalar(
                    select(AnomalyRow.anomaly_id)
                    .where(AnomalyRow.link_id == link_id, AnomalyRow.status == "held")
                    .limit(1)
                )
            if held is not None:
                await rt.commands.review_anomaly(
                    held, approve=bool(a), reviewer="sup", reason="checked"
                )
        elif kind == "correct":
            cents = int(a)
            if cents and rt.memory.states[link_id].meter_units + cents * 10_000 >= 0:
                await rt.commands.correct(
                    link_id,
                    delta_cents=cents,
                    category="malfunction",
                    reason="fix",
                    requested_by="sup",
                    approved_by="mgr",
                    document=b"doc",
                )

    async with store.engine.connect() as conn:

        def total(kinds: tuple[EntryKind, ...]):
            return select(func.coalesce(func.sum(MeterEntryRow.delta_units), 0)).where(
                MeterEntryRow.link_id == link_id, MeterEntryRow.kind.in_([str(k) for k in kinds])
            )

        seeds = await conn.scalar(total(SEEDS))
        contributions = await conn.scalar(total(CONTRIBUTIONS))
        awards = await conn.scalar(total((EntryKind.AWARD,)))
        corrections = await conn.scalar(total((EntryKind.CORRECTION,)))
        meter = await conn.scalar(select(LinkRow.meter_units).where(LinkRow.link_id == link_id))
        negatives = await conn.scalar(
            select(func.count()).where(
                MeterEntryRow.link_id == link_id,
                MeterEntryRow.kind == str(EntryKind.CONTRIBUTION),
                MeterEntryRow.delta_units < 0,
            )
        )
    assert meter == seeds + contributions + awards + corrections  # awards are stored negative
    assert meter == rt.memory.states[link_id].meter_units
    assert negatives == 0
    again = await runtime(LedgerStore(store.engine, KEY))
    assert again.memory.states[link_id] == rt.memory.states[link_id]
    report = await verify_ledger(store.engine, KEY, link_ids=[link_id])
    assert report.ok, report.problems


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(step, min_size=1, max_size=25), policy=st.sampled_from(["split", "sequential"])
)
async def test_any_play_conserves_the_meter_in_storage(
    store: LedgerStore, steps: list, policy: str
) -> None:
    await _play(store, steps, policy)
