"""``progressive ledger verify``: walk every link's chain straight from the database.

Each chain is cut into segments by sequence number; a segment is checked on its own, starting
from the entry just before it, so segments can be checked in parallel processes (a chain is
whole when every segment is). Rows are read with the database's own driver in large batches.
Beyond the chains it checks that each link row ends where its chain ends, that no history
exists for unknown links, and that every hit paid from a meter has exactly one award entry
(and every award entry a paid hit), that every ledger anchor is vouched for by a sealed
retention purge entry of its chain, and that the state each link resumes from (its row, its
tables' counter rows) matches its seals.
"""

from __future__ import annotations

import asyncio
import bisect
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import text
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from controller.core.ledger import (
    EMPTY_DIGEST,
    Anchor,
    ChainHead,
    ChainProblem,
    ChainVerifier,
    SignedCheckpoint,
)
from controller.core.meter_trail import TrailState, stitch
from controller.periods import at_text
from controller.storage.scan import (
    CheckpointCheck,
    Segment,
    SegmentResult,
    check_segment,
    digest_range,
)
from controller.storage.store import LedgerStore
from controller.storage.unit_of_work import unit_of_work

SEGMENT = 100_000  # entries per unit of parallel work
PARALLEL_FROM = 150_000  # below this, starting worker processes costs more than it saves


