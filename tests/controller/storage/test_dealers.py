"""The dealers' record on real SQLite and PostgreSQL: the database refuses to edit it, to
delete what is younger than its retention period and to truncate it; who deals where now and
the events of a period read back whole; sign-ins and sign-outs under the floor's rules, each
audited; and two changes at once made one after the other."""

from __future__ import annotations

import asyncio
import json

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, IntegrityError

from controller.access import users
from controller.core.dealers import (
    DealerEvent,
    DealerMove,
    DealerSpan,
    dealing,
    sign_in,
    spans_by_table,
)
from controller.refusal import Conflict, Invalid, NotFound
from controller.roles import Role
from controller.runtime.clock import FixedClock
from controller.runtime.dealers import Dealers
from controller.storage.audit import audit_entries
from controller.storage.dealers import dealer_changes, dealer_reads
from controller.storage.store import LedgerStore
from tests.conftest import T0
from tests.controller.storage.helpers import make_link, runtime

IN, OUT = DealerMove.SIGN_IN, DealerMove.SIGN_OUT
S = 1_000_000


def ev(kind: DealerMove, table: str, dealer: str, at: int, by: str | None = None) -> DealerEvent:
    return DealerEvent(table_id=table, dealer=dealer, kind=kind, at_us=at, recorded_by=by or dealer)


async def _refused(store: LedgerStore, sql: str) -> str:
    with pytest.raises((IntegrityError, DBAPIError)) as info:
        async with store.engine.begin() as conn:
            await conn.execute(text(sql))
    return str(info.value)


async def test_the_database_refuses_to_edit_the_dealers_record(store: LedgerStore) -> None:
    await make_link(store)
    async with dealer_changes(store.engine) as record:
        await record.append([ev(IN, "t1", "ann", 1), ev(IN, "t2", "bob", T0)])
    msg = await _refused(store, "UPDATE dealer_events SET dealer = 'cat'")
    assert "dealer_events is append-only" in msg
    msg = await _refused(store, f"UPDATE dealer_events SET at_us = 2 WHERE at_us = {T0}")
    assert "append-only" in msg
    msg = await _refused(store, f"DELETE FROM dealer_events WHERE at_us = {T0}")
    assert "dealer_events: only entries older than 5 years may be purged" in msg
    if store.engine.dialect.name == "postgresql":
        assert "append-only" in await _refused(store, "TRUNCATE dealer_events")
    # What is older than the retention period may go (the purge's one exception).
    async with store.engine.begin() as conn:
        gone = await conn.execute(text("DELETE FROM dealer_events WHERE at_us = 1"))
    assert gone.rowcount == 1
    async with dealer_reads(store.engine) as record:
        assert await record.last_events() == [ev(IN, "t2", "bob", T0)]
    # A move that is neither, or a table that is not there, is refused as it is written.
    for sql in (
        f"INSERT INTO dealer_events (table_id, dealer, kind, at_us, recorded_by) "
        f"VALUES ('t1', 'ann', 'lunch', {T0}, 'ann')",
        f"INSERT INTO dealer_events (table_id, dealer, kind, at_us, recorded_by) "
        f"VALUES ('t9', 'ann', 'sign_in', {T0}, 'ann')",
    ):
        await _refused(store, sql)


