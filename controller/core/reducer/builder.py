"""How every step is built: entries appended in order, the meter kept in step with them, and
the outcome checked for conservation of the meter before it is handed back."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from controller.core.money import MAX_COLUMN_UNITS, displayed_cents, format_cents
from controller.core.reducer.conservation import check_conservation, check_meters
from controller.core.reducer.levels import LevelState, is_single_meter, parse_key, pool_rate_bp
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
        self.levels: list[LevelState] = list(state.levels)
        # One meter (L1) and nothing else: entries need not say how the meters moved.
        self.single = is_single_meter([lv.config for lv in self.levels])

    def emit(self, kind: EntryKind, at_us: int, delta: int, explanation: str, **refs: Any) -> None:
        if delta < 0:
            self.state.law.check_reduction_explained(delta_units=delta, reason=explanation)
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

    def meter_of(self, key: str) -> int:
        if self.single and key == "L1":
            return self.meter
        i, pot = parse_key(key)
        lv = self.levels[i]
        if pot == "meter":
            return lv.meter_units
        return lv.reserve_units if pot == "reserve" else lv.overflow_units

    def move(
        self,
        kind: EntryKind,
        at_us: int,
        moves: dict[str, int],
        explanation: str,
        *,
        details: dict[str, Any] | str | None = None,
        **refs: Any,
    ) -> None:
        """One entry moving the pool's meters by ``moves`` (key -> units); the entry's delta is
        their sum. On a link of more than the one meter the entry says how each moved."""
        moves = {k: v for k, v in moves.items() if v}
        if not self.levels:
            raise EngineError(f"link {self.state.link_id} is a fixed-pay link: it has no meter")
        total = sum(moves.values())
        if self.single:
            if set(moves) - {"L1"}:
                raise EngineError(f"link {self.state.link_id} has one meter, L1")
            self.emit(kind, at_us, total, explanation, details=details or "{}", **refs)
            return
        split: dict[str, list[int]] = {}
        for key, units in moves.items():
            before = self.meter_of(key)
            if before + units < 0:
                raise EngineError(
                    f"link {self.state.link_id}: meter {key} cannot go below zero "
                    f"({before} {units:+d} units)"
                )
            split[key] = [before, units]
        self.emit(kind, at_us, total, explanation, details=_with_meters(details, split), **refs)
        for key, (before, units) in split.items():
            i, pot = parse_key(key)
            lv = self.levels[i]
            if pot == "meter":
                lv = replace(lv, meter_units=before + units)
            elif pot == "reserve":
                lv = replace(lv, reserve_units=before + units)
            else:
                lv = replace(lv, overflow_units=before + units)
            self.levels[i] = lv

    def refuse(self, hit: Hit, explanation: str) -> None:
        """Record a refused hit and its entry in the history (the meter does not move)."""
        self.hits.append(hit)
        self.emit(
            EntryKind.HIT_REFUSED,
            hit.at_us,
            0,
            explanation,
            table_id=hit.table_id,
            hit_id=hit.hit_id,
        )

    def put_level(self, index: int, lv: LevelState) -> None:
        self.levels[index] = lv

    def put_table(self, ts: TableState) -> None:
        self.tables[ts.config.table_id] = ts
        self.touched.add(ts.config.table_id)

    def done(self) -> Outcome:
        """The step as one outcome, once its meter is shown to follow from its entries."""
        fields = dict(self.fields)
        if "levels" not in fields:
            fields["levels"] = tuple(self.levels)
        levels = fields["levels"]
        if levels and is_single_meter([lv.config for lv in levels]):
            # A classic link: its one level mirrors the link's meter, rate and reset amount.
            lv = levels[0]
            rate = fields.get("rate_bp", self.state.rate_bp)
            reset = fields.get("reset_cents", self.state.reset_cents)
            # Its lock is the link's own flag (``LinkState.won_since_share_set``).
            if (
                lv.meter_units != self.meter
                or (lv.config.rate_bp, lv.config.reset_cents) != (rate, reset)
                or lv.won_since_share_set
            ):
                config = replace(lv.config, rate_bp=rate, reset_cents=reset)
                fields["levels"] = (
                    replace(lv, config=config, meter_units=self.meter, won_since_share_set=False),
                )
        elif levels:
            fields["rate_bp"] = pool_rate_bp(lv.config for lv in levels)
            fields["reset_cents"] = levels[0].config.reset_cents
        state = replace(
            self.state,
            meter_units=self.meter,
            tables=self.tables,
            last_at_us=self.last_at_us,
            **fields,
        )
        events = tuple(self.events)
        before = self.before
        check_conservation(before.link_id, before.meter_units, events, state.meter_units)
        check_meters(before, events, state)
        return Outcome(
            state, events, tuple(self.hits), tuple(self.anomalies), frozenset(self.touched)
        )


def _with_meters(
    details: dict[str, Any] | str | None, split: dict[str, list[int]]
) -> dict[str, Any]:
    if details is None or details == "{}":
        out: dict[str, Any] = {}
    elif isinstance(details, str):
        out = json.loads(details)
    else:
        out = dict(details)
    out["meters"] = split
    return out