@dataclass(slots=True)
class VerifyReport:
    entries: int = 0
    links: dict[str, int] = field(default_factory=dict)  # entries verified per link
    problems: list[ChainProblem] = field(default_factory=list)
    checkpoints: int = 0  # signed checkpoints the database was checked against
    # Entries checked through their sealed block (its seal and runs), not one by one; and
    # the checkpoints whose digest covers such entries (their seal is checked, their digest
    # only with ``every_seal``).
    sealed: int = 0
    digests_by_block_seal: int = 0
    # Mystery reveals whose arming a retention purge removed without keeping its commitment:
    # not broken, but not checked either.
    unverifiable: list[ChainProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _driver_target(url: URL, search_path: str | None) -> tuple[str, dict[str, Any]]:
    if url.get_backend_name() == "sqlite":
        return "sqlite", {"path": url.database}
    query = {k: v for k, v in url.query.items() if k != "search_path"}
    dsn = url.set(drivername="postgresql", query=query).render_as_string(hide_password=False)
    return "postgresql", {"dsn": dsn, "server_settings": {"search_path": search_path or "public"}}


# ----------------------------------------------------------------------------- the walk


async def verify_ledger(
    engine: AsyncEngine,
    key: bytes,
    *,
    link_ids: list[str] | None = None,
    progress: Callable[[int], None] | None = None,
    workers: int | None = None,
    checkpoints: Sequence[SignedCheckpoint] = (),
    public_key: Ed25519PublicKey | None = None,
    every_seal: bool = False,
) -> VerifyReport:
    """Every chain, and with ``checkpoints`` (read and their signatures checked by the
    caller: controller.paperwork.checkpoints) the database against them: each chain reaches its last
    checkpoint, the entry at each checkpoint has the signed seal, and the entries between a
    checkpoint and the one before it have the signed digest.

    A sealed block (``storage.blocks``) is checked by its seal, its runs joined to the chain;
    with ``public_key`` (the checkpoints' key) only if that key signed it too (the ledger key
    cannot: a history checked against signed checkpoints is no easier to rewrite with it);
    ``every_seal`` checks each of its entries as a row's, and every checkpoint's digest."""
    public = (
        None
        if public_key is None
        else public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    )
    report = VerifyReport()
    async with unit_of_work(engine, consistent=True) as uow:
        # Heads, extents and paid hits from one snapshot, so a controller committing while
        # this runs is seen either wholly or not at all; the walk stops at those heads.
        search_path = (
            await uow.conn.scalar(text("SELECT current_setting('search_path')"))
            if uow.conn.dialect.name == "postgresql"
            else None
        )
        heads = {
            lid: ChainHead(seq, h, meter)
            for lid, (seq, h, meter) in (await uow.links.chain_heads()).items()
        }
        anchors = await uow.entries.anchors()
        extents = await uow.entries.extents()
        # What the purges sealed into each chain about where it resumes.
        purges = await uow.entries.purges()
        paid = await uow.hits.paid_from_meter()
        # Where blocks lie: a segment never ends inside one, so each run is checked whole.
        spans = await uow.entries.block_spans(link_ids)
    cps_of: dict[str, list[tuple[int, SignedCheckpoint]]] = {}
    for i, sc in enumerate(checkpoints):
        cps_of.setdefault(sc.checkpoint.link_id, []).append((i, sc))
    if link_ids is not None:
        cps_of = {lid: v for lid, v in cps_of.items() if lid in link_ids}
    wanted = set(link_ids) if link_ids is not None else set(heads) | set(extents) | set(cps_of)

    segments: list[Segment] = []
    spanning: list[tuple[str, int, SignedCheckpoint]] = []  # digests read on their own
    for link_id in sorted(wanted):
        anchor = anchors.get(link_id)
        first = anchor.seq + 1 if anchor else 1
        last = max(
            extents.get(link_id, (first, first - 1))[1],
            heads[link_id].last_seq if link_id in heads else 0,
        )
        if link_id in extents and extents[link_id][0] < first:
            first = extents[link_id][0]  # entries older than the anchor: check them too
            anchor = None
        cps = sorted(
            ((i, sc) for i, sc in cps_of.get(link_id, []) if first <= sc.checkpoint.seq <= last),
            key=lambda t: t[1].checkpoint.seq,
        )
        # Segments end at checkpoints where they can, so a checkpoint's entries are digested
        # by the worker that walks them.
        ends = [sc.checkpoint.seq for _, sc in cps]
        meters = _meters_at(anchor, purges.get(link_id, []))
        block_firsts, block_lasts = spans.get(link_id, ([], []))
        lo = first
        while lo <= last:
            hi = min(last, lo + SEGMENT - 1)
            fits = [e for e in ends if lo + SEGMENT // 2 <= e <= hi]
            if fits and hi < last:
                hi = fits[-1]
            if not every_seal:
                # Past the end of the block it falls in, if any (blocks never overlap).
                b = bisect.bisect_right(block_firsts, hi) - 1
                if b >= 0 and block_firsts[b] <= hi < block_lasts[b]:
                    hi = min(last, block_lasts[b])
            checks: list[CheckpointCheck] = []
            for i, sc in cps:
                cp = sc.checkpoint
                if not lo <= cp.seq <= hi:
                    continue
                digest: str | None = cp.digest
                if cp.prev_seq >= cp.seq or cp.prev_seq + 1 < first:
                    digest = None  # nothing to digest, or entries purged by retention
                    if cp.prev_seq >= cp.seq and cp.digest != EMPTY_DIGEST:
                        report.problems.append(_cp_problem(sc, "digest", cp.seq))
                elif cp.prev_seq + 1 < lo:
                    spanning.append((link_id, i, sc))
                    digest = None
                checks.append(CheckpointCheck(i, cp.prev_seq, cp.seq, cp.hash, digest))
            segments.append(
                Segment(
                    link_id,
                    lo,
                    hi,
                    anchor if lo == first else None,
                    lo == first,
                    tuple(checks),
                    meters if lo == first else None,
                    every_seal,
                    public,
                )
            )
            lo = hi + 1

    kind, target = _driver_target(engine.url, search_path)
    total = sum(s.hi - s.lo + 1 for s in segments)
    n_workers = workers if workers is not None else min(os.cpu_count() or 1, 4)
    results: list[SegmentResult] = []
    if n_workers > 1 and total >= PARALLEL_FROM and len(segments) > 1:
        # A fork server started clean (no threads, no open connections) forks the workers,
        # with the light scanning module already imported.
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["controller.storage.scan"])
        loop = asyncio.get_running_loop()
        with ProcessPoolExecutor(max_workers=n_workers, mp_context=ctx) as pool:
            futures = [
                loop.run_in_executor(pool, check_segment, kind, target, key, seg)
                for seg in segments
            ]
            try:
                for fut in asyncio.as_completed(futures):
                    results.append(await fut)
                    report.entries += results[-1].count
                    if progress is not None:
                        progress(report.entries)
            except BaseException:
                for f in futures:
                    f.cancel()
                await asyncio.gather(*futures, return_exceptions=True)
                raise
    else:
        # A thread of our own, gone when we return (the PostgreSQL reader runs its own loop).
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-verify") as thread:
            for seg in segments:
                results.append(
                    await loop.run_in_executor(thread, check_segment, kind, target, key, seg)
                )
                report.entries += results[-1].count
                if progress is not None:
                    progress(report.entries)

    spanning_digests: dict[int, str | None] = {}
    if spanning:
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-verify") as thread:
            for link_id, i, sc in spanning:
                cp = sc.checkpoint
                spanning_digests[i] = await loop.run_in_executor(
                    thread,
                    partial(
                        digest_range,
                        kind,
                        target,
                        key,
                        link_id,
                        cp.prev_seq + 1,
                        cp.seq,
                        every_seal=every_seal,
                        public=public,
                    ),
                )

    by_link: dict[str, list[SegmentResult]] = {}
    for r in results:
        by_link.setdefault(r.segment.link_id, []).append(r)
    awards: set[tuple[str, str]] = set()
    for link_id in sorted(wanted):
        parts = sorted(by_link.get(link_id, []), key=lambda r: r.segment.lo)
        report.links[link_id] = sum(r.count for r in parts)
        for r in parts:
            awards.update((link_id, h) for h in r.awards)
            report.sealed += r.sealed
        blind = {i for r in parts for i in r.blind} | {
            i
            for i, _ in cps_of.get(link_id, [])
            if i in spanning_digests and not spanning_digests[i]
        }
        report.digests_by_block_seal += len(blind)
        problem = _first_problem(link_id, parts, report)
        if problem is None and link_id not in heads and link_id in extents:
            problem = ChainProblem(
                link_id, None, "history exists for a link the database does not have"
            )
        if problem is None and link_id in heads:
            end = parts[-1].end if parts else anchors.get(link_id)
            v = ChainVerifier(key, link_id, end)
            problem = v.finish(heads[link_id])
        if problem is not None:
            report.problems.append(problem)
        report.problems.extend(
            _against_checkpoints(link_id, cps_of.get(link_id, []), parts, heads, spanning_digests)
        )
        report.checkpoints += len(cps_of.get(link_id, []))

    for link_id, anchor in sorted(anchors.items()):
        if link_id not in wanted:
            continue
        # An anchor row is not sealed itself: only a sealed purge entry of the chain, naming
        # the same entry, seal and meter, makes it a place the chain may start from.
        if not any(
            d.get("last_seq") == anchor.seq
            and d.get("last_hash") == anchor.hash
            and d.get("meter_units_at_anchor") == anchor.meter_units
            for d in purges.get(link_id, [])
        ):
            report.problems.append(
                ChainProblem(
                    link_id,
                    anchor.seq,
                    "the ledger anchor here is not vouched for by any sealed retention purge "
                    "entry of the chain (oldest entries deleted?)",
                )
            )

    state_links = sorted(wanted & set(heads))
    if state_links:
        _, unsealed = await LedgerStore(engine, key).load_checked(state_links, software_holds=False)
        for link_id, what in sorted(unsealed.items()):
            report.problems.append(
                ChainProblem(link_id, None, f"the state it resumes from fails its check: {what}")
            )

    broken = {p.link_id for p in report.problems}
    for link_id, hit_id in sorted(paid - awards):
        if link_id in wanted and link_id not in broken:
            report.problems.append(
                ChainProblem(
                    link_id, None, f"hit {hit_id} was paid from the meter but has no award entry"
                )
            )
    for link_id, hit_id in sorted(awards - paid):
        if link_id not in broken:
            report.problems.append(
                ChainProblem(
                    link_id, None, f"award entry for hit {hit_id} has no matching paid hit"
                )
            )
    return report


def _meters_at(anchor: Anchor | None, purges: list[dict[str, Any]]) -> TrailState | None:
    """Where the meters stood at the anchor, as the purge that set it sealed them."""
    if anchor is None:
        return None
    for d in purges:
        if d.get("last_seq") == anchor.seq and d.get("last_hash") == anchor.hash:
            return TrailState.from_manifest(d)
    return None


def _first_problem(
    link_id: str, parts: list[SegmentResult], report: VerifyReport
) -> ChainProblem | None:
    """The first problem of a link's segments, in order: each segment's own, or what it took
    on trust about the meters and armings before it that the segments before do not bear out
    (68 IAC 10-6-5(b)-(c): every amount each meter showed follows from the one before)."""
    state: TrailState | None = None
    for r in parts:
        found: tuple[int, str] | None = None
        if r.trail is not None:
            found, notes, state = stitch(state, r.trail)
            report.unverifiable.extend(ChainProblem(link_id, seq, what) for seq, what in notes)
        if found is not None and (
            r.problem is None or r.problem.seq is None or found[0] <= r.problem.seq
        ):
            return ChainProblem(link_id, found[0], found[1])
        if r.problem is not None:
            return r.problem
    return None


def _signed(sc: SignedCheckpoint) -> str:
    return f"signed at {at_text(sc.checkpoint.at_us)}, checkpoint line {sc.line}"


def _cp_problem(sc: SignedCheckpoint, what: str, seq: int) -> ChainProblem:
    cp = sc.checkpoint
    if what == "seal":
        text_ = f"entry {seq}'s seal differs from the signed checkpoint ({_signed(sc)}): "
    else:
        text_ = (
            f"entries {cp.prev_seq + 1} to {cp.seq} differ from those the checkpoint "
            f"({_signed(sc)}) covers: "
        )
    return ChainProblem(cp.link_id, seq, text_ + "history rewritten")


def _against_checkpoints(
    link_id: str,
    cps: list[tuple[int, SignedCheckpoint]],
    parts: list[SegmentResult],
    heads: dict[str, ChainHead],
    spanning_digests: dict[int, str | None],
) -> list[ChainProblem]:
    """What the signed checkpoints of one link say about its chain in the database: a chain
    shorter than what was once signed lost entries, however whole its own seals say it is."""
    if not cps:
        return []
    out: list[ChainProblem] = []
    newest = max(cps, key=lambda t: t[1].checkpoint.seq)[1]
    if link_id not in heads and not parts:
        return [
            ChainProblem(
                link_id,
                None,
                f"checkpoints (the last {_signed(newest)}) cover entries up to "
                f"{newest.checkpoint.seq} of this link but the database no longer has it "
                "(link removed or database rolled back)",
            )
        ]
    ends = [r.end.seq for r in parts if r.end is not None]
    reached = max(ends, default=0)
    if link_id in heads and all(r.problem is None for r in parts):
        reached = min(reached, heads[link_id].last_seq) if ends else heads[link_id].last_seq
    if newest.checkpoint.seq > reached and all(r.problem is None for r in parts):
        out.append(
            ChainProblem(
                link_id,
                None,
                f"chain ends at entry {reached} but the checkpoint ({_signed(newest)}) covers "
                f"entry {newest.checkpoint.seq}: entries truncated or database rolled back",
            )
        )
    by_index = dict(cps)
    for r in parts:
        for i, bad in r.checked:
            sc = by_index[i]
            spanned = spanning_digests.get(i)
            if not bad and spanned is not None and spanned != sc.checkpoint.digest:
                bad = "digest"
            if bad:
                out.append(_cp_problem(sc, bad, sc.checkpoint.seq))
    return out
