"""Checking one segment of one link's chain, with the database's own driver.

Kept apart from the rest of storage (no SQLAlchemy) so that the worker processes of
``progressive ledger verify`` start quickly.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import asyncpg

from controller.core.ledger import ENTRY_COLUMNS, Anchor, ChainProblem, ChainVerifier, entry_bytes
from controller.core.meter_trail import TrailPart, TrailState
from controller.storage.blocks import decode

BATCH = 20_000
_SELECT = (
    f"SELECT {', '.join(ENTRY_COLUMNS)} FROM meter_entries "
    "WHERE link_id = {link} AND seq >= {lo} AND seq <= {hi} ORDER BY seq"
)
_BLOCKS = (
    "SELECT body FROM meter_blocks "
    "WHERE link_id = {link} AND last_seq >= {lo} AND first_seq <= {hi} ORDER BY first_seq"
)


@dataclass(frozen=True, slots=True)
class CheckpointCheck:
    """A signed checkpoint as one segment checks it: the seal of entry ``seq`` and, when
    ``digest`` is given, the digest of entries ``prev_seq + 1 .. seq`` (all in the segment)."""

    index: int  # which checkpoint, for the caller
    prev_seq: int
    seq: int
    hash: str
    digest: str | None


@dataclass(frozen=True, slots=True)
class Segment:
    link_id: str
    lo: int  # first sequence number checked
    hi: int  # last sequence number checked
    start: Anchor | None  # where the chain stands before ``lo`` if known (first segment)
    first: bool
    checks: tuple[CheckpointCheck, ...] = ()
    # Where the meters of a link of levels stood at ``start`` (a purge manifest's word);
    # None from an anchor: not known here (the first segment from entry 1 knows them).
    meters: TrailState | None = None


@dataclass(slots=True)
class SegmentResult:
    segment: Segment
    count: int
    problem: ChainProblem | None
    end: Anchor | None  # the last verified entry
    awards: list[str]
    # Checkpoints whose entry was reached, each with what differs: "" (nothing), "seal",
    # "digest".
    checked: list[tuple[int, str]]
    # The meters and mystery armings as the walk found them (``meter_trail.stitch`` checks
    # what a segment not starting from a known state took on trust).
    trail: TrailPart | None = None


# ----------------------------------------------------------------------------- reading rows


def _sqlite_rows(path: str, seg: Segment, lo: int) -> Iterator[list[Any]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        args = (seg.link_id, lo, seg.hi)
        cur = conn.execute(_SELECT.format(link="?", lo="?", hi="?"), args)
        bodies = conn.execute(_BLOCKS.format(link="?", lo="?", hi="?"), args)
        rows = (row for batch in iter(lambda: cur.fetchmany(BATCH), []) for row in batch)
        yield from _batches(_merge(rows, _block_entries(seg.link_id, bodies, lo, seg.hi)))
    finally:
        conn.close()


async def _pg_batches(target: dict[str, Any], seg: Segment, lo: int) -> list[list[Any]]:
    conn = await asyncpg.connect(target["dsn"], server_settings=target["server_settings"])
    query = _SELECT.format(link="$1", lo="$2", hi="$3")
    try:
        # The segment's blocks are asked for first, and its rows in keyset chunks, the next
        # requested before this one is kept, so the server works on it meanwhile.
        bodies = await conn.fetch(
            _BLOCKS.format(link="$1", lo="$2", hi="$3"), seg.link_id, lo, seg.hi
        )
        rows: list[Any] = []
        start = lo
        pending = asyncio.ensure_future(
            conn.fetch(query, seg.link_id, start, min(seg.hi, start + BATCH - 1))
        )
        while pending is not None:
            batch = await pending
            start += BATCH
            pending = (
                asyncio.ensure_future(
                    conn.fetch(query, seg.link_id, start, min(seg.hi, start + BATCH - 1))
                )
                if start <= seg.hi
                else None
            )
            rows.extend(batch)
        return list(_batches(_merge(iter(rows), _block_entries(seg.link_id, bodies, lo, seg.hi))))
    finally:
        await conn.close()


def _block_entries(link_id: str, bodies: Any, lo: int, hi: int) -> Iterator[Any]:
    """The entries ``lo .. hi`` the blocks hold, in order. A block whose bytes are not a block
    gives an entry that fails the walk where it stands (its range is not trusted)."""
    for (body,) in bodies:
        try:
            entries = decode(link_id, bytes(body))
        except ValueError as exc:
            raise UnreadableBlock(str(exc)) from exc
        for e in entries:
            if lo <= e.seq <= hi:
                yield e


class UnreadableBlock(ValueError):
    """A block of the history whose bytes are not a block (edited)."""


def _merge(rows: Iterator[Any], blocks: Iterator[Any]) -> Iterator[Any]:
    """Rows and block entries, each in sequence order, as one sequence in order."""
    r = next(rows, None)
    b = next(blocks, None)
    while r is not None or b is not None:
        if b is None or (r is not None and r[1] < b[1]):
            yield r
            r = next(rows, None)
        else:
            yield b
            b = next(blocks, None)


def _batches(items: Iterator[Any]) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def check_segment(kind: str, target: dict[str, Any], key: bytes, seg: Segment) -> SegmentResult:
    """Verify one segment; runs in a worker process or in the caller's thread."""
    try:
        return _walk(kind, target, key, seg)
    except UnreadableBlock as exc:
        problem = ChainProblem(
            seg.link_id,
            None,
            f"a block of entries {seg.lo} to {seg.hi} is not readable: {exc} (edited)",
        )
        return SegmentResult(seg, 0, problem, None, [], [])


