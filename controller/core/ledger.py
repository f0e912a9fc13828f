"""The meter history as a hash chain, one chain per link.

Each entry is sealed with a keyed BLAKE2b-256 MAC over its fields, which include the previous
entry's seal. The key lives outside the database, so someone who can write to the database
but does not hold the key cannot edit, insert or delete an entry and recompute the chain:
``ChainVerifier`` finds the first entry that does not follow from the one before it.

68 IAC 10-6-5(b)-(c), 10-8-5(b)-(c): a record of every amount the meter showed, and an
explanation for every reduction.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from controller.core.meter_trail import ARMED_KIND, METERS_MARK, MeterTrail, TrailPart, TrailState
from controller.core.reducer import REDUCING_KINDS, EntryKind, MeterEvent
from controller.core.reducer.conservation import entry_details, entry_meters

GENESIS = "0" * 64


# ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``, the encoder
# made once: json.dumps makes one at every call given any of those arguments, and this text is
# made for every entry and row written.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_details(details: Mapping[str, Any] | str) -> str:
    if isinstance(details, str):
        return details
    return _CANONICAL.encode(details)


def key_fingerprint(key: bytes) -> str:
    """Safe to store beside the chain: tells a wrong key apart from a broken chain."""
    return hashlib.sha256(b"progressive-ledger-key:" + key).hexdigest()[:16]


class SealedEntry(NamedTuple):
    """One numbered, sealed entry, in ``ENTRY_COLUMNS`` order (a tuple: cheap to build)."""

    link_id: str
    seq: int
    at_us: int
    kind: str
    meter_before_units: int
    delta_units: int
    meter_after_units: int
    table_id: str | None
    hit_id: str | None
    anomaly_id: str | None
    correction_id: str | None
    explanation: str
    details: str  # canonical JSON, hashed as stored
    prev_hash: str
    hash: str

    def as_tuple(self) -> tuple[Any, ...]:
        return tuple(self)

    def as_row(self) -> dict[str, Any]:
        return dict(zip(ENTRY_COLUMNS, self, strict=True))

    def decoded_details(self) -> Mapping[str, Any]:
        """What ``details`` says, decoded (``conservation.entry_details``)."""
        return entry_details(self.details)

    def meters(self) -> Mapping[str, Sequence[int]] | None:
        """How the entry moved each meter of its pool, or None for an entry of a link with
        one meter (``conservation.entry_meters``)."""
        return entry_meters(self.details)


ENTRY_COLUMNS: tuple[str, ...] = (
    "link_id",
    "seq",
    "at_us",
    "kind",
    "meter_before_units",
    "delta_units",
    "meter_after_units",
    "table_id",
    "hit_id",
    "anomaly_id",
    "correction_id",
    "explanation",
    "details",
    "prev_hash",
    "hash",
)

US = "\x1f"  # separates fields in the sealed form
NULL_MARK = "\x1e"  # stands for NULL_MARKL (U+001E, record separator); no stored text may hold it


_NO_REFS = f"{NULL_MARK}\x1f{NULL_MARK}\x1f{NULL_MARK}"  # hit, anomaly, correction all NULL


def sealed_form(row: Sequence[Any]) -> bytes:
    """The bytes a seal covers: the fields in ``ENTRY_COLUMNS`` order (without ``hash``),
    separated by U+001F, NULL_MARKL written as U+001E, integers in decimal.

    Unambiguous because ``seal`` refuses either character inside a field. An auditor can
    recompute it with any tool: ``b"\x1f".join(...)`` and keyed BLAKE2b-256.
    """
    a, b, c, d, e, f, g, h, i, j, k, m, n, p = row
    return (
        f"{a}\x1f{b}\x1f{c}\x1f{d}\x1f{e}\x1f{f}\x1f{g}\x1f{NULL_MARK if h is None else h}"
        f"\x1f{NULL_MARK if i is None else i}\x1f{NULL_MARK if j is None else j}"
        f"\x1f{NULL_MARK if k is None else k}\x1f{m}\x1f{n}\x1f{p}"
    ).encode()


ENTRY_PERSON = b"progressive-v1"  # each kind of seal made with the ledger key has its own


@lru_cache(maxsize=16)
def keyed(key: bytes, person: bytes = ENTRY_PERSON) -> Any:
    """The ledger key's keyed BLAKE2b-256 (RFC 7693, a MAC by design) under ``person``,
    computed once: each seal starts from a ``copy()`` of it."""
    return hashlib.blake2b(key=key[:64], digest_size=32, person=person)


def seal_hash(key: bytes, row: Sequence[Any]) -> str:
    """Keyed BLAKE2b-256 (RFC 7693, a MAC by design) of ``sealed_form(row)``, as hex."""
    h = keyed(key).copy()
    h.update(sealed_form(row))
    return str(h.hexdigest())


class SealError(ValueError):
    """An entry that cannot be sealed unambiguously."""


def _check_text(link_id: str, seq: int, row: Sequence[Any]) -> None:
    for value in row:
        if isinstance(value, str) and (US in value or NULL_MARK in value):
            raise SealError(f"link {link_id}, entry {seq}: a field holds a control character")


def seal(
    key: bytes, link_id: str, events: Iterable[MeterEvent], *, last_seq: int, last_hash: str
) -> list[SealedEntry]:
    """Number and seal ``events`` as the next entries of ``link_id``'s chain."""
    out: list[SealedEntry] = []
    seq, prev = last_seq, last_hash
    for ev in events:
        seq += 1
        row = (
            link_id,
            seq,
            ev.at_us,
            str(ev.kind),
            ev.meter_before_units,
            ev.delta_units,
            ev.meter_after_units,
            ev.table_id,
            ev.hit_id,
            ev.anomaly_id,
            ev.correction_id,
            ev.explanation,
            canonical_details(ev.details),
            prev,
        )
        _check_text(link_id, seq, row)
        h = seal_hash(key, row)
        out.append(SealedEntry._make((*row, h)))
        prev = h
    return out


