"""How every step is built: entries appended in order, the meter kept in step with them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from controller.core.money import MAX_COLUMN_UNITS, displayed_cents, format_cents
from controller.core.reducer.state import (
    REDUCING_KINDS,
    Anomaly,
    EngineError,
    EntryKind,
    Hit,
    LinkState,
    MeterEvent,
    Outcome,
    TableState,
)
from controller.rules.records import check_reduction_explained


class Builder:
    """Accumulates one outcome; keeps the meter and the events in step."""

    def __init__(self, state: LinkState) -> None:
        self.state = state
        self.meter = state.meter_units
        self.events: list[MeterEvent] = []
        self.hits: list[Hit] = []
        self.anomalies: list[Anomaly] = []
        self.tables: dict[str, TableState] = dict(state.tables)
        self.touched: set[str] = set()
        self.fields: dict[str, Any] = {}
        self.last_at_us = state.last_at_us

    def emit(self, kind: EntryKind, at_us: int, delta: int, explanation: str, **refs: Any) -> None:
        if delta < 0:
            check_reduction_explained(delta_units=delta, reason=explanation)
            if kind not in REDUCING_KINDS:
                raise EngineError(f"a {kind} entry cannot lower the meter")
        if not 0 <= self.meter + delta <= MAX_COLUMN_UNITS:
            raise EngineError(
                f"link {self.state.link_id}: the meter cannot go below zero or beyond what the "
                f"history holds ({format_cents(displayed_cents(self.meter))} {delta:+d} units)"
            )
        if "\x1f" in explanation or "\x1e" in explanation or "\x00" in explanation:
            # Typed reasons end up here; the ledger's sealed form reserves U+001F and U+001E,
            # and PostgreSQL text cannot hold U+0000.
            for ch in "\x1f\x1e\x00":
                explanation = explanation.replace(ch, " ")
        if at_us < self.last_at_us:
            at_us = self.last_at_us  # held at the newest entry's time
        self.last_at_us = at_us
        self.events.append(
            MeterEvent(
                kind=kind,
                at_us=at_us,
                meter_before_units=self.meter,
                delta_units=delta,
                explanation=explanation,
                **refs,
            )
        )
        self.meter += delta

    def put_table(self, ts: TableState) -> None:
        self.tables[ts.config.table_id] = ts
        self.touched.add(ts.config.table_id)

    def done(self) -> Outcome:
        state = replace(
            self.state,
            meter_units=self.meter,
            tables=self.tables,
            last_at_us=self.last_at_us,
            **self.fields,
        )
        return Outcome(
            state,
            tuple(self.events),
            tuple(self.hits),
            tuple(self.anomalies),
            frozenset(self.touched),
        )
