"""The meter history of closed gaming days, kept as blocks: a link's ordinary entries of one
gaming day (contributions and registered bets, the floor's bulk) packed into one row.

68 IAC 10-6-5(d) asks for five years of meter history. Kept a row an entry, a floor of 300
tables writes about 550 million rows in five years, each with its two seals as text, its
explanation and details: hundreds of gigabytes. A block keeps exactly the same entries, their
sealed bytes unchanged: each entry's fields as the sealed form writes them, one line an entry,
compressed together, and the seals as 32 raw bytes each after them. What one entry repeats of
the one before it (the previous seal, the meter it starts from, a sequence number one
greater) is left out and put back when read. Nothing is re-sealed: ``ledger verify``
recomputes each entry's seal from the bytes read back, as it does for a row.

Kept apart from the rest of storage (no SQLAlchemy): the worker processes of ``ledger verify``
read blocks too.

The form of a block (``BLOCK_FORM`` 1), for an auditor's own tools::

    u32 (big-endian) n, the length of z
    z: zlib (RFC 1950) of the lines, joined by "\\n"; each line the fields
       seq, at_us, meter_before, delta, meter_after, kind, table_id, explanation, details,
       prev_hash, joined by U+001F, where
         seq is written as the difference from the line before (the first: from 0),
         at_us likewise,
         meter_before is empty when it is the line before's meter_after,
         prev_hash is empty when it is the line before's seal,
         table_id is U+001E when NULL;
    32 x entries bytes: each entry's seal, raw, in the order of the lines.

The link is the block's row's; an entry in a block refers to no hit, anomaly or correction.

A block is *sealed* when the controller that packs it has checked its entries first, as
``ledger verify`` would: each entry's seal recomputed, each stretch of consecutive entries
chained to the one before, its meters continuous. It then writes, beside the body:

    runs: zlib of the canonical JSON list of the block's stretches of consecutive entries,
          each [first seq, last seq, the seal the first points at, the chain's meter before
          the first, after the last, {meter: [seq first named, where it stood, where the
          stretch left it]}] (the meters of a link of levels; {} when none moves);
    seal: keyed BLAKE2b-256 (the ledger key, person "progressive-blk1") of the link id,
          U+001F, the length of runs (u32, big-endian), runs and the body;
    signature: when the controller signs checkpoints, Ed25519 with the checkpoint key over
          "progressive-block-v1\n", the link id, U+001F and the seal.

``ledger verify`` then checks the block's seal and joins each stretch to the chain where it
stands (its first entry's predecessor, the meters), without reading each entry again: the
seal could only be made by the ledger key's holder, after the check. Checked against signed
checkpoints, it asks the block's signature too, which the ledger key cannot make: a block
without one, or whose signature fails, is checked entry by entry (only slower).
``ledger verify --every-seal`` and a block without a seal (packed before seals, or a stretch
whose meters are not a plain continuation) are checked entry by entry too.
"""

from __future__ import annotations

import hmac
import json
import struct
import zlib
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from controller.core.ledger import NULL_MARK, US, Anchor, ChainVerifier, SealedEntry, keyed
from controller.core.reducer import EntryKind

BLOCK_FORM = 1
# The kinds a block holds: the entries the floor writes by the million, which no read looks
# for by kind. Every other entry (a hit's, a change's, a purge's, ...) stays a row of its own,
# found by the queries that look for it.
BLOCK_KINDS = frozenset({str(EntryKind.CONTRIBUTION), str(EntryKind.BETS_REGISTERED)})
_LEN = struct.Struct(">I")
_SEAL = 32


class BlockRange(NamedTuple):
    """What a block's row says of it beside its bytes (kept for finding it, never trusted:
    ``ledger verify`` checks them against what the bytes hold)."""

    first_seq: int
    last_seq: int
    first_at_us: int
    last_at_us: int
    entries: int


def blockable(e: SealedEntry) -> bool:
    """May ``e`` go into a block? An ordinary entry whose text fits the block's lines."""
    return (
        e.kind in BLOCK_KINDS
        and e.hit_id is None
        and e.anomaly_id is None
        and e.correction_id is None
        and e.delta_units >= 0
        and "\n" not in e.explanation
        and "\n" not in e.details
        and (e.table_id is None or "\n" not in e.table_id)
    )


def never_blocked(kinds: Iterable[str]) -> list[str]:
    """``kinds`` as a query of rows alone names them: refused when a block may hold one, as
    such a query would miss the entries of closed days."""
    names = sorted(str(k) for k in kinds)
    if not BLOCK_KINDS.isdisjoint(names):
        raise ValueError(f"{names}: blocks hold entries of these kinds; read rows and blocks")
    return names


