"""A link's meters one by one, for auditors: the per-level (per meter key) reconciliation,
the hits each level paid, and a fixed-pay link's bets, pays and hold.

Every entry of a link of levels says in its sealed details how each of the pool's meters
moved (``"meters": {key: [before, delta]}``); an entry of a link with one meter moves ``L1``
by its delta. Folding the entries meter by meter gives each meter's opening, its terms and
its closing, to the unit, and whatever does not follow on is listed as a problem:

    closing = opening + seeded + contributed + moved - awarded + corrected + other

``moved`` is what a jackpot reset moved between the meters of one level: in from the
level's reserve (its hidden share, which funds the reset) and its overflow (what went past
its limit), out of those. Over the pool ``moved`` adds up to zero; ``seeded`` is what the
house put in (the reset amount less what the reserve funded).

Pure: it reads what storage hands it, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from controller.core.ledger import SealedEntry
from controller.core.money import displayed_cents
from controller.core.reducer import EntryKind
from controller.core.reducer.conservation import Term, entry_details, entry_meters, term_of
from controller.core.reducer.levels import FIRST, LevelError, parse_key
from controller.rules.wagers import BETS_REGISTERED_CLAUSE

__all__ = [
    "FIXED_PAY_CLAUSE",
    "RECENT_HITS",
    "AwardSeen",
    "FixedPayLine",
    "LevelHits",
    "MeterLine",
    "MeterLines",
    "award_of",
    "level_hits",
    "meter_line_summary",
]

# A fixed-pay link's side bets and what it paid: the bets registered and the pays recorded.
FIXED_PAY_CLAUSE = BETS_REGISTERED_CLAUSE
# How many of a level's hits the link's view lists (NY 5320.8: the last 25 hits).
RECENT_HITS = 25


@dataclass(slots=True)
class MeterLine:
    """One meter of a pool over a period, in units (1/10,000 cent)."""

    key: str
    opening_units: int
    closing_units: int
    seeded_units: int = 0
    contributed_units: int = 0
    moved_units: int = 0  # a reset's move: + into a level's meter, - out of its reserve/overflow
    awarded_units: int = 0  # as a positive amount
    corrected_units: int = 0
    other_units: int = 0

    @property
    def expected_closing_units(self) -> int:
        return (
            self.opening_units
            + self.seeded_units
            + self.contributed_units
            + self.moved_units
            - self.awarded_units
            + self.corrected_units
            + self.other_units
        )


@dataclass(slots=True)
class FixedPayLine:
    """A fixed-pay link's side bets against what it paid at the tables, in cents."""

    bets_credits: int = 0
    bets_cents: int = 0  # credits x denomination, as each BETS_REGISTERED entry records
    pays_cents: int = 0  # the hits recorded as paid at the table
    pays: int = 0

    @property
    def hold_cents(self) -> int:
        return self.bets_cents - self.pays_cents


@dataclass(slots=True)
class MeterLines:
    """The fold of one period's entries meter by meter (see the module's law)."""

    meters: dict[str, MeterLine] = field(default_factory=dict)
    fixed_pay: FixedPayLine | None = None
    problems: list[str] = field(default_factory=list)

    def _line(self, key: str, before: int) -> MeterLine:
        line = self.meters.get(key)
        if line is None:
            line = self.meters[key] = MeterLine(key, before, before)
        return line

    def take(self, seq: int, kind: str, before_units: int, delta_units: int, details: str) -> None:
        """One entry, the next in sequence."""
        if kind == EntryKind.BETS_REGISTERED:
            d = entry_details(details)
            fp = self.fixed_pay = self.fixed_pay or FixedPayLine()
            fp.bets_credits += int(d["credits"])
            fp.bets_cents += int(d["credits"]) * int(d["denomination_cents"])
            return
        split = entry_meters(details)
        if split is None:
            if delta_units:
                # A link of one meter: the entry's delta moves L1 (the link's meter).
                split = {FIRST: [self._line(FIRST, before_units).closing_units, delta_units]}
            else:
                return
        moved = 0
        for key, (was, delta) in split.items():
            line = self._line(key, was)
            if line.closing_units != was:
                self.problems.append(
                    f"entry {seq}: starts meter {key} from {was} units, it stood at "
                    f"{line.closing_units}"
                )
            line.closing_units = was + delta
            moved += delta
        if moved != delta_units:
            self.problems.append(
                f"entry {seq}: moves its meters by {moved:+d} units in all, its delta is "
                f"{delta_units:+d}"
            )
        if kind == EntryKind.JACKPOT_RESET and len(split) > 1:
            self._reset(seq, split, details)
            return
        term = term_of(kind)
        for key, (_, delta) in split.items():
            line = self.meters[key]
            if term is Term.SEEDED:
                line.seeded_units += delta
            elif term is Term.CONTRIBUTED:
                line.contributed_units += delta
            elif term is Term.AWARDED:
                line.awarded_units -= delta
            elif term is Term.CORRECTED:
                line.corrected_units += delta
            else:
                line.other_units += delta

    def _reset(self, seq: int, split: Mapping[str, Sequence[int]], details: str) -> None:
        """A level's reset: what left its reserve and overflow moved into its meter; the
        house seeded the rest."""
        out = sum(-delta for _, delta in split.values() if delta < 0)
        level = next((k for k, (_, d) in split.items() if d > 0 and _is_level(k)), None)
        if level is None:
            self.problems.append(f"entry {seq}: a reset that credits no level's meter")
            for key, (_, delta) in split.items():
                self.meters[key].other_units += delta
            return
        for key, (_, delta) in split.items():
            if key != level:
                self.meters[key].moved_units += delta
        line = self.meters[level]
        line.moved_units += out
        line.seeded_units += split[level][1] - out
        said = entry_details(details).get("seeded_units")
        if said is not None and said != split[level][1] - out:
            self.problems.append(
                f"entry {seq}: says the house seeded {said} units, its meters show "
                f"{split[level][1] - out}"
            )

    def close(self) -> None:
        for line in self.meters.values():
            if line.closing_units != line.expected_closing_units:
                self.problems.append(
                    f"DIFFERENCE: meter {line.key} closes at {line.closing_units} units, its "
                    f"terms add up to {line.expected_closing_units}"
                )


