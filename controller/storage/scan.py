"""Checking one segment of one link's chain, with the database's own driver.

Kept apart from the rest of storage (no SQLAlchemy) so that the worker processes of
``progressive ledger verify`` start quickly.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import asyncpg

from controller.core.ledger import ENTRY_COLUMNS, Anchor, ChainProblem, ChainVerifier, entry_bytes
from controller.core.meter_trail import TrailPart, TrailState
from controller.storage.blocks import BrokenSeal, Run, decode, sealed_runs

BATCH = 20_000
_SELECT = (
    f"SELECT {', '.join(ENTRY_COLUMNS)} FROM meter_entries "
    "WHERE link_id = {link} AND seq >= {lo} AND seq <= {hi} ORDER BY seq"
)
_BLOCKS = (
    "SELECT body, runs, seal, signature FROM meter_blocks "
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
    # Check every entry of a sealed block too, not the block's seal and runs.
    every_seal: bool = False
    # The checkpoint key (raw), when checked against signed checkpoints: a sealed block is
    # taken by its seal only if it signed the block too.
    public: bytes | None = None


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
    # Checkpoints whose digest covers entries of a sealed block: checked by their entry's
    # seal and the block's seal, not by the digest (``--every-seal`` checks the digest).
    blind: list[int] = field(default_factory=list)
    sealed: int = 0  # entries checked by their block's seal


# ----------------------------------------------------------------------------- reading rows


def _sqlite_rows(path: str, key: bytes, seg: Segment, lo: int) -> Iterator[list[Any]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        args = (seg.link_id, lo, seg.hi)
        cur = conn.execute(_SELECT.format(link="?", lo="?", hi="?"), args)
        bodies = conn.execute(_BLOCKS.format(link="?", lo="?", hi="?"), args)
        rows = (row for batch in iter(lambda: cur.fetchmany(BATCH), []) for row in batch)
        yield from _batches(_merge(rows, _block_items(key, seg, bodies, lo)))
    finally:
        conn.close()


async def _pg_batches(target: dict[str, Any], key: bytes, seg: Segment, lo: int) -> list[list[Any]]:
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
        return list(_batches(_merge(iter(rows), _block_items(key, seg, bodies, lo))))
    finally:
        await conn.close()


def _block_items(key: bytes, seg: Segment, bodies: Any, lo: int) -> Iterator[Any]:
    """What the blocks hold of entries ``lo .. seg.hi``, in order: a sealed block's runs
    whole (``blocks.Run``), or its entries one by one when the segment checks every seal, the
    block has no seal (or no signature by the segment's checkpoint key), or a run reaches past
    the segment (a run that ends at ``lo``, the entry
    a later segment resumes from, is whole for it). A block whose bytes are not a block, or
    whose seal fails, gives an entry that fails the walk where it stands (its range is not
    trusted)."""
    hi = seg.hi
    for body, runs, seal, signature in bodies:
        body = bytes(body)
        broken = False
        try:
            try:
                sealed = (
                    None
                    if seg.every_seal
                    else sealed_runs(
                        key,
                        seg.link_id,
                        body,
                        _bytes(runs),
                        _bytes(seal),
                        public=seg.public,
                        signature=_bytes(signature),
                    )
                )
            except BrokenSeal:
                # Its entries checked one by one name the one edited; if none is, the mark
                # after them fails the walk there.
                sealed, broken = None, True
            if sealed is not None:
                wanted = [r for r in sealed if r.last >= lo and r.seq <= hi]
                if all(_whole(r, seg, lo) for r in wanted):
                    yield from wanted
                    continue
            entries = decode(seg.link_id, body)
        except ValueError as exc:
            raise UnreadableBlock(str(exc)) from exc
        for e in entries:
            if lo <= e.seq <= hi:
                yield e
        if broken and entries and lo <= entries[-1].seq <= hi:
            yield SealMismatch(seg.link_id, entries[-1].seq + 0.5, entries[0].seq, entries[-1].seq)


class SealMismatch(NamedTuple):
    """Where a walk meets a block whose seal fails though each of its entries is whole (its
    runs or seal edited): just after the block's last entry, in merge order."""

    link_id: str
    seq: float
    first: int
    last: int


def _whole(run: Run, seg: Segment, lo: int) -> bool:
    """Is ``run`` within the segment (or the entry a later segment resumes from, whole)?"""
    return (lo <= run.seq and run.last <= seg.hi) or (not seg.first and run.last == lo)


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


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
        _sqlite_rows(target["path"], key, seg, lo)
        if kind == "sqlite"
        else asyncio.run(_pg_batches(target, key, seg, lo))
    )
    walk = _Walk(seg)
    for batch in batches:
        items = batch
        if verifier is None:
            if not batch or (batch[0].last if isinstance(batch[0], Run) else batch[0][1]) != lo:
                break
            first = batch[0]
            verifier = ChainVerifier(
                key,
                seg.link_id,
                Anchor(lo, first.seal, first.after)
                if isinstance(first, Run)
                else Anchor(first[1], first[14], first[6]),
            )
            items = batch[1:]
        # Rows are fed in stretches between runs; a run at once.
        start = 0
        for i, item in enumerate(items):
            if isinstance(item, SealMismatch):
                if start < i and walk.rows(verifier, items[start:i]) is not None:
                    break
                verifier._fail(
                    item.first,
                    f"the seal of the block of entries {item.first} to {item.last} does not "
                    "match what it holds (edited)",
                )
                break
            if isinstance(item, Run):
                if start < i and walk.rows(verifier, items[start:i]) is not None:
                    break
                start = i + 1
                if walk.run(verifier, item) is not None:
                    break
        else:
            if start < len(items):
                walk.rows(verifier, items[start:])
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
        seg,
        verifier.count,
        verifier.problem,
        end,
        walk.awards,
        walk.checked,
        verifier.trail_part(),
        sorted(walk.blind),
        walk.sealed,
    )


