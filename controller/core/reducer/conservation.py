"""Conservation of the meter, stated once and asserted at every step.

A link's meter moves only through the entries of its history, each by its ``delta_units``,
and each entry's ``kind`` names the term of the law it belongs to::

    meter after = meter before + seeded + contributed - awarded + corrected

* seeded: the link opened, a jackpot reset (never negative);
* contributed: a contribution, an approved anomaly (never negative);
* awarded: an award paid from the meter (an entry lowers the meter by it);
* corrected: a correcting entry (either sign);
* every other kind leaves the meter where it was.

Every entry starts where the previous one ended, the first where the meter stood before the
step. ``check_conservation`` asserts all of this, in exact integer units, over one step's
entries (never the history: it costs what the step's entries cost), and raises
``ConservationBroken`` naming the link, the figures and the difference. The reducer calls it on
every outcome it builds; the store may call it again on what it commits.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any, NamedTuple

from controller.core.reducer.levels import FIRST, is_single_meter, meters_of
from controller.core.reducer.state import EntryKind, LinkState, MeterEvent, Outcome


class Term(StrEnum):
    """A term of the law: what an entry's ``delta_units`` is, by the entry's kind."""

    SEEDED = "seeded"  # never negative
    CONTRIBUTED = "contributed"  # never negative
    AWARDED = "awarded"  # never positive: an award lowers the meter
    CORRECTED = "corrected"  # either sign


# Which kind of entry is which term: the one statement of it. Every reader that sums a
# history by term (the reconciliation, a link of levels' meter lines) asks ``term_of``.
TERMS: Mapping[str, Term] = {
    EntryKind.LINK_OPENED: Term.SEEDED,
    EntryKind.JACKPOT_RESET: Term.SEEDED,
    EntryKind.CONTRIBUTION: Term.CONTRIBUTED,
    EntryKind.ANOMALY_APPROVED: Term.CONTRIBUTED,
    EntryKind.AWARD: Term.AWARDED,
    EntryKind.CORRECTION: Term.CORRECTED,
}


def term_of(kind: str) -> Term | None:
    """The term of the law an entry of ``kind`` belongs to; None: it never moves the meter."""
    return TERMS.get(kind)


class MeterTerms(NamedTuple):
    """What one step (or a run of steps) added to and took from a meter, by term, in units."""

    seeded: int = 0
    contributed: int = 0
    awarded: int = 0  # as a positive amount: what the awards took
    corrected: int = 0

    @property
    def net_units(self) -> int:
        """What the terms move a meter by: the law's right-hand side less the meter before."""
        return self.seeded + self.contributed - self.awarded + self.corrected

    def plus(self, other: MeterTerms) -> MeterTerms:
        """These terms and ``other``'s, term by term (a run of steps)."""
        return MeterTerms(
            self.seeded + other.seeded,
            self.contributed + other.contributed,
            self.awarded + other.awarded,
            self.corrected + other.corrected,
        )


class ConservationBroken(AssertionError):
    """A step's meter does not follow from the meter before it and its entries: a bug, never
    an input to refuse. Nothing of the step may be committed."""

    def __init__(
        self,
        link_id: str,
        problem: str,
        *,
        before_units: int,
        terms: MeterTerms,
        after_units: int,
        difference_units: int,
    ) -> None:
        super().__init__(
            f"link {link_id}: conservation of the meter broken: {problem} (meter before "
            f"{before_units} + seeded {terms.seeded} + contributed {terms.contributed} - "
            f"awarded {terms.awarded} + corrected {terms.corrected} = "
            f"{before_units + terms.net_units}, meter after {after_units}, difference "
            f"{difference_units:+d} units)"
        )
        self.link_id = link_id
        self.problem = problem
        self.before_units = before_units
        self.terms = terms
        self.after_units = after_units
        self.difference_units = difference_units


def check_conservation(
    link_id: str, before_units: int, events: Sequence[MeterEvent], after_units: int
) -> MeterTerms:
    """Assert that ``events`` (one step's entries, in order) take the meter of ``link_id`` from
    ``before_units`` to ``after_units`` under the law above; return the step's terms.

    Raises ``ConservationBroken`` when an entry does not start where the meter stood, a term
    has the wrong sign, a kind that never moves the meter moves it, or the meter after is not
    the meter before plus the terms. O(len(events)), integers only.
    """
    seeded = contributed = awarded = corrected = 0
    meter = before_units
    problem = None
    for i, e in enumerate(events):
        if e.meter_before_units != meter and problem is None:
            problem = (
                f"entry {i} ({e.kind}) starts from {e.meter_before_units} units, "
                f"the meter stood at {meter}"
            )
        delta = e.delta_units
        meter = e.meter_before_units + delta
        if delta == 0:
            continue
        kind = e.kind
        term = term_of(kind)
        wrong_sign = False
        if term is Term.CONTRIBUTED:
            contributed += delta
            wrong_sign = delta < 0
        elif term is Term.AWARDED:
            awarded -= delta
            wrong_sign = delta > 0
        elif term is Term.CORRECTED:
            corrected += delta
        elif term is Term.SEEDED:
            seeded += delta
            wrong_sign = delta < 0
        elif problem is None:
            problem = f"entry {i} ({kind}) moves the meter by {delta:+d} units; its kind never does"
        if wrong_sign and problem is None:
            problem = f"entry {i} ({kind}) moves the meter the wrong way ({delta:+d} units)"
    terms = MeterTerms(seeded, contributed, awarded, corrected)
    expected = before_units + terms.net_units
    if problem is None and after_units != expected:
        problem = "the meter after is not the meter before plus the step's entries"
    if problem is not None:
        raise ConservationBroken(
            link_id,
            problem,
            before_units=before_units,
            terms=terms,
            after_units=after_units,
            difference_units=after_units - expected,
        )
    return terms


