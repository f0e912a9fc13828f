"""History entries for tests of what reads them (the reconciliation, the meter lines): a
``SealedEntry`` as storage hands it up, its seal left out (no reader of these checks it)."""

from __future__ import annotations

from collections.abc import Iterable

from controller.core.ledger import SealedEntry, canonical_details
from controller.core.reducer import MeterEvent


def entry(
    seq: int,
    at_us: int,
    kind: str,
    meter_before_units: int,
    delta_units: int,
    meter_after_units: int,
    table_id: str | None = None,
    details: str = "{}",
    *,
    link_id: str = "x",
    hit_id: str | None = None,
) -> SealedEntry:
    return SealedEntry(
        link_id=link_id, seq=seq, at_us=at_us, kind=kind, meter_before_units=meter_before_units,
        delta_units=delta_units, meter_after_units=meter_after_units, table_id=table_id,
        hit_id=hit_id, anomaly_id=None, correction_id=None, explanation="", details=details,
        prev_hash="", hash="",
    )  # fmt: skip


def entries_of(events: Iterable[MeterEvent], link_id: str = "x") -> list[SealedEntry]:
    """``events`` as the entries numbered from 1 that storage would hand back."""
    return [
        entry(
            i + 1,
            e.at_us,
            str(e.kind),
            e.meter_before_units,
            e.delta_units,
            e.meter_after_units,
            e.table_id,
            canonical_details(e.details),
            link_id=link_id,
            hit_id=e.hit_id,
        )
        for i, e in enumerate(events)
    ]