def encode(entries: Sequence[SealedEntry]) -> tuple[bytes, BlockRange]:
    """One link's entries, in sequence order, as a block's bytes and range."""
    if not entries:
        raise ValueError("a block holds at least one entry")
    link = entries[0].link_id
    lines: list[str] = []
    seals = bytearray()
    seq = at = 0
    after: int | None = None
    prev: str | None = None
    for e in entries:
        if e.link_id != link or e.seq <= seq or not blockable(e):
            raise ValueError(f"link {link}, entry {e.seq}: not an entry of this block")
        lines.append(
            f"{e.seq - seq}\x1f{e.at_us - at}"
            f"\x1f{'' if e.meter_before_units == after else e.meter_before_units}"
            f"\x1f{e.delta_units}\x1f{e.meter_after_units}\x1f{e.kind}"
            f"\x1f{NULL_MARK if e.table_id is None else e.table_id}"
            f"\x1f{e.explanation}\x1f{e.details}\x1f{'' if e.prev_hash == prev else e.prev_hash}"
        )
        seals += bytes.fromhex(e.hash)
        seq, at, after, prev = e.seq, e.at_us, e.meter_after_units, e.hash
    z = zlib.compress("\n".join(lines).encode(), 6)
    body = _LEN.pack(len(z)) + z + bytes(seals)
    first = entries[0]
    return body, BlockRange(first.seq, seq, first.at_us, at, len(entries))


def decode(link_id: str, body: bytes) -> list[SealedEntry]:
    """A block's entries, as they were sealed. Raises ``ValueError`` when the bytes are not a
    block (``ledger verify`` names such a block as edited)."""
    try:
        (n,) = _LEN.unpack_from(body)
        text = zlib.decompress(body[4 : 4 + n]).decode()
    except (struct.error, zlib.error, UnicodeDecodeError) as exc:
        raise ValueError(f"not a block of entries: {exc}") from exc
    seals = body[4 + n :]
    lines = text.split("\n")
    if len(seals) != _SEAL * len(lines):
        raise ValueError("the block's seals do not match its entries")
    out: list[SealedEntry] = []
    seq = at = 0
    after: int | None = None
    prev: str | None = None
    mk = SealedEntry
    for i, line in enumerate(lines):
        f = line.split(US)
        if len(f) != 10:
            raise ValueError(f"entry {i + 1} of the block has {len(f)} fields, not 10")
        seq += int(f[0])
        at += int(f[1])
        before = after if f[2] == "" else int(f[2])
        p = prev if f[9] == "" else f[9]
        if before is None or p is None:
            raise ValueError("the block's first entry does not say where it starts")
        h = seals[_SEAL * i : _SEAL * (i + 1)].hex()
        after = int(f[4])
        out.append(
            mk(
                link_id, seq, at, f[5], before, int(f[3]), after,
                None if f[6] == NULL_MARK else f[6], None, None, None, f[7], f[8], p, h,
            )
        )  # fmt: skip
        prev = h
    return out


def runs(entries: Iterable[SealedEntry], *, most: int) -> list[list[SealedEntry]]:
    """The blockable of ``entries`` (one link's, in order), at most ``most`` to a block. The
    others stay rows: a block's range may hold entries that are not in it."""
    out: list[list[SealedEntry]] = [[]]
    for e in entries:
        if blockable(e):
            if len(out[-1]) >= most:
                out.append([])
            out[-1].append(e)
    return [r for r in out if r]


# ----------------------------------------------------------------------------- sealed blocks


class Run(NamedTuple):
    """A stretch of consecutive entries of a sealed block, as the controller checked it before
    sealing the block. Laid out as an entry row is where a merge looks (``[0]`` the link,
    ``[1]`` the first sequence number), so rows and runs merge in sequence order."""

    link_id: str
    seq: int  # the first entry
    last: int
    prev: str  # the seal the first entry points at
    before: int  # the chain's meter before the first entry
    after: int  # after the last
    meters: dict[str, tuple[int, int, int]]  # meter -> (seq first named, stood at, left at)
    seals: bytes  # the block's seals, raw
    place: int  # the first entry's place among them

    @property
    def entries(self) -> int:
        return self.last - self.seq + 1

    def seal_of(self, seq: int) -> str:
        """The seal of entry ``seq`` of the run, as hex."""
        i = _SEAL * (self.place + seq - self.seq)
        return self.seals[i : i + _SEAL].hex()

    @property
    def seal(self) -> str:
        return self.seal_of(self.last)


def _stretches(entries: Sequence[SealedEntry]) -> list[list[SealedEntry]]:
    out: list[list[SealedEntry]] = []
    for e in entries:
        if out and e.seq == out[-1][-1].seq + 1:
            out[-1].append(e)
        else:
            out.append([e])
    return out


class BrokenSeal(ValueError):
    """A block whose seal does not match what it holds."""


class UnsealableBlock(ValueError):
    """Entries that fail the check a block's seal stands for: the history is broken there."""


