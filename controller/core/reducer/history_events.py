"""Entries that record what happened to the history itself: a retention purge, the
first sealing of an old link's state, a state recovered from the history."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.core.reducer.builder import Builder
from controller.core.reducer.pool import arm_ready
from controller.core.reducer.state import EntryKind, LinkState, Outcome


def record_purge(state: LinkState, *, at_us: int, manifest: Mapping[str, Any]) -> Outcome:
    """What the retention purge removed, sealed into the chain it was removed from."""
    b = Builder(state)
    b.emit(
        EntryKind.RETENTION_PURGE,
        at_us,
        0,
        f"retention: entries {manifest['first_seq']} to {manifest['last_seq']} removed",
        details=manifest,
    )
    return b.done()


def record_state_sealed(state: LinkState, *, at_us: int) -> Outcome:
    """The first sealing of a link written before state seals existed, as an entry of its
    history: from here on a row of it without a seal was stripped of it."""
    b = Builder(state)
    b.emit(
        EntryKind.STATE_SEALED,
        at_us,
        0,
        "the state this link resumes from is sealed from here on",
        details={"tables": sorted(state.tables)},
    )
    b.touched.update(state.tables)
    return b.done()


def record_recovery(
    recovered: LinkState, *, at_us: int, explanation: str, details: Mapping[str, Any]
) -> Outcome:
    """A link's state re-derived from its history (the caller builds ``recovered``), recorded
    as an entry of that history; every table is written again. A mystery level comes back
    unarmed (its trigger was never in the history): each is armed after the recovery entry
    with the fresh draw the caller made ready in its ``draws``."""
    b = Builder(recovered)
    b.emit(EntryKind.STATE_RECOVERED, at_us, 0, explanation, details=details)
    arm_ready(b, at_us)
    b.touched.update(recovered.tables)
    return b.done()
