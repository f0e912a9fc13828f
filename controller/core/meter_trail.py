"""Each meter of a link of levels, and each mystery commitment, followed through its history.

``ChainVerifier`` proves every entry is the one sealed; this module proves the entries of a
link of levels say something consistent meter by meter (68 IAC 10-6-5(b)-(c): a record of
every amount each meter showed):

* each meter (``L1``, ``L1.reserve``, ``L2``, ...) continues from entry to entry: an entry's
  ``before`` for a meter is where the last entry naming it left it, a meter first seen starts
  at 0 (or where a retention purge's manifest says it stood), and none goes below zero;
* the moves of an entry add up to its ``delta_units``;
* every mystery hit reveals a trigger and salt whose commitment is the one sealed by the last
  ``MYSTERY_ARMED`` of that level before it, within that arming's floor and ceiling, paid
  exactly (the award takes the trigger from the level's meter), each arming revealed once.

An entry without ``"meters"`` moves ``L1`` by its delta (every entry of a classic link): until
a link's history first splits an entry, ``L1`` is the chain's own meter and nothing is kept.

A walk may start where nothing is known of the meters (a segment of a long chain checked in a
process of its own, or a chain whose purge kept no meters): it is *open*. It then takes each
meter where it first finds it and each reveal of a level armed before it on trust, and records
both (``assumed``, ``pending``) for ``stitch`` to check against the walk before it.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from controller.core.money import UNITS_PER_CENT
from controller.core.reducer.conservation import entry_details, split_step
from controller.core.reducer.levels import FIRST, mystery_commitment
from controller.core.reducer.state import EntryKind

ARMED_KIND = str(EntryKind.MYSTERY_ARMED)
AWARD_KIND = str(EntryKind.AWARD)
METERS_MARK = '"meters"'  # how a split entry's canonical details name its meters
_METERS_OPEN = '"meters":{'
_METER_PAIR = re.compile(r'"(L[0-9]+(?:\.reserve|\.overflow)?)":\[([0-9]+),(-?[0-9]+)\]')
MYSTERY_MARK = '"mystery"'


@dataclass(slots=True)
class Commitment:
    """A mystery level's trigger as its arming sealed it (the trigger itself stays secret)."""

    seq: int | None  # the MYSTERY_ARMED entry; None when carried by a purge manifest
    commitment: str
    floor_cents: int
    ceiling_cents: int
    revealed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "commitment": self.commitment,
            "floor_cents": self.floor_cents,
            "ceiling_cents": self.ceiling_cents,
            "revealed": self.revealed,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Commitment:
        return cls(
            None if d.get("seq") is None else int(d["seq"]),
            str(d["commitment"]),
            int(d["floor_cents"]),
            int(d["ceiling_cents"]),
            bool(d.get("revealed", False)),
        )


@dataclass(slots=True)
class TrailState:
    """What is known of a link's meters and armings after some entry: ``meters`` None while
    the history has split no entry (``L1`` is then the chain's meter)."""

    meters: dict[str, int] | None = None
    armed: dict[str, Commitment] = field(default_factory=dict)
    # Known only in part (a purge kept no meters): a meter or arming missing here is not
    # known to be 0 or absent, only not known.
    partial: bool = False

    def manifest(self) -> dict[str, Any]:
        """What a retention purge seals about where the meters stood (nothing for a classic
        link: its one meter is the chain's)."""
        if self.meters is None or self.partial:
            return {}
        return {
            "meters_at_anchor": dict(sorted(self.meters.items())),
            "mystery_at_anchor": {k: c.to_dict() for k, c in sorted(self.armed.items())},
        }

    @classmethod
    def from_manifest(cls, d: Mapping[str, Any]) -> TrailState | None:
        """The state a purge manifest carries; None when it carries none (a classic link, or
        a purge from before meters were kept: nothing is known of them)."""
        meters = d.get("meters_at_anchor")
        if meters is None:
            return None
        armed = d.get("mystery_at_anchor") or {}
        return cls(
            {str(k): int(v) for k, v in meters.items()},
            {str(k): Commitment.from_dict(c) for k, c in armed.items()},
        )


@dataclass(slots=True)
class TrailPart:
    """One walk's findings, for ``stitch``: where it ended, and what an open walk took on
    trust. Picklable (walks run in worker processes)."""

    open: bool
    start_total: int
    end_total: int
    state: TrailState
    drift: int  # an open walk's moves of L1 before it first found L1 (unsplit entries)
    assumed: dict[str, tuple[int, int, int]]  # key -> (seq, start value implied, before found)
    pending: dict[str, tuple[int, int, str]]  # key -> (seq, trigger_cents, commitment revealed)


