"""Recovering an inoperable link: its state put back on what its sealed history vouches for
(house policy adopted from NY 5321.18, NJ 13:69E-1.39B: recover to the prior state), recorded
as an entry of it."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass, replace

from controller.core.games import make_paytable
from controller.core.hands import HandCategory
from controller.core.law import Law
from controller.core.ledger import ChainVerifier
from controller.core.meter_trail import TrailState
from controller.core.rebuild import PoolRebuilder, RebuildError
from controller.core.reducer import (
    EntryKind,
    HitClaim,
    LinkState,
    Outcome,
    TableState,
    record_recovery,
)
from controller.core.reducer.levels import (
    LevelConfig,
    MysteryDraw,
    classic_levels,
    pool_rate_bp,
)
from controller.storage.codec import armed_json, config_dict
from controller.storage.entries import PAYTABLE_KINDS, RATE_KINDS, RESET_KINDS
from controller.storage.errors import NotFound, StoreError
from controller.storage.loading import load_links
from controller.storage.papers.retention import purge_manifest
from controller.storage.seals import SealBook
from controller.storage.unit_of_work import UnitOfWork

__all__ = ["Recovery", "recovery_of"]


@dataclass(frozen=True, slots=True)
class Recovery:
    """A recovery decided: the outcome to write, on the row it replaces."""

    outcome: Outcome
    expect: tuple[int, str | None]  # the row's last sequence number and seal as found
    problem: str | None  # what was found wrong, if anything
    meter_units: int  # the meter as the history has it


async def recovery_of(
    uow: UnitOfWork,
    book: SealBook,
    link_id: str,
    *,
    at_us: int,
    reason: str,
    by: str,
    approved_by: str,
    draw: Callable[[LevelConfig], MysteryDraw],
    law: Law,
) -> Recovery:
    """The link as its history has it (read in ``uow``'s snapshot, the row locked): the book
    is left at the history's head, ready for the recovery's outcome to be written.

    The history is walked whole first: a recovery never starts from a broken one. From it
    come the meter and chain head, the rate, reset amount and paytable (the newest entries
    that set them; a value the history no longer holds after a retention purge is kept from
    the row and listed as such in the entry), whether a jackpot was won since the rate was
    set, each table's last hit taken and whether it is out of play. Every table is
    re-baselined from its next reading (nothing credited for what it counted before) and
    held until a technician releases it. An armed change is dropped; it is armed again from
    its approved submission.

    A link of levels gets its levels back too (``controller.core.rebuild``): their
    configuration, each meter where the history leaves it, their wins; each mystery level
    unarmed, then armed after the recovery entry with a fresh ``draw`` (its old trigger was
    never in the history). A mixed-game link gets its other games' paytables and each
    table's game.
    """
    row = await uow.links.lock(link_id)
    if row is None:
        raise NotFound(f"no link {link_id!r}")
    states, problems = await load_links(uow, book, [link_id], law=law)
    for held, why in (await uow.meta.software_holds([link_id])).items():
        problems.setdefault(held, why)  # held by a failed check of the software
    state = states[link_id]
    anchor = await uow.entries.anchor(link_id)
    start: TrailState | None = None
    if anchor is not None:
        manifest = await purge_manifest(uow.conn, link_id, anchor.seq)
        start = None if manifest is None else TrailState.from_manifest(manifest)
    v = ChainVerifier(book.key, link_id, anchor, start)
    rebuilt = PoolRebuilder(link_id, start=start, total=v.meter, purged=anchor is not None)
    last_at = 0
    async with aclosing(uow.entries.stream(link_id, v.seq)) as chain:
        async for entry in chain:
            if v.feed(entry) is not None:
                break
            try:
                rebuilt.feed(entry)
            except RebuildError as exc:
                raise StoreError(f"cannot recover from a broken history: {exc}") from None
            last_at = entry.at_us
    if v.problem is not None:
        raise StoreError(f"cannot recover from a broken history: {v.problem}")
    pool = rebuilt.result()
    if v.seq == 0:
        raise StoreError(f"link {link_id} has no history to recover from")
    entries = uow.entries
    kept: list[str] = []
    said_rate = await entries.said(link_id, RATE_KINDS, ("rate_bp", "to_bp"))
    said_reset = await entries.said(link_id, RESET_KINDS, ("reset_cents", "to_cents"))
    said_lines = pool.paytable or await entries.said(link_id, PAYTABLE_KINDS, ("paytable",))
    if said_rate is None:
        kept.append("rate_bp")
    if said_reset is None:
        kept.append("reset_cents")
    if said_lines is None:
        kept.append("paytable")
    rate_seq = await entries.last_seq_of(link_id, RATE_KINDS)
    won = await entries.count_after(link_id, EntryKind.JACKPOT_RESET, rate_seq or 0)
    tables: dict[str, TableState] = {}
    for tid, ts in sorted(state.tables.items()):
        ts = await _recovered_table(uow, link_id, ts)
        game = pool.games.get(tid)
        if game is not None:
            ts = replace(ts, config=replace(ts.config, game=None if game is state.game else game))
        tables[tid] = ts
    levels = pool.levels(state.levels)
    if levels:
        levels = tuple(
            replace(lv, draws=(draw(lv.config),)) if lv.config.mystery is not None else lv
            for lv in levels
        )
    recovered = LinkState(
        link_id=link_id,
        game=state.game,
        rate_bp=state.rate_bp if said_rate is None else int(said_rate),
        reset_cents=state.reset_cents if said_reset is None else int(said_reset),
        paytable=(state.paytable if said_lines is None else make_paytable(state.game, said_lines)),
        law=state.law,
        meter_units=v.meter,
        hit_policy=state.hit_policy,
        jackpot_won_since_rate_set=(
            state.jackpot_won_since_rate_set if rate_seq is None else bool(won)
        ),
        tables=tables,
        last_at_us=last_at,
        # Read from the history when the link was loaded: a recovery never unmarks it.
        demonstration=state.demonstration,
        paytables={**state.paytables, **pool.paytables},
        levels=(
            levels
            if levels is not None
            else ()
            if state.fixed_pay
            else classic_levels(
                rate_bp=state.rate_bp if said_rate is None else int(said_rate),
                reset_cents=state.reset_cents if said_reset is None else int(said_reset),
                meter_units=v.meter,
            )
        ),
    )
    if levels:  # a pool of levels: the whole rate, level 1's reset
        recovered = replace(
            recovered,
            rate_bp=pool_rate_bp(lv.config for lv in levels),
            reset_cents=levels[0].config.reset_cents,
        )
    outcome = record_recovery(
        recovered,
        at_us=max(at_us, last_at),
        explanation=(
            f"link state recovered from its history by {by}, approved by {approved_by}: {reason}"
        ),
        details={
            "by": by,
            "approved_by": approved_by,
            "reason": reason,
            "found": problems.get(link_id, "nothing"),
            "meter_units": v.meter,
            "rate_bp": recovered.rate_bp,
            "reset_cents": recovered.reset_cents,
            "kept_from_row": kept + (["levels"] if levels and pool.configs is None else []),
            # Where the history leaves each meter, said apart: an entry's "meters" is how it
            # moved them ({key: [before, delta]}), which this entry does not.
            **(
                {"recovered_meters": dict(sorted(pool.meters.items()))}
                if levels and pool.meters
                else {}
            ),
            "dropped_armed_change": armed_json(state.armed),
            "tables": {
                tid: {
                    "config": config_dict(ts.config),
                    "last_hit_seq": ts.last_hit_seq,
                    "hit_epoch": ts.hit_epoch,
                    "out_of_play": ts.out_of_play,
                }
                for tid, ts in tables.items()
            },
        },
    )
    book.heads[link_id] = (v.seq, v.prev_hash)
    book.meters[link_id] = v.meter
    return Recovery(outcome, row, problems.get(link_id), v.meter)


async def _recovered_table(uow: UnitOfWork, link_id: str, ts: TableState) -> TableState:
    """A table as its history has it: its last hit taken (so a hit still at the head of its
    FIFO is not taken twice) and whether it is out of play; no baseline, held."""
    tid = ts.config.table_id
    hit_id = await uow.entries.last_table_hit(link_id, tid)
    claim: HitClaim | None = None
    epoch = 0
    if hit_id is not None:
        number = hit_id.rsplit("#", 1)[1]
        if "." in number:
            epoch_text, number = number.split(".", 1)
            epoch = int(epoch_text)
        hit = await uow.hits.get(hit_id)
        cards = None if hit is None or hit.cards is None else hit.cards.split(",")
        claim = HitClaim(
            table_seq=int(number),
            seat=hit.seat if hit is not None else 1,
            hand=HandCategory[hit.hand] if hit is not None else HandCategory.ROYAL_FLUSH,
            round=hit.round if hit is not None else 0,
            cards=None if cards is None else tuple(int(c) for c in cards),
        )
    play = await uow.entries.newest_kind(
        link_id, tid, (EntryKind.TABLE_OUT_OF_PLAY, EntryKind.TABLE_RETURNED_TO_PLAY)
    )
    return TableState(
        config=ts.config,
        last_hit_seq=None if claim is None else claim.table_seq,
        last_hit_round=None if claim is None else claim.round,
        last_hit_claim=claim,
        hit_epoch=epoch,
        hit_pending=True,
        out_of_play=play == str(EntryKind.TABLE_OUT_OF_PLAY),
    )
