"""Reading links back: a link's state from its rows, checked against its seals and history.

A link whose row does not end where its history does, or whose rows do not match their
seals, is listed with what differs; nothing may be computed from it until it is recovered.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from controller.core.games import Game, make_paytable
from controller.core.law import Law
from controller.core.ledger import SealedEntry, seal_hash
from controller.core.reducer import HitPolicy, LinkState, TableState
from controller.core.reducer.levels import level_key
from controller.rules.house import FIXED_PAY_TECHNICIAN_FROM_CENTS
from controller.storage.codec import armed_of, last_win_of, levels_of, paytables_of
from controller.storage.draw_cipher import open_draws
from controller.storage.entries import FROM_READINGS, PAYTABLE_KINDS, RATE_KINDS, RESET_KINDS
from controller.storage.errors import StoreError
from controller.storage.links import StoredLink
from controller.storage.seals import SealBook
from controller.storage.unit_of_work import UnitOfWork

__all__ = ["load_links"]


async def load_links(
    uow: UnitOfWork,
    book: SealBook,
    link_ids: Sequence[str],
    *,
    sealing: bool | None = None,
    technician_from_cents: int = FIXED_PAY_TECHNICIAN_FROM_CENTS,
    law: Law,
) -> tuple[dict[str, LinkState], dict[str, str]]:
    """The links' states and, for those that fail their check, what differs. The book
    remembers their heads and seals (and which are broken) as read.

    ``sealing``: whether rows must carry seals (read from ``ledger_meta`` unless given).
    ``technician_from_cents``: the operator's amount from which a fixed pay waits for a
    technician (a setting, handed to every state read; never stored). ``law``: the
    jurisdiction the links play under (``controller.core.law``), handed in likewise.
    """
    ids = list(link_ids)
    links = await uow.links.read(ids)
    if not links:
        return {}, {}
    if sealing is None:
        sealing = await uow.meta.sealing()
    lines = await uow.links.paytable_lines({link.paytable_id for link in links})
    tables = await uow.tables.of_links(ids)
    counters = await uow.tables.counters([t.config for t in tables])
    tables_of: dict[str, dict[str, TableState]] = {link.link_id: {} for link in links}
    stored_seals: dict[str, str | None] = {}
    for t in tables:
        tid = t.config.table_id
        c = counters.get(tid)
        if c is None:
            raise StoreError(f"table {tid} has no counter row")
        stored_seals[tid] = c.seal
        tables_of[t.link_id][tid] = c.state
    # Each chain's entry at the link's recorded head (its time: later entries never carry an
    # earlier one) and how far the chain really goes.
    heads = await uow.entries.at((link.link_id, link.last_seq) for link in links)
    ends = await uow.entries.ends(ids)
    unsealed = [
        link.link_id
        for link in links
        if link.state_seal is None
        or any(stored_seals[tid] is None for tid in tables_of[link.link_id])
    ]
    # Rows without seals pass only as rows from before seals, and only while neither the
    # ledger's meta nor the link's own history says its state was sealed.
    marked = set() if sealing else await uow.entries.sealed_by_history(unsealed)
    unread = [link.link_id for link in links if link.link_id not in book.demonstration]
    if unread:
        shown = await uow.entries.opened_in_demonstration(unread)
        book.demonstration.update({lid: lid in shown for lid in unread})
    states: dict[str, LinkState] = {}
    problems: dict[str, str] = {}
    for link in links:
        lid = link.link_id
        game = Game(link.game)
        head = heads.get(lid)
        try:
            paytable = make_paytable(game, json.loads(lines[link.paytable_id]))
            state = LinkState(
                link_id=lid,
                game=game,
                rate_bp=link.rate_bp,
                reset_cents=link.reset_cents,
                paytable=paytable,
                law=law,
                meter_units=link.meter_units,
                hit_policy=HitPolicy(link.hit_policy),
                jackpot_won_since_rate_set=link.jackpot_won_since_rate_set,
                tables=tables_of[lid],
                last_win=last_win_of(link.last_win),
                armed=armed_of(link.armed_change, game),
                last_at_us=head.at_us if head is not None else 0,
                levels=levels_of(
                    open_draws(book.key, lid, link.levels),
                    game,
                    rate_bp=link.rate_bp,
                    reset_cents=link.reset_cents,
                    meter_units=link.meter_units,
                ),
                paytables=paytables_of(link.paytables),
                technician_from_cents=technician_from_cents,
                demonstration=book.demonstration[lid],
            )
        except (KeyError, ValueError) as exc:
            raise StoreError(f"link {lid}: its stored state cannot be read: {exc}") from exc
        book.heads[lid] = (link.last_seq, link.last_hash)
        book.meters[lid] = state.meter_units
        book.seals[lid] = link.state_seal
        for tid in state.tables:
            book.table_seals[tid] = stored_seals[tid]
        states[lid] = state
        problem = _check_head(book.key, link, head, ends.get(lid)) or book.check_seals(
            state, link.state_seal, sealing or lid in marked
        )
        if problem is not None:
            problems[lid] = await _diagnose(uow, state, problem)
    for lid in states:
        if lid in problems:
            book.broken[lid] = problems[lid]
        else:
            book.broken.pop(lid, None)
    return states, problems


def _check_head(
    key: bytes, link: StoredLink, head: SealedEntry | None, end: int | None
) -> str | None:
    """Does the link row end where its history does?"""
    if head is None:
        return (
            f"the link row says its history ends at entry {link.last_seq}, "
            "which is not in the history"
        )
    if end is not None and end > link.last_seq:
        return (
            f"the link row says its history ends at entry {link.last_seq}, but it goes on "
            f"to entry {end}"
        )
    if seal_hash(key, head[:14]) != head.hash:
        return f"the history's entry {link.last_seq} does not match its seal"
    if head.hash != link.last_hash:
        return f"the link row's last seal differs from its history's entry {link.last_seq}"
    if head.meter_after_units != link.meter_units:
        return (
            f"the link row shows meter {link.meter_units} units but its history ends at "
            f"{head.meter_after_units} (entry {link.last_seq})"
        )
    return None


async def _diagnose(uow: UnitOfWork, state: LinkState, problem: str) -> str:
    """Name what differs when the link's own seal fails: a table row put back from an older
    copy (its own seal intact, the history has entries of it after it was read), or a
    parameter the history says otherwise."""
    if problem != "LINK":
        return problem
    lid = state.link_id
    found: list[str] = []
    for tid, ts in sorted(state.tables.items()):
        newest = await uow.entries.newest_at(lid, tid, FROM_READINGS)
        if newest is not None and (ts.at_us is None or ts.at_us < newest):
            found.append(
                f"table {tid}: its counter row is an older copy (read at {ts.at_us}, the "
                f"history has a reading of it at {newest})"
            )
    for what, kinds, fieldname, now in (
        ("rate", RATE_KINDS, ("rate_bp", "to_bp"), state.rate_bp),
        ("reset amount", RESET_KINDS, ("reset_cents", "to_cents"), state.reset_cents),
        ("paytable", PAYTABLE_KINDS, ("paytable",), state.paytable.to_dicts()),
    ):
        said = await uow.entries.said(lid, kinds, fieldname)
        if said is not None and said != now:
            found.append(f"the link's {what} is {now}, its history says {said}")
    found.extend(await _mystery_differences(uow, state))
    if not found:
        found.append(
            "the link row (its hit policy, flags, last win, armed change, levels or other "
            "games' paytables) or its record of its tables was changed since it was sealed"
        )
    return "; ".join(found)


async def _mystery_differences(uow: UnitOfWork, state: LinkState) -> list[str]:
    """Mystery levels whose armed trigger in the row is not the one the history committed to."""
    if not any(lv.armed is not None for lv in state.levels):
        return []
    committed = await uow.entries.mystery_commitments(state.link_id)
    found: list[str] = []
    for i, lv in enumerate(state.levels):
        key = level_key(i)
        if lv.armed is None or key not in committed:
            continue
        seq, commitment = committed[key]
        if lv.armed.commitment(state.link_id, key) != commitment:
            found.append(
                f"level {key} ({lv.config.name}): its armed mystery trigger in the link row is "
                f"not the one the history committed to at entry {seq}"
            )
    return found