def runs_of(key: bytes, entries: Sequence[SealedEntry]) -> bytes | None:
    """The ``runs`` of a block of ``entries``, after checking every entry as ``ledger verify``
    does (raises ``UnsealableBlock`` naming the first that fails). None when a stretch's meters
    are not a plain continuation (the pool moved before the stretch first names its levels'
    meters, as at a link's first split after unsplit entries): such a block is kept unsealed
    and checked entry by entry."""
    out: list[list[object]] = []
    for run in _stretches(entries):
        first, last = run[0], run[-1]
        v = ChainVerifier(
            key, first.link_id, Anchor(first.seq - 1, first.prev_hash, first.meter_before_units)
        )
        problem = v.feed_many(run)
        if problem is not None:
            raise UnsealableBlock(str(problem))
        part = v.trail_part()
        ends = part.state.meters or {}
        if part.drift or part.pending or part.state.armed or ends.keys() != part.assumed.keys():
            return None
        meters = {k: [seq, was, ends[k]] for k, (seq, _, was) in part.assumed.items()}
        out.append(
            [first.seq, last.seq, first.prev_hash, first.meter_before_units,
             last.meter_after_units, meters]
        )  # fmt: skip
    return zlib.compress(json.dumps(out, separators=(",", ":"), sort_keys=True).encode(), 9)


def block_seal(key: bytes, link_id: str, runs: bytes, body: bytes) -> bytes:
    """The seal of a block's runs and body (keyed BLAKE2b-256, RFC 7693)."""
    h = keyed(key, b"progressive-blk1").copy()
    h.update(link_id.encode() + b"\x1f" + _LEN.pack(len(runs)))
    h.update(runs)
    h.update(body)
    return bytes(h.digest())


_SIGNED = b"progressive-block-v1\n"  # block signatures mean nothing elsewhere


def _signed(link_id: str, seal: bytes) -> bytes:
    return _SIGNED + link_id.encode() + b"\x1f" + seal


def sign_block(signer: Ed25519PrivateKey, link_id: str, seal: bytes) -> bytes:
    """The checkpoint key's signature of a block's seal."""
    return signer.sign(_signed(link_id, seal))


def signed_by(public: bytes, link_id: str, seal: bytes, signature: bytes | None) -> bool:
    """Does ``signature`` sign the block's seal with the checkpoint key ``public`` (raw)?"""
    if signature is None:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(bytes(signature), _signed(link_id, seal))
    except (InvalidSignature, ValueError):
        return False
    return True


def sealed_runs(
    key: bytes,
    link_id: str,
    body: bytes,
    runs: bytes | None,
    seal: bytes | None,
    *,
    public: bytes | None = None,
    signature: bytes | None = None,
) -> list[Run] | None:
    """A sealed block's runs, once its seal is checked (and, with ``public``, its signature);
    None for a block without a seal, or without a signature ``public`` verifies. Raises
    ``BrokenSeal`` when the seal does not match (the block was edited)."""
    if runs is None or seal is None:
        return None
    if not hmac.compare_digest(block_seal(key, link_id, runs, body), bytes(seal)):
        raise BrokenSeal("the block's seal does not match its entries and runs")
    if public is not None and not signed_by(public, link_id, bytes(seal), signature):
        return None
    try:
        (n,) = _LEN.unpack_from(body)
        listed = json.loads(zlib.decompress(runs))
    except (struct.error, zlib.error, ValueError) as exc:  # sealed, so never: but say so
        raise ValueError(f"its runs are not readable: {exc}") from exc
    seals = bytes(body[4 + n :])
    out: list[Run] = []
    index = 0
    for first, last, prev, before, after, meters in listed:
        out.append(
            Run(
                link_id, first, last, prev, before, after,
                {k: (s, w, e) for k, (s, w, e) in meters.items()}, seals, index,
            )
        )  # fmt: skip
        index += last - first + 1
    if _SEAL * index != len(seals):
        raise ValueError("its runs do not match its seals")
    return out


class Packed(NamedTuple):
    """A block ready to be written: its bytes, range, and runs and seal when sealed."""

    link_id: str
    body: bytes
    range: BlockRange
    runs: bytes | None
    seal: bytes | None
    signature: bytes | None


def pack(
    entries: Sequence[SealedEntry],
    key: bytes | None = None,
    signer: Ed25519PrivateKey | None = None,
) -> Packed:
    """``entries`` as a block, sealed when ``key`` is given (and signed with the checkpoint
    key ``signer``): its entries are checked first (``runs_of``, which raises
    ``UnsealableBlock`` on one that fails). CPU work: callers on an event loop run it in a
    thread."""
    body, r = encode(entries)
    link_id = entries[0].link_id
    runs = None if key is None else runs_of(key, entries)
    seal = None if key is None or runs is None else block_seal(key, link_id, runs, body)
    signature = None if seal is None or signer is None else sign_block(signer, link_id, seal)
    return Packed(link_id, body, r, runs, seal, signature)
