"""New links: creating a link with its tables and filing it with the commission, alone (a
command) or for each new link of a floor configuration checked against the database."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from controller.core.games import Game, Paytable, default_paytable
from controller.core.reducer import HitPolicy
from controller.core.reducer.levels import LevelConfig, MysteryDraw
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.pdf import Letterhead
from controller.periods import Clock
from controller.rules.filing import check_table_locations
from controller.rules.jurisdictions import Jurisdiction
from controller.rules.violation import RuleViolation
from controller.runtime.config_entries import FloorConfig, LinkEntry
from controller.runtime.floor_approvals import Approval, FloorMismatch, approvals_by_link, reconcile
from controller.runtime.link_specs import SpecError, check_under
from controller.runtime.links import LinkRuntime
from controller.runtime.mystery_draws import first_draws
from controller.storage.links import TableSpec
from controller.storage.store import LedgerStore

__all__ = ["create_and_file_link", "open_floor"]


async def create_and_file_link(
    runtime: LinkRuntime,
    desk: FilingDesk,
    *,
    link_id: str,
    name: str,
    game: Game,
    rate_bp: int,
    reset_cents: int,
    hit_policy: HitPolicy,
    tables: Sequence[TableSpec],
    at_us: int,
    actor: str,
    levels: Sequence[LevelConfig] | None = None,
    paytable: Paytable | None = None,
    paytables: Mapping[Game, Paytable] | None = None,
    draws: Mapping[int, Sequence[MysteryDraw]] | None = None,
) -> Any:
    """Create the link with its tables and its paytable (the game's default unless given),
    then file its new-link submission; returns the submission filed.

    ``levels`` makes a link of levels (empty: a fixed-pay link; the Let It Ride bonus is one
    always), ``paytables`` a mixed-game link (the other games' paytables). A mystery level's
    first trigger is drawn here from the operating system's cryptographic source unless
    ``draws`` are given. 68 IAC 10-1-3(c)(4): a new link is filed with the commission and
    plays once approved. 68 IAC 10-1-1.1(e)(2): every table is given with its location, or
    nothing is written.
    """
    check_table_locations(
        [(t.config.table_id, t.location) for t in tables], clause=desk.law.clauses.location
    )
    if draws is None and levels:
        draws = first_draws(levels)
    created = await runtime.memory.store.create_link(
        link_id=link_id,
        name=name,
        game=game,
        rate_bp=rate_bp,
        reset_cents=reset_cents,
        hit_policy=hit_policy,
        at_us=at_us,
        actor=actor,
        tables=tables,
        paytable=paytable,
        levels=levels,
        paytables=paytables,
        draws=draws,
        # Opened by an installation in demonstration mode: its history says so for good.
        demonstration=desk.demonstration,
    )
    await runtime.memory.reload_links([link_id])
    # Filed on the link as it was opened: its levels, games and paytables as created.
    return await desk.file_new_link(link_id, filed_by=actor, state=created)


async def open_floor(
    store: LedgerStore,
    floor: FloorConfig,
    clock: Clock,
    *,
    notes: list[str] | None = None,
    demonstration: bool = False,
    letterhead: Letterhead | None = None,
) -> LinkRuntime:
    """Create the links the database does not have yet; check the others against the file.

    A link that exists keeps what the database says: its rate, reset amount, levels and
    paytables change only through the governed path (68 IAC 10-1-1.1(d)-(e)), never by
    editing a file. Where the file still gives a value the commission approved once (the
    link's starting terms, most often) the database's is kept and the difference added to
    ``notes`` with the approval behind it; a value no approval ever gave is refused
    (``floor_approvals.reconcile``). A new link is filed with the commission and does not play
    until approved (68 IAC 10-1-3(c)(4)). The whole file is checked against the database
    before anything is written. ``demonstration``: the installation runs in demonstration
    mode (its new links are opened and filed so); ``letterhead``: the property's, on their
    packets.
    """
    await store.check_key()
    runtime = LinkRuntime(store, clock)
    await runtime.memory.load()
    approvals = await approvals_by_link(store.engine)
    found: list[str] = []
    for link in floor.links:
        found += _check_against_database(runtime, link, approvals.get(link.link_id, []))
        if link.link_id not in runtime.memory.states:
            _check_under_law(store, link)
    if notes is not None:
        notes += found
    desk = FilingDesk(runtime, demonstration=demonstration, letterhead=letterhead)
    for link in floor.links:
        if link.link_id in runtime.memory.states:
            continue
        await create_and_file_link(
            runtime,
            desk,
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
            levels=link.levels,
            paytable=link.paytable,
            paytables=link.paytables or None,
        )
    return runtime


def _check_under_law(store: LedgerStore, link: LinkEntry) -> None:
    """A link the file makes anew, held to the installation's jurisdiction (its shapes, its
    rate of progression) before anything is written. A link the database already has is
    never refused here: it keeps what it plays by, and is reported where it breaks the law
    (``links list``, ``/readyz``) until a levels change brings it into line."""
    law = store.law
    if not isinstance(law, Jurisdiction):
        return
    try:
        # 68 IAC 10-1-1.1(e)(2): the new link's filing gives every table's location.
        check_table_locations(
            [(t.config.table_id, t.location) for t in link.tables], clause=law.clauses.location
        )
    except RuleViolation as exc:
        raise FloorMismatch(
            f"link {link.link_id}: {exc}; give each of its tables a location in the file "
            '(location = "..."); nothing was written'
        ) from None
    try:
        check_under(
            law,
            game=link.game,
            levels=link.levels,
            rate_bp=link.rate_bp,
            paytables={link.game: link.paytable or default_paytable(link.game), **link.paytables},
        )
    except SpecError as exc:
        raise FloorMismatch(
            f"link {link.link_id}: {exc}; nothing was written: correct the file"
        ) from None


def _check_against_database(
    runtime: LinkRuntime, link: LinkEntry, approvals: list[Approval]
) -> list[str]:
    """The differences kept from the database, one line each; a conflict raises."""
    where = f"link {link.link_id}"
    state = runtime.memory.states.get(link.link_id)
    if state is None:
        for t in link.tables:
            other = runtime.memory.table_link.get(t.config.table_id)
            if other is not None:
                raise FloorMismatch(
                    f"{where}: table {t.config.table_id} is a table of link {other} in the database"
                )
        return []
    if state.game is not link.game:
        raise FloorMismatch(
            f"{where}: the file says {link.game.label}, the database {state.game.label}"
        )
    if link.fixed_pay and not state.fixed_pay:
        raise FloorMismatch(
            f"{where}: the file makes it a fixed-pay link, with no meter; the database's has one"
        )
    notes = reconcile(link, state, approvals)
    configured = {t.config.table_id: t.config for t in link.tables}
    if set(configured) != set(state.tables):
        raise FloorMismatch(
            f"{where}: the file has tables {sorted(configured)}, the database "
            f"{sorted(state.tables)}"
        )
    for tid, cfg in configured.items():
        if state.tables[tid].config != cfg:
            raise FloorMismatch(f"{where}: table {tid} is configured differently in the database")
    return notes