def _walk(kind: str, target: dict[str, Any], key: bytes, seg: Segment) -> SegmentResult:
    if seg.first:
        lo = seg.lo
        verifier = ChainVerifier(key, seg.link_id, seg.start, seg.meters)
    else:
        lo = seg.lo - 1  # read the entry before: the chain resumes from its seal and meter
        verifier = None
    batches: Any = (
        _sqlite_rows(target["path"], seg, lo)
        if kind == "sqlite"
        else asyncio.run(_pg_batches(target, seg, lo))
    )
    awards: list[str] = []
    checked: list[tuple[int, str]] = []
    open_digests: dict[int, Any] = {}  # index -> running SHA-256 of a checkpoint's entries
    cuts = {c.seq for c in seg.checks} | {c.prev_seq for c in seg.checks if c.digest}
    for batch in batches:
        rows = batch
        if verifier is None:
            if not batch or batch[0][1] != lo:
                break
            first = batch[0]
            verifier = ChainVerifier(key, seg.link_id, Anchor(first[1], first[14], first[6]))
            rows = batch[1:]
        if not seg.checks:
            if verifier.feed_many(rows, awards) is not None:
                break
            continue
        # Fed in pieces ending at each checkpoint's first entry - 1 and at its own entry, so
        # every piece goes into the same running digests.
        start = 0
        for i, row in enumerate(rows):
            if row[1] not in cuts and i < len(rows) - 1:
                continue
            piece = rows[start : i + 1]
            start = i + 1
            s0 = piece[0][1]
            for c in seg.checks:
                if c.digest and c.prev_seq + 1 == s0 and c.index not in open_digests:
                    open_digests[c.index] = hashlib.sha256()
            if verifier.feed_many(piece, awards, list(open_digests.values())) is not None:
                break
            for c in seg.checks:
                if c.seq == verifier.seq:
                    bad = "" if c.hash == verifier.prev_hash else "seal"
                    d = open_digests.pop(c.index, None)
                    if not bad and c.digest and (d is None or d.hexdigest() != c.digest):
                        bad = "digest"
                    checked.append((c.index, bad))
        if verifier.problem is not None:
            break
    if verifier is None:
        verifier = ChainVerifier(key, seg.link_id, None)
        verifier._fail(lo, f"entry {lo} missing (deleted?)")
    elif verifier.problem is None and verifier.seq < seg.hi:
        verifier._fail(verifier.seq + 1, f"entry {verifier.seq + 1} missing (deleted?)")
    end = (
        Anchor(verifier.seq, verifier.prev_hash, verifier.meter)
        if verifier.problem is None
        else None
    )
    return SegmentResult(
        seg, verifier.count, verifier.problem, end, awards, checked, verifier.trail_part()
    )


def digest_range(kind: str, target: dict[str, Any], link_id: str, lo: int, hi: int) -> str:
    """The checkpoint digest of entries ``lo .. hi`` as stored (their seals are checked by the
    chain walk), for a checkpoint whose entries span several segments."""
    seg = Segment(link_id, lo, hi, None, True)
    batches: Any = (
        _sqlite_rows(target["path"], seg, lo)
        if kind == "sqlite"
        else asyncio.run(_pg_batches(target, seg, lo))
    )
    h = hashlib.sha256()
    expected = lo
    for batch in batches:
        for row in batch:
            if row[1] != expected:
                return f"entry {expected} missing"
            h.update(entry_bytes(row))
            expected += 1
    return h.hexdigest()