def check_outcome(before: LinkState, outcome: Outcome) -> MeterTerms:
    """``check_conservation`` of one reducer step: from ``before`` to ``outcome.state``."""
    if outcome.state.link_id != before.link_id:
        raise ConservationBroken(
            before.link_id,
            f"the outcome is link {outcome.state.link_id}'s",
            before_units=before.meter_units,
            terms=MeterTerms(),
            after_units=outcome.state.meter_units,
            difference_units=outcome.state.meter_units - before.meter_units,
        )
    return check_conservation(
        before.link_id, before.meter_units, outcome.events, outcome.state.meter_units
    )


def entry_details(details: Mapping[str, Any] | str) -> Mapping[str, Any]:
    """What an entry's details say, as the mapping they were sealed from (``{}``: nothing).

    The one reading of the canonical JSON a history entry keeps its details in: every reader
    of the history decodes them here (``ledger.SealedEntry.decoded_details``)."""
    if isinstance(details, str):
        loaded = json.loads(details or "{}")
        return loaded if isinstance(loaded, dict) else {}
    return details


def entry_meters(details: Mapping[str, Any] | str) -> Mapping[str, Sequence[int]] | None:
    """How an entry says each meter of its pool moved (``{key: [before, delta]}``), or None
    for an entry of a link with one meter (its delta moves ``L1``)."""
    if isinstance(details, str) and '"meters"' not in details:
        return None
    meters: Mapping[str, Sequence[int]] | None = entry_details(details).get("meters")
    return meters


def split_step(
    meters: dict[str, int],
    split: Mapping[str, Sequence[int]],
    delta: int,
    *,
    first_seen: Callable[[str, int], str | None] | None = None,
) -> str | None:
    """One entry's moves applied to ``meters`` (the running value of each meter, by key), as
    the law above has it meter by meter: each meter continues from where it stood, none goes
    below zero, and the moves add up to the entry's ``delta``. Returns what is wrong, if
    anything. A meter not yet in ``meters`` starts at 0, unless ``first_seen`` takes it where
    the entry says (a walk that starts mid-history)."""
    moved = 0
    for key, (was, units) in split.items():
        now = meters.get(key)
        if now is None:
            if first_seen is not None:
                problem = first_seen(key, was)
                if problem is not None:
                    return problem
            elif was != 0:
                return f"meter {key} first appears at {was} units; a new meter starts at 0"
        elif now != was:
            return f"meter {key} starts from {was} units but it stood at {now}"
        if was + units < 0:
            return f"meter {key} goes below zero: {was} {units:+d} units"
        meters[key] = was + units
        moved += units
    if moved != delta:
        return (
            f"its meters move by {moved:+d} units in all ("
            + ", ".join(f"{k} {u:+d}" for k, (_, u) in split.items())
            + f") but its delta is {delta:+d}"
        )
    return None


def check_meters(before: LinkState, events: Sequence[MeterEvent], after: LinkState) -> None:
    """Conservation meter by meter on a link of levels: each entry's meters start where they
    stood and their moves add up to the entry's delta; the pool's meters after the step are
    where the entries leave them, and they add up to the link's total.

    A classic link (one meter, ``L1``) is the law above with ``L1`` the total. A fixed-pay
    link has no meter to check (its total can only be a balance left from before, moved by
    corrections alone).
    """
    if not before.levels and not after.levels:
        return
    link = before.link_id
    running = {k: v for k, v in meters_of(before.levels).items() if v}
    single = is_single_meter(before.level_configs)
    total = before.meter_units

    def broken(problem: str) -> ConservationBroken:
        return ConservationBroken(
            link,
            problem,
            before_units=before.meter_units,
            terms=MeterTerms(),
            after_units=after.meter_units,
            difference_units=after.meter_units - total,
        )

    for i, e in enumerate(events):
        total += e.delta_units
        split = entry_meters(e.details)
        if e.kind == EntryKind.LEVELS_CHANGED:
            single = is_single_meter(after.level_configs)
        if split is None:
            if e.delta_units and not single:
                raise broken(f"entry {i} ({e.kind}) moves the pool without saying which meter")
            if e.delta_units:
                running[FIRST] = running.get(FIRST, 0) + e.delta_units
            continue
        problem = split_step(running, split, e.delta_units)
        if problem is not None:
            raise broken(f"entry {i} ({e.kind}): {problem}")
    after_meters = {k: v for k, v in meters_of(after.levels).items() if v}
    running = {k: v for k, v in running.items() if v}
    if after.levels and running != after_meters:
        raise broken(f"the meters after are {after_meters}, the entries leave {running}")
    if after.levels and sum(after_meters.values()) != after.meter_units:
        raise broken(
            f"the pool's meters add up to {sum(after_meters.values())} units, "
            f"its total is {after.meter_units}"
        )
