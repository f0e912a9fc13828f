"""Writing a poll cycle's outcomes: every link's entries, table counters, hits, anomalies and
link rows in the caller's one transaction, or nothing.

After a crash the database holds exactly the counters that produced the meter it shows: the
counters are written with the entries they produced, and each link's chain head is claimed
(on its last entry and seal) before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from controller.core.ledger import SealedEntry, seal
from controller.core.reducer import Anomaly, EntryKind, Hit, Outcome, check_conservation
from controller.core.state_seal import table_seal
from controller.storage.channel import ChannelName
from controller.storage.codec import counter_fields, link_fields
from controller.storage.draw_cipher import hide_draws
from controller.storage.entries import TAKING_EFFECT
from controller.storage.errors import LinkInoperable, StaleState, StoreError
from controller.storage.seals import SealBook
from controller.storage.unit_of_work import UnitOfWork

__all__ = ["write_outcomes"]


async def write_outcomes(
    uow: UnitOfWork,
    book: SealBook,
    channel: ChannelName,
    outcomes: Sequence[Outcome],
    *,
    insert_tables: bool = False,
    expect: Mapping[str, tuple[int, str | None]] | None = None,
    turns: Sequence[str] = (),
) -> list[SealedEntry]:
    """Seal the touched tables' rows, claim each link's chain head with its new seal, then
    write all links' rows in one statement per table.

    Only the tables a cycle touched are sealed again; the others' seals enter the link's seal
    from the book (as last read or written by this store). ``insert_tables``: the tables'
    counter rows are new (a link being opened).
    """
    counters: list[dict[str, Any]] = []
    hits: list[Hit] = []
    anomalies: list[Anomaly] = []
    table_seals: dict[str, str] = {}
    key = book.key
    for o in outcomes:
        state = o.state
        link_id = state.link_id
        for tid in sorted(o.tables_touched):
            ts = state.tables[tid]
            row = counter_fields(ts)
            row["seal"] = table_seals[tid] = table_seal(
                key, link_id=link_id, config=ts.config, counters=row
            )
            counters.append(row)
        hits.extend(o.hits)
        anomalies.extend(o.anomalies)
    entries = await _claim_heads(uow, book, channel, outcomes, table_seals, expect, turns)
    await uow.entries.append(entries)
    await uow.tables.write_counters(counters, new=insert_tables)
    await uow.hits.add(hits)
    await uow.anomalies.add(anomalies)
    for o in outcomes:
        if o.hits:  # an approved change takes effect only at a jackpot reset
            await _record_taking_effect(uow, o)
    return entries


async def _record_taking_effect(uow: UnitOfWork, o: Outcome) -> None:
    for e in o.events:
        if e.kind not in TAKING_EFFECT or isinstance(e.details, str):
            continue
        submission_id = e.details.get("submission_id")
        if submission_id is None:
            continue
        # Another game's paytable of a mixed-game link lives in the link row (``paytables``).
        if e.kind is EntryKind.PAYTABLE_CHANGED and "game" not in e.details:
            link_id = o.state.link_id
            pt_id = await uow.links.add_paytable(link_id, o.state.paytable, e.at_us)
            await uow.links.set_paytable(link_id, pt_id)
        await uow.links.mark_applied(submission_id, e.at_us)


async def _claim_heads(
    uow: UnitOfWork,
    book: SealBook,
    channel: ChannelName,
    outcomes: Sequence[Outcome],
    table_seals: Mapping[str, str],
    expect: Mapping[str, tuple[int, str | None]] | None = None,
    turns: Sequence[str] = (),
) -> list[SealedEntry]:
    """Seal each link's events onto its chain and claim every head in one statement.

    The claim comes before anything is written and is conditional on the link row being the
    one this store last read or wrote (its last entry and its seal, which covers its tables'
    rows): a stale writer stops here, and on PostgreSQL the row locks serialize the writers
    of one link. ``expect`` overrides that condition for a recovery, which replaces a row
    that is not what it should be.
    """
    entries: list[SealedEntry] = []
    heads: list[dict[str, Any]] = []
    new_heads: dict[str, tuple[int, str]] = {}
    new_seals: dict[str, str] = {}
    new_meters: dict[str, int] = {}
    for o in outcomes:
        state = o.state
        link_id = state.link_id
        try:
            last_seq, last_hash = book.heads[link_id]
        except KeyError:
            raise StoreError(f"link {link_id!r} was not loaded through this store") from None
        if expect is not None and link_id in expect:
            expected_seq, expected_seal = expect[link_id]
        elif link_id in book.broken:
            raise LinkInoperable(link_id, book.broken[link_id])
        else:
            expected_seq, expected_seal = last_seq, book.seals.get(link_id)
        # Conservation of the meter (core.reducer.conservation), asserted again where the step
        # is committed: from the meter this store last read or wrote (kept with the head), not
        # only the step's own. On a link of levels ``meter_units`` is the pool's total (every
        # meter, shown and hidden), which every entry moves; the meters' shares are checked
        # by the reducer (``check_meters``) and sealed with the levels in the link row.
        check_conservation(link_id, book.meters[link_id], o.events, state.meter_units)
        new_meters[link_id] = state.meter_units
        sealed = seal(book.key, link_id, o.events, last_seq=last_seq, last_hash=last_hash)
        entries.extend(sealed)
        new_seq, new_hash = (sealed[-1].seq, sealed[-1].hash) if sealed else (last_seq, last_hash)
        new_heads[link_id] = (new_seq, new_hash)
        fields = link_fields(state)
        new_seals[link_id] = book.seal_link(state, new_seq, new_hash, table_seals, fields=fields)
        # The mystery triggers are sealed over in plain form and stored encrypted
        # (storage.draw_cipher): the row never tells a reader when a level will hit.
        fields["levels"] = hide_draws(book.key, link_id, fields["levels"])
        heads.append(
            {
                "link_id": link_id,
                "expected_seq": expected_seq,
                "expected_seal": expected_seal,
                **fields,
                "last_seq": new_seq,
                "last_hash": new_hash,
                "state_seal": new_seals[link_id],
            }
        )
    if not heads:
        return entries
    name = await channel.of(uow.conn) if uow.conn.dialect.name == "postgresql" else None
    claimed = await uow.links.claim(heads, name, turns)
    stale = sorted(set(new_heads) - claimed)
    if stale:
        raise StaleState(f"link {stale[0]}: its history moved on since it was loaded")
    book.heads.update(new_heads)
    book.seals.update(new_seals)
    book.meters.update(new_meters)
    book.table_seals.update(table_seals)
    return entries