async def test_who_deals_now_and_a_period_read_back_whole(store: LedgerStore) -> None:
    await make_link(store, tables=("t1", "t2", "t3"))
    history = [
        ev(IN, "t1", "ann", T0),
        ev(IN, "t2", "bob", T0 + 5 * S),
        ev(OUT, "t1", "ann", T0 + 10 * S, "sue"),
        ev(IN, "t1", "cat", T0 + 20 * S),
        ev(OUT, "t2", "bob", T0 + 30 * S),
        ev(IN, "t2", "ann", T0 + 30 * S),  # the same moment: read in the order recorded
        ev(OUT, "t1", "cat", T0 + 40 * S),
        ev(IN, "t1", "dan", T0 + 50 * S),
    ]
    async with dealer_changes(store.engine) as record:
        await record.append(history)
    async with dealer_reads(store.engine) as record:
        assert await record.last_events() == [history[5], history[7]]
        now = await record.dealing()
        assert {t: turn.dealer for t, turn in now.items()} == {"t1": "dan", "t2": "ann"}
        assert (await record.dealing("t2"))["t2"].from_us == T0 + 30 * S
        assert await record.dealing("t3") == {}
        # [15 s, 35 s): cat's turn opened inside it and ended after it, ann's began before it.
        period = await record.events(since_us=T0 + 15 * S, until_us=T0 + 35 * S)
        one_table = await record.events(since_us=T0 + 15 * S, until_us=T0 + 35 * S, table_id="t1")
    assert one_table == [history[2], history[3], history[6]]
    assert period == history[1:7]
    assert spans_by_table(period, T0 + 15 * S, T0 + 35 * S) == {
        "t1": [DealerSpan("cat", T0 + 20 * S, T0 + 35 * S)],
        "t2": [
            DealerSpan("bob", T0 + 15 * S, T0 + 30 * S),
            DealerSpan("ann", T0 + 30 * S, T0 + 35 * S),
        ],
    }


async def _floor(store: LedgerStore) -> tuple[Dealers, FixedClock]:
    await make_link(store, tables=("t1", "t2"))
    rt = await runtime(store)
    clock = FixedClock(T0)
    for name, role in (("ann", Role.DEALER), ("bob", Role.DEALER), ("tom", Role.TECHNICIAN)):
        await users.create_user(
            store.engine,
            username=name,
            role=role,
            password=f"{name} deals a fair game",
            actor="t",
            at_us=T0,
        )
    return Dealers(store.engine, rt.memory, clock), clock


async def test_signing_in_and_out_keeps_the_rules_and_audits_each_change(
    store: LedgerStore,
) -> None:
    dealers, clock = await _floor(store)
    turn = await dealers.sign_in("t1", dealer="ann", actor="ann")
    assert (turn.dealer, turn.from_us, turn.signed_in_by) == ("ann", T0, "ann")
    clock.advance(60 * S)
    # Ann again where she deals: nothing recorded; at t2: out of t1 first.
    assert (await dealers.sign_in("t1", dealer="ann", actor="ann")).from_us == T0
    await dealers.sign_in("t2", dealer="ann", actor="ann")
    clock.advance(60 * S)
    # Bob takes t2 over; a supervisor signs him out.
    await dealers.sign_in("t2", dealer="bob", actor="bob")
    clock.advance(60 * S)
    ended = await dealers.sign_out("t2", dealer=None, actor="sue")
    assert (ended.dealer, ended.until_us, ended.signed_out_by) == ("bob", T0 + 180 * S, "sue")
    assert await dealers.dealing() == {}
    assert await dealers.dealing_at("t2") is None

    turns = await dealers.turns("t2", since_us=T0, until_us=T0 + 200 * S)
    assert [(t.dealer, t.from_us, t.until_us, t.signed_out_by) for t in turns] == [
        ("ann", T0 + 60 * S, T0 + 120 * S, "bob"),
        ("bob", T0 + 120 * S, T0 + 180 * S, "sue"),
    ]
    assert await dealers.turns("t2", since_us=T0 + 180 * S, until_us=T0 + 200 * S) == []
    assert await dealers.spans(since_us=T0, until_us=T0 + 200 * S) == {
        "t1": [DealerSpan("ann", T0, T0 + 60 * S)],
        "t2": [
            DealerSpan("ann", T0 + 60 * S, T0 + 120 * S),
            DealerSpan("bob", T0 + 120 * S, T0 + 180 * S),
        ],
    }

    async with dealer_reads(store.engine) as record:
        audit = await audit_entries(record.conn, since_us=None, until_us=None, limit=100)
    said = [
        (a.actor, a.action, a.target, json.loads(a.before or "null"), json.loads(a.after or "null"))
        for a in reversed(audit)
        if a.action.startswith("dealer.")
    ]
    assert said == [
        ("ann", "dealer.sign_in", "table:t1", {"dealer": None}, {"dealer": "ann"}),
        ("ann", "dealer.sign_out", "table:t1", {"dealer": "ann"},
         {"dealer": None, "because": "signed in at table t2"}),
        ("ann", "dealer.sign_in", "table:t2", {"dealer": None}, {"dealer": "ann"}),
        ("bob", "dealer.sign_out", "table:t2", {"dealer": "ann"},
         {"dealer": None, "because": "bob signed in at this table"}),
        ("bob", "dealer.sign_in", "table:t2", {"dealer": "ann"}, {"dealer": "bob"}),
        ("sue", "dealer.sign_out", "table:t2", {"dealer": "bob"}, {"dealer": None}),
    ]  # fmt: skip