class MeterTrail:
    """Fed each entry of one link in order, after its seal is checked."""

    __slots__ = ("armed", "assumed", "drift", "link_id", "meters", "open", "pending", "start_total")

    def __init__(self, link_id: str, start: TrailState | None, *, total: int = 0) -> None:
        self.link_id = link_id
        self.open = start is None
        self.meters: dict[str, int] | None = (
            None if start is None or start.meters is None else dict(start.meters)
        )
        self.armed: dict[str, Commitment] = (
            {} if start is None else {k: replace(c) for k, c in start.armed.items()}
        )
        self.start_total = total
        self.drift = 0
        self.assumed: dict[str, tuple[int, int, int]] = {}
        self.pending: dict[str, tuple[int, int, str]] = {}

    def wants(self, kind: str, delta: int, details: str) -> bool:
        """Whether an entry needs ``feed`` (False for every entry of a classic link but its
        awards: the walk keeps the chain's meter as L1 without looking)."""
        return (
            (delta != 0 and self.meters is not None)
            or kind == ARMED_KIND
            or METERS_MARK in details
            or (kind == AWARD_KIND and MYSTERY_MARK in details)
        )

    def feed_split(self, seq: int, kind: str, before: int, delta: int, details: str) -> str | None:
        """``feed`` for an entry that only moves meters (a contribution of a link of levels),
        its details as the ledger sealed them: canonical JSON, whose ``"meters"`` object holds
        nothing but ``"key":[before,units]`` pairs, read here without decoding the rest. Call
        it only after the entry's seal is checked (the text is then the controller's)."""
        i = details.find(_METERS_OPEN)
        j = details.find("}", i)
        if i < 0 or j < 0 or kind in (ARMED_KIND, AWARD_KIND):
            return self.feed(seq, kind, before, delta, details)
        pairs = _METER_PAIR.findall(details, i, j)
        if len(pairs) != details.count("[", i, j):  # not as the ledger writes them
            return self.feed(seq, kind, before, delta, details)
        return self._split(seq, before, delta, {k: (int(w), int(u)) for k, w, u in pairs})

    def feed(self, seq: int, kind: str, before: int, delta: int, details: str) -> str | None:
        """One entry (``before``/``delta`` the pool's total); what is wrong with it, if
        anything."""
        if not self.wants(kind, delta, details):
            return None
        d = entry_details(details)
        split = d.get("meters")
        if split is not None:
            problem = self._split(seq, before, delta, split)
        elif delta:
            problem = self._unsplit(seq, delta)
        else:
            problem = None
        if problem is None and kind == ARMED_KIND:
            self.armed[str(d["level"])] = Commitment(
                seq, str(d["commitment"]), int(d["floor_cents"]), int(d["ceiling_cents"])
            )
        elif problem is None and kind == AWARD_KIND and "mystery" in d:
            problem = self._reveal(seq, delta, split, d["mystery"])
        return problem

    def feed_run(
        self, first: int, before: int, after: int, meters: Mapping[str, tuple[int, int, int]]
    ) -> tuple[int, str] | None:
        """A checked stretch of contributions at once (``ChainVerifier.feed_run``): each meter
        it names, ``key -> (seq first named, stood at, left at)``, continues from where it
        stands, as ``_split`` has it entry by entry; a stretch naming none moves ``L1`` by
        its total, as ``_unsplit``. Returns (entry, what is wrong), if anything."""
        if not meters:
            delta = after - before
            if delta and self.meters is not None:
                problem = self._unsplit(first, delta)
                return None if problem is None else (first, problem)
            return None
        meters_now = self._first_split(before)
        for key, (seq, was, end) in meters.items():
            # The stretch's move of the meter, as one entry's: the same rule, the same words.
            trust = self._take_on_trust(seq) if self.open else None
            problem = split_step(meters_now, {key: (was, end - was)}, end - was, first_seen=trust)
            if problem is not None:
                return seq, problem
        return None

    def _first_split(self, before: int) -> dict[str, int]:
        """The meters, made at the history's first split (until then every entry moved L1
        alone, from the chain's meter ``before``)."""
        if self.meters is None:
            if self.open:
                self.meters = {}
                self.drift = before - self.start_total
            else:
                self.meters = {FIRST: before}
        return self.meters

    def _take_on_trust(self, seq: int) -> Callable[[str, int], str | None]:
        def take_on_trust(key: str, was: int) -> None:
            # An open walk takes a meter where it first finds it, for ``stitch`` to check.
            self.assumed[key] = (seq, was - (self.drift if key == FIRST else 0), was)
            return None

        return take_on_trust

    def _split(self, seq: int, before: int, delta: int, split: Mapping[str, Any]) -> str | None:
        meters = self._first_split(before)
        if not self.open:
            return split_step(meters, split, delta)
        return split_step(meters, split, delta, first_seen=self._take_on_trust(seq))

    def _unsplit(self, seq: int, delta: int) -> str | None:
        assert self.meters is not None
        if FIRST in self.meters:
            was = self.meters[FIRST]
            if was + delta < 0:
                return f"meter {FIRST} goes below zero: {was} {delta:+d} units"
            self.meters[FIRST] = was + delta
        elif self.open:
            self.drift += delta
        else:
            if delta < 0:
                return f"meter {FIRST} goes below zero: 0 {delta:+d} units"
            self.meters[FIRST] = delta
        return None

    def _reveal(
        self, seq: int, delta: int, split: Mapping[str, Any] | None, reveal: Mapping[str, Any]
    ) -> str | None:
        key = str(reveal["level"])
        trigger = int(reveal["trigger_cents"])
        quoted = str(reveal["commitment"])
        made = mystery_commitment(self.link_id, key, trigger, str(reveal["salt"]))
        if made != quoted:
            return (
                f"the mystery reveal of {key} (trigger {trigger} cents) gives commitment "
                f"{made[:16]}..., not the {quoted[:16]}... it quotes"
            )
        units = trigger * UNITS_PER_CENT
        paid = None if split is None or key not in split else int(split[key][1])
        if delta != -units or (split is not None and paid != -units):
            return (
                f"the mystery award of {key} takes {-delta} units"
                + ("" if split is None else f" ({key} {paid if paid is not None else 0:+d})")
                + f" from the pool but its trigger is {units} units"
            )
        armed = self.armed.get(key)
        if armed is None:
            if self.open and key not in self.pending:
                self.pending[key] = (seq, trigger, made)
                return None
            if self.open:
                return f"level {key} is revealed again with no arming since its last reveal"
            return f"the mystery reveal of {key} has no arming before it"
        return check_reveal(key, trigger, made, armed)

    def part(self, end_total: int) -> TrailPart:
        """What this walk found, ending with the chain's meter at ``end_total``."""
        return TrailPart(
            self.open,
            self.start_total,
            end_total,
            TrailState(self.meters, self.armed),
            self.drift,
            self.assumed,
            self.pending,
        )