def _is_level(key: str) -> bool:
    try:
        return parse_key(key)[1] == "meter"
    except LevelError:
        return False


def meter_line_summary(line: MeterLine, names: Mapping[str, str]) -> dict[str, Any]:
    """For people and exports: cents, with the exact units beside each amount."""

    def amount(name: str, units: int) -> dict[str, int]:
        return {f"{name}_cents": displayed_cents(units), f"{name}_units": units}

    try:
        index, pot = parse_key(line.key)
    except LevelError:
        index, pot = 0, "meter"
    return {
        "meter": line.key,
        "level": f"L{index + 1}",
        "pot": pot,
        "name": names.get(f"L{index + 1}"),
        **amount("opening", line.opening_units),
        **amount("contributed", line.contributed_units),
        **amount("seeded", line.seeded_units),
        **amount("moved", line.moved_units),
        **amount("awarded", line.awarded_units),
        **amount("corrected", line.corrected_units),
        **amount("other", line.other_units),
        **amount("closing", line.closing_units),
        "difference_units": line.closing_units - line.expected_closing_units,
    }


# ----------------------------------------------------------------------------- hits by level


@dataclass(frozen=True, slots=True)
class AwardSeen:
    """An award paid from a level's meter, as its history entry records it."""

    hit_id: str | None
    at_us: int
    table_id: str | None
    level: str  # "L1", "L2", ...
    award_cents: int
    kind: str  # "hand" or "mystery"
    seat: int | None = None
    hand: str | None = None


def award_of(entry: SealedEntry) -> AwardSeen:
    """The level an award entry paid from (the meter its split lowers; a link of one meter:
    L1) and what it paid."""
    d = entry.decoded_details()
    split = entry_meters(d)
    level = FIRST
    if split:
        lowered = [k for k, (_, delta) in split.items() if delta < 0 and _is_level(k)]
        if lowered:
            level = lowered[0]
    seat = d.get("seat")
    return AwardSeen(
        hit_id=entry.hit_id,
        at_us=entry.at_us,
        table_id=entry.table_id,
        level=level,
        award_cents=displayed_cents(-entry.delta_units),
        kind="mystery" if "mystery" in d else "hand",
        seat=seat if isinstance(seat, int) else None,
        hand=d.get("hand") if isinstance(d.get("hand"), str) else None,
    )


@dataclass(slots=True)
class LevelHits:
    """A level's hits: how many, the total won, the newest ``RECENT_HITS``."""

    hits: int = 0
    won_cents: int = 0
    recent: list[AwardSeen] = field(default_factory=list)


def level_hits(awards: Iterable[AwardSeen], *, keep: int = RECENT_HITS) -> dict[str, LevelHits]:
    """By level: the count and total of ``awards`` and the newest ``keep`` (newest first)."""
    out: dict[str, LevelHits] = {}
    for a in awards:
        lh = out.setdefault(a.level, LevelHits())
        lh.hits += 1
        lh.won_cents += a.award_cents
        lh.recent.append(a)
    for lh in out.values():
        lh.recent.sort(key=lambda a: a.at_us, reverse=True)
        del lh.recent[keep:]
    return out
