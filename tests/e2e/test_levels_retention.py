"""A link of levels six years old purged by the retention job: what is older than five years
goes, the meters and the mystery's commitment are kept at the anchor, ``ledger verify`` is
whole, the link comes back the same, and its mystery hit after the purge is checked against
the commitment kept."""

from __future__ import annotations

import time

from controller.core.games import Game
from controller.core.reducer.levels import meters_of
from controller.paperwork.retention import run_retention, years_before
from controller.runtime.clock import FixedClock
from controller.runtime.link_specs import parse_levels, parse_paytables, plan_link
from controller.runtime.links import LinkRuntime
from controller.runtime.mystery_draws import first_draws
from controller.storage.store import LedgerStore
from controller.storage.verify import verify_ledger
from tests.conftest import KEY
from tests.controller.permissive_law import PERMISSIVE, permissive
from tests.controller.storage.helpers import table
from tests.e2e.pool import LEVELS, PAYTABLES, ROYAL, H, Readings, cli, until_mystery

STUD, DRAW = Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW


async def _runtime(store: LedgerStore, clock: FixedClock) -> LinkRuntime:
    rt = LinkRuntime(LedgerStore(store.engine, KEY, law=PERMISSIVE), clock)
    await rt.memory.load()
    return rt


async def test_a_purged_link_of_levels_verifies_whole_and_plays_on(
    store: LedgerStore, db_url: str
) -> None:
    permissive(store)
    now = time.time_ns() // 1_000
    levels = parse_levels(LEVELS)
    plan = plan_link(
        game=STUD, rate_bp=None, reset_cents=None, levels=levels,
        paytables=parse_paytables({"caribbean_stud": PAYTABLES["caribbean_stud"]}, STUD),
        fixed_pay=False, table_games=[STUD],
    )  # fmt: skip
    await store.create_link(
        link_id="pool", name="Stud pool", game=STUD, rate_bp=plan.rate_bp,
        reset_cents=plan.reset_cents, paytable=plan.paytable, tables=[table("T1"), table("T2")],
        at_us=years_before(now, 6), actor="test", levels=levels, draws=first_draws(levels),
    )  # fmt: skip
    clock = FixedClock(years_before(now, 6))
    rt = await _runtime(store, clock)
    p = Readings(clock.now_us)
    await rt.readings.apply([p.of("T1", 0, 0), p.of("T2", 0, 0)])
    await until_mystery(rt, p, "pool", ("T1", "T2"))  # six years ago
    clock.advance(years_before(now, 4) - clock.now_us())
    await rt.readings.apply([p.hit("T2", H.ROYAL_FLUSH, ROYAL, seat=3, hit_seq=1)])
    await rt.readings.apply([p.of("T1", 40, 4, seat_credits=(40, 0, 0, 0, 0, 0, 0))])
    before = rt.memory.states["pool"]

    purger = await _runtime(store, FixedClock(now))
    report = await run_retention(purger, meter_years=5, integrity_years=1)
    manifest = report.links["pool"]
    assert manifest["last_seq"] > 0
    assert set(manifest["meters_at_anchor"]) >= {"L1", "L1.reserve", "L3.overflow", "L4"}
    assert "L4" in manifest["mystery_at_anchor"]
    assert "ledger whole" in await cli("ledger", "verify", db_url=db_url)

    after = await _runtime(store, FixedClock(now))
    assert after.memory.inoperable == {}
    back = after.memory.states["pool"]
    assert meters_of(back.levels) == meters_of(before.levels)
    # The same trigger armed; the purge, a step of the link, made its draws ready again.
    assert back.levels[3].armed == before.levels[3].armed
    assert back.levels[3].draws[: len(before.levels[3].draws)] == before.levels[3].draws
    # Played on: the Mini's next hit reveals a trigger whose commitment the purge kept.
    later = Readings(lambda: now)
    later.seq = {t: ts.poll_seq for t, ts in back.tables.items()}
    later.credits = {t: ts.credits or 0 for t, ts in back.tables.items()}
    later.rounds = {t: ts.rounds or 0 for t, ts in back.tables.items()}
    await until_mystery(after, later, "pool", ("T1", "T2"))
    verified = await verify_ledger(store.engine, KEY)
    assert verified.ok and verified.unverifiable == [], (verified.problems, verified.unverifiable)