def check_reveal(key: str, trigger: int, made: str, armed: Commitment) -> str | None:
    """A reveal against the arming before it (marked revealed when it fits)."""
    where = "the purge manifest" if armed.seq is None else f"entry {armed.seq}"
    if armed.revealed:
        return f"the arming of {key} at {where} is revealed a second time"
    if made != armed.commitment:
        return (
            f"the mystery reveal of {key} gives commitment {made[:16]}..., but {where} "
            f"sealed {armed.commitment[:16]}..."
        )
    if not armed.floor_cents <= trigger <= armed.ceiling_cents:
        return (
            f"the mystery trigger of {key}, {trigger} cents, is outside the floor "
            f"{armed.floor_cents} and ceiling {armed.ceiling_cents} sealed at {where}"
        )
    armed.revealed = True
    return None


def stitch(
    before: TrailState | None, part: TrailPart
) -> tuple[tuple[int, str] | None, list[tuple[int, str]], TrailState]:
    """An open walk checked against the state the walk before it ended in (``before`` None:
    nothing is known, after a purge that kept no meters). Returns the first problem (entry,
    what), the reveals that cannot be checked, and the state after the walk."""
    if not part.open:
        return None, [], part.state
    if before is None:
        before = TrailState(None, {}, partial=True)
    partial = before.partial
    notes: list[tuple[int, str]] = []
    problems: list[tuple[int, str]] = []
    classic = before.meters is None
    for key, (seq, implied, found) in part.assumed.items():
        if classic and not partial:
            expected: int | None = part.start_total if key == FIRST else 0
        elif before.meters is not None and key in before.meters:
            expected = before.meters[key]
        else:
            expected = None if partial else 0
        if expected is not None and implied != expected:
            stood = expected + (found - implied)
            problems.append((seq, f"meter {key} starts from {found} units but it stood at {stood}"))
    armed = {k: replace(c) for k, c in before.armed.items()}
    for key, (seq, trigger, made) in part.pending.items():
        c = armed.get(key)
        if c is None and partial:
            notes.append(
                (seq, f"the mystery reveal of {key} cannot be checked: its arming was purged")
            )
            continue
        what = (
            f"the mystery reveal of {key} has no arming before it"
            if c is None
            else check_reveal(key, trigger, made, c)
        )
        if what is not None:
            problems.append((seq, what))
    first = min(problems, default=None)
    meters: dict[str, int] | None
    found_meters = part.state.meters
    if classic and found_meters is None:
        meters = None
    else:
        if before.meters is not None:
            meters = dict(before.meters)
        else:
            meters = {} if partial else {FIRST: part.start_total}
        if found_meters is None:
            if FIRST in meters:
                meters[FIRST] += part.end_total - part.start_total
        else:
            if FIRST not in found_meters and FIRST in meters:
                meters[FIRST] += part.drift
            meters.update(found_meters)
    armed.update(part.state.armed)
    return first, sorted(notes), TrailState(meters, armed, partial)
