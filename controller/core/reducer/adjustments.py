"""People's changes to the meter: held anomalies approved or rejected by a reviewer, and
documented correcting entries."""

from __future__ import annotations

from controller.core.reducer.builder import Builder
from controller.core.reducer.levels import FIRST, is_single_meter, meter_label, meters_of
from controller.core.reducer.pool import contribution_moves
from controller.core.reducer.state import Anomaly, EngineError, EntryKind, LinkState, Outcome


def _check_anomaly_belongs(state: LinkState, anomaly: Anomaly) -> None:
    if anomaly.link_id != state.link_id:
        raise EngineError(
            f"anomaly {anomaly.anomaly_id} belongs to link {anomaly.link_id}, not {state.link_id}"
        )
    state.table(anomaly.table_id)


def approve_anomaly(state: LinkState, anomaly: Anomaly, *, at_us: int, reviewer: str) -> Outcome:
    """Credit a held anomaly, at the rate it was detected under, in the reviewer's name."""
    _check_anomaly_belongs(state, anomaly)
    if not reviewer.strip():
        raise EngineError("an anomaly is approved by a named reviewer")
    b = Builder(state)
    why = f"anomaly {anomaly.anomaly_id} ({anomaly.credits} credits) approved by {reviewer}"
    details = {"reviewer": reviewer, "credits": anomaly.credits}
    if b.levels and not b.single:
        # Shared among the levels as a contribution is, when the rate is still the one it was
        # detected under; otherwise the whole amount goes to the first level, and says so.
        denomination = state.table(anomaly.table_id).config.denomination_cents
        moves, _ = contribution_moves(b, anomaly.credits * denomination)
        if sum(moves.values()) != anomaly.units:
            moves = {"L1": anomaly.units}
            why += " (the rate has changed since: credited to the first level)"
        b.move(
            EntryKind.ANOMALY_APPROVED,
            at_us,
            moves,
            why,
            table_id=anomaly.table_id,
            anomaly_id=anomaly.anomaly_id,
            details=details,
        )
        return b.done()
    b.emit(
        EntryKind.ANOMALY_APPROVED,
        at_us,
        anomaly.units,
        why,
        table_id=anomaly.table_id,
        anomaly_id=anomaly.anomaly_id,
        details=details,
    )
    return b.done()


def reject_anomaly(
    state: LinkState, anomaly: Anomaly, *, at_us: int, reviewer: str, reason: str
) -> Outcome:
    _check_anomaly_belongs(state, anomaly)
    if not reviewer.strip() or not reason.strip():
        raise EngineError("an anomaly is rejected by a named reviewer with a reason")
    b = Builder(state)
    b.emit(
        EntryKind.ANOMALY_REJECTED,
        at_us,
        0,
        f"anomaly {anomaly.anomaly_id} rejected by {reviewer}: {reason}",
        table_id=anomaly.table_id,
        anomaly_id=anomaly.anomaly_id,
        details={"reviewer": reviewer, "reason": reason},
    )
    return b.done()


def correction_meter(state: LinkState, meter: str | None) -> str | None:
    """The meter a correction of ``state``'s link moves: ``meter`` when it is one of the
    link's several meters (``L2``, ``L1.reserve``...), None for a link of one meter (a classic
    link, or a fixed-pay link's balance from before), where ``L1`` may be named or not."""
    levels = [lv.config for lv in state.levels]
    meters = meters_of(state.levels)
    if levels and not is_single_meter(levels):
        if meter is None:
            raise EngineError(
                f"link {state.link_id} has several meters: name the one to correct "
                f"({', '.join(meters)})"
            )
        if meter not in meters:
            raise EngineError(
                f"link {state.link_id} has no meter {meter}; its meters are {', '.join(meters)}"
            )
        return meter
    if meter not in (None, FIRST) or (meter is not None and not levels):
        raise EngineError(f"link {state.link_id} has one meter and no meter {meter}")
    return None


def correction_meter_label(state: LinkState, meter: str) -> str:
    """``Major overflow (L2.overflow)``: a meter of ``state``'s link as a correction names it."""
    return f"{meter_label([lv.config for lv in state.levels], meter)} ({meter})"


def apply_correction(
    state: LinkState,
    *,
    correction_id: str,
    delta_units: int,
    reason: str,
    at_us: int,
    document_sha256: str | None,
    meter: str | None = None,
) -> Outcome:
    """A correcting entry: the only way other than a hit that a meter goes down.

    ``meter`` names which meter of a link of levels it corrects (``L2``, ``L1.reserve``...);
    a classic link's one meter, or a fixed-pay link's balance from before, need none.
    """
    if delta_units == 0:
        raise EngineError("a correction must change the meter")
    state.law.check_reduction_documented(delta_units=delta_units, document_sha256=document_sha256)
    meter = correction_meter(state, meter)
    b = Builder(state)
    details = {"document_sha256": document_sha256}
    if meter is not None:
        b.move(
            EntryKind.CORRECTION,
            at_us,
            {meter: delta_units},
            reason,
            correction_id=correction_id,
            details=details,
        )
        return b.done()
    b.emit(
        EntryKind.CORRECTION,
        at_us,
        delta_units,
        reason,
        correction_id=correction_id,
        details=details,
    )
    return b.done()
