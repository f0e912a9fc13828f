"""How every step is built: entries appended in order, the meter kept in step with them, and
the outcome checked for conservation of the meter before it is handed back."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from controller.core.money import MAX_COLUMN_UNITS, displayed_cents, format_cents
from controller.core.reducer.conservation import check_conservation
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
        self.before = state  # ``state`` may take on an armed change during the step
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
        """The step as one outcome, once its meter is shown to follow from its entries."""
        state = replace(
            self.state,
            meter_units=self.meter,
            tables=self.tables,
            last_at_us=self.last_at_us,
            **self.fields,
        )
        events = tuple(self.events)
        before = self.before
        check_conservation(before.link_id, before.meter_units, events, state.meter_units)
        return Outcome(
            state, events, tuple(self.hits), tuple(self.anomalies), frozenset(self.touched)
        )
