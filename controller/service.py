"""Opening a configured floor: the links of the configuration, as the database holds them."""

from __future__ import annotations

from controller.clock import Clock
from controller.config import FloorConfig
from controller.runtime import LinkRuntime
from controller.storage.store import LedgerStore, TableSpec


class FloorMismatch(ValueError):
    """The configuration file and the database disagree about a link."""


async def open_floor(store: LedgerStore, floor: FloorConfig, clock: Clock) -> LinkRuntime:
    """Create the links the database does not have yet; check the others match the file.

    A link that exists keeps what the database says: its rate, reset amount and paytable
    change only through the governed path (68 IAC 10-1-1.1(d)-(e)), never by editing a file.
    """
    await store.check_key()
    existing = set(await store.link_ids())
    for link in floor.links:
        if link.link_id in existing:
            continue
        await store.create_link(
            link_id=link.link_id,
            name=link.name,
            game=link.game,
            rate_bp=link.rate_bp,
            reset_cents=link.reset_cents,
            hit_policy=link.policy,
            at_us=clock.now_us(),
            actor="configuration",
            tables=[
                TableSpec(config=t.config, name=t.name, location=t.location) for t in link.tables
            ],
        )
    runtime = LinkRuntime(store, clock)
    await runtime.load()
    for link in floor.links:
        state = runtime.states[link.link_id]
        where = f"link {link.link_id}"
        if state.game is not link.game:
            raise FloorMismatch(
                f"{where}: the file says {link.game.label}, the database {state.game.label}"
            )
        if state.rate_bp != link.rate_bp or state.reset_cents != link.reset_cents:
            raise FloorMismatch(
                f"{where}: the file's rate or reset amount differs from the database's; a link's "
                "rate changes only through an approved submission (68 IAC 10-1-1.1(d)-(e))"
            )
        configured = {t.config.table_id: t.config for t in link.tables}
        if set(configured) != set(state.tables):
            raise FloorMismatch(
                f"{where}: the file has tables {sorted(configured)}, the database "
                f"{sorted(state.tables)}"
            )
        for tid, cfg in configured.items():
            if state.tables[tid].config != cfg:
                raise FloorMismatch(
                    f"{where}: table {tid} is configured differently in the database"
                )
    return runtime