@dataclass(frozen=True, slots=True)
class ChainProblem:
    link_id: str
    seq: int | None
    what: str

    def __str__(self) -> str:
        where = f"link {self.link_id}" + (f", entry {self.seq}" if self.seq is not None else "")
        return f"{where}: {self.what}"


@dataclass(frozen=True, slots=True)
class ChainHead:
    """What the chain must end in: the link row's own record of its last entry and meter."""

    last_seq: int
    last_hash: str
    meter_units: int


@dataclass(frozen=True, slots=True)
class Anchor:
    """Where a chain starts after the retention purge removed its oldest entries."""

    seq: int
    hash: str
    meter_units: int


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A chain head as a signed checkpoint records it: ``digest`` covers the entries since the
    link's previous checkpoint (``digest_of``). Signed, filed and read back by
    ``controller.paperwork.checkpoints``."""

    link_id: str
    seq: int  # the head: the last entry covered
    hash: str  # that entry's seal
    meter_units: int  # the meter after it
    at_us: int  # when it was signed
    prev_seq: int  # the entries covered are prev_seq + 1 .. seq
    digest: str  # SHA-256 (hex) of those entries' sealed bytes, each followed by its seal

    def fields(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class SignedCheckpoint:
    line: int  # 1-based line of the file it was read from
    checkpoint: Checkpoint


def entry_bytes(row: Sequence[Any]) -> bytes:
    """What ``digest`` covers of one entry (``row`` in ``ENTRY_COLUMNS`` order)."""
    return sealed_form(row[:14]) + str(row[14]).encode()


def digest_of(rows: Iterable[Sequence[Any]]) -> str:
    h = hashlib.sha256()
    for row in rows:
        h.update(entry_bytes(row))
    return h.hexdigest()


EMPTY_DIGEST = hashlib.sha256().hexdigest()


_REDUCING = frozenset(str(k) for k in REDUCING_KINDS)
_AWARD_KIND = str(EntryKind.AWARD)
_REF_FOR = {str(EntryKind.AWARD): 8, str(EntryKind.CORRECTION): 10}  # hit_id, correction_id
_CONTRIBUTION_KIND = str(EntryKind.CONTRIBUTION)


class ChainVerifier:
    """Walks one link's entries in sequence order and stops at the first that does not fit.

    Beyond the chain, it follows each meter of a link of levels and each mystery commitment
    (``controller.core.meter_trail``) from ``meters``: where they stood at ``anchor``. From
    the first entry they are known (nothing split, nothing armed); from an anchor without
    ``meters`` the walk is open (``trail.part()`` says what it took on trust).
    """

    def __init__(
        self,
        key: bytes,
        link_id: str,
        anchor: Anchor | None = None,
        meters: TrailState | None = None,
    ) -> None:
        self.key = key
        self.link_id = link_id
        self.seq = anchor.seq if anchor else 0
        self.prev_hash = anchor.hash if anchor else GENESIS
        self.meter = anchor.meter_units if anchor else 0
        self.count = 0
        self.problem: ChainProblem | None = None
        start = TrailState() if anchor is None and meters is None else meters
        self.trail = MeterTrail(link_id, start, total=self.meter)

    def trail_part(self) -> TrailPart:
        """What the walk found of the meters and armings, up to the last entry verified."""
        return self.trail.part(self.meter)

    def _fail(self, seq: int | None, what: str) -> ChainProblem:
        self.problem = ChainProblem(self.link_id, seq, what)
        return self.problem

    def _join(self, seq: int, prev: str, before: int) -> ChainProblem | None:
        """Does an entry (or a run's first) at ``seq``, pointing at seal ``prev`` and starting
        from meter ``before``, follow where the chain stands?"""
        expected = self.seq + 1
        if seq != expected:
            what = "missing (deleted?)" if seq > expected else "out of order or duplicated"
            return self._fail(expected if seq > expected else seq, f"entry {expected} {what}")
        if prev != self.prev_hash:
            return self._fail(
                seq, "does not point at the previous entry's seal (inserted or re-chained)"
            )
        if before != self.meter:
            return self._fail(
                seq, f"starts from meter {before} but the previous entry ended at {self.meter}"
            )
        return None

    def feed(self, row: Sequence[Any]) -> ChainProblem | None:
        """``row`` in ``ENTRY_COLUMNS`` order. Returns the problem, if this row has one."""
        if self.problem is not None:
            return self.problem
        seq = row[1]
        if row[0] != self.link_id:
            return self._fail(seq, f"belongs to link {row[0]!r}")
        if self._join(seq, row[13], row[4]) is not None:
            return self.problem
        if row[6] != row[4] + row[5] or row[6] < 0:
            return self._fail(seq, f"amounts do not add up: {row[4]} {row[5]:+d} != {row[6]}")
        if row[5] < 0:
            ref = _REF_FOR.get(row[3])
            if row[3] not in _REDUCING or ref is None or not row[ref] or not row[11]:
                return self._fail(seq, f"a reduction of kind {row[3]!r} without a stated reason")
        t, h, a, c = row[7], row[8], row[9], row[10]
        if (
            US in row[3] or US in row[11] or US in row[12] or US in row[13]
            or (t is not None and (US in t or NULL_MARK in t))
            or (h is not None and (US in h or NULL_MARK in h))
            or (a is not None and (US in a or NULL_MARK in a))
            or (c is not None and (US in c or NULL_MARK in c))
        ):  # fmt: skip
            # Stored text holding the sealed form's reserved characters could shift fields
            # without changing the seal: such a row was not written by the controller.
            return self._fail(seq, "a field holds a reserved control character (edited)")
        if not hmac.compare_digest(seal_hash(self.key, row[:14]), row[14]):
            return self._fail(seq, "the seal does not match the entry's contents (edited)")
        try:
            broken = self.trail.feed(seq, row[3], row[4], row[5], row[12])
        except (ValueError, KeyError, TypeError, IndexError):
            broken = "its details do not say readably how its meters moved or what it commits"
        if broken is not None:
            return self._fail(seq, broken)
        self.seq = seq
        self.prev_hash = row[14]
        self.meter = row[6]
        self.count += 1
        return None

    def feed_many(
        self,
        rows: Iterable[Sequence[Any]],
        awards: list[str] | None = None,
        digests: Sequence[Any] = (),
    ) -> ChainProblem | None:
        """``feed`` for a batch: the ordinary entry (a contribution: no reduction, no hit,
        anomaly or correction) is checked inline; any other, or any that fails, goes through
        ``feed``, which names the problem. ``awards`` collects the hit ids of award entries;
        each of ``digests`` (hashlib objects) takes every verified entry's sealed bytes and
        seal, as a signed checkpoint's digest covers them (``entry_bytes``).
        """
        if self.problem is not None:
            return self.problem
        link, seq, prev, meter = self.link_id, self.seq, self.prev_hash, self.meter
        fresh = keyed(self.key).copy
        split = self.trail.meters is not None  # a link of levels: every move needs the trail
        armed, mark, moving = ARMED_KIND, METERS_MARK, _CONTRIBUTION_KIND
        trail_split = self.trail.feed_split
        done = 0
        for row in rows:
            lid, s, at, kind, before, delta, after, t, h, a, c, expl, det, ph, hs = row
            # A contribution of a link of levels moves its meters: checked here too, its seal
            # first, then its meters (``feed_split``).
            meters_move = kind == moving and (mark in det or (split and delta))
            if (
                lid != link or s != seq + 1 or ph != prev or before != meter or delta < 0
                or after != before + delta or h is not None or a is not None or c is not None
                or (not meters_move and ((split and delta) or mark in det)) or kind == armed
                or US in kind or US in expl or US in det or US in ph
                or (t is not None and (US in t or NULL_MARK in t))
            ):  # fmt: skip
                ok = False
            else:
                m = fresh()
                sealed = (
                    f"{lid}\x1f{s}\x1f{at}\x1f{kind}\x1f{before}\x1f{delta}\x1f{after}"
                    f"\x1f{NULL_MARK if t is None else t}\x1f{_NO_REFS}\x1f{expl}"
                    f"\x1f{det}\x1f{ph}".encode()
                )
                m.update(sealed)
                ok = m.hexdigest() == hs
                if ok and meters_move:
                    broken = trail_split(s, kind, before, delta, det)
                    if broken is not None:
                        self.seq, self.prev_hash, self.meter = seq, prev, meter
                        self.count += done
                        return self._fail(s, broken)
                    split = True
                if ok and digests:
                    for d in digests:
                        d.update(sealed)
                        d.update(hs.encode())
            if ok:
                seq, prev, meter = s, hs, after
                done += 1
                continue
            self.seq, self.prev_hash, self.meter = seq, prev, meter
            self.count += done
            done = 0
            if self.feed(row) is not None:
                return self.problem
            if digests:
                whole = sealed_form(row[:14]) + row[14].encode()
                for d in digests:
                    d.update(whole)
            if awards is not None and kind == _AWARD_KIND and delta < 0:
                awards.append(h)
            seq, prev, meter = self.seq, self.prev_hash, self.meter
            split = self.trail.meters is not None
        self.seq, self.prev_hash, self.meter = seq, prev, meter
        self.count += done
        return None

    def feed_run(
        self,
        first: int,
        last: int,
        prev: str,
        seal: str,
        before: int,
        after: int,
        meters: Mapping[str, tuple[int, int, int]],
    ) -> ChainProblem | None:
        """Entries ``first .. last`` at once, as a sealed block's run says of them (checked
        entry by entry by the controller before it sealed the block: ``storage.blocks``):
        joined to the chain where it stands, its meters to the trail."""
        if self.problem is not None or self._join(first, prev, before) is not None:
            return self.problem
        broken = self.trail.feed_run(first, before, after, meters)
        if broken is not None:
            return self._fail(broken[0], broken[1])
        self.seq, self.prev_hash, self.meter = last, seal, after
        self.count += last - first + 1
        return None

    def finish(self, head: ChainHead | None) -> ChainProblem | None:
        """After the last row: does the chain end where the link says it does?"""
        if self.problem is not None or head is None:
            return self.problem
        if head.last_seq != self.seq:
            if head.last_seq > self.seq:
                return self._fail(
                    self.seq + 1,
                    f"entries {self.seq + 1} to {head.last_seq} are missing (deleted?)",
                )
            return self._fail(head.last_seq + 1, "entries beyond the link's recorded last entry")
        if head.last_hash != self.prev_hash:
            return self._fail(self.seq, "the link's recorded last seal differs from the chain's")
        if head.meter_units != self.meter:
            return self._fail(
                None,
                f"the link shows meter {head.meter_units} but its history ends at {self.meter}",
            )
        return None