async def test_what_is_refused_changes_nothing(store: LedgerStore) -> None:
    dealers, _ = await _floor(store)
    with pytest.raises(NotFound, match="no table 't9'"):
        await dealers.sign_in("t9", dealer="ann", actor="ann")
    with pytest.raises(Invalid, match="'tom' is not a dealer's account"):
        await dealers.sign_in("t1", dealer="tom", actor="sue")
    with pytest.raises(Invalid, match="'zed' is not a dealer's account"):
        await dealers.sign_in("t1", dealer="zed", actor="sue")
    await users.disable_user(store.engine, username="bob", actor="t", at_us=T0)
    with pytest.raises(Invalid, match="the account of 'bob' is disabled"):
        await dealers.sign_in("t1", dealer="bob", actor="sue")
    with pytest.raises(Conflict, match="no dealer is signed in at table t1"):
        await dealers.sign_out("t1", dealer="ann", actor="ann")
    await dealers.sign_in("t1", dealer="ann", actor="ann")
    with pytest.raises(Conflict, match="bob does not deal at table t1: ann does"):
        await dealers.sign_out("t1", dealer="bob", actor="bob")
    assert [t.dealer for t in (await dealers.dealing()).values()] == ["ann"]


async def _waiting_for_the_lock(store: LedgerStore) -> bool:
    async with store.engine.connect() as conn:
        waiting = await conn.scalar(
            text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        )
    return bool(waiting)


async def test_two_changes_at_once_are_made_one_after_the_other(store: LedgerStore) -> None:
    """Ann and Bob sign in at t1 at once: whichever is second finds the first dealing there
    and signs them out, never both dealing at one table."""
    await make_link(store)
    first_read = asyncio.Event()
    second_started = asyncio.Event()
    second_done = asyncio.Event()

    async def first() -> None:
        async with dealer_changes(store.engine) as record:
            now = await record.dealing()
            first_read.set()
            await second_started.wait()
            if store.engine.dialect.name == "postgresql":
                # Until the second waits for the first (or, let in, has made its change).
                while not (second_done.is_set() or await _waiting_for_the_lock(store)):  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
            else:
                await asyncio.sleep(0.1)  # time for the second to read, were it let in
            await record.append(
                sign_in(now.values(), table_id="t1", dealer="ann", at_us=T0, recorded_by="ann")
            )

    async def second() -> tuple[DealerEvent, ...]:
        await first_read.wait()
        second_started.set()
        async with dealer_changes(store.engine) as record:
            now = await record.dealing()
            made = sign_in(
                now.values(), table_id="t1", dealer="bob", at_us=T0 + 1, recorded_by="bob"
            )
            await record.append(made)
        second_done.set()
        return made

    _, made = await asyncio.gather(first(), second())
    assert made == (ev(OUT, "t1", "ann", T0 + 1, "bob"), ev(IN, "t1", "bob", T0 + 1))
    async with dealer_reads(store.engine) as record:
        assert {t: x.dealer for t, x in (await record.dealing()).items()} == {"t1": "bob"}
        assert dealing(await record.events(since_us=T0, until_us=T0 + 2)) == await record.dealing()


async def test_a_change_is_never_dated_before_the_newest_event(store: LedgerStore) -> None:
    """Another process's clock a little ahead: the record stays in the order it was made."""
    dealers, _clock = await _floor(store)
    async with dealer_changes(store.engine) as record:
        await record.append([ev(IN, "t1", "ann", T0 + 5 * S, "other")])
    turn = await dealers.sign_in("t1", dealer="bob", actor="bob")
    assert turn.from_us == T0 + 5 * S