@dataclass(slots=True)
class _Walk:
    """One segment's walk: rows fed in pieces cut at its checkpoints, runs of sealed blocks
    whole, and what the checkpoints found."""

    seg: Segment
    awards: list[str] = field(default_factory=list)
    checked: list[tuple[int, str]] = field(default_factory=list)
    # checkpoint index -> running SHA-256 of its entries
    open_digests: dict[int, Any] = field(default_factory=dict)
    blind: set[int] = field(default_factory=set)  # checkpoints reaching into a sealed run
    sealed: int = 0
    # Where rows are cut into pieces: each checkpoint's entry and the entry before its first.
    cuts: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        checks = self.seg.checks
        self.cuts = frozenset({c.seq for c in checks} | {c.prev_seq for c in checks if c.digest})

    def rows(self, verifier: ChainVerifier, rows: list[Any]) -> ChainProblem | None:
        if not self.seg.checks:
            return verifier.feed_many(rows, self.awards)
        cuts = self.cuts
        # Fed in pieces ending at each checkpoint's first entry - 1 and at its own entry, so
        # every piece goes into the same running digests.
        start = 0
        for i, row in enumerate(rows):
            if row[1] not in cuts and i < len(rows) - 1:
                continue
            piece = rows[start : i + 1]
            start = i + 1
            self._open(piece[0][1], piece[0][1])
            digests = list(self.open_digests.values())
            if verifier.feed_many(piece, self.awards, digests) is not None:
                return verifier.problem
            self._close(verifier.seq, verifier.seq, lambda _: verifier.prev_hash)
        return None

    def run(self, verifier: ChainVerifier, run: Run) -> ChainProblem | None:
        problem = verifier.feed_run(
            run.seq, run.last, run.prev, run.seal, run.before, run.after, run.meters
        )
        if problem is not None:
            return problem
        self.sealed += run.entries
        self._open(run.seq, run.last)
        self.blind.update(self.open_digests)
        self._close(run.seq, run.last, run.seal_of)
        return None

    def _open(self, lo: int, hi: int) -> None:
        for c in self.seg.checks:
            if c.digest and lo <= c.prev_seq + 1 <= hi and c.index not in self.open_digests:
                self.open_digests[c.index] = hashlib.sha256()

    def _close(self, lo: int, hi: int, seal_of: Callable[[int], str]) -> None:
        for c in self.seg.checks:
            if lo <= c.seq <= hi:
                bad = "" if c.hash == seal_of(c.seq) else "seal"
                d = self.open_digests.pop(c.index, None)
                if (
                    not bad
                    and c.digest
                    and c.index not in self.blind
                    and (d is None or d.hexdigest() != c.digest)
                ):
                    bad = "digest"
                self.checked.append((c.index, bad))


def digest_range(
    kind: str,
    target: dict[str, Any],
    key: bytes,
    link_id: str,
    lo: int,
    hi: int,
    *,
    every_seal: bool = False,
    public: bytes | None = None,
) -> str | None:
    """The checkpoint digest of entries ``lo .. hi`` as stored (their seals are checked by the
    chain walk), for a checkpoint whose entries span several segments. None when they reach
    into a sealed block's run and ``every_seal`` is not asked: the block's seal stands for
    them."""
    seg = Segment(link_id, lo, hi, None, True, every_seal=every_seal, public=public)
    batches: Any = (
        _sqlite_rows(target["path"], key, seg, lo)
        if kind == "sqlite"
        else asyncio.run(_pg_batches(target, key, seg, lo))
    )
    h = hashlib.sha256()
    expected = lo
    for batch in batches:
        for row in batch:
            if isinstance(row, SealMismatch):
                continue
            if isinstance(row, Run):
                return None
            if row[1] != expected:
                return f"entry {expected} missing"
            h.update(entry_bytes(row))
            expected += 1
    return h.hexdigest()
