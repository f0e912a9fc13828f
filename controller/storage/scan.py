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

BATCH = 20_000
_SELECT = (
    f"SELECT {', '.join(ENTRY_COLUMNS)} FROM meter_entries "
    "WHERE link_id = {link} AND seq >= {lo} AND seq <= {hi} ORDER BY seq"
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
        cur = conn.execute(_SELECT.format(link="?", lo="?", hi="?"), (seg.link_id, lo, seg.hi))
        while batch := cur.fetchmany(BATCH):
            yield batch
    finally:
        conn.close()


async def _pg_batches(target: dict[str, Any], seg: Segment, lo: int) -> list[list[Any]]:
    conn = await asyncpg.connect(target["dsn"], server_settings=target["server_settings"])
    query = _SELECT.format(link="$1", lo="$2", hi="$3")
    try:
        out: list[list[Any]] = []
        # Keyset chunks; the next is requested before this one is kept, so the server works
        # on it meanwhile.
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
            out.append(batch)
        return out
    finally:
        await conn.close()


def check_segment(kind: str, target: dict[str, Any], key: bytes, seg: Segment) -> SegmentResult:
    """Verify one segment; runs in a worker process or in the caller's thread."""
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
